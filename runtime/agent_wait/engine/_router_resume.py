"""How the router carries a decision to the agent: resume it with the recorded answer (or complete the durable
callback it waits on), count and announce the decision, and, before a message runs, catch up on the decisions doors
made and handed over (`Router._catch_up`).

The agent resumes only if it is still parked on the question: a LangGraph resume for a question it is not parked on
re-runs the pending node (a measured fact, pinned in tests/langgraph). A resume that raises fails the thread, once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from agent_wait.asking.adapter import AgentAdapter, RunOutcome, resume_value_for
from agent_wait.asking.callbacks import CallbackCompleter, callback_execution_of, callback_id_of
from agent_wait.asking.delivery import current_delivery
from agent_wait.asking.polled import is_polled
from agent_wait.common.times import format_rfc3339, parse_rfc3339, seconds_between
from agent_wait.contract.envelope import Transition
from agent_wait.contract.messages import AnswerMessage, RetryMessage
from agent_wait.contract.schema import QuestionStatus
from agent_wait.dialects import resume_value
from agent_wait.engine import tracing
from agent_wait.engine.cancelling import awaits_resume
from agent_wait.engine.failures import Failures
from agent_wait.engine.handover import resume_message
from agent_wait.engine.metrics import DecisionOutcome, HostMetrics, Metric, MetricTags, time_to_decision
from agent_wait.engine.outcomes import Outcome, OutcomeKind, RefusalReason
from agent_wait.engine.questions import AskedQuestions
from agent_wait.engine.versions import VersionGuard
from agent_wait.engine.votes import decision_progress
from agent_wait.errors import CallbackRefusedError, ConfigurationError
from agent_wait.ledger import FailureKind, FullLedger, QuestionRecord, ThreadFailure, ThreadLease

__all__ = ("MAX_GRANTED_RESUMES", "RouterResume")

MAX_GRANTED_RESUMES = 10
"""Decisions of standing grants one delivery carries to the agent: an agent that keeps asking what a grant covers is
resumed ten times a message at most; the sweep hands over the rest, a minute at a time."""


class RouterResume:
    """The router's resume of decided questions, and the small steps every part of `Router` shares (`Router` derives
    from it; `Router.__init__` sets the attributes)."""

    adapter: AgentAdapter
    ledger: FullLedger
    callbacks: CallbackCompleter | None
    questions: AskedQuestions
    failures: Failures
    versions: VersionGuard
    metrics: HostMetrics
    metric_tags: MetricTags
    clock: Callable[[], datetime]
    log: logging.Logger | Any

    def is_transient(self, exc: BaseException) -> bool:  # pragma: no cover - the router's
        raise NotImplementedError

    def _catch_up(self, lease: ThreadLease) -> tuple[dict[str, tuple[str, Outcome]], ThreadFailure | None]:
        """Apply what doors decided on this thread and handed over (`ThreadLease.handed_over`), in order.

        Returns the answer id and the outcome of each question applied now (a durable callback Lambda refused is
        dead-lettered, and the thread goes on), and the thread's failure as it stands after (a resume
        that raised fails the thread; what is still waiting stays recorded for after the retry).
        """
        delivery = current_delivery(lease.thread_id)
        if not lease.handed_over or lease.failure is not None or delivery is None:
            return {}, lease.failure
        applied: dict[str, tuple[str, Outcome]] = {}
        waiting = list(lease.handed_over)
        while waiting:
            record = self.ledger.get(lease.thread_id, waiting[0])
            if record is not None and awaits_resume(record):
                if record.followups.voting:
                    self.metrics.count(Metric.VOTES)  # the deciding vote, which the door counted nowhere
                self._announce_decision(record, self.clock())
                body = json.dumps(resume_message(record))
                outcome = self._resume(record, body=body, message_id=str(record.answer_id))
                if outcome.kind is OutcomeKind.DEAD_LETTERED:
                    failure = self.ledger.thread_failure(lease.thread_id)
                    if failure is not None:  # the agent raised: what still waits is applied after the retry
                        delivery.handed_over = tuple(waiting[1:])
                        return applied, failure
                applied[record.question_id] = (str(record.answer_id), outcome)
            waiting.pop(0)
        delivery.handed_over = ()
        return applied, None

    def _resume_granted(self, thread_id: str, outcome: Outcome) -> Outcome:
        """Resume the agent with each question a standing grant decided as this delivery's runs asked it, in order
        (each run may ask, and a grant decide, again), at most `MAX_GRANTED_RESUMES`; `outcome`, the message's own,
        is returned with the questions resumed so added (`granted`). What is left stays decided and due: the sweep
        hands it over. A resume that fails the thread stops here, as any failed resume does."""
        held = current_delivery(thread_id)
        if held is None or not held.granted:
            return outcome
        resumed: list[str] = []
        while held.granted and len(resumed) < MAX_GRANTED_RESUMES:
            record = held.granted.pop(0)
            self._announce_decision(record, self.clock())
            body = json.dumps(resume_message(record))
            # The first was asked by the run that just ended, so the agent is parked on it; a later one is checked,
            # as resuming the first may have moved the agent past it.
            parked = None if resumed else True
            applied = self._resume(record, body=body, message_id=str(record.answer_id), parked=parked)
            resumed.append(record.question_id)
            if applied.kind is OutcomeKind.DEAD_LETTERED:
                break
        held.granted.clear()
        return replace(outcome, extra={**(outcome.extra or {}), "granted": resumed})

    def _resume(
        self,
        record: QuestionRecord,
        *,
        body: str,
        message_id: str,
        parked: bool | None = None,
        retries: int = 0,
    ) -> Outcome:
        """Resume the agent with the recorded answer; `parked` is passed when this call just won the decision."""
        thread_id, question_id = record.thread_id, record.question_id
        if (held := current_delivery(thread_id)) is not None:
            held.decided.add(question_id)  # decided, so the run's open questions need not read it again
        callback_id = callback_id_of(record.envelope.source)
        try:
            # The agent receives the answer in its question's dialect (ours are translated; agent_wait.dialects).
            value = resume_value(record.envelope, record.answer)
            # A framework that re-runs the waiting code gets the call asked too: other arguments run nothing.
            value = resume_value_for(self.adapter, record.envelope.question, record.envelope.source, value)
            with tracing.resume_span(record):  # linked to the span that asked, however long ago
                if callback_id is not None:  # a durable function waits on its callback: complete it, run nothing here
                    self._complete_callback(callback_id, value, callback_execution_of(record.envelope.source))
                    asked: tuple[str, ...] = ()
                elif is_polled(record.envelope.source):  # its asker polls the row (an MCP task): nothing to run
                    asked = ()
                else:
                    if parked is None:
                        parked = self._parked_on(thread_id, question_id)
                    # Not parked: already resumed by an attempt that died before it could say so; do not resume again.
                    # Asked under another version of the agent: resume, migrate or fail visibly (docs/versions.md).
                    run = self.versions.resume(record, value) if parked else None
                    if run is None:
                        run = (
                            self.adapter.resume(thread_id, question_id, value) if parked else self._converge(thread_id)
                        )
                    asked = self.questions.after_run(thread_id, run)
        except Exception as exc:
            if self.is_transient(exc):
                raise
            failure = ThreadFailure(
                thread_id, FailureKind.ANSWER, question_id, message_id, type(exc).__name__, self._stamp(), retries
            )
            if isinstance(exc, CallbackRefusedError):
                outcome = self.failures.callback_refused(failure, body, exc)
            else:
                outcome = self.failures.agent_failed(failure, body, exc)
            self.questions.announce(record.envelope, Transition.FAILED, record=record)
            return outcome
        if self.ledger.mark_resumed(thread_id, question_id, now=self.clock()):
            self.questions.announce(record.envelope, Transition.RESUMED, record=record)
        self.log.debug(
            "answer applied", extra={"thread_id": thread_id, "question_id": question_id, "asked": list(asked)}
        )
        return Outcome(OutcomeKind.APPLIED, thread_id, question_id, asked=asked)

    def _complete_callback(self, callback_id: str, value: Any, execution: str | None) -> None:
        """Hand a durable function its answer: complete the callback it waits on with the answer as JSON text.

        The same text on every delivery, so a completion an earlier attempt made before it died counts as made.
        """
        if self.callbacks is None:
            raise ConfigurationError(
                [
                    "a question asked from a durable function was decided, but this router completes no callbacks: "
                    "build it with Router(callbacks=agent_wait.aws.callbacks.LambdaCallbacks()), then retry the thread"
                ]
            )
        result = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        self.callbacks.succeed(callback_id, result, execution=execution)

    def _announce_decision(self, record: QuestionRecord, now: datetime) -> None:
        """Count and announce the decision just recorded on `record` (`wait.answered` or `wait.expired`).

        A quorum's deciding vote is told first (`wait.voted`), and its `wait.answered` carries the votes.
        """
        self._count_decision(record, now)
        progress = decision_progress(record)
        if progress is not None:
            self.questions.announce(record.envelope, Transition.VOTED, progress=progress, record=record)
        self.questions.announce(record.envelope, Transition(record.status.value), progress=progress, record=record)

    def _retell(self, record: QuestionRecord, *, resumed: bool = False) -> None:
        """Announce again a decision already counted (and its resume): a redelivery, after an attempt that may have
        died between its writes and its announcements. Consumers drop what they had by `dedupe_key`."""
        decided = record.outcome or record.status
        progress = decision_progress(record)
        self.questions.announce(record.envelope, Transition(decided.value), progress=progress, record=record)
        if resumed:
            self.questions.announce(record.envelope, Transition.RESUMED, record=record)

    def _count_decision(self, record: QuestionRecord, now: datetime) -> None:
        # Timed to when the decision was written: a door's decision is counted here, when the router carries it on.
        decided = parse_rfc3339(record.decided_at) if record.decided_at else now
        waited = seconds_between(parse_rfc3339(record.asked_at), decided)
        if record.status is QuestionStatus.CANCELLED:  # a person's cancel (the router's own never comes here)
            self.metrics.count(Metric.CANCELLED)
            time_to_decision(self.metrics, DecisionOutcome.CANCELLED, waited, record.envelope.tags, self.metric_tags)
            return
        if record.status is QuestionStatus.EXPIRED:
            self.metrics.count(Metric.EXPIRED)
            time_to_decision(self.metrics, DecisionOutcome.EXPIRED, waited, record.envelope.tags, self.metric_tags)
            return
        self.metrics.count(Metric.ACCEPTED)
        self.metrics.seconds(Metric.TIME_TO_ANSWER, max(waited, 0.0))
        time_to_decision(self.metrics, DecisionOutcome.ANSWERED, waited, record.envelope.tags, self.metric_tags)

    # -- steps every part of the router shares ------------------------------------------------------

    def _refuse(self, reason: RefusalReason, message: AnswerMessage | RetryMessage, detail: str) -> Outcome:
        question_id = message.question_id if isinstance(message, AnswerMessage) else None
        self.metrics.count(Metric.REFUSED, reason=reason.value)
        self.log.debug(
            "message refused: %s",
            reason.value,
            extra={"thread_id": message.thread_id, "question_id": question_id, "detail": detail},
        )
        return Outcome(OutcomeKind.REFUSED, message.thread_id, question_id, reason, detail)

    def _stamp(self) -> str:
        return format_rfc3339(self.clock())

    def _parked_on(self, thread_id: str, question_id: str) -> bool:
        return question_id in {q.question_id for q in self.adapter.pending(thread_id)}

    def _converge(self, thread_id: str) -> RunOutcome:
        if self.adapter.unfinished(thread_id):
            return self.adapter.continue_run(thread_id)
        return RunOutcome(None, tuple(self.adapter.pending(thread_id)))
