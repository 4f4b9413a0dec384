"""`Router`: apply one start, answer or retry message, exactly one outcome per question, converging on redelivery.

The rules (DESIGN.md "Invariants"):

- One thread at a time. A record whose FIFO group is not its thread's is dead-lettered
  (`group_mismatch`), and every message holds the thread's lease in the ledger while it is applied, so
  two deliveries of one thread (another queue, a manual invoke, the local runner) never interleave; the
  loser waits a little, then is handed back to SQS and retried, never dropped.
- A start is applied once, remembered by its start id. A redelivered start never runs the agent
  again: it republishes the thread's open questions. A start that died part-way (Lambda stopped) is
  finished from the agent's checkpoint, never restarted from scratch. Store and network failures are
  not the agent's: they raise, and SQS's redelivery converges.
- An answer is checked against the ledger before anything touches the agent (an unknown thread or
  question, a question no longer open, an action not allowed, a stale answer are refused with a
  reason), judged by when SQS received it. The first valid answer wins a conditional write; the agent
  resumes only if it is still parked on the question, because a LangGraph resume for a question it is
  not parked on re-runs the pending node (a measured fact, pinned in tests/langgraph).
- When the agent raises (applying a start, an answer or a retry), the failure is recorded once, on the
  thread and on the row, the message is dead-lettered with reason `agent_failed`, and the thread is
  failed: a redelivery runs nothing, other messages for the thread wait in the dead-letter queue
  (`thread_failed`), and only an operator's retry (`agent-wait retry THREAD`) applies the recorded
  start or decision again, once.
- Every write is idempotent, so Lambda may die between any two of them and SQS's redelivery
  converges: the same message id finds its own work and carries on from where it stopped.

Long on purpose: one class applies starts, answers and retries because all three share the delivery (its lease,
the failures, the resume and the hand-over catch-up); the decision itself is `AnswerDesk`'s, the bookkeeping of
what the agent asked `AskedQuestions`'.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from typing import Any

from agent_wait.asking.adapter import AgentAdapter, RunOutcome, resume_value_for
from agent_wait.asking.callbacks import CallbackCompleter, callback_execution_of, callback_id_of
from agent_wait.asking.delivery import current_delivery
from agent_wait.channels.publish import Announcers, as_announcers
from agent_wait.common.times import clock_scope, format_rfc3339, parse_rfc3339, seconds_between, utc_now
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.messages import (
    RESERVED_ID_PREFIX,
    AnswerMessage,
    RetryMessage,
    StartMessage,
    group_id_for,
    parse_message,
)
from agent_wait.contract.schema import QuestionStatus
from agent_wait.dialects import resume_value
from agent_wait.engine import tracing
from agent_wait.engine.answering import AnswerAttempt, AnswerDesk, ThreadState, Verdict, VerdictKind
from agent_wait.engine.cancelling import awaits_resume, cancelled_by_person
from agent_wait.engine.checks import Answerer, principal_of
from agent_wait.engine.dead_letter import DeadLetter
from agent_wait.engine.failures import AGENT_FAILED, Failures
from agent_wait.engine.handover import HANDED_OVER, resume_message
from agent_wait.engine.lease import hold_thread
from agent_wait.engine.metrics import (
    DecisionOutcome,
    HostMetrics,
    Metric,
    MetricTags,
    RecordingMetrics,
    time_to_decision,
)
from agent_wait.engine.outcomes import DeadLetterReason, Outcome, OutcomeKind, RefusalReason
from agent_wait.engine.questions import AskedQuestions
from agent_wait.engine.senders import SenderPolicy
from agent_wait.engine.versions import VersionGuard
from agent_wait.engine.votes import decision_progress, vote_progress
from agent_wait.errors import (
    ArgumentError,
    CallbackRefusedError,
    CallbackUnavailableError,
    ConfigurationError,
    LedgerRejectedError,
    LedgerUnavailableError,
    MessageError,
    QuestionNotFoundError,
    QueueUnavailableError,
    ThreadBusyError,
    ThreadStateConflictError,
    ThreadStateUnavailableError,
)
from agent_wait.ledger import (
    Capability,
    FailureKind,
    Ledger,
    QuestionRecord,
    StartState,
    ThreadFailure,
    ThreadLease,
    Vote,
    require_capabilities,
)

__all__ = ("AGENT_FAILED", "DEFAULT_LEASE_SECONDS", "Router")

DEFAULT_LEASE_SECONDS = 900.0
"""How long a thread's lease lasts unless released: Lambda's longest timeout, so a live holder never loses it."""

RETRYABLE: tuple[type[BaseException], ...] = (
    LedgerUnavailableError,
    QueueUnavailableError,
    ThreadBusyError,
    ThreadStateConflictError,
    ThreadStateUnavailableError,
    CallbackUnavailableError,
    ConnectionError,
    TimeoutError,
)
"""Failures of the stores and the network, not of the agent: the message is retried and converges. Backends raise
these (they translate their drivers' errors at their boundary); a host adds what its own drivers raise from inside
the agent's run with `Router(transient=...)`."""


class Router:
    """Apply start, answer and retry messages to one agent; the same class runs in Lambda, locally, or in any host.

    Args:
        adapter: drives the agent framework (`LangGraphAdapter(graph)`, ...).
        ledger: decides each question once and holds each thread's lease (`DynamoDbLedger`, `InMemoryLedger`).
        dead_letter: where messages that can never apply go, with their reason.
        announce: announcers for every lifecycle envelope.
        metrics: where counts and timings go; kept in memory when omitted.
        reply_to: published on envelopes as where answers go (e.g. the entry queue URL).
        clock: returns now (UTC); injected so tests never sleep.
        logger: a stdlib-compatible logger (Powertools' Logger in Lambda).
        lease_seconds: how long a thread's lease lasts unless released. Default 900 s (Lambda's longest
            timeout): it must outlast the longest invocation, or a slow holder could lose its thread.
        lease_wait: how long a message waits for another delivery's lease on its thread before it is
            handed back to SQS to retry. Default 10 s.
        senders: which queue senders are trusted and which may send starts and answers. Default: no
            restriction (a host that is not SQS has no sender identity to check).
        link_maker: makes a question's signed answer links (`agent_wait.host.links.answer_links`); None: none.
        link_announcers: names of the announcers whose `wait.created` envelopes carry those links.
        transient: tells a store's or the network's failure raised from inside the agent's run (an AWS call in a
            node, throttled) from the agent's own: True retries the message instead of failing the thread. The
            AWS host passes `agent_wait.aws.errors.is_transient`; None: only agent-wait's own errors (`RETRYABLE`).
        callbacks: completes the callback of a question asked from an AWS Lambda durable function
            (`agent_wait.durable.ask`; `agent_wait.aws.callbacks.LambdaCallbacks`): its decision goes there instead of
            to `adapter`. None: such a question's decision fails its thread with a `ConfigurationError` saying so.
        metric_tags: the policy tags time to answer is also drawn by, each with its bounded values
            (`AGENT_WAIT_METRIC_TAGS`, `agent_wait.engine.metrics.MetricTags`). Default: none.
        on_new_version: what resuming a question asked under another version of the agent does when its policy
            does not say (`AGENT_WAIT_ON_NEW_VERSION`): `"resume"` while compatible (the default) or `"fail"`
            (docs/versions.md).
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
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        lease_wait: float = 10.0,
        senders: SenderPolicy | None = None,
        link_maker: Callable[[WaitEnvelope], dict[str, str]] | None = None,
        link_announcers: frozenset[str] = frozenset(),
        transient: Callable[[BaseException], bool] | None = None,
        callbacks: CallbackCompleter | None = None,
        metric_tags: MetricTags | None = None,
        on_new_version: str = "resume",
    ) -> None:
        if lease_seconds <= 0 or lease_wait < 0:
            raise ArgumentError(f"lease_seconds must be > 0 and lease_wait >= 0; got {lease_seconds}, {lease_wait}")
        self.adapter = adapter
        self.transient = transient
        self.callbacks = callbacks
        self.ledger = require_capabilities(ledger, *Capability, user="Router")
        self.dead_letter = dead_letter
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.clock = clock
        self.log = logger or logging.getLogger("agent_wait.host")
        self.lease_seconds = lease_seconds
        self.lease_wait = lease_wait
        self.senders = senders or SenderPolicy()
        self.desk = AnswerDesk(self.ledger)
        self.failures = Failures(self.ledger, dead_letter, self.metrics, self.log)
        self.questions = AskedQuestions(
            self.ledger,
            metrics=self.metrics,
            log=self.log,
            announce=announce,
            reply_to=reply_to,
            clock=self._now,
            link_maker=link_maker,
            link_announcers=link_announcers,
            metric_tags=metric_tags,
        )
        self.metric_tags = metric_tags or MetricTags()
        self.versions = VersionGuard(adapter, on_new_version=on_new_version, metrics=self.metrics, log=self.log)

    @property
    def announcers(self) -> tuple[Any, ...]:
        """The announcers every lifecycle envelope goes to."""
        return tuple(self.questions.announcers)

    @announcers.setter
    def announcers(self, announce: Announcers) -> None:
        self.questions.announcers = as_announcers(announce)

    # -- entry point ---------------------------------------------------------------------------------

    def handle(
        self,
        body: str,
        *,
        message_id: str | None = None,
        deduplication_id: str | None = None,
        group_id: str | None = None,
        sent_at: datetime | None = None,
        sender: str | None = None,
        final_attempt: bool = False,
        redelivered: bool = False,
        trace: Mapping[str, str] | None = None,
    ) -> Outcome:
        """Apply one message. Returns its outcome; raises only when it must be retried (a store failed).

        Args:
            body: the message body (JSON text).
            message_id: the transport's message id (SQS `messageId`).
            deduplication_id: the transport's deduplication id (SQS FIFO `MessageDeduplicationId`).
            group_id: the transport's FIFO group (`MessageGroupId`); when given it must be the thread's.
            sent_at: when the transport received the message (SQS `SentTimestamp`); answers are judged
                against their deadline by it, so a slow queue never turns a timely answer into a late one.
            sender: the identity the transport authenticated (SQS `SenderId`); what it may claim and send
                follows `senders`.
            redelivered: the transport delivered this message before (SQS `ApproximateReceiveCount` above 1): an
                attempt may have died between its writes and its announcements, so a decision it finds already
                made is announced again.
            final_attempt: this is the transport's last delivery (SQS `ApproximateReceiveCount` has reached
                the redrive policy's `maxReceiveCount`): a message that still cannot be applied is
                dead-lettered here with its reason instead of raising.
            trace: the trace context the message carried (`traceparent`, `tracestate`, `xray`;
                `agent_wait.engine.tracing.carrier_from_sqs`): this delivery's span continues it. A malformed one
                is ignored.
        """
        with tracing.delivery_span(trace, message_id=message_id):
            return self._handle(
                body,
                message_id=message_id,
                deduplication_id=deduplication_id,
                group_id=group_id,
                sent_at=sent_at,
                sender=sender,
                final_attempt=final_attempt,
                redelivered=redelivered,
            )

    def _handle(
        self,
        body: str,
        *,
        message_id: str | None,
        deduplication_id: str | None,
        group_id: str | None,
        sent_at: datetime | None,
        sender: str | None,
        final_attempt: bool,
        redelivered: bool,
    ) -> Outcome:
        try:
            message = parse_message(body)
        except MessageError as exc:
            return self._dead_letter(body, exc.reason, exc.message, message_id=message_id)
        thread_id = message.thread_id
        if group_id is not None and group_id != group_id_for(thread_id):
            return self._dead_letter(
                body,
                DeadLetterReason.GROUP_MISMATCH,
                f"the record's message group is not thread {thread_id}'s; send it with MessageGroupId="
                "agent_wait.contract.messages.group_id_for(thread_id), so the thread's messages run one at a time",
                message_id=message_id,
                thread_id=thread_id,
            )
        refusal = self._check_sender(message, sender, body, message_id)
        if refusal is not None:
            return refusal
        body_hash = hashlib.sha256(body.encode("utf-8")).hexdigest()
        # A start without its own id is one SQS message: its message id is the same on every redelivery, and a
        # later identical start (past SQS's five-minute deduplication) is a new turn. With content-based
        # deduplication the deduplication id is only the body's hash, which would swallow it forever.
        start_fallback = _transport_id(message_id or deduplication_id or body_hash)
        fallback_id = _transport_id(deduplication_id or message_id or body_hash)
        try:
            with clock_scope(self.clock), self._hold(thread_id) as lease:
                # Decisions a door made while holding the thread reach the agent before anything else runs on it.
                applied, failure = self._catch_up(lease)
                if isinstance(message, StartMessage):
                    return self._start(message, message.start_id or start_fallback, body, failure)
                if isinstance(message, RetryMessage):
                    return self._retry(message, body, failure)
                answerer = self.senders.answerer(message, sender)
                answer_id = message.answer_id or fallback_id
                caught = applied.get(message.question_id)
                if caught is not None and caught[0] == answer_id:  # this hand-over, applied just now
                    return caught[1]
                return self._answer(
                    message, answer_id, body, failure, sent_at=sent_at, answerer=answerer, redelivered=redelivered
                )
        except LedgerRejectedError as exc:
            return self._dead_letter(
                body, DeadLetterReason.REJECTED_BY_STORE, exc.message, message_id=message_id, thread_id=thread_id
            )
        except Exception as exc:
            return self.failures.not_applied(exc, body, message_id=message_id, thread_id=thread_id, final=final_attempt)

    def _check_sender(
        self,
        message: StartMessage | AnswerMessage | RetryMessage,
        sender: str | None,
        body: str,
        message_id: str | None,
    ) -> Outcome | None:
        """Refuse what this transport-proven sender may not send, before anything is written."""
        if isinstance(message, StartMessage):
            if self.senders.may_start(sender):
                return None
            detail = f"sender {principal_of(sender)} may not send starts; grant it with grant_send_starts"
            reason = DeadLetterReason.SENDER_NOT_ALLOWED
            return self._dead_letter(body, reason, detail, message_id=message_id, thread_id=message.thread_id)
        if not self.senders.may_answer(sender):
            detail = f"sender {principal_of(sender)} may not send answers; grant it with grant_send_answers"
            return self._refuse(RefusalReason.ANSWERER_NOT_ALLOWED, message, detail)
        if isinstance(message, AnswerMessage) and message.from_deadline and not self.senders.trusts(sender):
            detail = f"only the sweep may send a deadline answer; sender {principal_of(sender)} is not trusted"
            return self._refuse(RefusalReason.NOT_TRUSTED, message, detail)
        return None

    def _dead_letter(
        self, body: str, reason: str, detail: str, *, message_id: str | None, thread_id: str | None = None
    ) -> Outcome:
        return self.failures.dead_letter_message(body, reason, detail, message_id=message_id, thread_id=thread_id)

    def _hold(self, thread_id: str) -> AbstractContextManager[ThreadLease]:
        return hold_thread(
            self.ledger,
            thread_id,
            clock=self.clock,
            seconds=self.lease_seconds,
            wait=self.lease_wait,
            on_busy=lambda: self.metrics.count(Metric.THREAD_BUSY),
            log=self.log,
        )

    # -- starts --------------------------------------------------------------------------------------

    def _start(self, message: StartMessage, start_id: str, body: str, failure: ThreadFailure | None) -> Outcome:
        thread_id, now = message.thread_id, self.clock()
        if failure is not None:
            if failure.kind is FailureKind.START and failure.message_id == start_id:
                return self.failures.replay(failure, start_input=message.input)
            return self.failures.hold(body, thread_id, start_id, failure)
        progress = self.adapter.progress(thread_id)
        held = current_delivery(thread_id)
        if progress is None and held is not None and held.lease.open_questions is None:
            # No state and no ids recorded on the lease: nothing was ever asked here (a thread from before the
            # lease recorded ids has state), so the run's open questions are only what it asks.
            held.new_thread = True
        finished = held.lease.finished_start if held is not None else None
        if held is not None and finished is not None and finished != start_id:
            # The start the last release finished says `running` on its own record: say `done` there now, before
            # the lease names another, so a redelivery of it much later is never run again.
            self.ledger.finish_start(thread_id, finished, held.lease.open_questions or (), now=now)
        start = self.ledger.begin_start(thread_id, start_id, marker=progress, now=now)
        # Running on its own record: finished by a release if the lease says so, or (the agent having moved since it
        # began) if the thread item says so when read again: a release racing this lease's take may leave the lease
        # a stale copy. Else it died part-way, and converges below.
        if (
            not start.created
            and start.state is StartState.RUNNING
            and (
                finished == start_id or (progress != start.marker and self.ledger.finished_start(thread_id) == start_id)
            )
        ):
            start = replace(start, state=StartState.DONE)
        if not start.created and start.state is StartState.FAILED:
            # Failed before, and since retried or recorded by another path: never run it again from here.
            self.metrics.count(Metric.STARTS_REPLAYED)
            return Outcome(
                OutcomeKind.START_REPLAYED,
                thread_id,
                reason=AGENT_FAILED,
                detail="this start failed earlier and was dead-lettered; the agent did not run again",
            )
        if not start.created and start.state is StartState.DONE:
            reports = self.questions.republish_open(thread_id)
            self.metrics.count(Metric.STARTS_REPLAYED)
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
            asked = self.questions.after_run(thread_id, run)
        except Exception as exc:
            if self.is_transient(exc):
                raise  # a store or network failure: SQS redelivers and the start converges
            failure = ThreadFailure(thread_id, FailureKind.START, start_id, start_id, type(exc).__name__, self._stamp())
            return self.failures.agent_failed(failure, body, exc, start_input=message.input)
        if held is not None:
            held.finished_start = start_id  # recorded by the lease's release, in the write it makes anyway
        else:  # pragma: no cover - the router always holds the thread
            self.ledger.finish_start(thread_id, start_id, asked, now=self.clock())
        self.metrics.count(Metric.STARTS)
        self.log.info("start applied", extra={"thread_id": thread_id, "start_id": start_id, "asked": list(asked)})
        return Outcome(OutcomeKind.STARTED, thread_id, asked=asked)

    # -- answers -------------------------------------------------------------------------------------

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
            return self._refused(verdict, message, answer_id, body, failure)
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
            waits = callback_id_of(record.envelope.source) is not None or parked(record.question_id)
            return self._resume(record, body=body, message_id=answer_id, parked=waits)
        # The same answer again: carry on from its decision if the agent has not received it yet.
        if record.status is QuestionStatus.RESUMED:
            if redelivered and record.answer_id == answer_id:
                # A redelivery: the attempt before may have died before it told anyone. Tell again (each envelope
                # keeps its dedupe key), so a crash never loses wait.answered or wait.resumed.
                self._retell(record, resumed=True)
            return self._refuse(RefusalReason.DUPLICATE, message, "this answer was already applied")
        if QuestionStatus.CANCELLED in (record.status, record.outcome) and not cancelled_by_person(record):
            return self._refuse(RefusalReason.CANCELLED, message, "the question was cancelled; nothing resumes it")
        if record.status is QuestionStatus.FAILED:  # the thread's failure was cleared by hand: still never re-run
            return self._refuse(
                RefusalReason.THREAD_FAILED, message, "applying this answer failed; run agent-wait retry"
            )
        if record.via in HANDED_OVER:
            # Decided by a door that hands the resume here, which announced nothing: announce the decision now.
            if record.followups.voting:
                self.metrics.count(Metric.VOTES)  # the deciding vote, which the door counted nowhere
            self._announce_decision(record, now)
        elif redelivered:
            self._retell(record)  # the deciding message again: its first attempt may have died before telling
        return self._resume(record, body=body, message_id=answer_id)

    def _refused(
        self, verdict: Verdict, message: AnswerMessage, answer_id: str, body: str, failure: ThreadFailure | None
    ) -> Outcome:
        """What the queue does with a refused answer: most are refused; on a failed thread, one is replayed or held."""
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
        return self._refuse(reason, message, verdict.detail)

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

    def _tell_vote(self, record: QuestionRecord, *, through: Vote | None = None) -> Outcome:
        """Announce the votes so far (`wait.voted`), or as they stood at `through`; a redelivery announces again under
        the same dedupe key, so a crash between a vote and its announcement never leaves the vote untold."""
        progress = vote_progress(record, through=through)
        self.questions.announce(record.envelope, Transition.VOTED, progress=progress, record=record)
        self.log.info(
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

    def _parked_on(self, thread_id: str, question_id: str) -> bool:
        return question_id in {q.question_id for q in self.adapter.pending(thread_id)}

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
        self.log.info(
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

    def _refuse(self, reason: RefusalReason, message: AnswerMessage | RetryMessage, detail: str) -> Outcome:
        question_id = message.question_id if isinstance(message, AnswerMessage) else None
        self.metrics.count(Metric.REFUSED, reason=reason.value)
        self.log.info(
            "message refused: %s",
            reason.value,
            extra={"thread_id": message.thread_id, "question_id": question_id, "detail": detail},
        )
        return Outcome(OutcomeKind.REFUSED, message.thread_id, question_id, reason, detail)

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

    # -- failed threads and their retry -----------------------------------------------------------------

    def _retry(self, message: RetryMessage, body: str, failure: ThreadFailure | None) -> Outcome:
        """Apply a failed thread's recorded start or decision again, once per retry id."""
        thread_id, retry_id = message.thread_id, message.retry_id
        if failure is None:
            return self._refuse(RefusalReason.NOTHING_TO_RETRY, message, "the thread is not failed")
        if failure.message_id == retry_id:
            return self.failures.replay(failure)
        if not self.ledger.begin_retry(failure, retry_id, now=self.clock()):
            return self._refuse(RefusalReason.NOTHING_TO_RETRY, message, "another retry is applying it")
        self.log.info(
            "retrying a failed thread",
            extra={"thread_id": thread_id, "retry_id": retry_id, "failed": failure.kind.value},
        )
        if failure.kind is FailureKind.ANSWER:
            record = self.ledger.get(thread_id, failure.target_id)
            if record is None:  # a failed answer's question is in the ledger, unless someone deleted the row
                raise QuestionNotFoundError(thread_id, failure.target_id)
            outcome = self._resume(record, body=body, message_id=retry_id, retries=failure.retries + 1)
        else:
            outcome = self._retry_start(failure, retry_id, body)
        if outcome.kind is OutcomeKind.DEAD_LETTERED:
            return outcome
        self.ledger.clear_failure(thread_id)
        self.metrics.count(Metric.RETRIED)
        self.log.info("failed thread retried; it runs again", extra={"thread_id": thread_id, "retry_id": retry_id})
        return Outcome(OutcomeKind.RETRIED, thread_id, failure.question_id, asked=outcome.asked)

    def _retry_start(self, failure: ThreadFailure, retry_id: str, body: str) -> Outcome:
        thread_id, start_id = failure.thread_id, failure.target_id
        start = self.ledger.start_record(thread_id, start_id)
        start_input = start.input if start is not None else None
        try:
            # Finish the failed run from its checkpoint when there is one; else run the recorded input.
            unfinished = self.adapter.unfinished(thread_id)
            run = self.adapter.continue_run(thread_id) if unfinished else self.adapter.start(thread_id, start_input)
            asked = self.questions.after_run(thread_id, run)
        except Exception as exc:
            if self.is_transient(exc):
                raise
            retried = ThreadFailure(
                thread_id, FailureKind.START, start_id, retry_id, type(exc).__name__, self._stamp(), failure.retries + 1
            )
            return self.failures.agent_failed(retried, body, exc, start_input=start_input)
        self.ledger.finish_start(thread_id, start_id, asked, now=self.clock())
        return Outcome(OutcomeKind.STARTED, thread_id, asked=asked)

    # -- shared steps ----------------------------------------------------------------------------------

    def is_transient(self, exc: BaseException) -> bool:
        """Whether `exc`, raised while the agent ran, is a store's or the network's (retry the message), not the
        agent's (fail the thread): agent-wait's own (`RETRYABLE`), or what the host's `transient` says."""
        return isinstance(exc, RETRYABLE) or (self.transient is not None and self.transient(exc))

    def _now(self) -> datetime:
        return self.clock()  # read late: a host or a test may swap `clock` after construction

    def _stamp(self) -> str:
        return format_rfc3339(self.clock())

    def _converge(self, thread_id: str) -> RunOutcome:
        if self.adapter.unfinished(thread_id):
            return self.adapter.continue_run(thread_id)
        return RunOutcome(None, tuple(self.adapter.pending(thread_id)))


def _transport_id(transport_id: str) -> str:
    """A transport's id as a fallback for the message's own; it may not pose as one of agent-wait's own ids."""
    if transport_id.startswith(RESERVED_ID_PREFIX):
        return "sha256:" + hashlib.sha256(transport_id.encode("utf-8")).hexdigest()
    return transport_id
