"""Granting from Slack: a button per grant offer beside Approve, an "Approve and allow…" modal, and the answers they
make, `{"action": "approve", "grant": {...}}`, which `SlackInteractions` sends through the one desk.

A button carries the offer's index only (`GRANT_PREFIX` + index; its value is the question id): the offer is looked
up again from the question's row when the click comes (`grant_offers`), so a policy changed since the message was
posted never grants what the button said. The modal asks where (scope), how long, how many uses and, for each number
or text argument of the call, a pin (exactly, up to, at least, starting with, matching, or any value), within the
policy's limits; the desk checks the grant it makes (`grant_for`) and refuses one that would widen the call.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ButtonElement,
    InputBlock,
    MarkdownTextObject,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from agent_wait.channels.asked import call_of
from agent_wait.channels.slack._asked import clip, escape
from agent_wait.common.durations import format_duration
from agent_wait.contract.bound_call import APPROVE
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.messages import load_answer_text
from agent_wait.engine.granting import GRANT_FIELD, grant_offers
from agent_wait.engine.offered import duration_words, function_of
from agent_wait.errors import MessageError
from agent_wait.policy.grants import GrantOffer, GrantRequest, Grants

__all__ = (
    "GRANT_MODAL_CALLBACK",
    "GRANT_PREFIX",
    "OPEN_GRANT_MODAL",
    "grant_buttons",
    "grant_modal_view",
    "modal_grant_answer",
    "offer_answer",
)

GRANT_PREFIX = "agent_wait:grant:"
"""A grant offer's button: `action_id` is this and the offer's index; its `value` is the question id."""
OPEN_GRANT_MODAL = "agent_wait:grant_modal"
"""The "Approve and allow…" button, which opens the grant modal."""
GRANT_MODAL_CALLBACK = "agent_wait:grant"
"""The grant modal's `callback_id`; its `private_metadata` is the question id."""
SCOPE_BLOCK, TTL_BLOCK, USES_BLOCK, PIN_BLOCK, PIN_VALUE_BLOCK = (
    "grant:scope",
    "grant:ttl",
    "grant:uses",
    "grant:pin:",
    "grant:value:",
)
"""The grant modal's input blocks: scope, time, uses, and per argument its pin's kind and value."""

_TIMES = tuple(
    timedelta(**when)
    for when in ({"minutes": 15}, {"hours": 1}, {"hours": 4}, {"hours": 8}, {"days": 1}, {"days": 7}, {"days": 30})
)
"""The times the modal offers, cut at the policy's `max_ttl` (which it always offers)."""
_SCOPES = {"thread": "This thread only", "agent": "Any thread of the agent"}
_ANY = "any"
_NUMBER_PINS = {"equals": "Exactly", "at_most": "Up to", "at_least": "At least", _ANY: "Any value"}
_TEXT_PINS = {"equals": "Exactly", "prefix": "Starting with", "glob": "Matching (* and ?)", _ANY: "Any value"}
_MAX_PINNED = 10
"""The most arguments the modal pins (Slack's modal holds 100 blocks; a long call stays readable)."""


def grant_buttons(envelope: WaitEnvelope) -> list[ButtonElement]:
    """The buttons that approve and grant: one per offer the question takes, and "Approve and allow…" when a grant
    fits it at all. None for a policy without grants."""
    buttons = [
        ButtonElement(
            text=PlainTextObject(text=clip(offer.label, 75)),
            action_id=f"{GRANT_PREFIX}{index}",
            value=envelope.question_id,
        )
        for index, offer in grant_offers(envelope)
    ]
    if _grantable(envelope):
        buttons.append(
            ButtonElement(
                text=PlainTextObject(text="Approve and allow…"), action_id=OPEN_GRANT_MODAL, value=envelope.question_id
            )
        )
    return buttons


def _grantable(envelope: WaitEnvelope) -> bool:
    """Whether any grant fits the question: the shortest, single-use, exact one is offered (`grant_offers`)."""
    raw = envelope.rules.get("grants")
    if raw is None:
        return False
    grants = Grants.parse(raw)
    exact = GrantOffer("exact", GrantRequest(scope=grants.scopes[0], ttl=min(_TIMES[0], grants.max_ttl), uses=1))
    probe = Grants(max_ttl=grants.max_ttl_iso, max_uses=grants.max_uses, scopes=grants.scopes, offers=[exact])
    rules = {**envelope.rules, "grants": probe.to_dict()}
    return bool(grant_offers(dataclasses.replace(envelope, rules=rules)))


def offer_answer(record: Any, index: int) -> dict[str, Any] | None:
    """The answer offer `index`'s button makes on `record`'s question as its row offers it now, or None when the
    question no longer offers it."""
    offer = dict(grant_offers(record.envelope)).get(index)
    return None if offer is None else {"action": APPROVE, GRANT_FIELD: offer.request.to_dict()}


# -- the modal --------------------------------------------------------------------------------------------------


def grant_modal_view(envelope: WaitEnvelope) -> dict[str, Any]:
    """The "Approve and allow…" modal: where, how long, how many uses, and a pin per number or text argument,
    within the policy's limits, each prefilled to the narrowest (this thread, exactly the values asked)."""
    grants = Grants.parse(envelope.rules.get("grants"))
    function = function_of(envelope) or "this call"
    intro = (
        f"*Approve, and allow later calls of `{escape(function)}` that fit*\n"
        "They run at once, without asking anyone, until the grant expires, is used up or is revoked."
    )
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=clip(intro, 3000)))]
    scopes = [Option(text=PlainTextObject(text=_SCOPES[s]), value=s) for s in grants.scopes]
    blocks.append(_select(SCOPE_BLOCK, "Where", scopes, scopes[0]))
    times = _times(grants)
    options = [Option(text=PlainTextObject(text=duration_words(t)), value=format_duration(t)) for t in times]
    blocks.append(_select(TTL_BLOCK, f"For (at most {duration_words(grants.max_ttl)})", options, options[0]))
    most = f"at most {grants.max_uses}" if grants.max_uses is not None else "empty: any number within the time"
    blocks.append(
        InputBlock(
            block_id=USES_BLOCK,
            label=PlainTextObject(text=f"Uses ({most})"),
            element=NumberInputElement(
                action_id="value",
                is_decimal_allowed=False,
                initial_value="1",
                min_value="1",
                max_value=str(grants.max_uses) if grants.max_uses is not None else None,
            ),
            optional=grants.max_uses is None,
        )
    )
    call = call_of(envelope)
    for name, value in list(call.args.items() if call is not None else ())[:_MAX_PINNED]:
        blocks.extend(_pin_inputs(name, value))
    return {
        "type": "modal",
        "callback_id": GRANT_MODAL_CALLBACK,
        "private_metadata": envelope.question_id,
        "title": {"type": "plain_text", "text": "Approve and allow"},
        "submit": {"type": "plain_text", "text": "Approve and allow"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [block.to_dict() for block in blocks],
    }


def _times(grants: Grants) -> list[timedelta]:
    return [t for t in _TIMES if t < grants.max_ttl] + [grants.max_ttl]


def _select(block_id: str, label: str, options: list[Option], initial: Option) -> InputBlock:
    element = StaticSelectElement(action_id="value", options=options, initial_option=initial)
    return InputBlock(block_id=block_id, label=PlainTextObject(text=label), element=element)


def _pin_inputs(name: str, value: Any) -> list[Block]:
    """A pin's kind and value for one argument: numbers and text only (any other argument is pinned exactly)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (number or isinstance(value, str)):
        return []
    kinds = _NUMBER_PINS if number else _TEXT_PINS
    options = [Option(text=PlainTextObject(text=text), value=kind) for kind, text in kinds.items()]
    element: Any = (
        NumberInputElement(action_id="value", is_decimal_allowed=isinstance(value, float), initial_value=str(value))
        if number
        else PlainTextInputElement(action_id="value", initial_value=str(value))
    )
    return [
        _select(f"{PIN_BLOCK}{name}"[:255], clip(f"{name} (asked: {value})", 2000), options, options[0]),
        InputBlock(
            block_id=f"{PIN_VALUE_BLOCK}{name}"[:255],
            label=PlainTextObject(text=clip(f"{name}: the pin's value", 2000)),
            element=element,
            optional=True,
        ),
    ]


def modal_grant_answer(envelope: WaitEnvelope, values: Mapping[str, Any]) -> dict[str, Any]:
    """The answer the submitted grant modal makes: `{"action": "approve", "grant": {...}}`, the grant as the person
    filled it (the desk checks it). An argument the modal did not show is pinned to its value as asked.

    Raises:
        MessageError: `bad_answer`, naming the block (`grant:value:amount`) whose value is not a number.
    """
    # A select left as drawn may come back empty: it then holds its initial option, as the modal drew it.
    read = {block: _raw(inputs) for block, inputs in values.items() if isinstance(inputs, Mapping)}
    read = {block: value for block, value in read.items() if value not in (None, "")}
    grants = Grants.parse(envelope.rules.get("grants"))
    uses = read.get(USES_BLOCK)
    grant: dict[str, Any] = {
        "scope": read.get(SCOPE_BLOCK, grants.scopes[0]),
        "ttl": read.get(TTL_BLOCK, format_duration(_times(grants)[0])),
        "uses": _whole(str(uses), USES_BLOCK) if uses is not None else None,
    }
    call = call_of(envelope)
    pins: dict[str, Any] = {}
    for name, asked in call.args.items() if call is not None else ():
        kind = read.get(f"{PIN_BLOCK}{name}", "equals")
        if kind != _ANY:
            pins[name] = {kind: _pin_value(name, read.get(f"{PIN_VALUE_BLOCK}{name}"), asked)}
    grant["pins"] = pins
    return {"action": APPROVE, GRANT_FIELD: grant}


def _pin_value(name: str, raw: Any, asked: Any) -> Any:
    block = f"{PIN_VALUE_BLOCK}{name}"
    if raw is None:
        return asked  # left empty (or not shown): the value asked, which the field was prefilled with
    if isinstance(asked, str):
        return str(raw)
    number = load_answer_text(str(raw).strip(), where=f"answer.grant.pins.{name}")
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise MessageError("bad_answer", f"{block}: the pin on {name} must be a number, such as 500")
    return number


def _whole(text: str, block: str) -> int:
    try:
        number = json.loads(text.strip())
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, int):
        raise MessageError("bad_answer", f"{block}: uses must be a whole number of 1 or more")
    return number


def _raw(inputs: Mapping[str, Any]) -> Any:
    element = next(iter(inputs.values()), {})
    if not isinstance(element, Mapping):
        return None
    if element.get("type") == "static_select":
        return (element.get("selected_option") or {}).get("value")
    return element.get("value")
