"""`Sweep`: act on every open question whose next due time has come, and hand over what the API decided.

Every "something must happen to this question at time T" is one entry in the ledger's due index
(`Ledger.due`): an announcement to retry, a reminder, an escalation step, a deadline, lifecycle envelopes
owed, a door's decision to hand over to the router. A run reads only what is due (never every open question)
and dispatches each row by what it needs:

- what it owes goes out first, in lifecycle order: its `wait.created` when not yet announced (older than
  `announce_grace`), then the envelopes owed on its row by name, open or decided (`agent_wait.engine.owed`). An
  announcer that fails one is sent nothing after it, so none gets an envelope before what is owed ahead of it;
- past its deadline: send its default through the entry queue as an ordinary answer marked
  `origin: deadline` (in batches of ten), which the router applies with the same one-outcome rule as a
  person's answer and records as `expired`, whatever it owes (a deadline waits on no announcer). The sweep
  never decides anything itself;
- an escalation step or a reminder fell due: claim it on the row (a compare-and-set that only an open,
  unchanged question accepts, so a question decided meanwhile is never reopened or re-announced), then
  announce `wait.escalated` / `wait.reminder`, then clear the claim. When its announcement fails, or the question
  still owes an envelope from before, the step is owed on the row by name (`escalated:1`, `reminder:2`) and the
  claim cleared: the steps go on while an announcer is down, and are told in order when it is back.

Each question is isolated: one that raises is logged (its type and ids, never content), counted as
`SweepErrors` with its work as the reason, and the others still run. The run's steps are isolated the same
way (`SweepStep`); a deadline answer the queue refuses is counted with reason `send` and sent again next run.

Long on purpose: the kinds of due work (tell what is owed, expire, remind, escalate) share one claim on the row,
one order of what is owed and one isolation of failures; apart, each would repeat them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.publish import Announcers, PublishReport, as_announcers, publish
from agent_wait.common.times import format_rfc3339, parse_rfc3339, seconds_between, utc_now
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.messages import DEADLINE_ORIGIN, deadline_answer_id, group_id_for
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.cancelling import awaits_resume
from agent_wait.engine.entry_queue import EntryMessage, EntryQueue
from agent_wait.engine.handover import HANDED_OVER, resume_message
from agent_wait.engine.metrics import HostMetrics, Metric, RecordingMetrics
from agent_wait.engine.owed import CREATED, follow_up_envelope, follow_up_name, in_lifecycle_order, owed_envelope
from agent_wait.engine.questions import CreatedAnnouncement
from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.errors import ArgumentError, LedgerIndexMissingError
from agent_wait.ledger import Capability, Ledger, Notice, Progress, QuestionRecord, require_capabilities
from agent_wait.ledger.due import make_due

__all__ = ("DEADLINE_ANSWERED_BY", "SEND_FAILED_REASON", "DueWork", "Sweep", "SweepReport", "SweepStep")

DEADLINE_ANSWERED_BY = "agent-wait:deadline"
"""`answered_by` on every expiry, so a row never looks as if a person decided."""
SEND_FAILED_REASON = "send"
"""The `SweepErrors` reason for a deadline answer the entry queue refused (one count per question)."""

_T = TypeVar("_T")
_FIX_INDEX = "deploy the table shape in agent_wait.contract.schema.QUESTION_TABLE (the AgentWait construct creates it)"


class SweepStep(StrEnum):
    """The steps of one run; each is the `SweepErrors` reason when it fails."""

    DUE = "due"
    """Query what is due (`by_due_shard`) and act on each question; needed, or nothing is expired, reminded or
    retried."""
    OLDEST_OPEN = "oldest_open"
    """Emit `OldestOpenQuestionAgeSeconds` (`open_by_age_shard`); optional: without its index only the metric is
    lost."""
    HANDOVER = "handover"
    """Send again the resume of a decision the answer API or a link made that the agent does not have yet (such a
    decision stays in the due index until it is resumed: `Decision.hand_over_at`)."""


class DueWork(StrEnum):
    """What a due question needed; the `SweepErrors` reason when acting on one question raised."""

    ANNOUNCE = "announce"
    """Its `wait.created` announcement never succeeded."""
    EXPIRE = "expire"
    """Its deadline passed: its default goes to the entry queue."""
    ESCALATE = "escalate"
    """An escalation step fell due."""
    REMIND = "remind"
    """A reminder fell due."""
    REPAIR = "repair"
    """Nothing was due after all (its due time was stale): the next due time is written again."""
    TELL = "tell"
    """It owes lifecycle envelopes (`QuestionRecord.notices`): they are published, in lifecycle order."""


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

    @property
    def ok(self) -> bool:
        """True when every step ran, every deadline answer was sent and every follow-up announced."""
        return not self.failed_steps and not self.send_failed and not self.failed_questions


@dataclass(slots=True)
class _Run:
    """What one run did so far."""

    reannounced: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)
    reminded: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Expired:
    sent: tuple[str, ...]
    refused: tuple[str, ...]
    age: float


class Sweep:
    """One sweep run: bounded, and costing in proportion to what is due, never to what is open.

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
    ) -> None:
        if limit < 1:
            raise ArgumentError(f"Sweep limit must be at least 1; got {limit}", argument="limit")
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
        run = _Run()
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
        oldest_age = (
            self._isolated(SweepStep.OLDEST_OPEN, lambda: self._oldest_open(now), failed, skipped)
            if whole_run
            else None
        )
        handed_over = self._isolated(SweepStep.HANDOVER, lambda: self._hand_over(due or (), now), failed, skipped)
        return SweepReport(
            expired_sent=expired.sent if expired else (),
            reannounced=tuple(run.reannounced),
            overdue_age_seconds=expired.age if expired else 0.0,
            oldest_open_age_seconds=oldest_age or 0.0,
            send_failed=expired.refused if expired else (),
            failed_steps=tuple(dict.fromkeys(failed)),
            skipped_steps=tuple(skipped),
            handed_over=handed_over or (),
            reminded=tuple(run.reminded),
            escalated=tuple(run.escalated),
            failed_questions=tuple(run.failed),
            due_read=len(due or ()),
            told=tuple(run.told),
        )

    # -- envelopes owed ------------------------------------------------------------------------------

    def _tell_owed(self, record: QuestionRecord, now: datetime, run: _Run) -> tuple[QuestionRecord | None, bool]:
        """Publish what `record` owes, in lifecycle order: its `wait.created` when never announced, then what its row
        owes by name. Returns the row to carry on from (None: leave it to the next run) and whether it is still
        behind (something owed did not go out), so its new follow-ups are owed after it rather than announced."""
        work = DueWork.ANNOUNCE
        try:
            if record.status is not QuestionStatus.OPEN and not record.announced:
                # Decided before its wait.created went out: announcing the decision owes the wait.created by name
                # first (`AskedQuestions.announce`), so nothing is told before it (a door's decision, until then).
                return record, True
            if not record.announced:
                if record.is_overdue(now) or parse_rfc3339(record.asked_at) > now - self.announce_grace:
                    return record, True  # its decision tells it first, or the router that asked it announces it now
                if not self._reannounce(record):
                    run.failed.append(record.question_id)
                    return record, True
                run.reannounced.append(record.question_id)
                record = replace(record, announced=True, due_at=record.next_due(announced=True))
            work = DueWork.TELL
            return self._tell(record, run) if record.notices else (record, False)
        except Exception as exc:
            self._question_failed(record, work.value, exc, run)
            return None, True

    def _tell(self, record: QuestionRecord, run: _Run) -> tuple[QuestionRecord, bool]:
        """Publish the envelopes `record` owes by name, in lifecycle order, then take off its row those every announcer
        took (at least once: a publish that fails, or a crash before the row is written, leaves them owed for the
        next run). An announcer that fails one is sent none after it this run, so each receives them in order; the
        others go on. Returns the row as it now stands and whether some are still owed."""
        listening = self.announcers
        told: list[str] = []
        for name in in_lifecycle_order(record, record.notices):
            failed = self._tell_one(record, name, listening)
            if not failed and len(listening) == len(self.announcers):
                told.append(name)  # every announcer has it, and each had every one before it
            listening = tuple(announcer for announcer in listening if announcer.name not in failed)
            if failed and not listening:
                break  # every announcer is down: the rest waits for the next run
        left = tuple(name for name in record.notices if name not in told)
        after = replace(record, notices=left)
        if told:
            due_at = after.next_due() if record.status is QuestionStatus.OPEN else _hand_over_at(record)
            self.ledger.told(record.thread_id, record.question_id, told, due_at=due_at)
            after = replace(after, due_at=due_at) if not left else after
            self.log.info(
                "owed lifecycle envelopes published",
                extra={"thread_id": record.thread_id, "question_id": record.question_id, "told": told},
            )
        (run.failed if left else run.told).append(record.question_id)
        return after, bool(left)

    def _tell_one(self, record: QuestionRecord, name: str, announcers: tuple[BaseAnnounce, ...]) -> set[str]:
        """Publish the one envelope `name` stands for, as it would have gone out (`wait.created` with its links), to
        `announcers`; the names of those that failed."""
        if name == CREATED:
            report = self.created.publish(record.envelope, announcers)  # counts its own failures
            if report.ok:
                self.metrics.count(Metric.REANNOUNCED)
        else:
            envelope = owed_envelope(record, name)
            if envelope is None:
                return set()  # a name that tells nothing is taken off
            report = publish(envelope, announcers)
            for failure in report.failed:
                self.metrics.count(Metric.ANNOUNCE_FAILED, reason=failure.announcer)
        return {failure.announcer for failure in report.failed}

    # -- deadlines -----------------------------------------------------------------------------------

    def _expire_isolated(self, overdue: list[QuestionRecord], now: datetime, run: _Run) -> _Expired | None:
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

    # -- follow-ups: announcement retries, escalation steps, reminders ---------------------------------

    def _follow_up(self, record: QuestionRecord, now: datetime, run: _Run, *, behind: bool) -> None:
        """Do what one due question needs, step after step; isolated, so one that raises never holds back others.
        `behind`: it still owes an envelope from before, so each step is owed after it, not announced."""
        work = _work_for(record, now)
        current: QuestionRecord | None = record
        try:
            # Bounded: each pass claims one escalation step or the due reminders, so a question owes few.
            for _ in range(len(record.followups.escalation) + 2):
                work = _work_for(current, now) if current is not None else None
                if work is None:
                    return
                current, behind = self._act(current, work, now, run, behind=behind)  # type: ignore[arg-type]
        except Exception as exc:
            self._question_failed(record, work.value if work is not None else DueWork.REPAIR.value, exc, run)

    def _question_failed(self, record: QuestionRecord, reason: str, exc: Exception, run: _Run) -> None:
        """One question's work raised: count it (`SweepErrors` by `reason`), say so by ids, and go on to the others."""
        run.failed.append(record.question_id)
        self.metrics.count(Metric.SWEEP_ERRORS, reason=reason)
        self.log.error(
            f"sweep could not {reason} a question ({type(exc).__name__}); the others went on, the next run tries again",
            extra={"thread_id": record.thread_id, "question_id": record.question_id, "error_type": type(exc).__name__},
        )
        self.log.debug(f"sweep {reason} failed", exc_info=True)  # the text may quote what was asked

    def _act(
        self, record: QuestionRecord, work: DueWork, now: datetime, run: _Run, *, behind: bool
    ) -> tuple[QuestionRecord | None, bool]:
        """Do one piece of `work`; the row to carry on from (None: leave the question until the next run), and
        whether it is now behind (owes an envelope)."""
        if work is DueWork.REPAIR:
            make_due(self.ledger, record, now=now)
            return None, behind
        if record.progress.notice is None and behind:
            # Owed first, then claimed without a notice: a crash between leaves it owed, and the next run claims
            # the same step under the same name.
            progress = replace(_claimed(record, work, now), notice=None)
            name = follow_up_name(Notice.ESCALATED if work is DueWork.ESCALATE else Notice.REMINDER, progress)
            return self._owe_step(record, progress, name, now), True
        claimed = record
        if record.progress.notice is None:
            claimed = self._advance(record, _claimed(record, work, now), now)
            if claimed is None:
                return None, behind  # decided or changed since it was read: never reopened nor announced
        notice = claimed.progress.notice or Notice.REMINDER
        name = follow_up_name(notice, claimed.progress)
        if not behind and self._announce_claim(claimed):
            (run.escalated if notice is Notice.ESCALATED else run.reminded).append(record.question_id)
            return self._arranged(self._advance(claimed, replace(claimed.progress, notice=None), now)), False
        if not behind:
            run.failed.append(record.question_id)  # its announcement failed: owed, and told when the announcer is back
        return self._owe_step(claimed, replace(claimed.progress, notice=None), name, now), True

    def _owe_step(self, record: QuestionRecord, progress: Progress, name: str, now: datetime) -> QuestionRecord | None:
        """Owe the follow-up `name` on the row, then write `progress` (its claim let go); the row stays due, for
        what it owes. Owed before the progress moves, so a crash between never loses the step."""
        self.ledger.owe_notices(record.thread_id, record.question_id, [name], now=now)
        owing = replace(record, notices=(*record.notices, name))
        return self._arranged(self._advance(owing, progress, now))

    def _arranged(self, advanced: QuestionRecord | None) -> QuestionRecord | None:
        if advanced is not None and self.schedules is not None:
            self.schedules.arrange(advanced)  # the next reminder or escalation step's schedule
        return advanced

    def _reannounce(self, record: QuestionRecord) -> bool:
        report = self.created.publish(record.envelope, self.announcers)
        if report.ok:
            self.ledger.mark_announced(record.thread_id, record.question_id, due_at=record.next_due(announced=True))
            self.metrics.count(Metric.REANNOUNCED)
        return report.ok

    def _announce_claim(self, claimed: QuestionRecord) -> bool:
        """Announce the claimed reminder or escalation step to the audience the question has now."""
        progress, level = claimed.progress, claimed.progress.escalations
        number = progress.escalations if progress.notice is Notice.ESCALATED else progress.reminders
        envelope = follow_up_envelope(claimed, progress.notice or Notice.REMINDER, number, level=level)
        if not self._publish(envelope).ok:
            return False
        self.metrics.count(Metric.ESCALATIONS if claimed.progress.notice is Notice.ESCALATED else Metric.REMINDERS)
        self.log.info(
            f"question {envelope.transition.value}",
            extra={"thread_id": claimed.thread_id, "question_id": claimed.question_id, **dict(envelope.progress or {})},
        )
        return True

    def _advance(self, record: QuestionRecord, progress: Progress, now: datetime) -> QuestionRecord | None:
        """Write `progress` and the due time it implies, if the row is unchanged; the new row, or None."""
        progress = replace(progress, version=record.progress.version + 1)
        result = self.ledger.advance(
            record.thread_id,
            record.question_id,
            progress,
            expected_version=record.progress.version,
            due_at=record.next_due(progress),
            now=now,
        )
        return result.record if result.won else None

    def _publish(self, envelope: WaitEnvelope) -> PublishReport:
        report = publish(envelope, self.announcers)
        for failure in report.failed:
            self.metrics.count(Metric.ANNOUNCE_FAILED, reason=failure.announcer)
        return report

    # -- the oldest open question, and decisions to hand over ------------------------------------------

    def _oldest_open(self, now: datetime) -> float:
        oldest = self.ledger.oldest_open()
        age = max(seconds_between(parse_rfc3339(oldest.asked_at), now), 0.0) if oldest else 0.0
        self.metrics.seconds(Metric.OLDEST_OPEN_AGE, age)
        waiting = self.ledger.count_open()
        if waiting is not None:  # a gauge: read it as Maximum (a run emits it once)
            self.metrics.count(Metric.OPEN_QUESTIONS, waiting)
        return age

    def _hand_over(self, due: Sequence[QuestionRecord], now: datetime) -> tuple[str, ...]:
        # A door's decision stays due until the agent has it, so the due rows already hold every one to hand over.
        failed = functools.cache(lambda thread_id: self.ledger.thread_failure(thread_id) is not None)
        waiting = [
            record
            for record in due
            if _hand_over_at(record) is not None
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


def _hand_over_at(record: QuestionRecord) -> str | None:
    """When a door's decision (the answer API, a link) is due for its hand-over: while the agent does not have it."""
    waiting = awaits_resume(record) and record.via in HANDED_OVER
    return record.decided_at if waiting else None


def _work_for(record: QuestionRecord, now: datetime) -> DueWork | None:
    """Which follow-up a due, not overdue, question needs now (its `wait.created` and what it owes are told first,
    `Sweep._tell_owed`); None when nothing."""
    if record.progress.notice is Notice.ESCALATED:
        return DueWork.ESCALATE
    if record.progress.notice is Notice.REMINDER:
        return DueWork.REMIND
    if record.progress.escalations < record.steps_due(now):
        return DueWork.ESCALATE
    if record.progress.reminders < record.reminders_due(now):
        return DueWork.REMIND
    owing = not record.announced or record.notices  # due at once already, until what it owes is told
    return DueWork.REPAIR if record.due_at != record.next_due() and not owing else None


def _claimed(record: QuestionRecord, work: DueWork, now: datetime) -> Progress:
    """The progress once this run claims `work`: the next escalation step, or every reminder due by now.

    Reminders missed while the sweep was down are taken together and announced once, as the latest.
    """
    if work is DueWork.ESCALATE:
        return replace(record.progress, escalations=record.progress.escalations + 1, notice=Notice.ESCALATED)
    return replace(record.progress, reminders=record.reminders_due(now), notice=Notice.REMINDER)


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
