"""`InMemoryLedger`: the reference ledger, for unit tests and the executable spec of the contract.

Long on purpose: the executable spec keeps every capability in one class under one lock, as a backend's author reads
it beside `agent_wait.ledger.base`; split, the rules that share the lock (a decision, a lease, a hand-over) would
part.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from agent_wait.common.times import NEVER, format_rfc3339
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import LedgerCursorError, QuestionNotFoundError
from agent_wait.ledger._memory_grants import MemoryGrants
from agent_wait.ledger.base import FullLedger, NoteLedger, RefusalLedger
from agent_wait.ledger.hand_overs import AnswerView, HandOverLedger, HandOverResult
from agent_wait.ledger.records import (
    CREATED_NOTICE,
    DECIDED,
    AdvanceResult,
    DecideResult,
    Decision,
    FailureKind,
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
    check_advance,
)
from agent_wait.policy.extension import Extended

__all__ = ("InMemoryLedger",)


class InMemoryLedger(FullLedger, NoteLedger, RefusalLedger, HandOverLedger, MemoryGrants):
    """A ledger in a dict, with the same conditional semantics as `DynamoDbLedger` (one lock per ledger).

    The executable spec: it declares every capability (`capabilities_of`) and passes every contract rule.
    """

    def __init__(self) -> None:
        self._questions: dict[tuple[str, str], QuestionRecord] = {}
        # Lookups by thread and by question id, so a call costs what that thread holds, not every question.
        self._thread_questions: dict[str, list[str]] = {}
        self._question_thread: dict[str, str] = {}
        self._starts: dict[tuple[str, str], StartRecord] = {}
        self._leases: dict[str, ThreadLease] = {}
        self._runs_agent: set[str] = set()  # threads whose lease is held by a holder that runs the agent
        self._failures: dict[str, ThreadFailure] = {}
        self._open_sets: dict[str, tuple[str, ...]] = {}
        self._notes: dict[str, str] = {}
        self._handed_over: dict[str, tuple[str, ...]] = {}
        self._finished_starts: dict[str, str] = {}
        self._open_count: OpenCount | None = None
        self._lock = threading.Lock()
        MemoryGrants.__init__(self)

    def open(
        self,
        envelope: WaitEnvelope,
        *,
        now: datetime,
        unannounced: bool = True,
        trace: Mapping[str, str] | None = None,
    ) -> OpenResult:
        key = (envelope.thread_id, envelope.question_id)
        with self._lock:
            existing = self._questions.get(key)
            if existing is not None:
                return OpenResult(existing, created=False)
            # Due at the time it has once announced: an announcement that fails makes it due at once (the engine's
            # `mark_unannounced`, or `advance` for a row put unannounced), and a crash before it is redelivered.
            opened = QuestionRecord(
                envelope=envelope,
                status=QuestionStatus.OPEN,
                asked_at=format_rfc3339(now),
                trace=MappingProxyType(dict(trace)) if trace else None,
            )
            record = replace(opened, due_at=opened.next_due(announced=True), announced=not unannounced)
            self._questions[key] = record
            self._thread_questions.setdefault(envelope.thread_id, []).append(envelope.question_id)
            self._question_thread.setdefault(envelope.question_id, envelope.thread_id)
            return OpenResult(record, created=True)

    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:
        with self._lock:
            return self._questions.get((thread_id, question_id))

    def find(self, question_id: str) -> QuestionRecord | None:
        with self._lock:
            thread_id = self._question_thread.get(question_id)
            return self._questions.get((thread_id, question_id)) if thread_id is not None else None

    def thread_exists(self, thread_id: str) -> bool:
        # A lease alone does not make a thread exist: every message takes one before it is checked.
        with self._lock:
            return thread_id in self._thread_questions or any(t == thread_id for t, _ in self._starts)

    def questions(self, thread_id: str, *, status: QuestionStatus | None = None) -> list[QuestionRecord]:
        with self._lock:
            return [
                record
                for record in (
                    self._questions[(thread_id, q)] for q in sorted(self._thread_questions.get(thread_id, ()))
                )
                if status is None or record.status is status
            ]

    def page(
        self,
        status: QuestionStatus,
        *,
        limit: int,
        cursor: str | None = None,
        due_before: str | None = None,
        tag: tuple[str, str] | None = None,
    ) -> QuestionPage:
        with self._lock:
            rows = sorted(
                (r for r in self._questions.values() if r.status is status),
                key=lambda r: (r.expires_at or NEVER, r.question_id),
            )
        rows = [
            r
            for r in rows
            if (due_before is None or (r.expires_at is not None and r.expires_at <= due_before))
            and (tag is None or r.envelope.tags.get(tag[0]) == tag[1])
        ]
        start = 0
        if cursor is not None:
            if not cursor.isdigit():
                raise LedgerCursorError(f"cursor {cursor!r} is not one this ledger made; start without one")
            start = int(cursor)
        chunk = rows[start : start + limit]
        more = start + limit < len(rows)
        return QuestionPage(chunk, str(start + limit) if more else None)

    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None:
                raise QuestionNotFoundError(thread_id, question_id)
            if record.status is not QuestionStatus.OPEN:
                return DecideResult(won=False, record=record)
            decided = record.with_decision(decision, now)
            self._questions[(thread_id, question_id)] = decided
            return DecideResult(won=True, record=decided)

    def mark_resumed(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None or record.status not in DECIDED:
                return False
            self._questions[(thread_id, question_id)] = replace(
                record,
                status=QuestionStatus.RESUMED,
                resumed_at=format_rfc3339(now),
                due_at=record.due_at if record.notices else None,  # the hand-over is done; owed notices stay due
            )
            return True

    def mark_announced(self, thread_id: str, question_id: str, *, due_at: str | None) -> None:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is not None and record.status is QuestionStatus.OPEN and not record.announced:
                self._questions[(thread_id, question_id)] = replace(record, announced=True, due_at=due_at)

    def note_refusal(self, thread_id: str, question_id: str, refusal: Refusal) -> bool:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None:
                return False
            self._questions[(thread_id, question_id)] = replace(record, last_refusal=refusal)
            return True

    def mark_unannounced(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None or record.status is not QuestionStatus.OPEN or not record.announced:
                return False
            self._questions[(thread_id, question_id)] = replace(record, announced=False, due_at=format_rfc3339(now))
            return True

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
        check_advance(progress, expected_version)
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None:
                return AdvanceResult(False, None)
            if record.status is not QuestionStatus.OPEN or record.progress.version != expected_version:
                return AdvanceResult(False, record)
            advanced = replace(record, progress=progress, due_at=due_at)
            if decision is not None:
                advanced = advanced.with_decision(decision, now)
            self._questions[(thread_id, question_id)] = advanced
            return AdvanceResult(True, advanced)

    def extend(
        self, thread_id: str, question_id: str, extended: Extended, *, expected_version: int, due_at: str | None
    ) -> AdvanceResult:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None:
                return AdvanceResult(False, None)
            unchanged = record.progress.version == expected_version and record.expires_at == extended.previous
            if record.status is not QuestionStatus.OPEN or not unchanged:
                return AdvanceResult(False, record)
            moved = replace(
                record,
                envelope=replace(record.envelope, expires_at=extended.until),
                extensions=(*record.extensions, extended),
                progress=replace(record.progress, version=expected_version + 1),
                due_at=due_at,
            )
            self._questions[(thread_id, question_id)] = moved
            return AdvanceResult(True, moved)

    def due(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        cutoff = format_rfc3339(now)
        with self._lock:
            due = [r for r in self._questions.values() if r.due_at is not None and r.due_at <= cutoff]
        return sorted(due, key=lambda r: (r.due_at or "", r.question_id))[:limit]

    def owe_notices(self, thread_id: str, question_id: str, notices: Sequence[str], *, now: datetime) -> None:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is not None:
                owed = tuple(dict.fromkeys((*record.notices, *notices)))
                announced = record.announced or CREATED_NOTICE in notices  # owed by name from now on
                self._questions[(thread_id, question_id)] = replace(
                    record, notices=owed, due_at=format_rfc3339(now), announced=announced
                )

    def told(self, thread_id: str, question_id: str, notices: Sequence[str], *, due_at: str | None) -> bool:
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None or not set(notices) & set(record.notices):
                return False
            left = tuple(n for n in record.notices if n not in notices)
            self._questions[(thread_id, question_id)] = replace(
                record, notices=left, due_at=record.due_at if left else due_at
            )
            return True

    def oldest_open(self) -> QuestionRecord | None:
        with self._lock:
            waiting = [r for r in self._questions.values() if r.status is QuestionStatus.OPEN]
        return min(waiting, key=lambda r: (r.asked_at, r.question_id), default=None)

    def count_open(self) -> int:
        with self._lock:
            return sum(1 for r in self._questions.values() if r.status is QuestionStatus.OPEN)

    def open_count(self) -> OpenCount | None:
        return self._open_count

    def claim_open_count(self, *, now: datetime, last: OpenCount | None) -> OpenCount | None:
        with self._lock:
            if (self._open_count.version if self._open_count else 0) != (last.version if last else 0):
                return None  # claimed since `last` was read
            kept = self._open_count or OpenCount(0, "")
            self._open_count = replace(kept, version=kept.version + 1, claimed_at=format_rfc3339(now))
            return self._open_count

    def record_open_count(self, claim: OpenCount, open_questions: int) -> bool:
        with self._lock:
            if self._open_count is None or self._open_count.version != claim.version:
                return False
            self._open_count = replace(claim, open_questions=open_questions, counted_at=claim.claimed_at)
            return True

    def begin_start(self, thread_id: str, start_id: str, *, marker: str | None, now: datetime) -> StartRecord:
        with self._lock:
            existing = self._starts.get((thread_id, start_id))
            if existing is not None:
                return replace(existing, created=False)
            record = StartRecord(thread_id, start_id, StartState.RUNNING, marker)
            self._starts[(thread_id, start_id)] = record
            return replace(record, created=True)

    def finish_start(
        self,
        thread_id: str,
        start_id: str,
        question_ids: tuple[str, ...],
        *,
        now: datetime,
        state: StartState = StartState.DONE,
    ) -> None:
        with self._lock:
            record = self._starts.get((thread_id, start_id))
            if record is not None:
                self._starts[(thread_id, start_id)] = replace(record, state=state, question_ids=question_ids)

    def start_record(self, thread_id: str, start_id: str) -> StartRecord | None:
        with self._lock:
            return self._starts.get((thread_id, start_id))

    # -- failures and retries --------------------------------------------------------------------------

    def mark_failed(self, failure: ThreadFailure, *, start_input: Any = None) -> None:
        key = (failure.thread_id, failure.target_id)
        with self._lock:
            if failure.kind is FailureKind.ANSWER:
                record = self._questions.get(key)
                if record is None:
                    raise QuestionNotFoundError(failure.thread_id, failure.target_id)
                if record.status in (QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.FAILED):
                    self._questions[key] = replace(record, status=QuestionStatus.FAILED, failure=failure)
            else:
                start = self._starts.get(key) or StartRecord(failure.thread_id, failure.target_id, StartState.FAILED)
                self._starts[key] = replace(start, state=StartState.FAILED, input=start_input)
            self._failures[failure.thread_id] = failure

    def thread_failure(self, thread_id: str) -> ThreadFailure | None:
        with self._lock:
            return self._failures.get(thread_id)

    def begin_retry(self, failure: ThreadFailure, retry_id: str, *, now: datetime) -> bool:
        key = (failure.thread_id, failure.target_id)
        with self._lock:
            if failure.kind is FailureKind.ANSWER:
                record = self._questions.get(key)
                if record is None:
                    return False
                if record.status is QuestionStatus.FAILED and record.outcome is not None:
                    self._questions[key] = replace(record, status=record.outcome, failure=None, retry_id=retry_id)
                    return True
                return record.retry_id == retry_id
            start = self._starts.get(key)
            if start is None:
                return False
            if start.state is StartState.FAILED:
                self._starts[key] = replace(start, state=StartState.RUNNING, retry_id=retry_id)
                return True
            return start.retry_id == retry_id

    def clear_failure(self, thread_id: str) -> None:
        with self._lock:
            self._failures.pop(thread_id, None)

    def failures(self, *, limit: int = 100) -> list[ThreadFailure]:
        with self._lock:
            found = [r.failure for r in self._questions.values() if r.status is QuestionStatus.FAILED and r.failure]
            failed_starts = {(t, s) for (t, s), start in self._starts.items() if start.state is StartState.FAILED}
            found += [f for f in self._failures.values() if (f.thread_id, f.target_id) in failed_starts]
        return sorted(found, key=lambda f: (f.failed_at, f.thread_id))[:limit]

    # -- one thread at a time ---------------------------------------------------------------------------

    def acquire_lease(
        self, thread_id: str, holder: str, *, now: datetime, seconds: float, runs_agent: bool = True
    ) -> ThreadLease | None:
        with self._lock:
            held = self._leases.get(thread_id)
            if held is not None and held.holder != holder:
                if held.until > now.timestamp():
                    return None
                if not runs_agent and thread_id in self._runs_agent:
                    return None  # its holder died running the agent: only another run takes it over
            if runs_agent:
                self._runs_agent.add(thread_id)
            else:
                self._runs_agent.discard(thread_id)
            lease = ThreadLease(
                thread_id,
                holder,
                now.timestamp() + seconds,
                self._failures.get(thread_id),
                self._open_sets.get(thread_id),
                self._notes.pop(thread_id, None),
                self._handed_over.get(thread_id, ()),
                self._finished_starts.get(thread_id),
            )
            self._leases[thread_id] = lease
            return lease

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
        with self._lock:
            held = self._leases.get(thread_id)
            if held is not None and held.holder == holder:
                del self._leases[thread_id]
                self._runs_agent.discard(thread_id)
                if open_questions is not None:
                    self._open_sets[thread_id] = tuple(open_questions)
                if note is not None:
                    self._notes[thread_id] = note
                if handed_over is not None:
                    self._handed_over[thread_id] = tuple(handed_over)
                if finished_start is not None:
                    self._finished_starts[thread_id] = finished_start

    def finished_start(self, thread_id: str) -> str | None:
        with self._lock:
            return self._finished_starts.get(thread_id)

    # -- a door's decision, handed over in one write --------------------------------------------------------

    def answer_view(self, question_id: str, *, now: datetime, thread_id: str | None = None) -> AnswerView | None:
        with self._lock:
            thread_id = thread_id or self._question_thread.get(question_id)
            record = self._questions.get((thread_id, question_id)) if thread_id is not None else None
            if thread_id is None or record is None:
                return None
            busy = not self._free_for_a_door(thread_id, now)
            return AnswerView(record, self._failures.get(thread_id), self._open_sets.get(thread_id), busy)

    def hand_over(
        self, read: QuestionRecord, decision: Decision, *, now: datetime, progress: Progress | None = None
    ) -> HandOverResult:
        thread_id, question_id = read.thread_id, read.question_id
        if progress is not None:
            check_advance(progress, read.progress.version)
        with self._lock:
            record = self._questions.get((thread_id, question_id))
            if record is None:
                raise QuestionNotFoundError(thread_id, question_id)
            moved_on = progress is not None and record.progress.version != read.progress.version
            if record.status is not QuestionStatus.OPEN or moved_on:
                return HandOverResult(False, record)
            recorded = self._open_sets.get(thread_id)
            parked = recorded is None or question_id in recorded
            if not (self._free_for_a_door(thread_id, now) and thread_id not in self._failures and parked):
                return HandOverResult(False, read, thread_moved=True)
            decided = (replace(record, progress=progress) if progress is not None else record).with_decision(
                decision, now
            )
            self._questions[(thread_id, question_id)] = decided
            waiting = tuple(q for q in self._handed_over.get(thread_id, ()) if q != question_id)
            self._handed_over[thread_id] = (*waiting, question_id)
            return HandOverResult(True, decided)

    def _free_for_a_door(self, thread_id: str, now: datetime) -> bool:
        """No lease on the thread, or one run out whose holder never ran the agent (called under the lock)."""
        held = self._leases.get(thread_id)
        return held is None or (held.until <= now.timestamp() and thread_id not in self._runs_agent)

    def snapshot(self) -> dict[tuple[str, str], QuestionRecord]:
        """A copy of every question row (for tests and the local demo)."""
        with self._lock:
            return copy.copy(self._questions)
