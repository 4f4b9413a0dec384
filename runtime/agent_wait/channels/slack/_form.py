"""A submitted Slack form (the modal) read as the answer it makes, the way every door reads an answer.

Slack sends each input as text. A number is read as JSON reads it, so an integer keeps every digit at any size
(never through a float: `12345678901234567891` stays itself), and a field that takes whole numbers gets a whole
number even when it is written `12.0`. JSON a person types is read with
`agent_wait.contract.messages.load_answer_text`. Then the whole answer goes through
`agent_wait.contract.messages.parse_answer`, the API's own reading, so the form refuses what the API refuses (a number
past 64 bits, NaN or Infinity, nesting too deep, an answer too large, control characters), in the API's words, before
anything is decided.

A refusal names where in the answer it is (`answer.args.amount`, or `$.amount` in a schema check); `FilledForm.block_of`
finds the form's field it is about, so Slack shows it there.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from agent_wait.channels.reading import read
from agent_wait.channels.slack import _blocks
from agent_wait.channels.slack._asked import DECISION_BLOCK, MESSAGE_BLOCK
from agent_wait.common.canonical_json import MAX_SIGNIFICANT_DIGITS, field_path
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.messages import load_answer_text, parse_answer
from agent_wait.errors import MessageError

__all__ = ("FilledForm",)

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|NaN|-?Infinity")
"""What a number field may hold: a JSON number, or a constant Python's JSON reads (the API reads them too, then refuses
them with `parse_answer`, as the form then does)."""
_ANSWER = "answer"


@dataclass(frozen=True, slots=True)
class _Field:
    block_id: str
    kind: str | None
    """Slack's element type: `number_input`, `static_select`, `plain_text_input`, ..."""
    raw: Any
    where: str
    """Where its value goes in the answer (`answer.args.amount`): how refusals name it."""
    asked: Any = None
    """The call's argument as asked (edits), or None."""
    declared: Mapping[str, Any] = field(default_factory=dict)
    """Its JSON Schema, when the question declares one (a `response_schema`'s property, the call's `args_schema`)."""

    @property
    def whole(self) -> bool:
        """Whether it takes whole numbers only (as the modal drew it: a number input without decimals)."""
        if self.declared.get("type") is not None:
            return self.declared.get("type") == "integer"
        return isinstance(self.asked, int) and not isinstance(self.asked, bool)


class FilledForm:
    """The values of a submitted modal, for the question it answers.

    Args:
        envelope: the question (its call, `response_schema` and `args_schema` say how each field is typed).
        values: the view's `state.values` as Slack sends it (`{block_id: {action_id: element state}}`).
    """

    def __init__(self, envelope: WaitEnvelope, values: Mapping[str, Any]) -> None:
        self.envelope = envelope
        schema = envelope.rules.get("response_schema")
        self._form = schema.get("properties") if isinstance(schema, Mapping) else None
        """A `response_schema` form's properties; None for a call's edits (or a note)."""
        self._call = _blocks.call_of(envelope)
        self._fields = [
            self._field(block_id, inputs) for block_id, inputs in values.items() if isinstance(inputs, dict)
        ]

    def answer(self) -> Any:
        """The answer the form makes, read as every door reads one.

        Raises:
            MessageError: `bad_answer` (what the API refuses, in its words), or `invalid_answer` for a fraction in a
                field that takes whole numbers only and that no schema of the question checks.
        """
        by_block = {f.block_id: f for f in self._fields}
        if any(block.startswith(DECISION_BLOCK) for block in by_block):
            return parse_answer({"decisions": self._decisions(by_block)})
        action = _text(by_block.get(_blocks.ACTION_BLOCK))
        note = _text(by_block.get(_blocks.NOTE_BLOCK))
        typed = {
            f.block_id.removeprefix(_blocks.ARG_BLOCK): _read(f)
            for f in self._fields
            if f.block_id.startswith(_blocks.ARG_BLOCK) and f.raw not in (None, "")
        }
        if isinstance(self._form, Mapping):
            answer: dict[str, Any] = dict(typed)
            if "action" in self._form and action:
                answer["action"] = action
            if "note" in self._form and note:
                answer["note"] = note
            return parse_answer(answer)
        answer = {"action": action} if action else {}
        changed = {k: v for k, v in typed.items() if self._call is None or self._call.args.get(k) != v}
        if changed:
            answer["args"] = changed
        if note:
            answer["note"] = note
        return parse_answer(answer)

    def _decisions(self, by_block: Mapping[str, _Field]) -> list[dict[str, Any]]:
        """A batched review's decisions, one per call in order: its type, and its message for a reject or a respond."""
        decisions: list[dict[str, Any]] = []
        for n in range(len(read(self.envelope).calls)):
            kind = _text(by_block.get(f"{DECISION_BLOCK}{n}"))
            message = _text(by_block.get(f"{MESSAGE_BLOCK}{n}"))
            decision: dict[str, Any] = {"type": kind}
            if message and kind in ("reject", "respond"):
                decision["message"] = message
            decisions.append(decision)
        return decisions

    def block_of(self, detail: str) -> str | None:
        """The form's field a refusal's text is about (it names `answer.args.amount`, or `$.amount` from a schema
        check, or a review's `decision 1`), or None when it names none (the answer as a whole)."""
        review = re.match(r"decision (\d+) ", detail)
        if review and any(f.block_id == f"{DECISION_BLOCK}{review.group(1)}" for f in self._fields):
            return f"{DECISION_BLOCK}{review.group(1)}"
        for f in sorted(self._fields, key=lambda f: -len(f.where)):
            schema_path = "$" + f.where.removeprefix(self._base())
            if _names(detail, f.where) or (f.block_id.startswith(_blocks.ARG_BLOCK) and _names(detail, schema_path)):
                return f.block_id
        return None

    # -- each field --------------------------------------------------------------------------------------------

    def _base(self) -> str:
        """Where the arguments are in the answer: in it (a form), or under `args` (edits)."""
        return _ANSWER if isinstance(self._form, Mapping) else f"{_ANSWER}.args"

    def _field(self, block_id: str, inputs: Mapping[str, Any]) -> _Field:
        element = next(iter(inputs.values()), {})
        element = element if isinstance(element, Mapping) else {}
        kind, raw = element.get("type"), _raw(element)
        if not block_id.startswith(_blocks.ARG_BLOCK):
            return _Field(block_id, kind, raw, field_path(_ANSWER, block_id))
        name = block_id.removeprefix(_blocks.ARG_BLOCK)
        asked = self._call.args.get(name) if self._call is not None and self._form is None else None
        return _Field(block_id, kind, raw, field_path(self._base(), name), asked, self._declared(name))

    def _declared(self, name: str) -> Mapping[str, Any]:
        if isinstance(self._form, Mapping):
            found = self._form.get(name)
        else:
            args_schema = (self.envelope.source or {}).get("args_schema")
            properties = args_schema.get("properties") if isinstance(args_schema, Mapping) else None
            found = properties.get(name) if isinstance(properties, Mapping) else None
        return found if isinstance(found, Mapping) else {}


def _raw(element: Mapping[str, Any]) -> Any:
    """One input's value as Slack sends it in `view.state.values`."""
    if element.get("type") in ("static_select", "radio_buttons"):
        return (element.get("selected_option") or {}).get("value")
    return element.get("value")


def _text(found: _Field | None) -> str | None:
    return str(found.raw) if found is not None and found.raw not in (None, "") else None


def _read(found: _Field) -> Any:
    """One argument's value, typed as the question says its field is."""
    raw, declared = str(found.raw), found.declared
    if found.kind == "static_select":
        if raw in ("true", "false") and not isinstance(declared.get("enum"), list):
            return raw == "true"
        return load_answer_text(raw, where=found.where)  # the option's value is the JSON the modal wrote
    if found.kind == "number_input":
        return _number(raw, found)
    if isinstance(found.asked, str) or declared.get("type") == "string" or (found.asked is None and not declared):
        return raw
    return load_answer_text(raw, where=found.where)


def _number(text: str, found: _Field) -> int | float:
    """A number field's text as JSON reads it; in a whole-number field, a whole number exactly (`12.0` is 12)."""
    literal = text.strip()
    if not _NUMBER.fullmatch(literal):
        raise MessageError("bad_answer", f"{found.where} must be a number, such as 12 or 12.5")
    number = json.loads(literal)  # an integer keeps every digit; parse_answer then refuses one past 64 bits
    if not (found.whole and isinstance(number, float) and math.isfinite(number)):
        return number
    exact = Decimal(literal)  # the digits typed, not the float's
    if exact == exact.to_integral_value() and exact.adjusted() <= MAX_SIGNIFICANT_DIGITS:
        return int(exact)
    if found.declared.get("type") is None:  # nothing later checks it: a fraction never reaches a whole argument
        raise MessageError("invalid_answer", f"{found.where} must be a whole number")
    return number  # the question's schema refuses it (invalid_answer), as it does through the API


def _names(detail: str, where: str) -> bool:
    """Whether `detail` names `where` itself or something inside it (`answer.args.lines` in `answer.args.lines[0]`)."""
    return re.search(re.escape(where) + r"(?![A-Za-z0-9_])", detail) is not None
