"""What an operator does to a failed thread, as library calls (the `agent-wait` CLI uses the same ones).

A thread is failed when its agent raised applying a start, an answer or a retry: the router dead-letters
that message with reason `agent_failed`, records the failure on the thread and its ledger row, and holds
every other message for the thread in the dead-letter queue (`thread_failed`) until it is retried.

    failed = failed_threads(ledger)                 # what failed, where, with which error type
    retry_thread(ledger, entry_queue, "order-7")    # after fixing the agent: apply it again, once

A retry is a message on the entry queue (`{"thread_id": ..., "retry_id": ...}`), so the router applies it
in the thread's order, under the thread's lease, like any other message; a redelivered retry runs
nothing more. If the agent raises again, the thread stays failed and the retry is dead-lettered too.
"""

from __future__ import annotations

import uuid

from agent_wait.contract.messages import group_id_for
from agent_wait.engine.entry_queue import EntryQueue
from agent_wait.errors import NothingToRetryError
from agent_wait.ledger import FailureLedger, ThreadFailure

__all__ = ("failed_threads", "request_retry", "retry_thread")


def failed_threads(ledger: FailureLedger, *, limit: int = 100) -> list[ThreadFailure]:
    """Every failed start and resume, oldest first, at most `limit`."""
    return ledger.failures(limit=limit)


def request_retry(entry_queue: EntryQueue, thread_id: str, *, retry_id: str | None = None) -> str:
    """Send a retry message for `thread_id` without checking it is failed; returns the retry id.

    Args:
        entry_queue: the entry queue the router consumes.
        thread_id: the failed thread.
        retry_id: your own id for this retry, so sending it twice retries once; a fresh one when omitted.
    """
    retry_id = retry_id or uuid.uuid4().hex
    entry_queue.send(
        {"thread_id": thread_id, "retry_id": retry_id},
        group_id=group_id_for(thread_id),
        deduplication_id=f"retry:{thread_id}:{retry_id}",
    )
    return retry_id


def retry_thread(
    ledger: FailureLedger, entry_queue: EntryQueue, thread_id: str, *, retry_id: str | None = None
) -> tuple[ThreadFailure, str]:
    """Check `thread_id` is failed, then ask the router to apply its recorded start or decision again.

    Returns:
        The failure being retried and the retry id sent.

    Raises:
        NothingToRetryError: the thread is not failed (never was, or a retry already ran).
    """
    failure = ledger.thread_failure(thread_id)
    if failure is None:
        raise NothingToRetryError(thread_id)
    return failure, request_retry(entry_queue, thread_id, retry_id=retry_id)
