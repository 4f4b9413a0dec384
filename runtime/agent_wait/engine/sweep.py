"""`Sweep`: act on every open question whose next due time has come, and hand over what the API decided.

Every "something must happen to this question at time T" is one entry in the ledger's due index
(`Ledger.due`): an announcement to retry, a reminder, an escalation step, a deadline, lifecycle envelopes
owed, a door's decision to hand over to the router. A run reads only what is due (never every open question)
and dispatches each row by what it needs:

- what it owes goes out first, in lifecycle order: its `wait.created` when not yet announced, then the envelopes
  owed on its row by name, open or decided (`agent_wait.engine._sweep_telling`);
- past its deadline: send its default through the entry queue as an ordinary answer marked
  `origin: deadline` (in batches of ten), which the router applies with the same one-outcome rule as a
  person's answer and records as `expired`, whatever it owes (a deadline waits on no announcer). The sweep
  never decides anything itself;
- an escalation step or a reminder fell due: claim it on the row, announce it, then clear the claim; or owe it on
  the row by name when its announcement fails or the question still owes an envelope from before
  (`agent_wait.engine._sweep_followups`).

Each question is isolated: one that raises is logged (its type and ids, never content), counted as
`SweepErrors` with its work as the reason, and the others still run. The run's steps are isolated the same
way (`SweepStep`); a deadline answer the queue refuses is counted with reason `send` and sent again next run.

`Sweep` runs the steps (`SweepStep`), sends the deadline answers and the hand-overs, and isolates each step; its work
on one due question is in the classes it derives from (`_sweep_telling`, `_sweep_followups`, on `_sweep_work`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from agent_wait.common.times import format_rfc3339, parse_rfc3339, seconds_between, utc_now
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.messages import DEADLINE_ORIGIN, deadline_answer_id, group_id_for
from agent_wait.contract.publish import Announcers, as_announcers
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine._sweep_followups import FollowUpSteps
from agent_wait.engine._sweep_telling import OwedTelling
from agent_wait.engine._sweep_work import DueWork, SweepRun, hand_over_at
from agent_wait.engine.entry_queue import EntryMessage, EntryQueue
from agent_wait.engine.handover import resume_message
from agent_wait.engine.metrics import HostMetrics, Metric, RecordingMetrics
from agent_wait.engine.questions import CreatedAnnouncement
from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.errors import ArgumentError, LedgerIndexMissingError
from agent_wait.ledger import Capability, Ledger, OpenCount, QuestionRecord, require_capabilities

__all__ = (
    "COUNT_OPEN_EVERY",
    "DEADLINE_ANSWERED_BY",
    "SEND_FAILED_REASON",
    "DueWork",
    "Sweep",
    "SweepReport",
    "SweepStep",
)

DEADLINE_ANSWERED_BY = "agent-wait:deadline"
"""`answered_by` on every expiry, so a row never looks as if a person decided."""
SEND_FAILED_REASON = "send"
"""The `SweepErrors` reason for a deadline answer the entry queue refused (one count per question)."""
COUNT_OPEN_EVERY = timedelta(hours=2)
"""How often the open questions are counted by default (`OpenQuestions`). A count reads every open question's index
key; once in 120 runs of a minute, a run reads on average under 1 % of what is open (`bench/bench_sweep.py`)."""

_T = TypeVar("_T")
_FIX_INDEX = "deploy the table shape in agent_wait.contract.schema.QUESTION_TABLE (the AgentWait construct creates it)"


class SweepStep(StrEnum):
    """The steps of one run; each is the `SweepErrors` reason when it fails."""

    DUE = "due"
    """Query what is due (`by_due_shard`) and act on each question; needed, or nothing is expired, reminded or
    retried."""
    OLDEST_OPEN = "oldest_open"
    """Emit `OldestOpenQuestionAgeSeconds` and `OpenQuestions` (`open_by_age_shard`, counted rarely); optional:
    without its index only the metrics are lost."""
    HANDOVER = "handover"
    """Send again the resume of a decision the answer API or a link made that the agent does not have yet (such a
    decision stays in the due index until it is resumed: `Decision.hand_over_at`)."""


_OPTIONAL_STEPS = frozenset({SweepStep.OLDEST_OPEN})
"""Steps a missing index only degrades: a warning, not a `SweepErrors` count."""


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What one run did, by question id (never content)."""

    expired_sent: tuple[str, ...]
    """Question ids whose default was sent to the entry queue."""
    reannounced: tuple[str, ...]
    """Question ids announced again."""
    overdue_age_seconds: float
    """How far past its deadline the most overdue open question is (0 when none)."""
    oldest_open_age_seconds: float = 0.0
    """How long ago the oldest still-open question was asked (0 when none); the construct alarms on it."""
    send_failed: tuple[str, ...] = ()
    """Question ids whose default the entry queue refused this run; they stay open and the next run sends again."""
    failed_steps: tuple[str, ...] = ()
    """`SweepStep` values of the steps that raised this run (each logged and counted as `SweepErrors`)."""
    skipped_steps: tuple[str, ...] = ()
    """`SweepStep` values of optional steps skipped because the table lacks their index (logged as a warning)."""
    handed_over: tuple[str, ...] = ()
    """Question ids decided through the API or a link whose resume was sent to the router again."""
    reminded: tuple[str, ...] = ()
    """Question ids a reminder was announced for."""
    escalated: tuple[str, ...] = ()
    """Question ids an escalation step was applied to and announced for."""
    failed_questions: tuple[str, ...] = ()
    """Question ids whose follow-up raised or whose announcement failed this run; the next run tries again."""
    due_read: int = 0
    """How many due questions the run read (what its index query returned)."""
    told: tuple[str, ...] = ()
    """Question ids whose owed lifecycle envelopes (`wait.created`, `wait.voted`, `wait.answered`, ...) all went out
    this run."""
    open_questions: int | None = None
    """The `OpenQuestions` the run emitted: the last count, as of `open_counted_at` (None when none was emitted)."""
    open_counted_at: str | None = None
    """When that count was taken (RFC 3339 UTC); this run's time when it counted (`counted_open`)."""
    counted_open: bool = False
    """True when this run counted the open questions (at most once per `Sweep.count_open_every`)."""

    @property
    def ok(self) -> bool:
        """True when every step ran, every deadline answer was sent and every follow-up announced."""
        return not self.failed_steps and not self.send_failed and not self.failed_questions


@dataclass(frozen=True, slots=True)
class _Gauges:
    oldest_age: float
    open_count: OpenCount | None
    counted: bool


@dataclass(frozen=True, slots=True)
class _Expired:
    sent: tuple[str, ...]
    refused: tuple[str, ...]
    age: float


class Sweep(OwedTelling, FollowUpSteps):
    """One sweep run: bounded, and costing in proportion to what is due, never to what is open.

    The one read that grows with what is open, the count behind `OpenQuestions`, is made at most once per
    `count_open_every`, by the run that claims it on the ledger (`FollowUpLedger.claim_open_count`); every other run
    reads the last count back (one item) and emits it.

    Args:
        ledger: the question ledger (queried through its `by_due_shard`, `open_by_age_shard` and `by_status_shard`
            indexes, every shard of each, then the rows by key).
        entry_queue: where deadline answers go, in batches (`EntryQueue.send_batch`).
        announce: announcers for re-announcements, reminders and escalation steps.
        link_maker: makes a question's signed answer links, as the router's does; a re-announcement carries the
            same links the first announcement would have. None: no links.
        link_announcers: names of the announcers whose `wait.created` envelopes carry those links.
        metrics: where counts go. Default None: kept in memory (`RecordingMetrics`).
        limit: the most due questions one run handles; the next run picks up the rest.
        announce_grace: questions younger than this are left to the router that is announcing them now; and
            decisions younger than this to the answer API that is queueing their resume now.
        clock: the time of a run. Default `utc_now`.
        logger: a stdlib or Powertools logger. Default `logging.getLogger("agent_wait.host")`.
        count_open_every: how often the open questions are counted for `OpenQuestions`. Default `COUNT_OPEN_EVERY`,
            2 hours; the runs in between emit the last count.
    """

    def __init__(
        self,
        ledger: Ledger,
        entry_queue: EntryQueue,
        *,
        announce: Announcers = None,
        link_maker: Callable[[WaitEnvelope], dict[str, str]] | None = None,
        link_announcers: frozenset[str] = frozenset(),
        metrics: HostMetrics | None = None,
        limit: int = 100,
        announce_grace: timedelta = timedelta(seconds=60),
        clock: Callable[[], datetime] = utc_now,
        logger: logging.Logger | Any = None,
        schedules: DeadlineSchedules | None = None,
        count_open_every: timedelta = COUNT_OPEN_EVERY,
    ) -> None:
        if limit < 1:
            raise ArgumentError(f"Sweep limit must be at least 1; got {limit}", argument="limit")
        if count_open_every < timedelta(0):
            raise ArgumentError(
                f"Sweep count_open_every must not be negative; got {count_open_every}", argument="count_open_every"
            )
        self.ledger = require_capabilities(ledger, Capability.FOLLOW_UPS, Capability.FAILURES, user="Sweep")
        self.entry_queue = entry_queue
        self.announcers = as_announcers(announce)
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.created = CreatedAnnouncement(metrics=self.metrics, link_maker=link_maker, link_announcers=link_announcers)
        self.limit = limit
        self.announce_grace = announce_grace
        self.clock = clock
        self.log = logger or logging.getLogger("agent_wait.host")
        self.schedules = schedules
        self.count_open_every = count_open_every

    def run(self) -> SweepReport:
        """Run every step once; never raises for a step or a question that fails (see the module docstring)."""
        now = self.clock()
        failed: list[str] = []
        skipped: list[str] = []
        due = self._isolated(SweepStep.DUE, lambda: self.ledger.due(now, limit=self.limit), failed, skipped)
        return self._sweep(due, now, failed, skipped)

    def run_question(self, thread_id: str, question_id: str) -> SweepReport:
        """Do one question's due work now, exactly as `run` would: a precise-deadline schedule's wake-up
        (`agent_wait.engine.schedules`). A question not due (decided, or its time moved) is left as it is."""
        now = self.clock()
        failed: list[str] = []
        skipped: list[str] = []
        record = self._isolated(SweepStep.DUE, lambda: self.ledger.get(thread_id, question_id), failed, skipped)
        due = (
            [record]
            if record is not None and record.due_at is not None and record.due_at <= format_rfc3339(now)
            else []
        )
        return self._sweep(due if not failed else None, now, failed, skipped, whole_run=False)

    def _sweep(
        self,
        due: list[QuestionRecord] | None,
        now: datetime,
        failed: list[str],
        skipped: list[str],
        *,
        whole_run: bool = True,
    ) -> SweepReport:
        run = SweepRun()
        rows = list(due or ())
        # What each question owes goes out first; one still behind owes its new follow-ups after it.
        caught_up = {record.question_id: self._tell_owed(record, now, run) for record in rows}
        waiting = [record for record in rows if record.status is QuestionStatus.OPEN]
        overdue = [record for record in waiting if record.is_overdue(now)]  # a deadline waits on no announcer
        expired = self._expire_isolated(overdue, now, run)
        for record in waiting:
            current, behind = caught_up[record.question_id]
            if current is not None and not record.is_overdue(now):
                self._follow_up(current, now, run, behind=behind)
        gauges = (
            self._isolated(SweepStep.OLDEST_OPEN, lambda: self._gauges(now), failed, skipped) if whole_run else None
        )
        figure = gauges.open_count if gauges else None
        handed_over = self._isolated(SweepStep.HANDOVER, lambda: self._hand_over(due or (), now), failed, skipped)
        return SweepReport(
            expired_sent=expired.sent if expired else (),
            reannounced=tuple(run.reannounced),
            overdue_age_seconds=expired.age if expired else 0.0,
            oldest_open_age_seconds=gauges.oldest_age if gauges else 0.0,
            send_failed=expired.refused if expired else (),
            failed_steps=tuple(dict.fromkeys(failed)),
            skipped_steps=tuple(skipped),
            handed_over=handed_over or (),
            reminded=tuple(run.reminded),
            escalated=tuple(run.escalated),
            failed_questions=tuple(run.failed),
            due_read=len(due or ()),
            told=tuple(run.told),
            open_questions=figure.open_questions if figure else None,
            open_counted_at=figure.counted_at if figure else None,
            counted_open=bool(gauges and gauges.counted),
        )

    # -- deadlines -----------------------------------------------------------------------------------

    def _expire_isolated(self, overdue: list[QuestionRecord], now: datetime, run: SweepRun) -> _Expired | None:
        """Send the overdue questions' defaults; when that raises, count them as failed (`expire`) and go on."""
        try:
            return self._expire(overdue, now)
        except Exception as exc:
            run.failed.extend(record.question_id for record in overdue)
            self.metrics.count(Metric.SWEEP_ERRORS, reason=DueWork.EXPIRE.value)
            self.log.error(
                f"sweep could not send {len(overdue)} deadline answer(s) ({type(exc).__name__}); the next run sends "
                "them again",
                extra={"question_ids": [r.question_id for r in overdue], "error_type": type(exc).__name__},
            )
            self.log.debug("sweep expire failed", exc_info=True)
            return None

    def _expire(self, overdue: list[QuestionRecord], now: datetime) -> _Expired:
        entries = [_deadline_answer(record) for record in overdue]
        failures = self.entry_queue.send_batch(entries) if entries else []
        refused = {failure.index for failure in failures}
        for failure in failures:
            record = overdue[failure.index]
            self.log.error(
                "deadline answer not sent; the next sweep run sends it again",
                extra={"thread_id": record.thread_id, "question_id": record.question_id, "error_code": failure.code},
            )
        if failures:
            self.metrics.count(Metric.SWEEP_ERRORS, len(failures), reason=SEND_FAILED_REASON)
        sent = [record for index, record in enumerate(overdue) if index not in refused]
        for record in sent:
            self.log.info(
                "deadline answer sent", extra={"thread_id": record.thread_id, "question_id": record.question_id}
            )
        deadlines = [parse_rfc3339(record.expires_at) for record in overdue if record.expires_at]
        age = max((seconds_between(min(deadlines), now), 0.0)) if deadlines else 0.0
        self.metrics.count(Metric.OVERDUE, len(overdue))
        self.metrics.seconds(Metric.OVERDUE_AGE, age)
        return _Expired(
            sent=tuple(record.question_id for record in sent),
            refused=tuple(overdue[index].question_id for index in sorted(refused)),
            age=age,
        )

    # -- the oldest open question, and decisions to hand over ------------------------------------------

    def _gauges(self, now: datetime) -> _Gauges:
        oldest = self.ledger.oldest_open()  # one key per shard, then rows by key until one is open
        age = max(seconds_between(parse_rfc3339(oldest.asked_at), now), 0.0) if oldest else 0.0
        self.metrics.seconds(Metric.OLDEST_OPEN_AGE, age)
        counted, figure = self._open_count(now)
        if figure is not None and figure.open_questions is not None:  # a gauge: read it as Maximum (once a run)
            self.metrics.count(Metric.OPEN_QUESTIONS, figure.open_questions)
        return _Gauges(age, figure, counted)

    def _open_count(self, now: datetime) -> tuple[bool, OpenCount | None]:
        """(counted this run, the last count): counted again first when the latest claim is `count_open_every` old.

        A run claims the count before it counts (a compare-and-set on the kept count's version): of two runs, one
        counts, and a run that dies while counting costs one interval's figure, never a count on every run after it.
        """
        last = self.ledger.open_count()
        if last is not None and now - parse_rfc3339(last.claimed_at) < self.count_open_every:
            return False, last
        claim = self.ledger.claim_open_count(now=now, last=last)
        if claim is None:
            return False, last  # another run claimed it since `last` was read: that one counts
        counted = self.ledger.count_open()
        if counted is None:
            return False, None  # a ledger that cannot count: no gauge
        self.ledger.record_open_count(claim, counted)  # lost only to a later claim, whose count is newer
        self.log.debug("open questions counted", extra={"open_questions": counted})
        return True, replace(claim, open_questions=counted, counted_at=claim.claimed_at)

    def _hand_over(self, due: Sequence[QuestionRecord], now: datetime) -> tuple[str, ...]:
        # A door's decision stays due until the agent has it, so the due rows already hold every one to hand over.
        failed = functools.cache(lambda thread_id: self.ledger.thread_failure(thread_id) is not None)
        waiting = [
            record
            for record in due
            if hand_over_at(record) is not None
            and record.decided_at is not None
            and parse_rfc3339(record.decided_at) <= now - self.announce_grace
            and not failed(record.thread_id)  # nothing runs on a failed thread; its retry comes first
        ]
        entries = [
            EntryMessage(resume_message(r), group_id=group_id_for(r.thread_id), deduplication_id=str(r.answer_id))
            for r in waiting
        ]
        failures = self.entry_queue.send_batch(entries) if entries else []
        if failures:
            self.metrics.count(Metric.SWEEP_ERRORS, len(failures), reason=SEND_FAILED_REASON)
        refused = {failure.index for failure in failures}
        sent = tuple(r.question_id for index, r in enumerate(waiting) if index not in refused)
        for record in (r for index, r in enumerate(waiting) if index not in refused):
            self.log.info(
                "decision handed over to the router again",
                extra={"thread_id": record.thread_id, "question_id": record.question_id},
            )
        return sent

    # -- isolation -----------------------------------------------------------------------------------

    def _isolated(self, step: SweepStep, work: Callable[[], _T], failed: list[str], skipped: list[str]) -> _T | None:
        """Run one step; on an exception log it (type only), count it, record it, and return None."""
        try:
            return work()
        except LedgerIndexMissingError as exc:
            if step in _OPTIONAL_STEPS:
                self.log.warning(
                    f"sweep step {step.value} skipped: the question table has no index {exc.index!r}, so "
                    f"OldestOpenQuestionAgeSeconds is not emitted and its alarm stays silent; {_FIX_INDEX}",
                    extra={"step": step.value, "index": exc.index},
                )
                skipped.append(step.value)
                return None
            self.log.error(
                f"sweep step {step.value} failed: the question table has no index {exc.index!r}; {_FIX_INDEX}",
                extra={"step": step.value, "index": exc.index, "error_type": type(exc).__name__},
            )
        except Exception as exc:
            self.log.error(
                f"sweep step {step.value} failed ({type(exc).__name__}); the other steps ran, the next run tries again",
                extra={"step": step.value, "error_type": type(exc).__name__},
            )
            # The exception's text may quote what was asked: only at DEBUG, with the traceback.
            self.log.debug(f"sweep step {step.value} failed", exc_info=True)
        failed.append(step.value)
        self.metrics.count(Metric.SWEEP_ERRORS, reason=step.value)
        return None


def _deadline_answer(record: QuestionRecord) -> EntryMessage:
    answer_id = deadline_answer_id(record.question_id)
    return EntryMessage(
        {
            "thread_id": record.thread_id,
            "question_id": record.question_id,
            "answer": record.envelope.default,
            "origin": DEADLINE_ORIGIN,
            "answer_id": answer_id,
            "answered_by": DEADLINE_ANSWERED_BY,
        },
        group_id=group_id_for(record.thread_id),
        deduplication_id=answer_id,
    )
