"""How the sweep tells what a due question owes, first and in lifecycle order: its `wait.created` when not yet
announced (older than `announce_grace`), then the envelopes owed on its row by name, open or decided
(`agent_wait.engine.owed`). An announcer that fails one is sent nothing after it, so none gets an envelope before
what is owed ahead of it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.publish import publish
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine._sweep_work import DueQuestionWork, DueWork, SweepRun, hand_over_at
from agent_wait.engine.metrics import Metric
from agent_wait.engine.owed import CREATED, in_lifecycle_order, owed_envelope
from agent_wait.ledger import QuestionRecord

__all__ = ("OwedTelling",)


class OwedTelling(DueQuestionWork):
    """The sweep's telling of owed envelopes (`Sweep` derives from it)."""

    def _tell_owed(self, record: QuestionRecord, now: datetime, run: SweepRun) -> tuple[QuestionRecord | None, bool]:
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

    def _tell(self, record: QuestionRecord, run: SweepRun) -> tuple[QuestionRecord, bool]:
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
            due_at = after.next_due() if record.status is QuestionStatus.OPEN else hand_over_at(record)
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

    def _reannounce(self, record: QuestionRecord) -> bool:
        report = self.created.publish(record.envelope, self.announcers)
        if report.ok:
            self.ledger.mark_announced(record.thread_id, record.question_id, due_at=record.next_due(announced=True))
            self.metrics.count(Metric.REANNOUNCED)
        return report.ok
