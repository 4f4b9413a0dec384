"""What a question asks and how it ended, read the same way by every door that shows it to a person.

Slack's blocks, Teams' cards and the email templates each draw a question; they must agree on what it asks (the one
reading, `agent_wait.channels.reading`, whose `Call`, `call_of`, `prompt_of` and `summary` this module also exports)
and, once decided, how it ended (`Decided`). Standard library only.

Example:
    >>> from agent_wait.contract.envelope import Question, WaitEnvelope
    >>> envelope = WaitEnvelope.create(Question("t-1", "q-1", {"args": {"amount": 900}, "function": "refund"}))
    >>> summary(envelope)
    'refund(amount=900)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.channels.reading import PROMPT_KEYS, UNNAMED_CALL, Call, call_of, prompt_of, summary
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.ledger.grants import grant_id_of

__all__ = ("PROMPT_KEYS", "UNNAMED_CALL", "Call", "Decided", "call_of", "decided_of", "prompt_of", "summary")


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
    grant_id: str | None = None
    """The standing grant that decided it (`via` `grant`), read from its answer id; None otherwise."""


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
        grant_id_of(record),
    )
