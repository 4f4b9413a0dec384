"""The question ledger: one row per question, and the conditional writes that decide it exactly once."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from agent_wait._time import NEVER, format_rfc3339
from agent_wait.envelope import WaitEnvelope
from agent_wait.errors import LedgerUnavailableError
from agent_wait.schema import QuestionStatus

__all__ = (
    "DECIDED",
    "DecideResult",
    "Decision",
    "Ledger",
    "LedgerUnavailableError",
    "OpenResult",
    "QuestionRecord",
    "StartRecord",
)

DECIDED = frozenset({QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED})
"""Statuses that hold an outcome; only these can move on to `resumed`."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome a message wants to record on a question."""

    status: QuestionStatus
    """`answered`, `expired` or `cancelled`."""
    answer: Any
    """The answer, verbatim (the policy default for an expiry)."""
    answer_id: str
    """Identity of the message that carries it; a redelivery has the same id."""
    answered_by: str | None = None
    """Who answered, when the message says."""


@dataclass(frozen=True, slots=True)
class QuestionRecord:
    """One question as the ledger holds it: the envelope fields plus status and outcome."""

    envelope: WaitEnvelope
    status: QuestionStatus
    asked_at: str
    """RFC 3339 time the question was first recorded."""
    announced: bool = False
    """True once an announcement succeeded on every announcer."""
    outcome: QuestionStatus | None = None
    """What decided the question (`answered`, `expired`, `cancelled`); kept once the status moves to `resumed`."""
    answer: Any = None
    answer_id: str | None = None
    answered_by: str | None = None
    decided_at: str | None = None
    resumed_at: str | None = None

    @property
    def thread_id(self) -> str:
        return self.envelope.thread_id

    @property
    def question_id(self) -> str:
        return self.envelope.question_id

    @property
    def expires_at(self) -> str | None:
        return self.envelope.expires_at

    def is_overdue(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= format_rfc3339(now)

    def with_decision(self, decision: Decision, now: datetime) -> QuestionRecord:
        return replace(
            self,
            status=decision.status,
            outcome=decision.status,
            answer=decision.answer,
            answer_id=decision.answer_id,
            answered_by=decision.answered_by,
            decided_at=format_rfc3339(now),
        )

    def to_item(self) -> dict[str, Any]:
        """Plain attributes in the ledger schema (keys excluded)."""
        item: dict[str, Any] = {
            **self.envelope.to_dict(),
            "status": self.status.value,
            "expires_at": self.expires_at or NEVER,
            "asked_at": self.asked_at,
            "outcome": self.outcome.value if self.outcome else None,
            "answer": self.answer,
            "answer_id": self.answer_id,
            "answered_by": self.answered_by,
            "decided_at": self.decided_at,
            "resumed_at": self.resumed_at,
        }
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> QuestionRecord:
        fields = dict(item)
        fields["expires_at"] = None if item.get("expires_at") in (None, NEVER) else item["expires_at"]
        return cls(
            envelope=WaitEnvelope.from_dict(fields),
            status=QuestionStatus(item["status"]),
            asked_at=item["asked_at"],
            announced="announce_due" not in item,
            outcome=QuestionStatus(item["outcome"]) if item.get("outcome") else None,
            answer=item.get("answer"),
            answer_id=item.get("answer_id"),
            answered_by=item.get("answered_by"),
            decided_at=item.get("decided_at"),
            resumed_at=item.get("resumed_at"),
        )


@dataclass(frozen=True, slots=True)
class OpenResult:
    record: QuestionRecord
    created: bool
    """False when the question was already in the ledger (a republish); nothing was overwritten."""


@dataclass(frozen=True, slots=True)
class DecideResult:
    won: bool
    """True when this call moved the question from open to its outcome."""
    record: QuestionRecord
    """The row after the call: the winner's outcome either way."""


@dataclass(frozen=True, slots=True)
class StartRecord:
    """A start message the router has begun or finished applying."""

    thread_id: str
    start_id: str
    state: str
    """`running` until the run's questions are recorded, then `done`; `failed` when the agent raised."""
    marker: str | None = None
    """The agent's progress marker (checkpoint id) before the run; tells whether the run happened."""
    created: bool = False
    question_ids: tuple[str, ...] = field(default_factory=tuple)


class Ledger(ABC):
    """One row per question; decides each question exactly once.

    Every transition is a conditional write: `open` creates a row only if none exists (so a republish
    never moves `expires_at` nor clobbers an outcome), `decide` moves `open` to one outcome and tells a
    loser who won, `mark_resumed` moves an outcome to `resumed`. Implementations only do I/O; refusal
    rules live in the router. Store failures raise `LedgerUnavailableError`.
    """

    @abstractmethod
    def open(self, envelope: WaitEnvelope, *, now: datetime) -> OpenResult:
        """Record a question as open unless it is already recorded; never overwrites."""

    @abstractmethod
    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:
        """The question's row, or None."""

    @abstractmethod
    def thread_exists(self, thread_id: str) -> bool:
        """True when any question or start was ever recorded on the thread."""

    @abstractmethod
    def questions(self, thread_id: str, *, status: QuestionStatus | None = None) -> list[QuestionRecord]:
        """The thread's questions, optionally only those with `status`."""

    @abstractmethod
    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        """Move an open question to `decision.status`. The first call wins; later calls report the winner.

        Raises:
            KeyError: the question is not in the ledger.
        """

    @abstractmethod
    def mark_resumed(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        """Move a decided question to `resumed`; False when it was not in a decided status."""

    @abstractmethod
    def mark_announced(self, thread_id: str, question_id: str) -> None:
        """Record that the question's announcement succeeded (it leaves the sweep's re-announce list)."""

    @abstractmethod
    def overdue(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        """Open questions whose `expires_at` is at or before `now`, oldest deadline first, at most `limit`."""

    @abstractmethod
    def oldest_open(self) -> QuestionRecord | None:
        """The open question asked longest ago, or None when none is open."""

    @abstractmethod
    def announce_due(self, *, limit: int) -> list[QuestionRecord]:
        """Open questions whose announcement has not succeeded yet, oldest first, at most `limit`."""

    @abstractmethod
    def begin_start(self, thread_id: str, start_id: str, *, marker: str | None, now: datetime) -> StartRecord:
        """Record a start as running unless it is already recorded; `created` says which happened."""

    @abstractmethod
    def finish_start(
        self, thread_id: str, start_id: str, question_ids: tuple[str, ...], *, now: datetime, state: str = "done"
    ) -> None:
        """Mark a start `done` (with the questions its run left open) or `failed` (the agent raised)."""
