"""Inbound messages: a start or an answer, told apart by one field, checked before anything runs.

A message with `question_id` (or the older `interrupt_id`) is an answer; any other is a start.

    {"thread_id": "order-4471", "input": {...}, "start_id": "optional"}
    {"thread_id": "order-4471", "question_id": "...", "answer": {"action": "approve"},
     "valid_until": "2026-09-12T09:00:00Z", "answered_by": "optional", "answer_id": "optional"}

The sweep sends expiries as ordinary answers with `"origin": "deadline"`. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait._json import to_jsonable
from agent_wait._time import parse_rfc3339
from agent_wait.errors import EnvelopeError, MessageError

__all__ = (
    "DEADLINE_ORIGIN",
    "MAX_ID_LENGTH",
    "AnswerMessage",
    "StartMessage",
    "answer_parts",
    "is_answer",
    "parse_message",
    "question_id_of",
)

DEADLINE_ORIGIN = "deadline"
"""`origin` of an answer the sweep sends when a question's deadline passes."""

MAX_ID_LENGTH = 128
"""Longest thread or question id accepted (an SQS FIFO message group id is at most 128 characters)."""


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

    @property
    def from_deadline(self) -> bool:
        return self.origin == DEADLINE_ORIGIN


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


def _text_id(data: Mapping[str, Any], name: str, *, required: bool) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise MessageError(f"bad_{name}", f"{name} must be a non-empty string; got {type(value).__name__}")
    if len(value) > MAX_ID_LENGTH:
        raise MessageError(f"bad_{name}", f"{name} is {len(value)} characters; the limit is {MAX_ID_LENGTH}")
    return value


def parse_message(body: str | bytes | Mapping[str, Any]) -> StartMessage | AnswerMessage:
    """Parse and check one inbound message.

    Raises:
        MessageError: not JSON, not an object, a missing or wrongly typed field. `.reason` is a short
            slug (`not_json`, `not_object`, `bad_thread_id`, ...) for the dead-letter record.
    """
    if isinstance(body, (str, bytes)):
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MessageError("not_json", f"message body is not JSON ({exc})") from None
    else:
        data = body
    if not isinstance(data, Mapping):
        raise MessageError("not_object", f"message must be a JSON object; got {type(data).__name__}")
    thread_id = _text_id(data, "thread_id", required=True)
    assert thread_id is not None
    try:
        if not is_answer(data):
            if "input" not in data:
                raise MessageError(
                    "missing_input", "a start message needs 'input' (any JSON); an answer needs 'question_id'"
                )
            return StartMessage(
                thread_id, to_jsonable(data["input"], where="input"), _text_id(data, "start_id", required=False)
            )
        key = "question_id" if "question_id" in data else "interrupt_id"
        question_id = _text_id(data, key, required=True)
        assert question_id is not None
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
        return AnswerMessage(
            thread_id=thread_id,
            question_id=question_id,
            answer=to_jsonable(data["answer"], where="answer"),
            valid_until=valid_until,
            answered_by=_text_id(data, "answered_by", required=False),
            answer_id=_text_id(data, "answer_id", required=False),
            origin=origin,
        )
    except MessageError:
        raise
    except EnvelopeError as exc:
        raise MessageError("not_json_value", exc.message) from None
