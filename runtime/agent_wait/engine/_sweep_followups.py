"""How the sweep moves a due, open question's follow-ups on: an escalation step or a reminder that fell due is claimed
on the row (a compare-and-set that only an open, unchanged question accepts, so a question decided meanwhile is never
reopened or re-announced), then `wait.escalated` / `wait.reminder` is announced, then the claim cleared. When its
announcement fails, or the question still owes an envelope from before, the step is owed on the row by name
(`escalated:1`, `reminder:2`) and the claim cleared: the steps go on while an announcer is down, and are told in order
when it is back (`_sweep_telling`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agent_wait.channels.publish import PublishReport, publish
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.engine._sweep_work import DueQuestionWork, DueWork, SweepRun
from agent_wait.engine.metrics import Metric
from agent_wait.engine.owed import follow_up_envelope, follow_up_name
from agent_wait.ledger import Notice, Progress, QuestionRecord
from agent_wait.ledger.due import make_due

__all__ = ("FollowUpSteps",)


class FollowUpSteps(DueQuestionWork):
    """The sweep's reminders and escalation steps (`Sweep` derives from it)."""

    def _follow_up(self, record: QuestionRecord, now: datetime, run: SweepRun, *, behind: bool) -> None:
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

    def _act(
        self, record: QuestionRecord, work: DueWork, now: datetime, run: SweepRun, *, behind: bool
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
