"""How the router applies an answer: judged by when the transport received it, decided by `AnswerDesk` (the one
decision path), then a vote told or a decision announced and carried to the agent; a redelivery tells again what its
first attempt may have died before telling.
"""

from __future__ import annotations

import functools
from datetime import datetime

from agent_wait.asking.callbacks import callback_id_of
from agent_wait.asking.polled import is_polled
from agent_wait.contract.envelope import Transition
from agent_wait.contract.messages import AnswerMessage
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine._router_resume import RouterResume
from agent_wait.engine.answering import AnswerAttempt, AnswerDesk, ThreadState, Verdict, VerdictKind
from agent_wait.engine.cancelling import cancelled_by_person
from agent_wait.engine.checks import Answerer
from agent_wait.engine.handover import HANDED_OVER
from agent_wait.engine.metrics import Metric
from agent_wait.engine.outcomes import Outcome, OutcomeKind, RefusalReason
from agent_wait.engine.votes import vote_progress
from agent_wait.ledger import QuestionRecord, Refusal, RefusalLedger, ThreadFailure, Vote

__all__ = ("UNSEEN_REFUSALS", "RouterAnswers")

UNSEEN_REFUSALS = frozenset({RefusalReason.UNKNOWN_THREAD, RefusalReason.UNKNOWN_QUESTION, RefusalReason.NOT_DUE})
"""Refusals not kept on a row: there is no row to keep them on, or it is the deadline's own early message."""


class RouterAnswers(RouterResume):
    """The router's answers (`Router` derives from it)."""

    desk: AnswerDesk
    refusals: RefusalLedger | None

    def _answer(
        self,
        message: AnswerMessage,
        answer_id: str,
        body: str,
        failure: ThreadFailure | None,
        *,
        sent_at: datetime | None,
        answerer: Answerer,
        redelivered: bool = False,
    ) -> Outcome:
        thread_id, now = message.thread_id, self.clock()
        # An answer counts from when the transport received it; a deadline is due by the router's clock or by SQS's
        # (a router clock a little behind the sweep's still applies the deadline the sweep saw pass).
        received = (max(now, sent_at) if message.from_deadline else min(now, sent_at)) if sent_at else now
        attempt = AnswerAttempt(
            thread_id,
            message.question_id,
            message.answer,
            answer_id,
            answerer,
            received,
            message.valid_until,
            deadline=message.from_deadline,
        )
        parked = functools.cache(functools.partial(self._parked_on, thread_id))
        verdict = self.desk.decide(attempt, ThreadState(failure, parked))
        if verdict.kind is VerdictKind.REFUSED:
            return self._refused(verdict, message, attempt, body, failure)
        record = verdict.record
        if record is None:  # only a refusal has no row
            return self._refuse(RefusalReason.UNKNOWN_QUESTION, message, verdict.detail)
        if verdict.kind is VerdictKind.VOTED or (verdict.kind is VerdictKind.REPEATED and verdict.vote is not None):
            if verdict.kind is VerdictKind.VOTED or (verdict.vote is not None and verdict.vote.via in HANDED_OVER):
                self.metrics.count(Metric.VOTES)  # a door that recorded a vote counts nothing itself
            if record.status is QuestionStatus.OPEN:
                return self._tell_vote(record)
            if verdict.vote is not None and record.answer_id != answer_id:
                # Recorded before another vote decided (its hand-over came late): told as it stood, nothing resumed.
                return self._tell_vote(record, through=verdict.vote)
        if verdict.kind is VerdictKind.DECIDED:
            if record.followups.voting:
                self.metrics.count(Metric.VOTES)
            self._announce_decision(record, now)
            source = record.envelope.source
            waits = callback_id_of(source) is not None or is_polled(source) or parked(record.question_id)
            return self._resume(record, body=body, message_id=answer_id, parked=waits)
        # The same answer again: carry on from its decision if the agent has not received it yet.
        if record.status is QuestionStatus.RESUMED:
            if redelivered and record.answer_id == answer_id:
                # A redelivery: the attempt before may have died before it told anyone. Tell again (each envelope
                # keeps its dedupe key), so a crash never loses wait.answered or wait.resumed.
                self._retell(record, resumed=True)
            return self._refuse(RefusalReason.DUPLICATE, message, "this answer was already applied")
        if QuestionStatus.CANCELLED in (record.status, record.outcome) and not cancelled_by_person(record):
            detail = "the question was cancelled; nothing resumes it"
            return self._refuse_kept(RefusalReason.CANCELLED, attempt, message, detail)
        if record.status is QuestionStatus.FAILED:  # the thread's failure was cleared by hand: still never re-run
            detail = "applying this answer failed; run agent-wait retry"
            return self._refuse_kept(RefusalReason.THREAD_FAILED, attempt, message, detail)
        if record.via in HANDED_OVER:
            # Decided by a door that hands the resume here, which announced nothing: announce the decision now.
            if record.followups.voting:
                self.metrics.count(Metric.VOTES)  # the deciding vote, which the door counted nowhere
            self._announce_decision(record, now)
        elif redelivered:
            self._retell(record)  # the deciding message again: its first attempt may have died before telling
        return self._resume(record, body=body, message_id=answer_id)

    def _refused(
        self, verdict: Verdict, message: AnswerMessage, attempt: AnswerAttempt, body: str, failure: ThreadFailure | None
    ) -> Outcome:
        """What the queue does with a refused answer: most are refused; on a failed thread, one is replayed or held."""
        answer_id = attempt.answer_id
        reason = verdict.reason or RefusalReason.INVALID_ANSWER
        if reason is RefusalReason.THREAD_FAILED and failure is not None:
            if failure.question_id != message.question_id and not message.from_deadline:
                # Another question of the failed thread: keep the answer in the dead-letter queue for a redrive.
                return self.failures.hold(body, message.thread_id, answer_id, failure)
            if failure.message_id == answer_id:
                return self.failures.replay(failure)
        moved_past = verdict.record if reason is RefusalReason.NOT_PARKED else None
        if moved_past is not None and moved_past.status is QuestionStatus.OPEN:
            self.questions.cancel(moved_past)  # nothing can resume it: say so to whoever watches
        return self._refuse_kept(reason, attempt, message, verdict.detail)

    def _refuse_kept(
        self, reason: RefusalReason, attempt: AnswerAttempt, message: AnswerMessage, detail: str
    ) -> Outcome:
        """Refuse, and keep the refusal on the question's row where a person's answer met it: a queue answers its
        sender nothing, so `questions show` and the API are where they learn why (`RefusalLedger`)."""
        if self.refusals is not None and not message.from_deadline and reason not in UNSEEN_REFUSALS:
            refusal = Refusal(
                reason.value,
                detail,
                self._stamp(),
                answer_id=attempt.answer_id,
                by=attempt.answerer.answered_by,
                via=attempt.answerer.via,
            )
            try:
                self.refusals.note_refusal(message.thread_id, message.question_id, refusal)
            except Exception:  # the refusal stands either way: logged and counted below
                self.log.warning(
                    "could not keep the refusal on the question's row",
                    exc_info=True,
                    extra={"thread_id": message.thread_id, "question_id": message.question_id},
                )
        return self._refuse(reason, message, detail)

    def _tell_vote(self, record: QuestionRecord, *, through: Vote | None = None) -> Outcome:
        """Announce the votes so far (`wait.voted`), or as they stood at `through`; a redelivery announces again under
        the same dedupe key, so a crash between a vote and its announcement never leaves the vote untold."""
        progress = vote_progress(record, through=through)
        self.questions.announce(record.envelope, Transition.VOTED, progress=progress, record=record)
        self.log.debug(
            "vote recorded",
            extra={
                "thread_id": record.thread_id,
                "question_id": record.question_id,
                "approvals": progress["approvals"],
                "needed": progress["needed"],
            },
        )
        return Outcome(
            OutcomeKind.VOTED,
            record.thread_id,
            record.question_id,
            detail=f"vote recorded: {progress['approvals']} of {progress['needed']} approvals",
            asked=(record.question_id,),
        )
