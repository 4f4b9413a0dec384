"""The doors that cannot run the agent (the answer API, its inbox page, AG-UI, signed links, Slack): decide, hand over.

`AnswerService.answer` decides through the one desk (`agent_wait.engine.answering`) only while no run holds the
thread, the thread is not failed and the agent waits on the question (the open ids the last run recorded), and its
decision reaches the router before anything else runs on the thread (`ThreadLease.handed_over`). It holds no lease
for that: it reads the question with its thread (`HandOverLedger.answer_view`), and the desk writes the decision and
its hand-over in one write that lands only while the thread is still so (`HandOverLedger.hand_over`); while a run
holds the thread, it looks again for a moment, then refuses `thread_busy`. Then it puts a resume on the entry queue
to wake the router. A person told "decided, the agent will resume" is therefore told the truth; a failed thread, a
busy one or a question the agent moved past is refused instead. The sweep sends again a resume that never reached
the queue (`Sweep` step `handover`), never into a failed thread.

An answer costs four calls on DynamoDB and SQS: the question's thread by its id, the question and its thread read
together, the decision with its hand-over, the resume (issue 46; a lease taken and released around it made seven).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from agent_wait.common.times import utc_now
from agent_wait.contract.messages import group_id_for
from agent_wait.engine import tracing
from agent_wait.engine.answering import THREAD_MOVED, AnswerAttempt, AnswerDesk, ThreadState, Verdict, VerdictKind
from agent_wait.engine.checks import HANDED_OVER, Answerer
from agent_wait.engine.entry_queue import EntryQueue
from agent_wait.engine.metrics import HostMetrics, Metric, RecordingMetrics
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.engine.proof import PasskeyAssertion, PasskeyVerifier
from agent_wait.ledger import AnswerView, Capability, HandOverLedger, Ledger, QuestionRecord, require_capabilities

__all__ = ("HANDED_OVER", "AnswerResult", "AnswerService", "resume_message", "vote_message")

logger = logging.getLogger("agent_wait.host")


def resume_message(record: QuestionRecord) -> dict[str, Any]:
    """The entry-queue message that tells the router to carry on from `record`'s decision."""
    message: dict[str, Any] = {
        "thread_id": record.thread_id,
        "question_id": record.question_id,
        "answer": record.answer,
        "answer_id": record.answer_id,
        "via": record.via or "api",
    }
    if record.answered_by:
        message["answered_by"] = record.answered_by
    return message


def vote_message(record: QuestionRecord, answer_id: str) -> dict[str, Any]:
    """The entry-queue message that tells the router a vote was recorded, so it announces `wait.voted`."""
    vote = record.progress.vote_with(answer_id)
    message: dict[str, Any] = {
        "thread_id": record.thread_id,
        "question_id": record.question_id,
        "answer": vote.answer if vote else None,
        "answer_id": answer_id,
        "via": (vote.via if vote else None) or "api",
    }
    if vote is not None and vote.by:
        message["answered_by"] = vote.by
    return message


@dataclass(frozen=True, slots=True)
class AnswerResult:
    """What `AnswerService.answer` did: the desk's verdict, and whether the router was told."""

    verdict: Verdict
    handed_over: bool = True
    """False when the decision was made but its resume could not be queued yet (the sweep sends it again)."""


class AnswerService:
    """Decide answers for doors that cannot run the agent (the answer API, signed links, AG-UI), with the desk's rules.

    Each answer is decided only while no run holds the thread, on a thread that is not failed, for a question the
    agent waits on; the decision and its hand-over to the router are one write, and its resume goes on the entry
    queue.

    Args:
        ledger: the question ledger (with follow-ups, failures and hand-overs).
        entry_queue: where the resume goes (the router's entry queue).
        clock: returns now (UTC).
        lease_wait: how long to wait for a router run on the thread to finish before refusing `thread_busy`.
        metrics: where refusals are counted (`AnswersRefused` by reason, as the router's); in memory when omitted.
        log: a stdlib-compatible logger (Powertools' Logger in Lambda).
        passkeys: the desk's passkey verifier (`AnswerDesk`'s `passkeys`); None: a `require_passkey` question
            refuses every answer.
    """

    def __init__(
        self,
        ledger: Ledger,
        entry_queue: EntryQueue,
        *,
        clock: Callable[[], datetime] = utc_now,
        lease_wait: float = 3.0,
        metrics: HostMetrics | None = None,
        log: logging.Logger | Any = None,
        passkeys: PasskeyVerifier | None = None,
    ) -> None:
        needed = (Capability.FOLLOW_UPS, Capability.FAILURES, Capability.HAND_OVERS)
        self.ledger = require_capabilities(ledger, *needed, user="AnswerService")
        self.hand_overs = cast(HandOverLedger, ledger)
        self.desk = AnswerDesk(ledger, passkeys=passkeys)
        self.entry_queue = entry_queue
        self.clock = clock
        self.lease_wait = lease_wait
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.log = log or logger

    def answer(
        self,
        question_id: str,
        answer: Any,
        answerer: Answerer,
        *,
        answer_id: str,
        valid_until: datetime | None = None,
        lease_wait: float | None = None,
        passkey: PasskeyAssertion | None = None,
    ) -> AnswerResult:
        """Decide `question_id` with `answer` for a person; hand the resume to the router when it decided.

        Args:
            question_id: the question.
            answer: the answer (`{"action": ...}`, or the question's dialect's own shape).
            answerer: who answers, proven by the API's JWT or the link's signature.
            answer_id: this answer's identity: the same id again (an `Idempotency-Key` resent) repeats, never
                decides twice.
            valid_until: the answer's own expiry.
            lease_wait: how long this answer may wait for a run on its thread (default: the service's `lease_wait`);
                a door answering many in one request shares one budget among them.
            passkey: the WebAuthn assertion confirming the answer, for a question whose policy needs one.
        """
        # One span for the decision and its hand-over: the router's delivery of the resume continues this trace.
        with tracing.answer_span(question_id, answerer.via or "api"):
            result = self._answer(
                question_id,
                answer,
                answerer,
                answer_id=answer_id,
                valid_until=valid_until,
                lease_wait=lease_wait,
                passkey=passkey,
            )
        return self._told(result, question_id, answerer)

    def cancel(self, question_id: str, reason: str, answerer: Answerer, *, answer_id: str) -> AnswerResult:
        """Cancel `question_id` for a person, with their reason; hand the resume to the router when it decided.

        The desk decides it as a cancel attempt (`agent_wait.engine.cancelling`): the agent receives the policy's
        cancellation answer, recorded `cancelled` with who and why; refused as an answer is (decided already,
        expired, not theirs to cancel, a failed or busy thread, a question the agent moved past).

        Args:
            question_id: the question.
            reason: why, in a sentence (at most `MAX_REASON_LENGTH` characters); recorded on the row.
            answerer: who cancels, proven by the API's JWT.
            answer_id: this cancel's identity: the same id again repeats its outcome, never decides twice.
        """
        with tracing.answer_span(question_id, answerer.via or "api"):
            result = self._answer(
                question_id, None, answerer, answer_id=answer_id, valid_until=None, cancel_reason=reason
            )
        return self._told(result, question_id, answerer)

    def _told(self, result: AnswerResult, question_id: str, answerer: Answerer) -> AnswerResult:
        verdict = result.verdict
        if verdict.kind is VerdictKind.REFUSED and verdict.reason is not None:
            # Counted and logged as the router's refusals are (ids and the reason, never the answer).
            self.metrics.count(Metric.REFUSED, reason=verdict.reason.value)
            self.log.info(
                "answer refused: %s",
                verdict.reason.value,
                extra={
                    "thread_id": verdict.record.thread_id if verdict.record else None,
                    "question_id": question_id,
                    "via": answerer.via,
                    "detail": verdict.detail,
                },
            )
        return result

    def _answer(
        self,
        question_id: str,
        answer: Any,
        answerer: Answerer,
        *,
        answer_id: str,
        valid_until: datetime | None,
        cancel_reason: str | None = None,
        lease_wait: float | None = None,
        passkey: PasskeyAssertion | None = None,
    ) -> AnswerResult:
        now = self.clock()
        view = self.hand_overs.answer_view(question_id, now=now)
        if view is None:
            return AnswerResult(Verdict.refused(RefusalReason.UNKNOWN_QUESTION, f"no question {question_id}"))
        attempt = AnswerAttempt(
            view.record.thread_id,
            question_id,
            answer,
            answer_id,
            answerer,
            now,
            valid_until,
            cancel=cancel_reason is not None,
            reason=cancel_reason,
            passkey=passkey,
        )
        verdict = self._decide(attempt, view, self.lease_wait if lease_wait is None else max(lease_wait, 0.0))
        return AnswerResult(verdict, self._hand_over(verdict, answer_id))

    def _decide(self, attempt: AnswerAttempt, view: AnswerView, wait: float) -> Verdict:
        """The desk's verdict on a thread no run holds; while one does (or took it before the decision was written),
        look again, backing off, for up to `wait` seconds, then refuse `thread_busy`.

        The lease and the thread are judged at `attempt.received_at`, the time the answer is judged by.
        """
        give_up = time.monotonic() + wait
        delay = 0.05
        busy = False
        while True:
            if not view.busy:
                verdict = self.desk.decide(attempt, ThreadState.from_view(view))
                if verdict.reason is not RefusalReason.THREAD_BUSY:
                    return verdict
            if not busy:  # counted once per answer, as a delivery that waits for the thread counts it
                self.metrics.count(Metric.THREAD_BUSY)
                busy = True
            if time.monotonic() >= give_up:
                return Verdict.refused(RefusalReason.THREAD_BUSY, THREAD_MOVED, view.record)
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
            again = self.hand_overs.answer_view(
                attempt.question_id, now=attempt.received_at, thread_id=attempt.thread_id
            )
            if again is None:  # pragma: no cover - a question is never deleted while it can be answered
                return Verdict.refused(RefusalReason.UNKNOWN_QUESTION, f"no question {attempt.question_id}")
            view = again

    def _hand_over(self, verdict: Verdict, answer_id: str) -> bool:
        """Wake the router: the resume of a decision made now, or a vote to announce. A repeat sends nothing: the
        first attempt sent it (or the sweep sends it again)."""
        record = verdict.record
        if record is None or verdict.kind not in (VerdictKind.DECIDED, VerdictKind.VOTED):
            return True
        # A vote recorded: the router announces it (`wait.voted`); a decision: the router resumes the agent.
        message = vote_message(record, answer_id) if verdict.kind is VerdictKind.VOTED else resume_message(record)
        try:
            self.entry_queue.send(
                message, group_id=group_id_for(record.thread_id), deduplication_id=str(message["answer_id"])
            )
        except Exception as exc:  # the decision stands, handed over on the thread; the sweep sends the resume again
            logger.warning(
                "decision made but its resume could not be queued; the sweep hands it over",
                extra={"thread_id": record.thread_id, "question_id": record.question_id, "error": type(exc).__name__},
            )
            return False
        return True
