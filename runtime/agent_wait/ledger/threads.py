"""What the question ledger keeps for a thread besides its questions: the starts applied on it (`StartRecord`), its
failure (`ThreadFailure`) and one delivery's lease on it (`ThreadLease`). Every name imports from
`agent_wait.ledger` (and `agent_wait.ledger.records`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ("FailureKind", "StartRecord", "StartState", "ThreadFailure", "ThreadLease")


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
    open_questions: tuple[str, ...] | None = None
    """The thread's open question ids as the last delivery that ran the agent recorded them at its release (read
    in the same write that took the lease, so finding what is open costs no query of the thread's history);
    None when none was recorded yet."""
    note: str | None = None
    """What the last delivery left for the next one at its release (the router's checkpoint saver: the keys of the
    thread's latest checkpoint), taken off the thread by the write that took this lease: a delivery that dies
    before its release leaves none. Opaque to the ledger."""
    handed_over: tuple[str, ...] = ()
    """Question ids a door (the answer API, a signed link) decided while it held the thread, that the agent has not
    received yet: the router applies them before anything else runs on the thread. Read in the same write."""
    finished_start: str | None = None
    """The start id the last release recorded as finished (`release_lease(finished_start=...)`): its own start
    record may still say `running`, and counts as `done`. Read in the same write."""


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
