"""Fewer checkpoint calls: one `BatchWriteItem` per LangGraph step, without losing a finished task's writes, and
a checkpoint read in three calls.

`DynamoDBSaver` stores each checkpoint and each task's writes as two items (a head and its payload), one
`PutItem` each. Within one graph run, `StepBatch` holds back the items of a finished task until the step's
checkpoint is saved, and writes them together in one `BatchWriteItem`: a linear step then costs one call,
not four.

Holding back is safe only while no other task could run a side effect before the items land. A
`TaskWatcher` (a LangChain callback handler the adapter attaches to the run) counts the graph's running
tasks, and:
- a task that finishes while another still runs (parallel branches) has its writes written at once;
- a task that starts while writes are held back first writes them, before its own body runs;
- special writes (an interrupt, an error) and the step's checkpoint write everything held back with them.
So a crash can lose only the writes of the task that just finished in a step of its own, in the moment
before its checkpoint is written, as it could before (its writes were written in the background then).

The input checkpoint a run starts with is held back too: until the next checkpoint lands, redelivery of
the message starts the run again from its input, which is what losing it means.

Reading the latest checkpoint takes its head, its writes' heads, and then every payload at once
(`BatchGetItem`), in `DynamoDBSaver`'s own item layout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph_checkpoint_aws.checkpoint.dynamodb.unified_repository import (
    _writes_pk,  # pyright: ignore[reportPrivateUsage]  # the library's own key layout, not a copy of it
)

from agent_wait.aws._items import BATCH_GET_LIMIT, BATCH_WRITE_LIMIT, paginate, until_processed
from agent_wait.errors import ThreadStateUnavailableError

__all__ = (
    "BatchWriter",
    "CollectingClient",
    "StepBatch",
    "TaskWatcher",
    "batched_run",
    "collected_puts",
    "current_batch",
    "read_payloads",
    "read_write_heads",
)

_COLLECTED: ContextVar[list[dict[str, Any]] | None] = ContextVar("agent_wait_collected_puts", default=None)
_BATCHES: dict[str, StepBatch] = {}
"""The open batch of each thread: LangGraph saves a parallel step's writes from threads that do not carry the
run's context variables, so a batch is found by its thread id."""
_BATCHES_LOCK = threading.Lock()


class CollectingClient:
    """A DynamoDB client whose `put_item` is collected instead of sent while `collected_puts` is open.

    The saver's own code builds its items (keys, payload references, compression, TTL); collecting them
    lets them be sent together. Every other call, and `put_item` outside `collected_puts`, goes through.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def put_item(self, **params: Any) -> dict[str, Any]:
        collected = _COLLECTED.get()
        if collected is None:
            return self._client.put_item(**params)
        collected.append(params["Item"])
        return {}


@contextmanager
def collected_puts() -> Iterator[list[dict[str, Any]]]:
    """Collect the items `CollectingClient.put_item` is given in this context, in order."""
    items: list[dict[str, Any]] = []
    token = _COLLECTED.set(items)
    try:
        yield items
    finally:
        _COLLECTED.reset(token)


class BatchWriter:
    """Writes items with `BatchWriteItem`, 25 at a time, in order, until DynamoDB has taken every one."""

    def __init__(self, client: Any, table_name: str, *, attempts: int = 8, sleep: Callable[[float], None] = time.sleep):
        self.client = client
        self.table_name = table_name
        self.attempts = attempts
        self.sleep = sleep

    def write(self, items: Sequence[dict[str, Any]], *, thread_id: str) -> None:
        """Write `thread_id`'s `items` (later items with the same key win).

        A batch is not atomic: a crash part-way can leave a head without its payload, which the saver's
        reader ignores (a task whose writes are missing runs again; a checkpoint without its payload is
        passed over for the one before it).

        Raises:
            ThreadStateUnavailableError: DynamoDB still left items unprocessed after `attempts` calls (throttling);
                the router's message is retried.
        """
        unique = list({(item["PK"]["S"], item["SK"]["S"]): item for item in items}.values())
        for start in range(0, len(unique), BATCH_WRITE_LIMIT):
            self._write_all(unique[start : start + BATCH_WRITE_LIMIT], thread_id)

    def _write_all(self, items: list[dict[str, Any]], thread_id: str) -> None:
        _, left = until_processed(
            self.client.batch_write_item,
            {self.table_name: [{"PutRequest": {"Item": item}} for item in items]},
            unprocessed="UnprocessedItems",
            attempts=self.attempts,
            sleep=self.sleep,
        )
        if left:
            raise ThreadStateUnavailableError(
                f"DynamoDB left {len(left[self.table_name])} checkpoint items of thread {thread_id!r} unwritten after "
                f"{self.attempts} BatchWriteItem calls (throttled); the message is retried",
                thread_id=thread_id,
                table=self.table_name,
            )


# -- reading: the library's item layout, fewer calls ---------------------------------------------------------


def read_write_heads(client: Any, table_name: str, thread_id: str, ns: str, checkpoint_id: str) -> list[dict[str, Any]]:
    """Every write head of one checkpoint (`DynamoDBSaver`'s partition for them), in key order, all pages."""
    request = {
        "TableName": table_name,
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": _writes_pk(thread_id, ns, checkpoint_id)}},
        "ProjectionExpression": "task_id, channel, ref_key, ref_loc, #t, compression",
        "ExpressionAttributeNames": {"#t": "type"},
    }
    return list(paginate(client.query, request))


def read_payloads(
    client: Any,
    table_name: str,
    chunk_keys: Sequence[str],
    *,
    thread_id: str,
    attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, bytes]:
    """The payload items (`<chunk key>`, `CHUNK`) that exist, by chunk key, read with `BatchGetItem`."""
    found: dict[str, bytes] = {}
    unique = list(dict.fromkeys(chunk_keys))
    for start in range(0, len(unique), BATCH_GET_LIMIT):
        keys = [{"PK": {"S": key}, "SK": {"S": "CHUNK"}} for key in unique[start : start + BATCH_GET_LIMIT]]
        responses, left = until_processed(
            client.batch_get_item,
            {table_name: {"Keys": keys, "ProjectionExpression": "PK, payload"}},
            unprocessed="UnprocessedKeys",
            attempts=attempts,
            sleep=sleep,
        )
        for response in responses:
            for item in response.get("Responses", {}).get(table_name, []):
                found[item["PK"]["S"]] = item["payload"]["B"]
        if left:
            raise ThreadStateUnavailableError(
                f"DynamoDB left checkpoint payloads unread after {attempts} BatchGetItem calls (throttled); "
                "the message is retried",
                thread_id=thread_id,
                table=table_name,
            )
    return found


class StepBatch:
    """What one graph run holds back, and how many of its tasks are running (see the module's doc)."""

    def __init__(self, thread_id: str, writer: BatchWriter) -> None:
        self.thread_id = thread_id
        self.writer = writer
        self._lock = threading.Lock()
        self._running: set[UUID] = set()
        self._held: list[dict[str, Any]] = []

    def hold_or_write(self, items: list[dict[str, Any]], *, hold: bool) -> None:
        """Hold `items` back if `hold` and no task is running; otherwise write them with what is held."""
        with self._lock:
            if hold and not self._running:
                self._held.extend(items)
                return
            items = self._take() + items
        self.writer.write(items, thread_id=self.thread_id)

    def flush(self) -> None:
        """Write everything held back."""
        with self._lock:
            items = self._take()
        if items:
            self.writer.write(items, thread_id=self.thread_id)

    def task_started(self, run_id: UUID) -> None:
        with self._lock:
            self._running.add(run_id)
        self.flush()  # a finished task's writes land before this task can run a side effect

    def task_ended(self, run_id: UUID) -> None:
        with self._lock:
            self._running.discard(run_id)

    def _take(self) -> list[dict[str, Any]]:
        items, self._held = self._held, []
        return items


def current_batch(thread_id: str) -> StepBatch | None:
    """The batch of the run on `thread_id`, or None (every write then goes out at once)."""
    with _BATCHES_LOCK:
        return _BATCHES.get(thread_id)


@contextmanager
def batched_run(thread_id: str, writer: BatchWriter) -> Iterator[TaskWatcher | None]:
    """Batch the checkpoint writes of one run on `thread_id`; attach the yielded watcher to the run's callbacks.

    Whatever is still held back when the block ends (how ever it ends) is written then. A second run on the same
    thread in this process meanwhile (never under the router, which holds the thread) is not batched: it gets None.
    """
    batch = StepBatch(thread_id, writer)
    with _BATCHES_LOCK:
        if thread_id in _BATCHES:
            batch = None
        else:
            _BATCHES[thread_id] = batch
    if batch is None:
        yield None
        return
    try:
        yield TaskWatcher(batch)
    finally:
        with _BATCHES_LOCK:
            del _BATCHES[thread_id]
        batch.flush()


_STEP_TAG = "graph:step:"
"""LangGraph tags each task's run (and not the runs inside it) with the step it belongs to."""


class TaskWatcher(BaseCallbackHandler):
    """Tells a `StepBatch` when the graph's tasks start and end (LangChain callbacks of the run)."""

    raise_error = True  # a failed write when a task starts must stop that task, not be logged and passed over
    run_inline = True  # in async runs too, before the task's body goes on

    def __init__(self, batch: StepBatch) -> None:
        self.batch = batch

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        **_: Any,
    ) -> None:
        if any(tag.startswith(_STEP_TAG) for tag in tags or ()):
            self.batch.task_started(run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **_: Any) -> None:
        self.batch.task_ended(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **_: Any) -> None:
        self.batch.task_ended(run_id)
