"""Capability `hand-overs` (`HandOverLedger`): a door decides without holding the thread.

A door that cannot run the agent (the answer API, a signed link, AG-UI, Slack) may decide only while no run holds
the thread, the thread is not failed and the agent waits on the question (DESIGN.md, "Nothing is reported applied
that the agent never received"), and its decision must reach the router before anything else runs on the thread
(`ThreadLease.handed_over`). A lease taken around the decision keeps that, in three writes (take, decide, release).
This capability keeps it in one: the door reads the question and its thread together (`answer_view`), the desk
checks the answer, and one write records the decision and the hand-over, landing only while the thread is still as
a lease would have found it (`hand_over`). Every name imports from `agent_wait.ledger`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime

from agent_wait.ledger.records import Decision, Progress, QuestionRecord, ThreadFailure

__all__ = ("AnswerView", "HandOverLedger", "HandOverResult")


@dataclass(frozen=True, slots=True)
class AnswerView:
    """A question and its thread, read together by a door (`HandOverLedger.answer_view`): what a lease would tell
    it, at one read and no write."""

    record: QuestionRecord
    """The question's row."""
    failure: ThreadFailure | None = None
    """The thread's recorded failure."""
    open_questions: tuple[str, ...] | None = None
    """The question ids the last run left open (`ThreadLease.open_questions`); None when none was recorded yet."""
    busy: bool = False
    """A delivery holds the thread: a run in progress, or one that died running the agent and waits for its
    redelivery (a door never takes over from it: the open questions may be stale until then)."""


@dataclass(frozen=True, slots=True)
class HandOverResult:
    """What `HandOverLedger.hand_over` did."""

    won: bool
    """True when this call recorded the decision and its hand-over."""
    record: QuestionRecord
    """The row after the call: this decision's when won; the winner's when another decision came first; the row as
    read when the thread moved (nothing was written)."""
    thread_moved: bool = False
    """The thread was no longer as read (a run took it, it failed, or the agent moved past the question): nothing was
    written. Read it again."""


class HandOverLedger(ABC):
    """Capability `hand-overs`: a door's decision and its hand-over in one write, while its thread is free."""

    @abstractmethod
    def answer_view(self, question_id: str, *, now: datetime, thread_id: str | None = None) -> AnswerView | None:
        """The question `question_id` with its thread, read consistently; None when there is no such question.

        `thread_id` when the caller knows it already (a second look): the question is then read by its key alone.
        `busy` is judged at `now`: the thread's lease is held and has not run out, or it ran out on a holder that ran
        the agent.
        """

    @abstractmethod
    def hand_over(
        self, read: QuestionRecord, decision: Decision, *, now: datetime, progress: Progress | None = None
    ) -> HandOverResult:
        """Record `decision` on the question `read` (as `answer_view` read it) and add the question to its thread's
        hand-overs (`ThreadLease.handed_over`), in one write that lands only while

        - the question is open (with `progress`, a quorum's deciding vote: still at `read`'s progress version, and
          `progress` is written with the decision), and
        - its thread is free (no lease, or one run out whose holder never ran the agent), not failed, and the agent
          waits on the question (the recorded open questions include it, or none were recorded).

        Returns not won with the winner's row when the question was decided first (or, with `progress`, another vote
        landed first: read again), else `thread_moved` when the thread was not so.

        Raises:
            QuestionNotFoundError: the question is not in the ledger (a `KeyError`).
        """
