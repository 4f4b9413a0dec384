"""The question ledger: one row per question, and the conditional writes that decide it exactly once."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_wait._time import NEVER, format_rfc3339
from agent_wait.envelope import WaitEnvelope
from agent_wait.errors import LedgerUnavailableError
from agent_wait.schema import QuestionStatus

__all__ = (
    "DECIDED",
    "DecideResult",
    "Decision",
    "FailureKind",
    "Ledger",
    "LedgerUnavailableError",
    "OpenResult",
    "QuestionPage",
    "QuestionRecord",
    "StartRecord",
    "StartState",
    "ThreadFailure",
    "ThreadLease",
)

DECIDED = frozenset({QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED})
"""Statuses that hold an outcome; only these can move on to `resumed`."""


class FailureKind(StrEnum):
    """What the agent was doing when it raised."""

    START = "start"
    """Running a start message's input."""
    ANSWER = "answer"
    """Resuming with a question's recorded decision."""


@dataclass(frozen=True, slots=True)
class ThreadFailure:
    """The agent raised on this thread; recorded once, held until an operator retries it.

    While a thread is failed the router applies nothing else to it: a new start or an answer to another
    question is dead-lettered with reason `thread_failed` (redrive it after the retry), and a redelivery
    of the message that failed runs nothing.
    """

    thread_id: str
    kind: FailureKind
    target_id: str
    """The question id for an answer's resume; the start id for a start."""
    message_id: str
    """The id of the message whose application raised (an answer id, a start id or a retry id)."""
    error: str
    """The exception's type name only: its text may quote the agent's input."""
    failed_at: str
    """RFC 3339 time the failure was recorded."""
    retries: int = 0
    """How many retries of this thread failed before this one."""

    @property
    def question_id(self) -> str | None:
        return self.target_id if self.kind is FailureKind.ANSWER else None

    def to_item(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "target_id": self.target_id,
            "message_id": self.message_id,
            "error": self.error,
            "failed_at": self.failed_at,
            "retries": self.retries,
        }

    @classmethod
    def from_item(cls, thread_id: str, item: Mapping[str, Any]) -> ThreadFailure:
        return cls(
            thread_id=thread_id,
            kind=FailureKind(item["kind"]),
            target_id=str(item["target_id"]),
            message_id=str(item["message_id"]),
            error=str(item["error"]),
            failed_at=str(item["failed_at"]),
            retries=int(item.get("retries") or 0),
        )


@dataclass(frozen=True, slots=True)
class ThreadLease:
    """One delivery's exclusive hold on a thread, until `until` (epoch seconds) or its release."""

    thread_id: str
    holder: str
    until: float
    failure: ThreadFailure | None = None
    """The thread's recorded failure, read in the same write that took the lease."""


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
    """Who answered: proven (an API user, a trusted sender's claim) or the transport's own identity."""
    sender: str | None = None
    """The identity the transport authenticated (SQS `SenderId`, the API's JWT subject), beside the claim."""
    via: str | None = None
    """How the answer came: `queue`, `api`, `link`, `deadline`, or what a trusted sender says."""
    claimed_by: str | None = None
    """What an untrusted sender claimed as `answered_by`; kept for audit, never used as the answerer."""


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
    sender: str | None = None
    via: str | None = None
    claimed_by: str | None = None
    decided_at: str | None = None
    resumed_at: str | None = None
    failure: ThreadFailure | None = None
    """Set while the agent's resume with this question's decision has failed (`status` is `failed`)."""
    retry_id: str | None = None
    """The retry that last re-applied the decision, if any."""

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
            sender=decision.sender,
            via=decision.via,
            claimed_by=decision.claimed_by,
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
            "sender": self.sender,
            "via": self.via,
            "claimed_by": self.claimed_by,
            "decided_at": self.decided_at,
            "resumed_at": self.resumed_at,
            "failure": self.failure.to_item() if self.failure else None,
            "retry_id": self.retry_id,
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
            sender=item.get("sender"),
            via=item.get("via"),
            claimed_by=item.get("claimed_by"),
            decided_at=item.get("decided_at"),
            resumed_at=item.get("resumed_at"),
            failure=ThreadFailure.from_item(fields["thread_id"], item["failure"]) if item.get("failure") else None,
            retry_id=item.get("retry_id"),
        )


@dataclass(frozen=True, slots=True)
class OpenResult:
    record: QuestionRecord
    created: bool
    """False when the question was already in the ledger (a republish); nothing was overwritten."""


@dataclass(frozen=True, slots=True)
class QuestionPage:
    """One page of questions with one status, soonest deadline first."""

    records: list[QuestionRecord]
    cursor: str | None
    """Pass it back for the next page; None on the last one. Opaque."""


@dataclass(frozen=True, slots=True)
class DecideResult:
    won: bool
    """True when this call moved the question from open to its outcome."""
    record: QuestionRecord
    """The row after the call: the winner's outcome either way."""


class StartState(StrEnum):
    """Where applying one start message stands."""

    RUNNING = "running"
    """The run began; its questions are not recorded yet."""
    DONE = "done"
    """The run's questions are recorded (or it finished without asking)."""
    FAILED = "failed"
    """The agent raised; the start waits for an operator's retry."""


@dataclass(frozen=True, slots=True)
class StartRecord:
    """A start message the router has begun or finished applying."""

    thread_id: str
    start_id: str
    state: StartState
    """`running` until the run's questions are recorded, then `done`; `failed` when the agent raised."""
    marker: str | None = None
    """The agent's progress marker (checkpoint id) before the run; tells whether the run happened."""
    created: bool = False
    question_ids: tuple[str, ...] = field(default_factory=tuple)
    input: Any = None
    """The start's input, kept only once it failed, so a retry can run it again."""
    retry_id: str | None = None
    """The retry that last re-ran this start, if any."""


class Ledger(ABC):
    """One row per question; decides each question exactly once.

    Every transition is a conditional write: `open` creates a row only if none exists (so a republish
    never moves `expires_at` nor clobbers an outcome), `decide` moves `open` to one outcome and tells a
    loser who won, `mark_resumed` moves an outcome to `resumed`. A per-thread item holds the thread's
    lease and its failure, so taking the lease also says whether the thread is failed. Implementations
    only do I/O; refusal rules live in the router. Store failures raise `LedgerUnavailableError`; a
    request the store refuses as invalid raises `LedgerRejectedError`.
    """

    @abstractmethod
    def open(self, envelope: WaitEnvelope, *, now: datetime) -> OpenResult:
        """Record a question as open unless it is already recorded; never overwrites."""

    @abstractmethod
    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:
        """The question's row, or None."""

    @abstractmethod
    def find(self, question_id: str) -> QuestionRecord | None:
        """The question's row found by its id alone (for the answer API and links), or None."""

    @abstractmethod
    def thread_exists(self, thread_id: str) -> bool:
        """True when any question or start was ever recorded on the thread."""

    @abstractmethod
    def questions(self, thread_id: str, *, status: QuestionStatus | None = None) -> list[QuestionRecord]:
        """The thread's questions, optionally only those with `status`."""

    @abstractmethod
    def page(
        self,
        status: QuestionStatus,
        *,
        limit: int,
        cursor: str | None = None,
        due_before: str | None = None,
        tag: tuple[str, str] | None = None,
    ) -> QuestionPage:
        """Questions with `status`, soonest `expires_at` first (`never` last), at most `limit` per page.

        Args:
            status: which questions.
            limit: the most per page (a page may hold fewer and still have a cursor).
            cursor: from the previous page.
            due_before: only those whose `expires_at` is at or before this RFC 3339 time.
            tag: only those whose policy tags include this (key, value).

        Raises:
            LedgerCursorError: the cursor is not one this ledger made (a `ValueError`).
        """

    @abstractmethod
    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        """Move an open question to `decision.status`. The first call wins; later calls report the winner.

        Raises:
            QuestionNotFoundError: the question is not in the ledger (a `KeyError`).
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
        self,
        thread_id: str,
        start_id: str,
        question_ids: tuple[str, ...],
        *,
        now: datetime,
        state: StartState = StartState.DONE,
    ) -> None:
        """Mark a start `done` (with the questions its run left open) or `failed` (the agent raised)."""

    # -- failures and retries --------------------------------------------------------------------------

    @abstractmethod
    def mark_failed(self, failure: ThreadFailure, *, start_input: Any = None) -> None:
        """Record that the agent raised: the failed row (question or start) and the thread both say so.

        A question row moves from its outcome (`answered`, `expired`) to `failed`; a start row to `failed`,
        keeping `start_input` for a retry. Idempotent: recording the same failure again changes nothing.
        """

    @abstractmethod
    def thread_failure(self, thread_id: str) -> ThreadFailure | None:
        """The thread's recorded failure, or None when it is not failed."""

    @abstractmethod
    def begin_retry(self, failure: ThreadFailure, retry_id: str, *, now: datetime) -> bool:
        """Take the failed row back to where the failed run began, for `retry_id` (a conditional write).

        A question row returns to its outcome status (so `mark_resumed` applies), a start row to
        `running`. Returns True when this call did it or an earlier call with the same `retry_id` did;
        False when the row is not failed any more for another reason (another retry took it).
        """

    @abstractmethod
    def clear_failure(self, thread_id: str) -> None:
        """The thread is no longer failed (its retry ran to the end): new messages apply again."""

    @abstractmethod
    def failures(self, *, limit: int = 100) -> list[ThreadFailure]:
        """Every failed row (question resumes and starts) across threads, at most `limit`."""

    @abstractmethod
    def start_record(self, thread_id: str, start_id: str) -> StartRecord | None:
        """The start's record, or None."""

    # -- one thread at a time ---------------------------------------------------------------------------

    @abstractmethod
    def acquire_lease(self, thread_id: str, holder: str, *, now: datetime, seconds: float) -> ThreadLease | None:
        """Hold the thread for `seconds` unless another holder's lease is still running; None when it is.

        A lease whose time has passed is taken over (its holder died). The returned lease carries the
        thread's failure, read in the same conditional write.
        """

    @abstractmethod
    def release_lease(self, thread_id: str, holder: str) -> None:
        """Give the lease back if `holder` still holds it; otherwise change nothing."""
