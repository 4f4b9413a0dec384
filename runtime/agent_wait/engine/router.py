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

`Router` is the way in: parse, check the FIFO group and the sender, hold the thread, catch up, then apply the
message. What it applies is in its parts, each a class `Router` derives from: starts and retries
(`agent_wait.engine._router_starts`), answers (`_router_answers`), and carrying a decision to the agent (the resume,
its announcements and the hand-over catch-up, `_router_resume`); the decision itself is `AnswerDesk`'s, the
bookkeeping of what the agent asked `AskedQuestions`'.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from agent_wait.asking.adapter import AgentAdapter
from agent_wait.asking.callbacks import CallbackCompleter
from agent_wait.common.times import clock_scope, utc_now
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.messages import (
    RESERVED_ID_PREFIX,
    AnswerMessage,
    RetryMessage,
    StartMessage,
    group_id_for,
    parse_message,
)
from agent_wait.contract.publish import Announcers, as_announcers
from agent_wait.engine import tracing
from agent_wait.engine._router_answers import RouterAnswers
from agent_wait.engine._router_starts import RouterStarts
from agent_wait.engine.answering import AnswerDesk
from agent_wait.engine.checks import principal_of
from agent_wait.engine.dead_letter import DeadLetter
from agent_wait.engine.failures import AGENT_FAILED, Failures
from agent_wait.engine.grants import GrantDesk
from agent_wait.engine.lease import hold_thread
from agent_wait.engine.metrics import HostMetrics, Metric, MetricTags, RecordingMetrics
from agent_wait.engine.outcomes import DeadLetterReason, Outcome, RefusalReason, outcome_fields, said_of
from agent_wait.engine.questions import AskedQuestions
from agent_wait.engine.senders import SenderPolicy
from agent_wait.engine.versions import VersionGuard
from agent_wait.errors import (
    ArgumentError,
    CallbackUnavailableError,
    LedgerRejectedError,
    LedgerUnavailableError,
    MessageError,
    QueueUnavailableError,
    ThreadBusyError,
    ThreadStateConflictError,
    ThreadStateUnavailableError,
)
from agent_wait.ledger import (
    Capability,
    GrantLedger,
    Ledger,
    RefusalLedger,
    ThreadLease,
    marks_unannounced,
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


class Router(RouterStarts, RouterAnswers):
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
        # Optional capabilities: the last refusal on its row and standing grants (a ledger written before them still
        # routes: it keeps no refusal, and its questions are always asked); a door's hand-over is the doors'
        # (`AnswerService`): the router holds the thread's lease instead.
        optional = {Capability.REFUSALS, Capability.GRANTS, Capability.HAND_OVERS}
        needed = (capability for capability in Capability if capability not in optional)
        self.ledger = require_capabilities(ledger, *needed, user="Router")
        self.refusals = ledger if isinstance(ledger, RefusalLedger) else None
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
        if isinstance(ledger, GrantLedger) and marks_unannounced(ledger):
            # A question a grant decides is never announced as asked: its row must say so from the put on.
            self.questions.grants = GrantDesk(ledger, self.desk, clock=self._now, log=self.log)
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
            outcome = self._handle(
                body,
                message_id=message_id,
                deduplication_id=deduplication_id,
                group_id=group_id,
                sent_at=sent_at,
                sender=sender,
                final_attempt=final_attempt,
                redelivered=redelivered,
            )
        said, args = said_of(outcome)
        self.log.info(said, *args, extra=outcome_fields(outcome, message_id))
        return outcome

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
                    outcome = self._start(message, message.start_id or start_fallback, body, failure)
                elif isinstance(message, RetryMessage):
                    outcome = self._retry(message, body, failure)
                else:
                    answerer = self.senders.answerer(message, sender)
                    answer_id = message.answer_id or fallback_id
                    caught = applied.get(message.question_id)
                    if caught is not None and caught[0] == answer_id:  # this hand-over, applied just now
                        outcome = caught[1]
                    else:
                        outcome = self._answer(
                            message,
                            answer_id,
                            body,
                            failure,
                            sent_at=sent_at,
                            answerer=answerer,
                            redelivered=redelivered,
                        )
                # What standing grants decided as the run asked reaches the agent before the thread is let go.
                return self._resume_granted(thread_id, outcome)
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

    # -- shared steps ----------------------------------------------------------------------------------

    def is_transient(self, exc: BaseException) -> bool:
        """Whether `exc`, raised while the agent ran, is a store's or the network's (retry the message), not the
        agent's (fail the thread): agent-wait's own (`RETRYABLE`), or what the host's `transient` says."""
        return isinstance(exc, RETRYABLE) or (self.transient is not None and self.transient(exc))

    def _now(self) -> datetime:
        return self.clock()  # read late: a host or a test may swap `clock` after construction


def _transport_id(transport_id: str) -> str:
    """A transport's id as a fallback for the message's own; it may not pose as one of agent-wait's own ids."""
    if transport_id.startswith(RESERVED_ID_PREFIX):
        return "sha256:" + hashlib.sha256(transport_id.encode("utf-8")).hexdigest()
    return transport_id
