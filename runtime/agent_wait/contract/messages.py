"""Inbound messages: a start, an answer or a retry, told apart by one field, checked before anything runs.

A message with `question_id` (or the older `interrupt_id`) is an answer; one with `retry_id` is an
operator's retry of a failed thread; any other is a start.

    {"thread_id": "order-4471", "input": {...}, "start_id": "optional"}
    {"thread_id": "order-4471", "question_id": "...", "answer": {"action": "approve"},
     "valid_until": "2026-09-12T09:00:00Z", "answered_by": "optional", "answer_id": "optional"}
    {"thread_id": "order-4471", "retry_id": "..."}

The sweep sends expiries as ordinary answers with `"origin": "deadline"`. Ids that start with
`agent-wait:` belong to agent-wait itself; a message cannot claim one. Every value must be one the
stores can hold (see `agent_wait.common.canonical_json.to_jsonable`); a message that breaks a rule is refused whole,
before anything is written. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.common.canonical_json import dumps, field_path, to_jsonable
from agent_wait.common.times import parse_rfc3339
from agent_wait.errors import EnvelopeError, MessageError

__all__ = (
    "DEADLINE_ORIGIN",
    "MAX_ANSWER_BYTES",
    "MAX_ID_LENGTH",
    "RESERVED_ID_PREFIX",
    "VIAS",
    "AnswerMessage",
    "RetryMessage",
    "StartMessage",
    "answer_parts",
    "deadline_answer_id",
    "fifo_id",
    "group_id_for",
    "internal_id",
    "is_answer",
    "load_answer_text",
    "parse_answer",
    "parse_message",
    "question_id_of",
)

DEADLINE_ORIGIN = "deadline"
"""`origin` of an answer the sweep sends when a question's deadline passes."""

MAX_ID_LENGTH = 128
"""Longest thread or question id accepted (an SQS FIFO message group id is at most 128 characters)."""

MAX_ANSWER_BYTES = 64 * 1024
"""Largest answer accepted, as JSON: with the question (at most 64 KiB) and its default, the ledger row stays
well inside DynamoDB's 400 KB item limit."""

VIAS = frozenset({"queue", "api", "link", "slack", "cli", "deadline", "grant"})
"""How an answer may say it came; only a trusted sender's word is recorded."""

RESERVED_ID_PREFIX = "agent-wait:"
"""Ids agent-wait makes for itself (a cancellation, a deadline) start with this; no message may claim one."""

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters an answer's text may not hold: C0 and DEL, but tab, line feed and carriage return. A person
never types them; in a log line, a CSV cell, an email or a terminal they are a way to forge or hide what is shown."""

_FIFO_ID = re.compile(r"[\x21-\x7e]{1,128}")
"""What SQS and SNS accept as a FIFO group or deduplication id: 1 to 128 printable ASCII characters, no space."""


def fifo_id(value: str) -> str:
    """`value` if SQS and SNS accept it as a FIFO group or deduplication id, else its SHA-256 hex digest.

    Stable for any input, so a hashed id still groups and deduplicates the same way every time.
    """
    if _FIFO_ID.fullmatch(value):
        return value
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def group_id_for(thread_id: str) -> str:
    """The FIFO message group id for `thread_id`: one thread, one group, so its messages never run at once.

    A thread id SQS accepts as a group id (printable ASCII, no space, at most 128) is used as it is.
    Any other (`"Zoë order 1"`) maps to the SHA-256 hex digest of its UTF-8 bytes, so every thread id
    has a group id, always the same one. The router refuses a record whose group is not this.
    """
    return fifo_id(thread_id)


def internal_id(kind: str, question_id: str) -> str:
    """The id agent-wait records for an outcome it decides itself (`agent-wait:cancelled:<question_id>`)."""
    return f"{RESERVED_ID_PREFIX}{kind}:{question_id}"


def deadline_answer_id(question_id: str) -> str:
    """The answer id of the sweep's deadline answer for `question_id`; a redelivery carries the same one."""
    return internal_id("deadline", question_id)


@dataclass(frozen=True, slots=True)
class StartMessage:
    """Run the agent on `thread_id` with `input`."""

    thread_id: str
    input: Any
    start_id: str | None = None
    """The sender's own id for this start; a redelivery carries the same one."""


@dataclass(frozen=True, slots=True)
class AnswerMessage:
    """Answer `question_id` on `thread_id`."""

    thread_id: str
    question_id: str
    answer: Any
    valid_until: datetime | None = None
    answered_by: str | None = None
    answer_id: str | None = None
    origin: str | None = None
    """`deadline` when the sweep sent it; None for an outside answer."""
    via: str | None = None
    """How the answer came (`api`, `link`, ...), as a trusted sender such as the answer API says."""
    groups: tuple[str, ...] = ()
    """The answerer's groups, as a trusted sender says (checked against the policy's `answerer_groups`)."""

    @property
    def from_deadline(self) -> bool:
        return self.origin == DEADLINE_ORIGIN


@dataclass(frozen=True, slots=True)
class RetryMessage:
    """Apply again, once, what failed on `thread_id` (an operator's command after fixing the agent)."""

    thread_id: str
    retry_id: str
    """The sender's id for this retry; a redelivery carries the same one and runs nothing more."""


def question_id_of(message: Any) -> str | None:
    """The question a message answers (`question_id`, else `interrupt_id`); None for a start."""
    if not isinstance(message, Mapping):
        return None
    value = message.get("question_id", message.get("interrupt_id"))
    return value if isinstance(value, str) else None


def is_answer(message: Any) -> bool:
    """True when `message` answers a question: it carries `question_id` (or the older `interrupt_id`)."""
    return isinstance(message, Mapping) and ("question_id" in message or "interrupt_id" in message)


def answer_parts(message: Any) -> tuple[str, Any] | None:
    """`(question_id, answer)` for an answer message, None for anything else."""
    question_id = question_id_of(message) if is_answer(message) else None
    return (question_id, message.get("answer")) if question_id else None


def _text_id(data: Mapping[str, Any], name: str, *, required: bool, reserved_ok: bool = False) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    return _required_id(data, name, reserved_ok=reserved_ok)


def _required_id(data: Mapping[str, Any], name: str, *, reserved_ok: bool = False) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise MessageError(f"bad_{name}", f"{name} must be a non-empty string; got {type(value).__name__}")
    if len(value) > MAX_ID_LENGTH:
        raise MessageError(f"bad_{name}", f"{name} is {len(value)} characters; the limit is {MAX_ID_LENGTH}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise MessageError(
            f"bad_{name}", f"{name} holds a lone surrogate (an unpaired \\ud800-\\udfff); ids must be valid Unicode"
        ) from None
    if not reserved_ok and value.startswith(RESERVED_ID_PREFIX):
        raise MessageError(
            f"bad_{name}", f"{name} may not start with {RESERVED_ID_PREFIX!r}: agent-wait makes those ids itself"
        )
    return value


def _load(body: str | bytes) -> Any:
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MessageError("not_json", f"message body is not JSON ({exc})") from None
    except RecursionError:
        raise MessageError("too_deep", "message body is nested too deeply to parse; flatten it") from None


def parse_message(body: str | bytes | Mapping[str, Any]) -> StartMessage | AnswerMessage | RetryMessage:
    """Parse and check one inbound message.

    Raises:
        MessageError: not JSON, not an object, a missing or wrongly typed field, or a value the stores
            cannot hold. `.reason` is a short slug (`not_json`, `not_object`, `bad_thread_id`,
            `bad_answer`, ...) for the dead-letter record; the text names the field, never its value.
    """
    data = _load(body) if isinstance(body, (str, bytes)) else body
    if not isinstance(data, Mapping):
        raise MessageError("not_object", f"message must be a JSON object; got {type(data).__name__}")
    thread_id = _required_id(data, "thread_id")
    if "retry_id" in data and not is_answer(data):
        if "input" in data:
            raise MessageError("bad_retry_id", "a retry message carries thread_id and retry_id only, not 'input'")
        return RetryMessage(thread_id, _required_id(data, "retry_id"))
    if not is_answer(data):
        if "input" not in data:
            raise MessageError(
                "missing_input", "a start message needs 'input' (any JSON); an answer needs 'question_id'"
            )
        return StartMessage(thread_id, _value(data["input"], "input"), _text_id(data, "start_id", required=False))
    return _answer(data, thread_id)


def _answer(data: Mapping[str, Any], thread_id: str) -> AnswerMessage:
    key = "question_id" if "question_id" in data else "interrupt_id"
    question_id = _required_id(data, key)
    if "answer" not in data:
        raise MessageError("missing_answer", "an answer message needs 'answer' (any JSON, null allowed)")
    valid_until = None
    if data.get("valid_until") is not None:
        try:
            valid_until = parse_rfc3339(data["valid_until"])
        except ValueError:
            raise MessageError(
                "bad_valid_until",
                "valid_until must be an RFC 3339 timestamp with an offset, e.g. 2026-09-12T09:00:00Z",
            ) from None
    origin = data.get("origin")
    if origin is not None and origin != DEADLINE_ORIGIN:
        raise MessageError("bad_origin", f"origin may only be {DEADLINE_ORIGIN!r} (set by the sweep)")
    answer = parse_answer(data["answer"])
    # The sweep's deadline answer carries agent-wait's own ids; nothing else may.
    from_deadline = origin == DEADLINE_ORIGIN
    answer_id = _text_id(data, "answer_id", required=False, reserved_ok=from_deadline)
    if from_deadline and answer_id not in (None, deadline_answer_id(question_id)):
        raise MessageError("bad_answer_id", "a deadline answer's answer_id is the sweep's own, or absent")
    via = data.get("via")
    if via is not None and (not isinstance(via, str) or via not in VIAS):
        raise MessageError("bad_via", f"via must be one of {sorted(VIAS)}; got a {type(via).__name__}")
    groups = data.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups):
        raise MessageError("bad_groups", "groups must be a list of non-empty strings")
    return AnswerMessage(
        thread_id=thread_id,
        question_id=question_id,
        answer=answer,
        valid_until=valid_until,
        answered_by=_text_id(data, "answered_by", required=False, reserved_ok=from_deadline),
        answer_id=answer_id,
        origin=origin,
        via=via,
        groups=tuple(groups),
    )


def parse_answer(answer: Any) -> Any:
    """The one reading of an answer, whatever door it came through (the queue, the answer API and its bulk and AG-UI
    routes, a signed link's note, a Slack form): plain JSON the stores can hold exactly.

    Integers are exact and at most 64 bits, numbers finite (no NaN or Infinity) and within DynamoDB's 38 digits,
    nesting at most `MAX_DEPTH` levels, the whole at most `MAX_ANSWER_BYTES` as JSON, and text free of control
    characters (but tab and line breaks). A door shows the refusal to the person; nothing is decided.

    Raises:
        MessageError: `bad_answer`, naming where in the answer the problem is and never its value.

    Example:
        >>> parse_answer({"action": "approve", "args": {"amount": 900}})
        {'action': 'approve', 'args': {'amount': 900}}
    """
    checked = _value(answer, "answer")
    size = len(dumps(checked).encode("utf-8"))
    if size > MAX_ANSWER_BYTES:
        raise MessageError(
            "bad_answer",
            f"answer is {size:,} bytes as JSON; the limit is {MAX_ANSWER_BYTES:,} (MAX_ANSWER_BYTES): "
            "send a reference to large content instead",
        )
    where = _control_character(checked, "answer")
    if where is not None:
        raise MessageError(
            "bad_answer", f"{where} holds a control character; remove it (only tab and line breaks may appear in text)"
        )
    return checked


def load_answer_text(text: str, *, where: str = "answer") -> Any:
    """JSON a person typed (a form field), read the way `parse_answer` reads it: integers exact, NaN and Infinity
    refused, nesting too deep to parse refused. Then `parse_answer` checks the whole answer.

    Raises:
        MessageError: `bad_answer` when the text is not JSON, or holds NaN or Infinity, or is nested too deeply.
    """

    def no_constant(name: str) -> Any:
        raise MessageError("bad_answer", f"{where} holds {name}, which JSON cannot carry; use a number or a string")

    try:
        return json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise MessageError("bad_answer", f"{where} is nested too deeply to read; flatten it") from None
    except ValueError as exc:
        if isinstance(exc, MessageError):
            raise
        example = '"text", 12 or [1, 2]'
        raise MessageError("bad_answer", f"{where} is not JSON: write it as JSON, e.g. {example}") from None


def _control_character(value: Any, where: str) -> str | None:
    """Where the first control character in `value`'s text (keys included) is, or None."""
    if isinstance(value, str):
        return where if _CONTROL.search(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = (where + " key") if _CONTROL.search(key) else _control_character(item, field_path(where, key))
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _control_character(item, f"{where}[{index}]")
            if found:
                return found
    return None


def _value(value: Any, field: str) -> Any:
    """`value` as plain JSON the stores can hold, or a `MessageError` named for `field` (`bad_input`, ...)."""
    try:
        return to_jsonable(value, where=field)
    except EnvelopeError as exc:
        raise MessageError(f"bad_{field}", exc.message) from None
