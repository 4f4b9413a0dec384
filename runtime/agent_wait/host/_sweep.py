"""`Sweep`: send overdue questions their default, and announce again what never got announced.

The sweep never decides anything itself. An overdue question's default goes through the entry queue
as an ordinary answer marked `origin: deadline`, so the router applies it with the same code path and
the same one-outcome rule as a person's answer, and records it as `expired`.

A run has four steps (`SweepStep`): expire the overdue, measure the oldest open question, announce again
what never got announced, and hand over again a decision the answer API made whose resume never reached
the queue. Each is isolated: one that raises is logged (its type, never a message that
could hold content), counted as `SweepErrors` with the step as its reason, and the others still run. A
deadline answer the queue refuses is logged with its ids and error code, counted as `SweepErrors` with
reason `send`, and sent again by the next run: one bad question never holds back the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from agent_wait._publish import Announcers, as_announcers, publish
from agent_wait._time import parse_rfc3339, seconds_between, utc_now
from agent_wait.envelope import Transition
from agent_wait.errors import ArgumentError, LedgerIndexMissingError
from agent_wait.host.answering import HANDED_OVER, resume_message
from agent_wait.host.entry_queue import EntryMessage, EntryQueue
from agent_wait.host.observe import HostMetrics, Metric, RecordingMetrics
from agent_wait.ledger import Ledger, QuestionRecord
from agent_wait.messages import DEADLINE_ORIGIN, deadline_answer_id, group_id_for
from agent_wait.schema import QuestionStatus

__all__ = ("DEADLINE_ANSWERED_BY", "SEND_FAILED_REASON", "Sweep", "SweepReport", "SweepStep")

DEADLINE_ANSWERED_BY = "agent-wait:deadline"
"""`answered_by` on every expiry, so a row never looks as if a person decided."""
SEND_FAILED_REASON = "send"
"""The `SweepErrors` reason for a deadline answer the entry queue refused (one count per question)."""

_T = TypeVar("_T")
_FIX_INDEX = "deploy the table shape in agent_wait.schema.QUESTION_TABLE (the AgentWait construct creates it)"


class SweepStep(StrEnum):
    """The steps of one run; each is the `SweepErrors` reason when it fails."""

    EXPIRE = "expire"
    """Query the overdue open questions (`by_status`) and send each its default answer."""
    OLDEST_OPEN = "oldest_open"
    """Emit `OldestOpenQuestionAgeSeconds` (`open_by_age`); optional: without its index only the metric is lost."""
    REANNOUNCE = "reannounce"
    """Announce again the questions whose announcement failed (`by_announce_due`); needed so none is lost."""
    HANDOVER = "handover"
    """Send again the resume of a decision the answer API or a link made but could not queue (`by_status`)."""


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

    @property
    def ok(self) -> bool:
        """True when every step ran and every deadline answer was sent."""
        return not self.failed_steps and not self.send_failed


@dataclass(frozen=True, slots=True)
class _Expired:
    sent: tuple[str, ...]
    refused: tuple[str, ...]
    age: float


class Sweep:
    """One sweep run: bounded, and costing in proportion to what is overdue or unannounced, not to what is open.

    Args:
        ledger: the question ledger (queried through its `by_status`, `open_by_age` and `by_announce_due` indexes).
        entry_queue: where deadline answers go, in batches (`EntryQueue.send_batch`).
        announce: announcers for re-announcing.
        metrics: where counts go. Default None: kept in memory (`RecordingMetrics`).
        limit: the most questions one run handles for each job; the next run picks up the rest.
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
        metrics: HostMetrics | None = None,
        limit: int = 100,
        announce_grace: timedelta = timedelta(seconds=60),
        clock: Callable[[], datetime] = utc_now,
        logger: logging.Logger | Any = None,
    ) -> None:
        if limit < 1:
            raise ArgumentError(f"Sweep limit must be at least 1; got {limit}", argument="limit")
        self.ledger = ledger
        self.entry_queue = entry_queue
        self.announcers = as_announcers(announce)
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.limit = limit
        self.announce_grace = announce_grace
        self.clock = clock
        self.log = logger or logging.getLogger("agent_wait.host")

    def run(self) -> SweepReport:
        """Run every step once; never raises for a step that fails (see the module docstring)."""
        now = self.clock()
        failed: list[str] = []
        skipped: list[str] = []
        expired = self._isolated(SweepStep.EXPIRE, lambda: self._expire(now), failed, skipped)
        oldest_age = self._isolated(SweepStep.OLDEST_OPEN, lambda: self._oldest_open(now), failed, skipped)
        reannounced = self._isolated(SweepStep.REANNOUNCE, lambda: self._reannounce(now), failed, skipped)
        handed_over = self._isolated(SweepStep.HANDOVER, lambda: self._hand_over(now), failed, skipped)
        return SweepReport(
            expired_sent=expired.sent if expired else (),
            reannounced=reannounced or (),
            overdue_age_seconds=expired.age if expired else 0.0,
            oldest_open_age_seconds=oldest_age or 0.0,
            send_failed=expired.refused if expired else (),
            failed_steps=tuple(failed),
            skipped_steps=tuple(skipped),
            handed_over=handed_over or (),
        )

    # -- the steps -----------------------------------------------------------------------------------

    def _expire(self, now: datetime) -> _Expired:
        overdue = self.ledger.overdue(now, limit=self.limit)
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
        age = seconds_between(parse_rfc3339(overdue[0].expires_at), now) if overdue and overdue[0].expires_at else 0.0
        self.metrics.count(Metric.OVERDUE, len(overdue))
        self.metrics.seconds(Metric.OVERDUE_AGE, max(age, 0.0))
        return _Expired(
            sent=tuple(record.question_id for record in sent),
            refused=tuple(overdue[index].question_id for index in sorted(refused)),
            age=max(age, 0.0),
        )

    def _oldest_open(self, now: datetime) -> float:
        oldest = self.ledger.oldest_open()
        age = max(seconds_between(parse_rfc3339(oldest.asked_at), now), 0.0) if oldest else 0.0
        self.metrics.seconds(Metric.OLDEST_OPEN_AGE, age)
        return age

    def _reannounce(self, now: datetime) -> tuple[str, ...]:
        reannounced: list[str] = []
        for record in self.ledger.announce_due(limit=self.limit):
            if parse_rfc3339(record.asked_at) > now - self.announce_grace:
                continue
            report = publish(record.envelope.for_transition(Transition.CREATED), self.announcers)
            if report.ok:
                self.ledger.mark_announced(record.thread_id, record.question_id)
                reannounced.append(record.question_id)
                self.metrics.count(Metric.REANNOUNCED)
            else:
                for failure in report.failed:
                    self.metrics.count(Metric.ANNOUNCE_FAILED, reason=failure.announcer)
        return tuple(reannounced)

    def _hand_over(self, now: datetime) -> tuple[str, ...]:
        # Decided but not yet resumed: the `answered` status holds only these, so the query stays small.
        waiting: list[QuestionRecord] = []
        cursor: str | None = None
        while len(waiting) < self.limit:
            page = self.ledger.page(QuestionStatus.ANSWERED, limit=self.limit, cursor=cursor)
            waiting += [
                record
                for record in page.records
                if record.via in HANDED_OVER
                and record.decided_at is not None
                and parse_rfc3339(record.decided_at) <= now - self.announce_grace
            ]
            cursor = page.cursor
            if cursor is None:
                break
        waiting = waiting[: self.limit]
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
