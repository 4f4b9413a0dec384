"""`Sweep`: send overdue questions their default, and announce again what never got announced.

The sweep never decides anything itself. An overdue question's default goes through the entry queue
as an ordinary answer marked `origin: deadline`, so the router applies it with the same code path and
the same one-outcome rule as a person's answer, and records it as `expired`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agent_wait._time import parse_rfc3339, seconds_between, utc_now
from agent_wait.envelope import Transition
from agent_wait.host.entry_queue import EntryQueue
from agent_wait.host.ledger.base import Ledger
from agent_wait.host.observe import METRIC_NAMES as M
from agent_wait.host.observe import HostMetrics, RecordingMetrics
from agent_wait.messages import DEADLINE_ORIGIN, deadline_answer_id, group_id_for
from agent_wait.publish import Announcers, as_announcers, publish

__all__ = ("DEADLINE_ANSWERED_BY", "Sweep", "SweepReport")

DEADLINE_ANSWERED_BY = "agent-wait:deadline"
"""`answered_by` on every expiry, so a row never looks as if a person decided."""


@dataclass(frozen=True, slots=True)
class SweepReport:
    expired_sent: tuple[str, ...]
    """Question ids whose default was sent to the entry queue."""
    reannounced: tuple[str, ...]
    """Question ids announced again."""
    overdue_age_seconds: float
    """How far past its deadline the most overdue open question is (0 when none)."""
    oldest_open_age_seconds: float = 0.0
    """How long ago the oldest still-open question was asked (0 when none); the construct alarms on it."""


class Sweep:
    """One sweep run: bounded, and costing in proportion to what is overdue or unannounced, not to what is open.

    Args:
        ledger: the question ledger (queried through its `by_status` and `by_announce_due` indexes).
        entry_queue: where deadline answers go.
        announce: announcers for re-announcing.
        limit: the most questions one run handles for each job; the next run picks up the rest.
        announce_grace: questions younger than this are left to the router that is announcing them now.
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
            raise ValueError(f"Sweep limit must be at least 1; got {limit}")
        self.ledger = ledger
        self.entry_queue = entry_queue
        self.announcers = as_announcers(announce)
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.limit = limit
        self.announce_grace = announce_grace
        self.clock = clock
        self.log = logger or logging.getLogger("agent_wait.host")

    def run(self) -> SweepReport:
        now = self.clock()
        overdue = self.ledger.overdue(now, limit=self.limit)
        for record in overdue:
            answer_id = deadline_answer_id(record.question_id)
            self.entry_queue.send(
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
            self.log.info(
                "deadline answer sent", extra={"thread_id": record.thread_id, "question_id": record.question_id}
            )
        age = seconds_between(parse_rfc3339(overdue[0].expires_at), now) if overdue and overdue[0].expires_at else 0.0
        self.metrics.count(M["overdue"], len(overdue))
        self.metrics.seconds(M["overdue_age"], max(age, 0.0))
        oldest = self.ledger.oldest_open()
        oldest_age = max(seconds_between(parse_rfc3339(oldest.asked_at), now), 0.0) if oldest else 0.0
        self.metrics.seconds(M["oldest_open_age"], oldest_age)

        reannounced = []
        for record in self.ledger.announce_due(limit=self.limit):
            if parse_rfc3339(record.asked_at) > now - self.announce_grace:
                continue
            report = publish(record.envelope.for_transition(Transition.CREATED), self.announcers)
            if report.ok:
                self.ledger.mark_announced(record.thread_id, record.question_id)
                reannounced.append(record.question_id)
                self.metrics.count(M["reannounced"])
            else:
                for failure in report.failed:
                    self.metrics.count(M["announce_failed"], reason=failure.announcer)
        return SweepReport(tuple(r.question_id for r in overdue), tuple(reannounced), max(age, 0.0), oldest_age)
