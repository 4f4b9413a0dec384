"""Dialects: the question and answer shapes of other approval libraries, mapped to ours. Standard library only.

A dialect is recognised from the value a framework parks on and recorded in the envelope's `source`
(`{"dialect": name, ...}`), so the host knows it again from the ledger row alone. Every answer is
checked here before it may decide a question (`answer_problem`, called by the router and the answer
API alike), and turned here into the value the agent receives (`resume_value`). Questions asked by
`@wait` are checked too: an edit may name only the function's published parameters.

Mapping table: docs/dialects.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_wait.dialects import langchain_hitl

if TYPE_CHECKING:
    from agent_wait.envelope import WaitEnvelope

__all__ = (
    "Recognized",
    "answer_problem",
    "dialect_of",
    "is_native_answer",
    "recognize",
    "resume_value",
    "translate",
)

_DIALECTS = {langchain_hitl.NAME: langchain_hitl}


@dataclass(frozen=True, slots=True)
class Recognized:
    """What a dialect's parked value says about its question."""

    allowed_actions: tuple[str, ...]
    """The `action` values our own answers may carry (the dialect's decision types)."""
    allow_edits: bool
    """Whether our edit form (`{"action": "approve", "args": {...}}`) can be translated."""
    source: dict[str, Any]
    """The envelope's `source`: `{"dialect": name, ...}`."""


def recognize(value: Any) -> Recognized | None:
    """The dialect a parked value is written in, or None for ours or a bare value."""
    for dialect in _DIALECTS.values():
        found = dialect.recognize(value)
        if found is not None:
            return Recognized(*found)
    return None


def dialect_of(envelope: WaitEnvelope) -> str | None:
    """The dialect recorded in an envelope's `source`, or None."""
    return _dialect_in(envelope.source)


def _dialect_in(source: Any) -> str | None:
    name = source.get("dialect") if isinstance(source, Mapping) else None
    return name if name in _DIALECTS else None


def is_native_answer(envelope: WaitEnvelope, answer: Any) -> bool:
    """True when `answer` is in the question's dialect's own shape (so it carries no `action` of ours)."""
    name = dialect_of(envelope)
    return name is not None and _DIALECTS[name].is_native(answer)


def answer_problem(envelope: WaitEnvelope, answer: Any) -> str | None:
    """Why `answer` cannot be applied to the envelope's question (one sentence, no answer content), or None."""
    name = dialect_of(envelope)
    if name is not None:
        return _DIALECTS[name].answer_problem(envelope.question, answer)
    return _wait_call_problem(envelope, answer)


def resume_value(envelope: WaitEnvelope, answer: Any) -> Any:
    """The value the agent receives for `answer`: a dialect's own shape; anything else unchanged."""
    return translate(envelope.source, envelope.question, answer)


def translate(source: Any, question: Any, answer: Any) -> Any:
    """`resume_value` from a question's `source` and value (for hosts that hold a `Question`, not an envelope)."""
    name = _dialect_in(source)
    return _DIALECTS[name].to_resume(question, answer) if name is not None else answer


def _wait_call_problem(envelope: WaitEnvelope, answer: Any) -> str | None:
    """A `@wait` question (`{"function", "args"}`): an approval's edited `args` name only editable parameters.

    Those are the question's `args`, or the source's `editable` list when the function has published
    parameters that cannot be edited (positional-only or variadic).

    Otherwise the body would not run and the question would be decided for nothing (see `WaitSignature.plan`).
    """
    source, question = envelope.source, envelope.question
    if not isinstance(source, Mapping) or not isinstance(question, Mapping):
        return None
    function, published = question.get("function"), question.get("args")
    if source.get("function") != function or not isinstance(published, Mapping):
        return None
    if not isinstance(answer, Mapping) or answer.get("action") != "approve" or answer.get("args") is None:
        return None
    editable = source.get("editable")
    names = sorted(editable) if isinstance(editable, list) else sorted(published)
    edits = answer["args"]
    if not isinstance(edits, Mapping):
        return f"edited 'args' must be an object naming parameters of {function}(): {names}"
    unknown = sorted(str(name) for name in edits if name not in names)
    if unknown:
        return f"edited 'args' may name only parameters of {function}(): {names}; unknown: {unknown}"
    return None
