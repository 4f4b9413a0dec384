"""Where messages that cannot apply go: the dead-letter queue with a reason, and failed threads recorded once."""

from __future__ import annotations

import logging
from typing import Any

from agent_wait.asking.delivery import UNTIL_MOVED_ON, current_delivery
from agent_wait.engine.dead_letter import DeadLetter
from agent_wait.engine.lease import error_name
from agent_wait.engine.metrics import HostMetrics, Metric
from agent_wait.engine.outcomes import DeadLetterReason, Outcome, OutcomeKind, RefusalReason
from agent_wait.errors import (
    ArgumentsChangedError,
    CallbackRefusedError,
    ThreadBusyError,
    ThreadStateTooLargeError,
    VersionChangedError,
)
from agent_wait.ledger import FailureKind, FailureLedger, ThreadFailure

__all__ = ("AGENT_FAILED", "Failures")

AGENT_FAILED = DeadLetterReason.AGENT_FAILED.value
"""Dead-letter reason for a message whose agent raised (the thread is failed until retried)."""


class Failures:
    """Dead-letters what cannot apply, and records an agent's failure on its thread, once.

    Every dead letter carries its reason and a detail with ids and types only: the message body keeps
    the content, for a redrive; the detail, the logs and the metrics never do.
    """

    def __init__(self, ledger: FailureLedger, dead_letter: DeadLetter, metrics: HostMetrics, log: logging.Logger | Any):
        self.ledger = ledger
        self.dead_letter = dead_letter
        self.metrics = metrics
        self.log = log

    def dead_letter_message(
        self, body: str, reason: str, detail: str, *, message_id: str | None, thread_id: str | None = None
    ) -> Outcome:
        """Send `body` to the dead-letter queue with `reason`; count and log it (ids only)."""
        self.dead_letter.send(body, reason=str(reason), detail=detail, message_id=message_id, thread_id=thread_id)
        self.metrics.count(Metric.DEAD_LETTERED, reason=str(reason))
        self.log.warning(
            "message dead-lettered: %s",
            detail,
            extra={"reason": str(reason), "message_id": message_id, "thread_id": thread_id},
        )
        return Outcome(OutcomeKind.DEAD_LETTERED, thread_id, reason=str(reason), detail=detail)

    def not_applied(self, exc: Exception, body: str, *, message_id: str | None, thread_id: str, final: bool) -> Outcome:
        """A store, the network or a bug stopped this delivery: raise it back to SQS, or dead-letter it on the last."""
        error = error_name(exc)
        self.metrics.count(Metric.ROUTER_ERRORS, reason=type(exc).__name__)
        if not final:
            self.log.error(
                "message not applied; SQS will deliver it again",
                extra={"thread_id": thread_id, "message_id": message_id, "error": error},
            )
            raise exc
        busy = isinstance(exc, ThreadBusyError)
        reason = DeadLetterReason.THREAD_BUSY if busy else DeadLetterReason.RETRIES_EXHAUSTED
        detail = f"not applied on the last receive ({error}); redrive it once the cause is fixed"
        return self.dead_letter_message(body, reason, detail, message_id=message_id, thread_id=thread_id)

    def agent_failed(self, failure: ThreadFailure, body: str, exc: Exception, *, start_input: Any = None) -> Outcome:
        """The agent raised: dead-letter the message, then record the failure on the thread and its row, once.

        A question that may not resume under the code running now (`VersionChangedError`) is failed the same way,
        as `version_changed` (docs/versions.md). A state too large to checkpoint (`ThreadStateTooLargeError`) is
        failed the same way, as `checkpoint_too_large`: every redelivery would fail alike, and a failed thread runs
        nothing more until an operator's retry, which finishes the run from its last stored checkpoint once the state
        fits.
        """
        thread_id = failure.thread_id
        doing = "starting" if failure.kind is FailureKind.START else f"resuming question {failure.target_id}"
        reason = AGENT_FAILED
        detail = (
            f"the agent raised {failure.error} while {doing}; fix the agent, then run: agent-wait retry {thread_id}"
        )
        if isinstance(exc, ThreadStateTooLargeError):  # its message has ids, sizes and the fix, never state
            reason = DeadLetterReason.CHECKPOINT_TOO_LARGE.value
            detail = f"while {doing}, {exc.message}; then run: agent-wait retry {thread_id}"
        elif isinstance(exc, ArgumentsChangedError):  # names the function and parameters, never their values
            reason = DeadLetterReason.ARGUMENTS_CHANGED.value
            detail = f"while {doing}, {exc.message}: agent-wait retry {thread_id}"
        elif isinstance(exc, VersionChangedError):  # its message has ids, versions and the fix, never state
            reason = DeadLetterReason.VERSION_CHANGED.value
            detail = exc.message
        # The state the retry resumes from is kept until the retry moves past it, however long that takes; a store
        # that cannot keep it now fails this delivery, which runs the agent again (as a crash here would).
        held = current_delivery(thread_id)
        if held is not None and held.keep_state is not None:
            held.keep_state(UNTIL_MOVED_ON)
        # Dead-letter first: a crash before the failure is recorded re-runs the agent once on redelivery;
        # a failure recorded first could leave the message with no dead letter at all.
        self.dead_letter.send(body, reason=reason, detail=detail, message_id=failure.message_id, thread_id=thread_id)
        self.ledger.mark_failed(failure, start_input=start_input)
        self.metrics.count(Metric.AGENT_FAILED, reason="retry" if failure.retries else failure.kind.value)
        self.metrics.count(Metric.DEAD_LETTERED, reason=reason)
        # The exception's text may quote the agent's input or the answer: only its type above DEBUG.
        self.log.warning(
            "agent failed; the thread is held until retried",
            extra={
                "thread_id": thread_id,
                "question_id": failure.question_id,
                "message_id": failure.message_id,
                "error": failure.error,
                "reason": reason,
            },
        )
        self.log.debug("agent failure detail: %s", exc, exc_info=exc)
        return Outcome(
            OutcomeKind.DEAD_LETTERED, thread_id, failure.question_id, reason=reason, detail=detail, error=exc
        )

    def callback_refused(self, failure: ThreadFailure, body: str, exc: CallbackRefusedError) -> Outcome:
        """Lambda refused to complete the question's durable callback: dead-letter the message `callback_refused`,
        record the row `failed` (never `resumed`), and leave the thread free: the execution no longer waits on this
        question, and its other questions (or its next ones) are answered as usual."""
        thread_id, question_id = failure.thread_id, failure.question_id
        detail = (
            f"Lambda refused to complete question {question_id}'s callback ({exc.code}): it timed out or was completed "
            "already; the decision stands, but the durable execution did not receive it"
        )
        reason = DeadLetterReason.CALLBACK_REFUSED.value
        self.dead_letter.send(body, reason=reason, detail=detail, message_id=failure.message_id, thread_id=thread_id)
        self.ledger.mark_failed(failure)
        self.ledger.clear_failure(thread_id)  # the row says failed; the thread goes on
        self.metrics.count(Metric.DEAD_LETTERED, reason=reason)
        self.log.warning(
            "callback refused; the question is failed, not resumed",
            extra={"thread_id": thread_id, "question_id": question_id, "code": exc.code, "reason": reason},
        )
        return Outcome(OutcomeKind.DEAD_LETTERED, thread_id, question_id, reason=reason, detail=detail, error=exc)

    def replay(self, failure: ThreadFailure, *, start_input: Any = None) -> Outcome:
        """The message that failed arrived again: finish recording its failure (idempotent); run nothing."""
        self.ledger.mark_failed(failure, start_input=start_input)
        if failure.kind is FailureKind.START:
            self.metrics.count(Metric.STARTS_REPLAYED)
            kind, reason = OutcomeKind.START_REPLAYED, AGENT_FAILED
        else:
            self.metrics.count(Metric.REFUSED, reason=RefusalReason.THREAD_FAILED.value)
            kind, reason = OutcomeKind.REFUSED, RefusalReason.THREAD_FAILED
        return Outcome(
            kind,
            failure.thread_id,
            failure.question_id,
            reason=reason,
            detail="this message failed earlier and was dead-lettered; the agent did not run again",
        )

    def hold(self, body: str, thread_id: str, message_id: str, failure: ThreadFailure) -> Outcome:
        """The thread is failed: park this message in the dead-letter queue until the thread is retried."""
        detail = (
            f"thread {thread_id} is failed since {failure.failed_at} (the agent raised {failure.error}); "
            f"run agent-wait retry {thread_id}, then redrive this message"
        )
        reason = DeadLetterReason.THREAD_FAILED
        return self.dead_letter_message(body, reason, detail, message_id=message_id, thread_id=thread_id)
