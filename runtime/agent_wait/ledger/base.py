"""The question ledger's interface: a small required core, and the capabilities a host may need besides.

Every backend keeps the core (`Ledger`): one row per question, opened once, decided exactly once by a
conditional write, marked resumed and announced. What else a backend can do is a capability it declares by
the classes it derives from, each with its own rules in `agent_wait.testing.ledger_contract`:

| Capability | Class | For |
|---|---|---|
| follow-ups | `FollowUpLedger` | votes and follow-up claims (compare-and-set), what is due, the oldest open question |
| starts | `StartLedger` | a start applied once, remembered by its id |
| failures | `FailureLedger` | failed threads, their recorded message, and a retry applied once |
| leases | `LeaseLedger` | one delivery per thread at a time; what the release records for the next |
| notes | `NoteLedger` | a lease's release leaves a note the next lease takes (a `LeaseLedger` too) |
| hand-overs | `HandOverLedger` | a door decides without holding the thread: one read, one write (`hand_overs.py`) |

`capabilities_of(ledger)` names what a ledger declares; `require_capabilities` refuses one that lacks what a
host needs (the router follow-ups, starts, failures, leases and notes; the sweep follow-ups and failures; the
answer API follow-ups, failures and hand-overs).

Long on purpose: one contract, every abstract method with the rule each backend keeps, and the capability checks
that read those same classes; split, a backend's author would read it in pieces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError
from agent_wait.ledger.grants import GrantLedger
from agent_wait.ledger.hand_overs import HandOverLedger
from agent_wait.ledger.records import (
    AdvanceResult,
    DecideResult,
    Decision,
    OpenCount,
    OpenResult,
    Progress,
    QuestionPage,
    QuestionRecord,
    Refusal,
    StartRecord,
    StartState,
    ThreadFailure,
    ThreadLease,
)
from agent_wait.policy.extension import Extended

__all__ = (
    "Capability",
    "FailureLedger",
    "FollowUpLedger",
    "FullLedger",
    "LeaseLedger",
    "Ledger",
    "NoteLedger",
    "RefusalLedger",
    "StartLedger",
    "capabilities_of",
    "marks_unannounced",
    "require_capabilities",
)


class Ledger(ABC):
    """One row per question; decides each question exactly once.

    Every transition is a conditional write: `open` creates a row only if none exists (so a republish
    never moves `expires_at` nor clobbers an outcome), `decide` moves `open` to one outcome and tells a
    loser who won, `mark_resumed` moves an outcome to `resumed`. What a backend can do besides is declared
    by the capability classes it derives from (this module's docstring). Implementations only do I/O;
    refusal rules live in the engine. Store failures raise `LedgerUnavailableError`; a
    request the store refuses as invalid raises `LedgerRejectedError`.
    """

    @abstractmethod
    def open(
        self,
        envelope: WaitEnvelope,
        *,
        now: datetime,
        unannounced: bool = True,
        trace: Mapping[str, str] | None = None,
    ) -> OpenResult:
        """Record a question as open unless it is already recorded; never overwrites.

        A new question is already due at the time it has once announced (`QuestionRecord.next_due(announced=True)`:
        its first reminder, escalation step or deadline), so the announcement's success moves no due time. It is
        put not yet announced: until `mark_announced`, the sweep announces it when it falls due.

        With `unannounced=False` (only a `FollowUpLedger` that implements `mark_unannounced` is passed it) the row
        is put as announced, with no marker to remove: the caller announces it at once and calls
        `mark_unannounced` if that fails; a crash before is redelivered by the queue, whose redelivery announces it.

        `trace` (the context the question was asked in, `agent_wait.engine.tracing`) is put with the row as
        `QuestionRecord.trace`; a republish keeps the first one. The engine passes it only when there is one.
        """

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

        The decided question is due no more, unless `decision.hand_over_at` says when it is due (until resumed).
        It keeps its unannounced mark (`QuestionRecord.announced` stays false): a question decided before its
        `wait.created` went out still owes it, and whoever announces the decision owes it first (`owe_notices`).

        Raises:
            QuestionNotFoundError: the question is not in the ledger (a `KeyError`).
        """

    @abstractmethod
    def mark_resumed(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        """Move a decided question to `resumed`; False when it was not in a decided status.

        It is due no more (a hand-over is done), unless it still owes `notices`. A backend with a status index may
        leave the row where its decision put it there (`page` then filters by status).
        """

    @abstractmethod
    def mark_announced(self, thread_id: str, question_id: str, *, due_at: str | None) -> None:
        """Record that the question's announcement succeeded; its next due time becomes `due_at`.

        Changes nothing unless the question is open and not yet announced. A backend should spend no more than
        removing its unannounced marker when the row is already due at `due_at` (as `open` puts it).
        """


class FollowUpLedger(ABC):
    """Capability `follow-ups`: progress written by compare-and-set (votes, reminders, escalation claims), and
    what is due when, read through an index at a cost proportional to what is due."""

    @abstractmethod
    def advance(
        self,
        thread_id: str,
        question_id: str,
        progress: Progress,
        *,
        expected_version: int,
        due_at: str | None,
        decision: Decision | None = None,
        now: datetime,
    ) -> AdvanceResult:
        """Write `progress` (and `due_at`) if the question is still open at `expected_version`, in one write.

        With `decision`, the same write decides the question (a vote that completes a quorum): the
        outcome and the votes that made it can never part. `progress.version` must be `expected_version + 1`.
        A loser gets the row as it is now and may read it and try again.
        """

    @abstractmethod
    def extend(
        self, thread_id: str, question_id: str, extended: Extended, *, expected_version: int, due_at: str | None
    ) -> AdvanceResult:
        """Move an open question's deadline later, in one conditional write.

        Only while the question is open, at `expected_version`, with `extended.previous` as its deadline: the same
        write sets `expires_at` to `extended.until`, appends `extended` to the row's extensions, moves the progress
        `version` one on (so a follow-up claim read before loses its compare-and-set and reads the new times) and
        sets `due_at`. A loser (decided, changed or extended meanwhile) gets the row as it is now; None for a
        question that is not in the ledger.
        """

    @abstractmethod
    def due(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        """Open questions whose `due_at` is at or before `now`, and questions of any status that owe `notices`
        and are due, soonest first, at most `limit`.

        One index serves every kind of work the sweep does (announcement retries, reminders, escalation
        steps, deadlines), so a run reads only what is due, never every open question.
        """

    @abstractmethod
    def oldest_open(self) -> QuestionRecord | None:
        """The open question asked longest ago, or None when none is open."""

    def count_open(self) -> int | None:
        """How many questions are open, read through the same index as `oldest_open` (a count, not the rows).

        It reads every open question's index item: the sweep calls it rarely (`claim_open_count`). Optional: None (the
        default) when the backend cannot count cheaply; the sweep then emits no `OpenQuestions`.
        """
        return None

    def open_count(self) -> OpenCount | None:
        """The last count of open questions recorded and the latest claim, in one read of one item; None before the
        first claim.

        Optional, with `claim_open_count` and `record_open_count`: a ledger that keeps no count returns None (the
        default), wins every claim and records nothing, so the sweep counts on every run.
        """
        return None

    def claim_open_count(self, *, now: datetime, last: OpenCount | None) -> OpenCount | None:
        """Claim the next count of open questions at `now`, in one conditional write that only applies while the
        latest claim is still `last`'s (no claim yet when `last` is None): of two runs that read the same `last`,
        one counts. The claim (its `version` one past `last`'s, the last count kept) when won; None when lost.
        """
        return OpenCount(version=(last.version if last else 0) + 1, claimed_at=format_rfc3339(now))

    def record_open_count(self, claim: OpenCount, open_questions: int) -> bool:
        """Record the count taken under `claim`, in one conditional write that only applies while `claim` is still
        the latest (a later claim's count is newer). False, nothing written, otherwise."""
        return False

    def mark_unannounced(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        """The announcement of a question put announced (`open(unannounced=False)`) failed: mark it not yet
        announced and due at `now`, in one write, so the sweep announces it. False (nothing written) when it is
        no longer open or already marked.

        Optional: a ledger that does not override it is always passed `unannounced=True` by `open`, and puts
        every question with its marker (one more write per question: the marker's removal).
        """
        raise NotImplementedError

    @abstractmethod
    def owe_notices(self, thread_id: str, question_id: str, notices: Sequence[str], *, now: datetime) -> None:
        """Record lifecycle envelopes owed (whose publishing failed, or that wait for one owed before them), in one
        write that adds them to the row's `notices` and makes the question due at `now`, whatever its status:
        `due` returns it and the sweep publishes them. Names are transitions, a repeating step with its count
        (`created`, `reminder:1`, `voted:2`, `answered`, `resumed`, ...: `agent_wait.engine.owed`); each is kept
        apart, so `voted:1` and `voted:2` are two. Owing `created` takes the unannounced mark off in the same write
        (`QuestionRecord.announced` becomes true): the question owes its `wait.created` by name from then on.
        Nothing when the question is not in the ledger."""

    @abstractmethod
    def told(self, thread_id: str, question_id: str, notices: Sequence[str], *, due_at: str | None) -> bool:
        """`notices` went out: take them off the row. When the row owes exactly those, its due time becomes
        `due_at` (None: not due) in the same write; when it owes more (added meanwhile), only these are taken
        off and it stays due. False when the row owes none of them any more (told by another run)."""


class StartLedger(ABC):
    """Capability `starts`: each start recorded once by its id, so a redelivered start never runs the agent again."""

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

    @abstractmethod
    def start_record(self, thread_id: str, start_id: str) -> StartRecord | None:
        """The start's record, or None."""


class FailureLedger(ABC):
    """Capability `failures`: a thread whose agent raised is failed, visibly, until one retry applies it again."""

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


class LeaseLedger(ABC):
    """Capability `leases`: one delivery holds a thread at a time; a lease carries what the last release recorded
    (the thread's failure, its open question ids, the decisions waiting for the agent) at no extra read."""

    @abstractmethod
    def acquire_lease(
        self, thread_id: str, holder: str, *, now: datetime, seconds: float, runs_agent: bool = True
    ) -> ThreadLease | None:
        """Hold the thread for `seconds` unless another holder's lease is still running; None when it is.

        A lease whose time has passed is taken over (its holder died). The returned lease carries the
        thread's failure, read in the same conditional write, and the note the last release left, which the
        same write removes (`ThreadLease.note`).

        `runs_agent=False` is a holder that never runs the agent (a door that decides and hands over): it never
        takes over a lease whose holder ran the agent and died before its release (None, as for a running lease),
        since the thread's open questions may no longer be what the agent waits on until that message is
        delivered again and released. A lease such a holder left to expire is taken over by anyone.
        """

    @abstractmethod
    def release_lease(
        self,
        thread_id: str,
        holder: str,
        *,
        open_questions: Sequence[str] | None = None,
        note: str | None = None,
        handed_over: Sequence[str] | None = None,
        finished_start: str | None = None,
    ) -> None:
        """Give the lease back if `holder` still holds it; otherwise change nothing.

        With `open_questions`, the same write records the thread's open question ids, which the next lease
        returns (`ThreadLease.open_questions`); None leaves what was recorded as it is. With `note`, the same
        write leaves it for the next lease (`ThreadLease.note`). With `handed_over`, the same write records the
        decisions that still wait for the agent (`ThreadLease.handed_over`; empty clears them); None leaves them.
        With `finished_start`, the same write records that start as finished (`ThreadLease.finished_start`, until a
        later release names another): finishing a start then costs no write of its own.
        """

    def finished_start(self, thread_id: str) -> str | None:
        """The start the last release recorded as finished (`ThreadLease.finished_start`), read consistently now.

        For the rare redelivery of a start whose own record still says `running`; the lease carries the same
        value at no read. Default: None (a ledger from before `finished_start` never records one).
        """
        return None


class NoteLedger(LeaseLedger):
    """Capability `notes`: a release that passes `note` leaves it on the thread, and the next lease returns it once
    (`ThreadLease.note`) and takes it off in the same write. A `LeaseLedger` that is not a `NoteLedger` never
    returns a note, and its callers pass none."""


class RefusalLedger(ABC):
    """Capability `refusals`: the last answer refused on the queue, kept on its question's row."""

    @abstractmethod
    def note_refusal(self, thread_id: str, question_id: str, refusal: Refusal) -> bool:
        """Keep `refusal` as the question's `last_refusal`, whatever its status, replacing the one before; nothing
        else of the row changes (no status, due time or version). False when there is no such question."""


class Capability(StrEnum):
    """What a ledger can do besides its core; each is a class a backend derives from."""

    FOLLOW_UPS = "follow-ups"
    """`FollowUpLedger`: votes, reminders and escalation steps, what is due, the oldest open question."""
    STARTS = "starts"
    """`StartLedger`: starts applied once."""
    FAILURES = "failures"
    """`FailureLedger`: failed threads and their retry."""
    LEASES = "leases"
    """`LeaseLedger`: one delivery per thread at a time."""
    NOTES = "notes"
    """`NoteLedger`: a note from one delivery to the next, on the lease."""
    REFUSALS = "refusals"
    """`RefusalLedger`: the last answer refused on the queue, on its question's row."""
    GRANTS = "grants"
    """`GrantLedger` (`agent_wait.ledger.grants`): standing grants, each use one conditional write."""
    HAND_OVERS = "hand-overs"
    """`HandOverLedger`: a door's decision and its hand-over in one write, while its thread is free."""


_CLASSES: dict[Capability, type] = {
    Capability.FOLLOW_UPS: FollowUpLedger,
    Capability.STARTS: StartLedger,
    Capability.FAILURES: FailureLedger,
    Capability.LEASES: LeaseLedger,
    Capability.NOTES: NoteLedger,
    Capability.REFUSALS: RefusalLedger,
    Capability.GRANTS: GrantLedger,
    Capability.HAND_OVERS: HandOverLedger,
}


def capabilities_of(ledger: Ledger | type[Ledger]) -> frozenset[Capability]:
    """The capabilities `ledger` (an instance or its class) declares by the classes it derives from."""
    kind = ledger if isinstance(ledger, type) else type(ledger)
    return frozenset(capability for capability, base in _CLASSES.items() if issubclass(kind, base))


def marks_unannounced(ledger: object) -> bool:
    """True when `ledger` (an instance or its class) implements `FollowUpLedger.mark_unannounced`, so `open` may put
    questions announced."""
    kind = ledger if isinstance(ledger, type) else type(ledger)
    return issubclass(kind, FollowUpLedger) and kind.mark_unannounced is not FollowUpLedger.mark_unannounced


class FullLedger(Ledger, FollowUpLedger, StartLedger, FailureLedger, LeaseLedger, ABC):
    """Every capability at once: how a host holds a ledger it checked with `require_capabilities`. A backend need
    not derive from it; the two shipped ones do (with `NoteLedger`)."""


def require_capabilities(ledger: Any, *needed: Capability, user: str) -> FullLedger:
    """`ledger`, once it is known to be a `Ledger` that declares every capability `user` needs.

    The host's code calls only what it checked for; the return type lets it do so without a cast at each call.

    Raises:
        ArgumentError: naming what is missing and the classes to derive from.
    """
    if not isinstance(ledger, Ledger):
        raise ArgumentError(f"{user} needs a Ledger; got a {type(ledger).__name__}", argument="ledger")
    missing = [c for c in needed if c not in capabilities_of(ledger)]
    if missing:
        bases = ", ".join(_CLASSES[c].__name__ for c in missing)
        names = ", ".join(c.value for c in missing)
        raise ArgumentError(
            f"{user} needs a ledger with {names}; {type(ledger).__name__} does not declare them (derive it from "
            f"{bases}, and run their rules in agent_wait.testing.ledger_contract)",
            argument="ledger",
        )
    return cast(FullLedger, ledger)
