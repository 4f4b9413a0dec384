"""What the sweep's work on one due question shares: the kinds of due work (`DueWork`, each the `SweepErrors` reason
when it fails), what a run did so far (`SweepRun`), and one question's failure kept from the others
(`DueQuestionWork._question_failed`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.engine.cancelling import awaits_resume
from agent_wait.engine.handover import HANDED_OVER
from agent_wait.engine.metrics import HostMetrics, Metric
from agent_wait.engine.questions import CreatedAnnouncement
from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.ledger import FullLedger, QuestionRecord

__all__ = ("DueQuestionWork", "DueWork", "SweepRun", "hand_over_at")


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


@dataclass(slots=True)
class SweepRun:
    """What one run did so far, by question id."""

    reannounced: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)
    reminded: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class DueQuestionWork:
    """The parts of `Sweep` its work on a due question reads (`Sweep.__init__` sets them), and that work's isolation."""

    ledger: FullLedger
    announcers: tuple[BaseAnnounce, ...]
    created: CreatedAnnouncement
    metrics: HostMetrics
    log: logging.Logger | Any
    schedules: DeadlineSchedules | None
    announce_grace: timedelta

    def _question_failed(self, record: QuestionRecord, reason: str, exc: Exception, run: SweepRun) -> None:
        """One question's work raised: count it (`SweepErrors` by `reason`), say so by ids, and go on to the others."""
        run.failed.append(record.question_id)
        self.metrics.count(Metric.SWEEP_ERRORS, reason=reason)
        self.log.error(
            f"sweep could not {reason} a question ({type(exc).__name__}); the others went on, the next run tries again",
            extra={"thread_id": record.thread_id, "question_id": record.question_id, "error_type": type(exc).__name__},
        )
        self.log.debug(f"sweep {reason} failed", exc_info=True)  # the text may quote what was asked


def hand_over_at(record: QuestionRecord) -> str | None:
    """When a door's decision (the answer API, a link) is due for its hand-over: while the agent does not have it."""
    waiting = awaits_resume(record) and record.via in HANDED_OVER
    return record.decided_at if waiting else None
