"""How the router runs the agent from a start: a new start runs once, remembered by its id; a redelivered one
republishes the thread's open questions and runs nothing; one that died part-way finishes from the agent's checkpoint.
And a failed thread's retry: its recorded start or decision applied again, once per retry id.
"""

from __future__ import annotations

from dataclasses import replace

from agent_wait.asking.delivery import current_delivery
from agent_wait.contract.messages import RetryMessage, StartMessage
from agent_wait.engine._router_resume import RouterResume
from agent_wait.engine.failures import AGENT_FAILED
from agent_wait.engine.metrics import Metric
from agent_wait.engine.outcomes import Outcome, OutcomeKind, RefusalReason
from agent_wait.errors import QuestionNotFoundError
from agent_wait.ledger import FailureKind, StartState, ThreadFailure

__all__ = ("RouterStarts",)


class RouterStarts(RouterResume):
    """The router's starts and retries (`Router` derives from it)."""

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
            self.log.debug("start replayed; agent not run", extra={"thread_id": thread_id, "start_id": start_id})
            return Outcome(
                OutcomeKind.START_REPLAYED,
                thread_id,
                asked=tuple(r.envelope.question_id for r in reports),
                detail="this start was already applied; open questions were republished",
                extra={"start_id": start_id},
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
        self.log.debug("start applied", extra={"thread_id": thread_id, "start_id": start_id, "asked": list(asked)})
        return Outcome(OutcomeKind.STARTED, thread_id, asked=asked, extra={"start_id": start_id})

    def _retry(self, message: RetryMessage, body: str, failure: ThreadFailure | None) -> Outcome:
        """Apply a failed thread's recorded start or decision again, once per retry id."""
        thread_id, retry_id = message.thread_id, message.retry_id
        if failure is None:
            return self._refuse(RefusalReason.NOTHING_TO_RETRY, message, "the thread is not failed")
        if failure.message_id == retry_id:
            return self.failures.replay(failure)
        if not self.ledger.begin_retry(failure, retry_id, now=self.clock()):
            return self._refuse(RefusalReason.NOTHING_TO_RETRY, message, "another retry is applying it")
        self.log.debug(
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
        self.log.debug("failed thread retried; it runs again", extra={"thread_id": thread_id, "retry_id": retry_id})
        return Outcome(
            OutcomeKind.RETRIED, thread_id, failure.question_id, asked=outcome.asked, extra={"retry_id": retry_id}
        )

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
