"""`Router`: apply one start or answer message, exactly one outcome per question, converging on redelivery.

The rules (DESIGN.md "Invariants"):

- A start is applied once, remembered by its start id. A redelivered start never runs the agent
  again: it republishes the thread's open questions. A start that died part-way (Lambda stopped) is
  finished from the agent's checkpoint, never restarted from scratch. A start whose agent raised is
  recorded as failed and dead-lettered with its reason; a redelivery of it runs nothing. Store and
  network failures are not the agent's: they raise, and SQS's redelivery converges.
- An answer is checked against the ledger before anything touches the agent (an unknown thread or
  question, a question no longer open, an action not allowed, a stale answer are refused with a
  reason). The first valid answer wins a conditional write; the agent resumes only if it is still
  parked on the question, because a LangGraph resume for a question it is not parked on re-runs the
  pending node (a measured fact, pinned in tests/langgraph).
- Every write is idempotent, so Lambda may die between any two of them and SQS's redelivery
  converges: the same answer id finds its own decision and carries on from where it stopped.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_wait._time import clock_scope, parse_rfc3339, seconds_between, utc_now
from agent_wait.adapter import AgentAdapter, RunOutcome
from agent_wait.envelope import Question, Transition, WaitEnvelope
from agent_wait.errors import MessageError, ThreadStateConflictError, ThreadStateUnavailableError
from agent_wait.host.dead_letter import DeadLetter
from agent_wait.host.ledger.base import Decision, Ledger, LedgerUnavailableError, QuestionRecord
from agent_wait.host.observe import METRIC_NAMES as M
from agent_wait.host.observe import HostMetrics, RecordingMetrics
from agent_wait.host.outcomes import Outcome, OutcomeKind, RefusalReason
from agent_wait.messages import AnswerMessage, StartMessage, parse_message
from agent_wait.publish import Announcers, PublishReport, as_announcers, publish
from agent_wait.schema import QuestionStatus

__all__ = ("Router",)

AGENT_FAILED = "agent_failed"
"""Dead-letter reason for a start whose agent raised (the start is not run again)."""

# Failures of the stores and the network, not of the agent: the message is retried and converges.
RETRYABLE: tuple[type[BaseException], ...] = (
    LedgerUnavailableError,
    ThreadStateConflictError,
    ThreadStateUnavailableError,
    BotoCoreError,
    ClientError,
    ConnectionError,
    TimeoutError,
)

_REFUSAL_FOR_STATUS = {
    QuestionStatus.EXPIRED: RefusalReason.EXPIRED,
    QuestionStatus.CANCELLED: RefusalReason.CANCELLED,
}


class Router:
    """Apply start and answer messages to one agent; the same class runs in Lambda, locally, or in any host.

    Args:
        adapter: drives the agent framework (`LangGraphAdapter(graph)`, ...).
        ledger: decides each question once (`DynamoDbLedger`, `InMemoryLedger`).
        dead_letter: where malformed messages go, with their reason.
        announce: announcers for every lifecycle envelope.
        metrics: where counts and timings go; kept in memory when omitted.
        reply_to: published on envelopes as where answers go (e.g. the entry queue URL).
        clock: returns now (UTC); injected so tests never sleep.
        logger: a stdlib-compatible logger (Powertools' Logger in Lambda).
    """

    def __init__(
        self,
        adapter: AgentAdapter,
        ledger: Ledger,
        *,
        dead_letter: DeadLetter,
        announce: Announcers = None,
        metrics: HostMetrics | None = None,
        reply_to: Any = None,
        clock: Callable[[], datetime] = utc_now,
        logger: logging.Logger | Any = None,
    ) -> None:
        self.adapter = adapter
        self.ledger = ledger
        self.dead_letter = dead_letter
        self.announcers = as_announcers(announce)
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.reply_to = reply_to
        self.clock = clock
        self.log = logger or logging.getLogger("agent_wait.host")

    # -- entry point ---------------------------------------------------------------------------------

    def handle(self, body: str, *, message_id: str | None = None, deduplication_id: str | None = None) -> Outcome:
        """Apply one message. Returns its outcome; raises only when it must be retried (a store failed).

        Args:
            body: the message body (JSON text).
            message_id: the transport's message id (SQS `messageId`).
            deduplication_id: the transport's deduplication id (SQS FIFO `MessageDeduplicationId`).
        """
        try:
            message = parse_message(body)
        except MessageError as exc:
            return self._dead_letter(body, exc, message_id)
        fallback_id = deduplication_id or message_id or hashlib.sha256(body.encode("utf-8")).hexdigest()
        with clock_scope(self.clock):
            if isinstance(message, StartMessage):
                return self._start(message, message.start_id or fallback_id, body)
            return self._answer(message, message.answer_id or fallback_id)

    def _dead_letter(self, body: str, exc: MessageError, message_id: str | None) -> Outcome:
        self.dead_letter.send(body, reason=exc.reason, detail=exc.message, message_id=message_id)
        self.metrics.count(M["dead_lettered"], reason=exc.reason)
        self.log.warning(
            "message dead-lettered: %s", exc.message, extra={"reason": exc.reason, "message_id": message_id}
        )
        return Outcome(OutcomeKind.DEAD_LETTERED, reason=exc.reason, detail=exc.message)

    # -- starts --------------------------------------------------------------------------------------

    def _start(self, message: StartMessage, start_id: str, body: str) -> Outcome:
        thread_id, now = message.thread_id, self.clock()
        progress = self.adapter.progress(thread_id)
        start = self.ledger.begin_start(thread_id, start_id, marker=progress, now=now)
        if not start.created and start.state == "failed":
            self.metrics.count(M["starts_replayed"])
            return Outcome(
                OutcomeKind.START_REPLAYED,
                thread_id,
                reason=AGENT_FAILED,
                detail="this start failed earlier and was dead-lettered; the agent did not run again",
            )
        if not start.created and start.state == "done":
            reports = self._republish_open(thread_id)
            self.metrics.count(M["starts_replayed"])
            self.log.info("start replayed; agent not run", extra={"thread_id": thread_id, "start_id": start_id})
            return Outcome(
                OutcomeKind.START_REPLAYED,
                thread_id,
                asked=tuple(r.envelope.question_id for r in reports),
                detail="this start was already applied; open questions were republished",
            )
        try:
            if start.created or progress == start.marker:
                run = self.adapter.start(thread_id, message.input)
            else:
                # An earlier attempt died after the agent moved: finish from the checkpoint, never restart.
                run = self._converge(thread_id)
        except RETRYABLE:
            raise  # a store or network failure: SQS redelivers and the start converges
        except Exception as exc:
            return self._start_failed(message, start_id, body, exc)
        asked = self._after_run(thread_id, run)
        self.ledger.finish_start(thread_id, start_id, asked, now=self.clock())
        self.metrics.count(M["starts"])
        self.log.info("start applied", extra={"thread_id": thread_id, "start_id": start_id, "asked": list(asked)})
        return Outcome(OutcomeKind.STARTED, thread_id, asked=asked)

    def _start_failed(self, message: StartMessage, start_id: str, body: str, exc: Exception) -> Outcome:
        """The agent raised: a start is applied once, so it is recorded as failed and dead-lettered, not retried."""
        thread_id = message.thread_id
        detail = f"the agent raised {type(exc).__name__}: {exc}"[:1000]
        self.dead_letter.send(body, reason=AGENT_FAILED, detail=detail, message_id=start_id)
        self.ledger.finish_start(thread_id, start_id, (), now=self.clock(), state="failed")
        self.metrics.count(M["dead_lettered"], reason=AGENT_FAILED)
        # The exception's text may quote the agent's input: only its type is logged at WARNING.
        self.log.warning(
            "start failed; dead-lettered",
            extra={"thread_id": thread_id, "start_id": start_id, "error": type(exc).__name__},
        )
        self.log.debug("start failure detail: %s", detail, exc_info=exc)
        return Outcome(OutcomeKind.DEAD_LETTERED, thread_id, reason=AGENT_FAILED, detail=detail)

    # -- answers -------------------------------------------------------------------------------------

    def _answer(self, message: AnswerMessage, answer_id: str) -> Outcome:
        thread_id, question_id, now = message.thread_id, message.question_id, self.clock()
        record = self.ledger.get(thread_id, question_id)
        if record is None:
            if self.ledger.thread_exists(thread_id):
                return self._refuse(RefusalReason.UNKNOWN_QUESTION, message, "no such question on this thread")
            return self._refuse(RefusalReason.UNKNOWN_THREAD, message, "no question was ever asked on this thread")
        parked: bool | None = None
        if record.status is QuestionStatus.OPEN:
            refusal = self._check(record, message, now)
            if refusal is not None:
                return refusal
            parked = self._parked_on(thread_id, question_id)
            if not parked and self.adapter.unfinished(thread_id):
                # Open in the ledger, but the agent is stopped part-way through another run: a newer turn
                # moved past this question and failed before it could cancel it. Nothing can resume the
                # question, and deciding it would continue that other run under this answer's name.
                self._cancel(record)
                return self._refuse(RefusalReason.NOT_PARKED, message, "the agent is part-way through another run")
            status = QuestionStatus.EXPIRED if message.from_deadline else QuestionStatus.ANSWERED
            # A deadline always applies the question's own default, whatever the message carries.
            answer = record.envelope.default if message.from_deadline else message.answer
            decided = self.ledger.decide(
                thread_id, question_id, Decision(status, answer, answer_id, message.answered_by), now=now
            )
            record = decided.record
            if not decided.won:
                parked = None  # another attempt won: it may have resumed since, so look again
            else:
                self._count_decision(record, now)
                self._announce(record.envelope, Transition(status.value))
        if record.answer_id != answer_id:
            decided_as = record.outcome or record.status
            reason = _REFUSAL_FOR_STATUS.get(decided_as, RefusalReason.ALREADY_DECIDED)
            return self._refuse(reason, message, f"the question was {decided_as.value}; another outcome won")
        if record.status is QuestionStatus.RESUMED:
            return self._refuse(RefusalReason.DUPLICATE, message, "this answer was already applied")
        return self._resume(record, parked=parked)

    def _parked_on(self, thread_id: str, question_id: str) -> bool:
        return question_id in {q.question_id for q in self.adapter.pending(thread_id)}

    def _check(self, record: QuestionRecord, message: AnswerMessage, now: datetime) -> Outcome | None:
        if message.from_deadline:
            if not record.is_overdue(now):
                return self._refuse(RefusalReason.NOT_DUE, message, f"deadline is {record.expires_at}")
            return None
        if record.is_overdue(now):
            return self._refuse(
                RefusalReason.EXPIRED, message, f"deadline passed at {record.expires_at}; the default applies"
            )
        if message.valid_until is not None and message.valid_until <= now:
            return self._refuse(RefusalReason.ANSWER_STALE, message, "the answer's valid_until has passed")
        action = message.answer.get("action") if isinstance(message.answer, dict) else None
        if action not in record.envelope.allowed_actions:
            allowed = list(record.envelope.allowed_actions)
            return self._refuse(
                RefusalReason.ACTION_NOT_ALLOWED, message, f"answer must be an object whose action is one of {allowed}"
            )
        return None

    def _resume(self, record: QuestionRecord, *, parked: bool | None = None) -> Outcome:
        """Resume the agent with the recorded answer; `parked` is passed when this call just won the decision."""
        thread_id, question_id = record.thread_id, record.question_id
        if parked is None:
            parked = self._parked_on(thread_id, question_id)
        # Not parked: already resumed by an attempt that died before it could say so; do not resume again.
        run = self.adapter.resume(thread_id, question_id, record.answer) if parked else self._converge(thread_id)
        asked = self._after_run(thread_id, run)
        if self.ledger.mark_resumed(thread_id, question_id, now=self.clock()):
            self._announce(record.envelope, Transition.RESUMED)
        self.log.info(
            "answer applied", extra={"thread_id": thread_id, "question_id": question_id, "asked": list(asked)}
        )
        return Outcome(OutcomeKind.APPLIED, thread_id, question_id, asked=asked)

    def _refuse(self, reason: RefusalReason, message: AnswerMessage, detail: str) -> Outcome:
        self.metrics.count(M["refused"], reason=reason.value)
        self.log.info(
            "answer refused: %s",
            reason.value,
            extra={"thread_id": message.thread_id, "question_id": message.question_id, "detail": detail},
        )
        return Outcome.refused(reason, message.thread_id, message.question_id, detail)

    def _count_decision(self, record: QuestionRecord, now: datetime) -> None:
        if record.status is QuestionStatus.EXPIRED:
            self.metrics.count(M["expired"])
            return
        self.metrics.count(M["accepted"])
        self.metrics.seconds(M["time_to_answer"], seconds_between(parse_rfc3339(record.asked_at), now))

    # -- shared steps ----------------------------------------------------------------------------------

    def _converge(self, thread_id: str) -> RunOutcome:
        if self.adapter.unfinished(thread_id):
            return self.adapter.continue_run(thread_id)
        return RunOutcome(None, tuple(self.adapter.pending(thread_id)))

    def _after_run(self, thread_id: str, run: RunOutcome) -> tuple[str, ...]:
        """Record and announce what the agent now waits on; cancel what it moved past unanswered."""
        for question in run.questions:
            self._record_question(question)
        waiting = {q.question_id for q in run.questions}
        for record in self.ledger.questions(thread_id, status=QuestionStatus.OPEN):
            if record.question_id not in waiting:
                self._cancel(record)
        return tuple(q.question_id for q in run.questions)

    def _record_question(self, question: Question) -> None:
        now = self.clock()
        opened = self.ledger.open(WaitEnvelope.create(question, reply_to=self.reply_to, now=now), now=now)
        if opened.created:
            self.metrics.count(M["asked"])
            self.log.info(
                "question asked", extra={"thread_id": question.thread_id, "question_id": question.question_id}
            )
        if opened.created or not opened.record.announced:
            self._announce_created(opened.record)

    def _announce_created(self, record: QuestionRecord) -> PublishReport:
        report = self._announce(record.envelope, Transition.CREATED)
        if report.ok:
            self.ledger.mark_announced(record.thread_id, record.question_id)
        return report

    def _cancel(self, record: QuestionRecord) -> None:
        decision = Decision(QuestionStatus.CANCELLED, None, f"cancelled:{record.question_id}", "agent-wait:moved-on")
        if self.ledger.decide(record.thread_id, record.question_id, decision, now=self.clock()).won:
            self.metrics.count(M["cancelled"])
            self._announce(record.envelope, Transition.CANCELLED)

    def _announce(self, envelope: WaitEnvelope, transition: Transition) -> PublishReport:
        report = publish(envelope.for_transition(transition), self.announcers)
        for failure in report.failed:
            self.metrics.count(M["announce_failed"], reason=failure.announcer)
        return report

    def _republish_open(self, thread_id: str) -> Sequence[PublishReport]:
        return [
            self._announce_created(record) for record in self.ledger.questions(thread_id, status=QuestionStatus.OPEN)
        ]
