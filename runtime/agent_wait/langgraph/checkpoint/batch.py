"""Fewer checkpoint calls and items: one `BatchWriteItem` per LangGraph step, without losing a finished task's
writes, and a checkpoint read in one to three calls.

`DynamoDBSaver` stores each checkpoint and each task's writes as two items (a head and its payload), one
`PutItem` each (the saver keeps a payload that fits in its head: `agent_wait.langgraph.checkpoint.inline`).
Within one graph run, `StepBatch` holds back the items of checkpoints and finished tasks
until the next task starts, and writes them together in one `BatchWriteItem`. A checkpoint held back
replaces what is held of the checkpoint before it (its task writes, and itself if held): the new checkpoint
already holds their effects, so a linear step costs one call and one item, not four of each.

Holding back is safe only while no other task could run a side effect before the items land. A
`TaskWatcher` (a LangChain callback handler the adapter attaches to the run) counts the graph's running
tasks, and:
- a task that finishes while another still runs (parallel branches) has its writes written at once;
- a task that starts after another finished first writes everything held, before its own body runs;
- special writes (an interrupt, an error) write everything held back with them;
- what is still held when the run ends is written then.
So a crash can lose only the work of the task that just finished, in the moment before the next task
starts or the run ends, as it could before.

While only the run's input is held (no task finished yet), a task starts without waiting: until something
lands, redelivery of the message starts the run again from its input, which is what losing it means.

A graph whose state is rebuilt from earlier checkpoints' writes (LangGraph's `DeltaChannel`) keeps them all:
its batch does not compact (`compact=False`).

Reading the latest checkpoint takes its head, its writes' heads, and then every payload not kept in its head at
once (`BatchGetItem`, none when all are); with the keys of the writes known, their heads come
in the same `BatchGetItem` (`agent_wait.langgraph.checkpoint.notes`). A read of a namespace the run holds items
in writes them first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph_checkpoint_aws.checkpoint.dynamodb.unified_repository import (
    _writes_pk,  # pyright: ignore[reportPrivateUsage]  # the library's own key layout, not a copy of it
)

from agent_wait.aws.errors import ServiceError, TransportError, error_code, error_message
from agent_wait.aws.items import BATCH_GET_LIMIT, BATCH_WRITE_LIMIT, paginate, until_processed
from agent_wait.errors import ThreadStateError, ThreadStateUnavailableError

__all__ = (
    "BatchWriter",
    "CollectingClient",
    "Held",
    "StepBatch",
    "TaskWatcher",
    "batched_run",
    "collected_puts",
    "current_batch",
    "read_items",
    "read_payloads",
    "read_write_heads",
)


def is_too_large(exc: BaseException) -> bool:
    """DynamoDB's or S3's refusal of an item or object for its size."""
    if not isinstance(exc, ServiceError):
        return False
    code = error_code(exc)
    return code == "EntityTooLarge" or (code == "ValidationException" and "Item size" in error_message(exc))


@contextmanager
def store_errors(what: str, *, thread_id: str, table: str) -> Iterator[None]:
    """AWS's failures of `what` as agent-wait's errors, at the saver's boundary.

    No answer, throttling or any other failure of the store: `ThreadStateUnavailableError` (the message is retried).
    A request the store refuses as invalid: `ThreadStateError` (retrying cannot help; the thread fails visibly). A
    refusal for size passes through as it is, for the saver to name the payload (`ThreadStateTooLargeError`).
    """
    try:
        yield
    except TransportError as exc:
        raise ThreadStateUnavailableError(
            f"{what} of thread {thread_id!r} got no answer from AWS ({type(exc).__name__}); the message is retried",
            thread_id=thread_id,
            table=table,
        ) from exc
    except ServiceError as exc:
        if is_too_large(exc):
            raise
        code = error_code(exc)
        if code == "ValidationException":  # AWS's text may quote a value: only the code is repeated
            raise ThreadStateError(
                f"{what} of thread {thread_id!r} was refused as invalid ({code}); retrying cannot help",
                thread_id=thread_id,
                table=table,
            ) from exc
        raise ThreadStateUnavailableError(
            f"{what} of thread {thread_id!r} failed with {code}; the message is retried",
            thread_id=thread_id,
            table=table,
        ) from exc


PAYLOAD_SK = "CHUNK"
"""The sort key of every payload item `DynamoDBSaver` keeps in the table."""

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
        with store_errors("BatchWriteItem of checkpoints", thread_id=thread_id, table=self.table_name):
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
        "ProjectionExpression": "PK, SK, task_id, channel, ref_key, ref_loc, #t, compression, #ttl, payload",
        "ExpressionAttributeNames": {"#t": "type", "#ttl": "ttl"},
    }
    with store_errors("Query of checkpoint writes", thread_id=thread_id, table=table_name):
        return list(paginate(client.query, request))


def read_items(
    client: Any,
    table_name: str,
    keys: Sequence[tuple[str, str]],
    *,
    thread_id: str,
    projection: str | None = None,
    attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> list[dict[str, Any]]:
    """The items with these (`PK`, `SK`) keys that exist, read with `BatchGetItem` (100 keys a call)."""
    found: list[dict[str, Any]] = []
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), BATCH_GET_LIMIT):
        page = unique[start : start + BATCH_GET_LIMIT]
        request: dict[str, Any] = {"Keys": [{"PK": {"S": pk}, "SK": {"S": sk}} for pk, sk in page]}
        if projection is not None:
            request["ProjectionExpression"] = projection
        with store_errors("BatchGetItem of checkpoints", thread_id=thread_id, table=table_name):
            responses, left = until_processed(
                client.batch_get_item,
                {table_name: request},
                unprocessed="UnprocessedKeys",
                attempts=attempts,
                sleep=sleep,
            )
        for response in responses:
            found.extend(response.get("Responses", {}).get(table_name, []))
        if left:
            raise ThreadStateUnavailableError(
                f"DynamoDB left checkpoint items unread after {attempts} BatchGetItem calls (throttled); "
                "the message is retried",
                thread_id=thread_id,
                table=table_name,
            )
    return found


def read_payloads(client: Any, table_name: str, chunk_keys: Sequence[str], *, thread_id: str) -> dict[str, bytes]:
    """The payload items (`<chunk key>`, `CHUNK`) that exist, by chunk key, read with `BatchGetItem`."""
    keys = [(key, PAYLOAD_SK) for key in chunk_keys]
    items = read_items(client, table_name, keys, thread_id=thread_id, projection="PK, payload")
    return {item["PK"]["S"]: item["payload"]["B"] for item in items}


@dataclass(frozen=True, slots=True)
class Held:
    """Items of one save held back: a checkpoint (with its parent's id) or one task's writes to a checkpoint."""

    items: list[dict[str, Any]]
    ns: str
    checkpoint_id: str
    """The checkpoint the items are, or the one the writes belong to."""
    parent_id: str | None = None
    """For a checkpoint: the checkpoint it follows, whose held writes (and, if held, itself) it makes redundant."""

    @property
    def in_s3(self) -> bool:
        """Part of it went to S3 already (a payload over the offload threshold): its head is then always written."""
        return any(item.get("ref_loc", {}).get("S") == "S3" for item in self.items)


class StepBatch:
    """What one graph run holds back, and how many of its tasks are running (see the module's doc)."""

    def __init__(self, thread_id: str, writer: BatchWriter, *, compact: bool = True) -> None:
        self.thread_id = thread_id
        self.writer = writer
        self.compact = compact
        """Let a checkpoint replace what is held of its parent (never for a graph whose state is rebuilt from old
        writes: LangGraph's `DeltaChannel`)."""
        self._lock = threading.Lock()
        self._running: set[UUID] = set()
        self._held: list[Held] = []
        self._finished = False
        """A task finished since the last write: what is held carries its effects, so the next task waits for it."""

    def hold(self, held: Held) -> None:
        """Hold `held` back while no task is running; otherwise write it now, with everything held.

        A checkpoint replaces what is held of its parent (the parent's writes, and the parent if it is held too):
        it already holds their effects, and a crash before it lands loses no finished task's work either way.
        """
        with self._lock:
            if self._running:
                items = self._take() + held.items
            else:
                if self.compact and held.parent_id is not None:
                    self._held = [h for h in self._held if not _replaced(h, held)]
                self._held.append(held)
                return
        self.writer.write(items, thread_id=self.thread_id)

    def write_now(self, items: list[dict[str, Any]]) -> None:
        """Write `items` at once, with everything held (an interrupt or an error: nothing follows to carry them)."""
        with self._lock:
            items = self._take() + items
        self.writer.write(items, thread_id=self.thread_id)

    def flush(self, ns: str | None = None) -> None:
        """Write everything held back (with `ns`: only if some of it is in that checkpoint namespace)."""
        with self._lock:
            if ns is not None and all(h.ns != ns for h in self._held):
                return
            items = self._take()
        if items:
            self.writer.write(items, thread_id=self.thread_id)

    def task_started(self, run_id: UUID) -> None:
        with self._lock:
            self._running.add(run_id)
            finished = self._finished
        if finished:
            self.flush()  # a finished task's effects land before this task can run a side effect
        # Otherwise only the run's input is held: losing it means redelivery starts the run again from its input.

    def task_ended(self, run_id: UUID) -> None:
        with self._lock:
            self._running.discard(run_id)
            self._finished = True

    def _take(self) -> list[dict[str, Any]]:
        held, self._held, self._finished = self._held, [], False
        return [item for h in held for item in h.items]


def _replaced(held: Held, checkpoint: Held) -> bool:
    return held.ns == checkpoint.ns and held.checkpoint_id == checkpoint.parent_id and not held.in_s3


def current_batch(thread_id: str) -> StepBatch | None:
    """The batch of the run on `thread_id`, or None (every write then goes out at once)."""
    with _BATCHES_LOCK:
        return _BATCHES.get(thread_id)


@contextmanager
def batched_run(thread_id: str, writer: BatchWriter, *, compact: bool = True) -> Iterator[TaskWatcher | None]:
    """Batch the checkpoint writes of one run on `thread_id`; attach the yielded watcher to the run's callbacks.

    With `compact`, a checkpoint replaces what is held of its parent (see `StepBatch.hold`).

    Whatever is still held back when the block ends (how ever it ends) is written then. A second run on the same
    thread in this process meanwhile (never under the router, which holds the thread) is not batched: it gets None.
    """
    batch = StepBatch(thread_id, writer, compact=compact)
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
