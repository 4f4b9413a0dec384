"""What a question asks and how it ended, read the same way by every door that shows it to a person.

Slack's blocks, Teams' cards and the email templates each draw a question; they must agree on what it asks: the
call it is about (a `@wait` function, a LangChain per-call review, an Agent Inbox request) with its arguments, or
else its prompt; and, once decided, how it ended (`Decided`). Standard library only.

Example:
    >>> from agent_wait.contract.envelope import Question, WaitEnvelope
    >>> envelope = WaitEnvelope.create(Question("t-1", "q-1", {"args": {"amount": 900}, "function": "refund"}))
    >>> summary(envelope)
    'refund(amount=900)'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.contract.envelope import Transition, WaitEnvelope

__all__ = ("PROMPT_KEYS", "UNNAMED_CALL", "Call", "Decided", "call_of", "decided_of", "prompt_of", "summary")

UNNAMED_CALL = "(unnamed call)"
PROMPT_KEYS = ("prompt", "message", "description", "question", "title")
"""Where a question that is not a call keeps its text, first found first."""


@dataclass(frozen=True, slots=True)
class Call:
    """The call a question asks about: a `@wait` function, a LangChain per-call review, an Agent Inbox request."""

    name: str
    args: Mapping[str, Any]
    description: str = ""
    """The dialect's description of the call (Markdown), or empty."""


def _single(question: Any) -> Any:
    """A list of one question (a batch of one review) is that question."""
    return question[0] if isinstance(question, list) and len(question) == 1 else question


def call_of(envelope: WaitEnvelope) -> Call | None:
    """The call `envelope` asks about, or None when it asks something else."""
    question = _single(envelope.question)
    if not isinstance(question, Mapping):
        return None
    description = question.get("description")
    description = description if isinstance(description, str) else ""
    request = question.get("action_request")
    if isinstance(request, Mapping) and isinstance(request.get("args"), Mapping):
        return Call(str(request.get("action") or UNNAMED_CALL), request["args"], description)
    if not isinstance(question.get("args"), Mapping):
        return None
    source = envelope.source or {}
    name = source.get("function") or question.get("function") or question.get("name") or UNNAMED_CALL
    return Call(str(name), question["args"], description)


def prompt_of(envelope: WaitEnvelope, keys: tuple[str, ...] = PROMPT_KEYS) -> str | None:
    """The text of a question that is plain text, or keeps it under one of `keys`; None otherwise."""
    question = _single(envelope.question)
    if isinstance(question, str):
        return question
    if isinstance(question, Mapping):
        for key in keys:
            if isinstance(question.get(key), str):
                return question[key]
    return None


def summary(envelope: WaitEnvelope) -> str:
    """One line: the call with its arguments, or the question's prompt, or its JSON."""
    call = call_of(envelope)
    if call is not None:
        return f"{call.name}({', '.join(f'{k}={json.dumps(v, ensure_ascii=False)}' for k, v in call.args.items())})"
    prompt = prompt_of(envelope)
    return prompt if prompt is not None else json.dumps(envelope.question, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Decided:
    """How a question ended, as a message, a card or an email tells it."""

    status: str
    """`answered`, `expired`, `cancelled`, or `failed` (decided, but the agent failed applying it)."""
    answer: Any = None
    """The answer applied (for `expired`, the default)."""
    answered_by: str | None = None
    via: str | None = None
    """Which door decided it: `api`, `link`, `slack`, `queue`, ..."""
    decided_at: str | None = None
    resumed_at: str | None = None
    progress: Mapping[str, Any] | None = None
    """A quorum question's votes as they decided it, when the door shows them."""
    reason: str | None = None
    """Why a person cancelled it, in their words (`cancelled` by a person only; the router's own cancel of a question
    the agent moved past has none)."""


def decided_of(
    envelope: WaitEnvelope,
    transition: Transition,
    record: Any = None,
    *,
    progress: Mapping[str, Any] | None = None,
) -> Decided:
    """How the question `envelope` announces ended: from its ledger row (`record`) when the door can read it, else
    from the envelope alone (the transition, and the default for an expiry).

    Args:
        envelope: the lifecycle envelope being announced.
        transition: its transition (`answered`, `expired`, `cancelled`, `resumed`, `failed`).
        record: the question's row (a `QuestionRecord`), or None when the door reads no ledger.
        progress: a quorum decision's votes (`agent_wait.engine.votes.decision_progress`), for a door showing them.
    """
    if record is None:
        status = "answered" if transition is Transition.RESUMED else transition.value
        answer = envelope.default if transition is Transition.EXPIRED else None
        return Decided(status, answer, progress=envelope.progress)
    failed = transition is Transition.FAILED or record.failure is not None
    outcome = record.outcome or record.status
    return Decided(
        "failed" if failed else outcome.value,
        record.answer,
        record.answered_by,
        record.via,
        record.decided_at,
        record.resumed_at,
        progress,
        record.reason,
    )
