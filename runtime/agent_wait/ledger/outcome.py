"""What decided a question, and what the agent did with the decision: one reading of a ledger row for every view.

A row's `status` moves on once the agent has the decision (`resumed`; `failed` while applying it fails), and the row
keeps what decided it in `outcome` (`answered`, `expired`, `cancelled`). A `cancelled` outcome is one of two things:
a person cancelled the question (`answered_by` says who, `reason` why), or the agent moved past it unanswered and
the router withdrew it (`answered_by` is `MOVED_ON`). The CLI, the inbox API, insights and the audit export read a
row through `question_outcome` and `agent_progress`, so they say the same words:

- `question_outcome(record)`: `answered`, `expired` (nobody answered: the default applied), `cancelled` (a person
  cancelled it) or `withdrawn` (the agent moved on without it); None while the question is open;
- `agent_progress(record)`: `waiting` (open), `pending` (decided; the agent has not had it yet), `resumed`,
  `failed` (applying it failed: `agent-wait failures`), or `moved_on` (withdrawn: nothing resumes it).

Standard library and the contract only.

Example:
    >>> from agent_wait.contract.schema import QuestionStatus
    >>> outcome_of(QuestionStatus.CANCELLED, MOVED_ON).value
    'withdrawn'
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from agent_wait.contract.schema import QuestionStatus

if TYPE_CHECKING:
    from agent_wait.ledger.records import QuestionRecord

__all__ = (
    "MOVED_ON",
    "AgentProgress",
    "QuestionOutcome",
    "agent_progress",
    "outcome_of",
    "question_outcome",
    "statuses_holding",
)

MOVED_ON = "agent-wait:moved-on"
"""`answered_by` of a question the router cancelled because the agent moved past it unanswered: `withdrawn`."""


class QuestionOutcome(StrEnum):
    """What decided a question."""

    ANSWERED = "answered"
    """A person (or a trusted sender) answered it."""
    EXPIRED = "expired"
    """Nobody answered by the deadline: the policy's default applied."""
    CANCELLED = "cancelled"
    """A person cancelled it (`answered_by`), saying why (`reason`)."""
    WITHDRAWN = "withdrawn"
    """The agent moved on without an answer, and the router withdrew the question."""


class AgentProgress(StrEnum):
    """What the agent did with the question's decision."""

    WAITING = "waiting"
    PENDING = "pending"
    RESUMED = "resumed"
    FAILED = "failed"
    MOVED_ON = "moved_on"


def outcome_of(outcome: QuestionStatus | None, answered_by: str | None) -> QuestionOutcome | None:
    """The outcome a row's `outcome` and `answered_by` say; None when nothing decided it yet."""
    if outcome is None:
        return None
    if outcome is QuestionStatus.CANCELLED and answered_by == MOVED_ON:
        return QuestionOutcome.WITHDRAWN
    return QuestionOutcome(outcome.value)


def question_outcome(record: QuestionRecord) -> QuestionOutcome | None:
    """What decided `record`'s question (see the module's docstring); None while it is open."""
    return outcome_of(record.outcome, record.answered_by)


def agent_progress(record: QuestionRecord) -> AgentProgress:
    """What the agent did with `record`'s decision (see the module's docstring)."""
    if record.status is QuestionStatus.OPEN:
        return AgentProgress.WAITING
    if record.status is QuestionStatus.RESUMED:
        return AgentProgress.RESUMED
    if record.status is QuestionStatus.FAILED:
        return AgentProgress.FAILED
    if question_outcome(record) is QuestionOutcome.WITHDRAWN:
        return AgentProgress.MOVED_ON
    return AgentProgress.PENDING


def statuses_holding(outcome: QuestionOutcome) -> tuple[QuestionStatus, ...]:
    """The ledger statuses a question with `outcome` can be under: its own until the agent has it, then `resumed`
    or `failed` (a withdrawn question stays `cancelled`). What a listing by outcome reads."""
    if outcome is QuestionOutcome.WITHDRAWN:
        return (QuestionStatus.CANCELLED,)
    return (QuestionStatus(outcome.value), QuestionStatus.RESUMED, QuestionStatus.FAILED)
