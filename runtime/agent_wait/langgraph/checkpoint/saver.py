"""The router's checkpoint saver: `DynamoDBSaver`, with each task's writes stored as one write.

LangGraph counts a task as done as soon as any of its writes is in the checkpointer, and then applies
whatever writes it finds, so the writes of one task must land together. `DynamoDBSaver` stores each
write as its own items, one `PutItem` after another. A Lambda that dies between two of them leaves a
task that looks done with writes missing: a state key lost, or the edge to the next node lost, so the
run silently ends early (found by the crash-injection tests in tests/host). Packing a task's writes
into one write makes them land together; a write whose payload never arrived is ignored by
`DynamoDBSaver`, so the task runs again instead.

A payload (a checkpoint, or one task's packed writes) over DynamoDB's 400 KB item limit is stored in S3
when the saver has a bucket (`s3_offload_config`, `AGENT_WAIT_CHECKPOINT_BUCKET`): any payload over `offload_over`
bytes goes there (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`; 12 KB by default, the measured break-even). Without one, such a
payload is refused before anything of it is written, with `ThreadStateTooLargeError` (the router dead-letters it
as `checkpoint_too_large` and fails the thread) instead of DynamoDB's `ValidationException`, which the router
would take for a passing store failure and retry until SQS gives up (`agent_wait.langgraph.checkpoint.sizes`).

The items the library builds are collected and sent in batches (`agent_wait.langgraph.checkpoint.batch`), and the
latest checkpoint's keys are left on the lease as a note (`agent_wait.langgraph.checkpoint.notes`). With `retention`,
what it writes expires that long after, but what a thread waits on (`agent_wait.langgraph.checkpoint.retention`).
A payload that fits beside its head is kept in it (`agent_wait.langgraph.checkpoint.inline`).

Long on purpose: the reads and writes of every layout the table holds share one saver's state (read tokens, the
lease's note, what retention keeps), so they stay in one class; the layouts' own rules live in the modules above.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple, get_checkpoint_id
from langgraph_checkpoint_aws import DynamoDBSaver
from langgraph_checkpoint_aws.checkpoint.dynamodb.serialization import CompressionType
from langgraph_checkpoint_aws.checkpoint.dynamodb.unified_repository import (
    _checkpoint_pk,  # pyright: ignore[reportPrivateUsage]  # the library's own key layout, not a copy of it
    _writes_pk,  # pyright: ignore[reportPrivateUsage]
    _writes_ref_pk,  # pyright: ignore[reportPrivateUsage]
)

from agent_wait.asking.delivery import current_delivery
from agent_wait.aws.errors import ServiceError
from agent_wait.common.times import utc_now
from agent_wait.errors import ArgumentError
from agent_wait.langgraph.checkpoint.batch import (
    PAYLOAD_SK,
    BatchWriter,
    CollectingClient,
    Held,
    batched_run,
    collected_puts,
    current_batch,
    read_items,
    read_payloads,
    read_write_heads,
    store_errors,
)
from agent_wait.langgraph.checkpoint.inline import (
    PAYLOAD,
    InlinePayloads,
    InlineReadingClient,
    inline_payloads,
    inlined,
)
from agent_wait.langgraph.checkpoint.notes import LatestKeys, LatestTracker
from agent_wait.langgraph.checkpoint.retention import TTL, Keeping, Retention, TaggedObjects, check_retention, expired
from agent_wait.langgraph.checkpoint.sizes import (
    ITEM_LIMIT,
    OFFLOAD_OVER,
    PAYLOAD_LIMIT,
    PayloadTooLargeError,
    SizeCheckedStorage,
    too_large,
)

__all__ = ("ITEM_LIMIT", "OFFLOAD_OVER", "PACKED_WRITES", "PAYLOAD_LIMIT", "TaskAtomicDynamoDBSaver")

PACKED_WRITES = "__agent_wait_task_writes__"
"""The channel name one packed write is stored under; never seen by LangGraph."""
VERSIONS_KEPT = 1024
"""Threads whose read tokens a warm router keeps; past it they are all dropped (one extra read each, no more)."""


def _at(config: Any) -> tuple[str, str | None]:
    """The checkpoint namespace and id a config points at (for a save: the namespace and the parent)."""
    configurable = config["configurable"]
    return str(configurable.get("checkpoint_ns", "")), configurable.get("checkpoint_id")


def _unpack(found: CheckpointTuple | None) -> CheckpointTuple | None:
    if found is None or not found.pending_writes:
        return found
    writes: list[tuple[str, str, Any]] = []
    for task_id, channel, value in found.pending_writes:
        if channel == PACKED_WRITES:
            writes.extend((task_id, packed_channel, packed_value) for packed_channel, packed_value in value)
        else:
            writes.append((task_id, channel, value))
    return found._replace(pending_writes=writes)


class _TrackedWriter(BatchWriter):
    """`BatchWriter` that tells a `LatestTracker` (and `Keeping`, which stamps the TTLs) what landed."""

    def __init__(self, client: Any, table_name: str, latest: LatestTracker, keeping: Keeping | None) -> None:
        super().__init__(client, table_name)
        self.latest = latest
        self.keeping = keeping

    def write(self, items: Sequence[dict[str, Any]], *, thread_id: str) -> None:
        if self.keeping is not None:
            self.keeping.stamp(items)
        with self.latest.landing(thread_id):
            super().write(items, thread_id=thread_id)
            self.latest.wrote(thread_id, items)
        if self.keeping is not None:
            self.keeping.landed(thread_id, items)


class TaskAtomicDynamoDBSaver(DynamoDBSaver):
    """`DynamoDBSaver` whose `put_writes` for one task is all or nothing, with fewer calls (same arguments).

    A payload its store cannot hold raises `ThreadStateTooLargeError` (naming the thread, the size and the fix)
    before anything of it is written; with `s3_offload_config`, payloads over `offload_over` bytes go to S3.

    Each save is one `BatchWriteItem` of one item, its payload in its head (`...checkpoint.inline`). Inside
    `batched_run`, which `LangGraphAdapter` opens around each run, checkpoints and task writes wait for the next
    task to start, and a checkpoint replaces the held writes it already holds (`...checkpoint.batch`). While a
    delivery holds the thread's lease (the router), the latest checkpoint read is remembered until this saver
    writes to the thread or the lease is let go, so one message reads it once; and the release leaves the keys
    of the latest checkpoint's writes for the next delivery, which then reads them by key
    (`agent_wait.langgraph.checkpoint.notes`).

    Args:
        offload_over: with a bucket, the size in bytes above which a payload goes to S3 rather than the table,
            from 1 to `PAYLOAD_LIMIT` (default `OFFLOAD_OVER`, 12 KB). A payload the table keeps costs
            1 WRU per KB written; one in S3 costs a `PutObject` (as much as 8 WRU) and a round trip.
        retention: how long what the saver writes is kept, whole days (items get the table's TTL, objects the tag the
            bucket's rule expires), but what a thread waits on (`agent_wait.langgraph.checkpoint.retention`). Default
            None: kept for ever, as by `DynamoDBSaver` (the router passes `AGENT_WAIT_CHECKPOINT_RETENTION`).
        clock: now (UTC), for the TTLs. Default `utc_now`, which a host's `clock_scope` moves.
    """

    def __init__(
        self,
        *args: Any,
        offload_over: int = OFFLOAD_OVER,
        retention: timedelta | None = None,
        clock: Callable[[], datetime] = utc_now,
        **kwargs: Any,
    ) -> None:
        whole = isinstance(offload_over, int) and not isinstance(offload_over, bool)
        if not whole or not 1 <= offload_over <= PAYLOAD_LIMIT:
            raise ArgumentError(
                f"offload_over must be a whole number of bytes from 1 to {PAYLOAD_LIMIT} (the largest payload the "
                f"table keeps); got {offload_over!r}",
                argument="offload_over",
            )
        check_retention(retention, kwargs.get("ttl_seconds"))
        super().__init__(*args, **kwargs)
        old = self.storage
        found = InlinePayloads()
        collecting = CollectingClient(InlineReadingClient(self.client, found))
        kept = Retention(retention, clock) if retention is not None else None
        s3_client = TaggedObjects(old.s3_client, kept.tag) if kept is not None and old.s3_enabled else old.s3_client
        self.storage = self.repo.storage = SizeCheckedStorage(
            dynamodb_client=collecting,
            table_name=old.table_name,
            s3_client=s3_client,
            s3_bucket=old.s3_bucket,
            s3_key_prefix=old.s3_key_prefix,
            ttl_seconds=old.ttl_seconds,
            offload_over=offload_over,
            inline=found,
        )
        self.repo.dynamodb_client = collecting
        self.clock = clock
        self.latest = LatestTracker()
        """What this saver knows of each held thread's latest checkpoint keys, left on the lease as its note."""
        self.keeping = Keeping.of(kept, self.client, self.storage) if kept is not None else None  # with `retention`
        self.writer = _TrackedWriter(self.client, self.table_name, self.latest, self.keeping)
        self._versions: dict[str, object] = {}
        """Per thread, a token a write of ours replaces: a remembered read is current while its token still is."""
        self._lock = threading.Lock()

    @property
    def offloads(self) -> bool:
        """Whether payloads over `offload_over` bytes go to S3 (the saver has a bucket)."""
        return self.storage.s3_enabled

    @contextmanager
    def batched_run(self, thread_id: str, *, compact: bool = True) -> Iterator[BaseCallbackHandler | None]:
        """Batch the writes of one run on `thread_id`; pass the yielded handler in the run's `callbacks`.

        With `compact` (not for a graph with a `DeltaChannel`, whose state is rebuilt from its checkpoints' writes),
        a checkpoint held back replaces the held writes of the checkpoint before it, and that checkpoint too if it
        is held: history keeps every checkpoint a task started from, but not the writes it already holds.
        """
        try:
            with batched_run(thread_id, self.writer, compact=compact) as watcher:
                yield watcher
        finally:
            self._wrote(thread_id)  # what the run held back has landed: a read from before it is stale

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        with self._translated("checkpoint", config), collected_puts() as items:
            stored = super().put(config, checkpoint, metadata, new_versions)
        items = inlined(items, limit=ITEM_LIMIT)
        ns, parent_id = _at(config)
        self._send(config, items, Held(items, ns, str(checkpoint["id"]), parent_id=parent_id))
        return stored

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        # Special writes (interrupt, resume, error) keep their own slots: LangGraph overwrites those.
        if len(writes) > 1 and not special:
            writes = [(PACKED_WRITES, [[channel, value] for channel, value in writes])]
        with self._translated("writes of one step", config), collected_puts() as items:
            super().put_writes(config, writes, task_id, task_path)
        items = inlined(items, limit=ITEM_LIMIT)
        ns, checkpoint_id = _at(config)
        # An interrupt or an error ends the run: nothing follows to carry them, so they go now.
        self._send(config, items, None if special else Held(items, ns, str(checkpoint_id)))

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        thread_id = str(config["configurable"]["thread_id"])
        with (
            self._translated("state", config),
            store_errors("reading the state", thread_id=thread_id, table=self.table_name),
        ):
            return self._get_tuple(config)

    def _get_tuple(self, config: Any) -> CheckpointTuple | None:
        thread_id = str(config["configurable"]["thread_id"])
        ns = _at(config)[0]
        self._flush_held(thread_id, ns)
        held = current_delivery(thread_id)
        first_read = held is not None and held.leave_note is None
        if held is not None and first_read:
            # Known keys count only from this delivery's first read on: the delivery before may have been another's.
            self.latest.begin(thread_id)
            held.leave_note = functools.partial(self.latest.take_note, thread_id)
            if self.keeping is not None:
                self.keeping.tracker.begin(thread_id)
                held.keep_state = functools.partial(self._keep, self.keeping, thread_id)
        if get_checkpoint_id(config) is not None:
            return _unpack(super().get_tuple(config))
        if held is None:
            return self._read_latest(config)[0]
        key = f"checkpoint:{self.table_name}:{ns}"
        with self._lock:
            version = self._version(thread_id)
            remembered = held.memo.get(key)
        if remembered is not None and remembered[0] is version:
            return copy.deepcopy(remembered[1])
        known = None
        if ns == "":
            known = LatestKeys.from_note(held.lease.note) if first_read else self.latest.known(thread_id)
        found, keys = self._read_latest(config, known)
        with self._lock:
            current = self._versions.get(thread_id) is version  # no write of ours began or landed meanwhile
            if current:
                held.memo[key] = (version, copy.deepcopy(found))
        if ns == "":
            if current:
                self.latest.read(thread_id, keys)
            else:
                self.latest.spoil(thread_id)
        return found

    def _version(self, thread_id: str) -> object:
        """The thread's current token (under the lock). The dict is bounded: dropping tokens only costs reads."""
        version = self._versions.get(thread_id)
        if version is None:
            if len(self._versions) >= VERSIONS_KEPT:
                self._versions.clear()  # every remembered read is then stale, never wrongly current
            version = self._versions[thread_id] = object()
        return version

    def _read_latest(
        self, config: Any, known: LatestKeys | None = None
    ) -> tuple[CheckpointTuple | None, LatestKeys | None]:
        """The thread's latest checkpoint and its writes, and their keys (None when the read passed over a head).

        Three calls: its head, its writes' heads, then every payload kept in the table in one `BatchGetItem` (the
        library reads each payload with a `GetItem`). Two when `known` names the head found: the writes' heads
        are then read by key with the payloads (`agent_wait.langgraph.checkpoint.notes`).
        """
        thread_id = str(config["configurable"]["thread_id"])
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        heads = self.client.query(
            TableName=self.table_name,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :ns)",
            ExpressionAttributeValues={":pk": {"S": _checkpoint_pk(thread_id)}, ":ns": {"S": f"{ns}#"}},
            ProjectionExpression=(
                f"PK, SK, id, ns, #t, ref_key, ref_loc, compression, parent_checkpoint_id, #ttl, {PAYLOAD}"
            ),
            ExpressionAttributeNames={"#t": "type", "#ttl": TTL},
            ScanIndexForward=False,
            Limit=1,
        ).get("Items", [])
        if not heads:
            return None, LatestKeys("")
        head = heads[0]
        checkpoint_id = head["id"]["S"]
        read = None
        if known is not None and known.checkpoint_id == checkpoint_id:
            read = self._read_by_keys(head, thread_id, ns, sorted(known.writes))
        if read is None:
            writes = read_write_heads(self.client, self.table_name, thread_id, ns, checkpoint_id)
            read = writes, self._payloads([head, *writes], thread_id)
        writes, payloads = read
        if expired(head, self.clock()) and any(h["ref_key"]["S"] not in payloads for h in (head, *writes)):
            return None, LatestKeys("")  # past its retention and partly deleted: afresh, never from an older one
        if head["ref_key"]["S"] not in payloads:
            # Its payload is missing: the library passes over to an older one.
            return _unpack(super().get_tuple(config)), None
        if self.keeping is not None:
            self.keeping.read(thread_id, ns, head, writes)
        value = self._decode(head, payloads[head["ref_key"]["S"]])
        parent_id = head.get("parent_checkpoint_id", {}).get("S")
        pending = [
            (w["task_id"]["S"], w["channel"]["S"], self._decode(w, payloads[w["ref_key"]["S"]]))
            for w in writes
            if w["ref_key"]["S"] in payloads  # a write whose payload never landed is ignored, as the library does
        ]
        at = {"thread_id": thread_id, "checkpoint_ns": ns}
        found = CheckpointTuple(
            config={"configurable": {**at, "checkpoint_id": checkpoint_id}},
            checkpoint=value["checkpoint"],
            metadata=value["metadata"],
            parent_config={"configurable": {**at, "checkpoint_id": parent_id}} if parent_id else None,
            pending_writes=pending,
        )
        return _unpack(found), LatestKeys(checkpoint_id, {w["SK"]["S"] for w in writes})

    def _read_by_keys(
        self, head: dict[str, Any], thread_id: str, ns: str, write_keys: list[str]
    ) -> tuple[list[dict[str, Any]], dict[str, bytes]] | None:
        """The writes' heads named by `write_keys` and every payload, in one `BatchGetItem`; None when the table
        does not hold exactly those heads (the caller then reads the writes' partition)."""
        checkpoint_id = head["id"]["S"]
        writes_pk = _writes_pk(thread_id, ns, checkpoint_id)
        # A head that holds its payload was written by this saver, which keeps its writes' payloads inline too.
        chunk_keys: set[str] = set()
        if head["ref_loc"]["S"] != "INLINE":
            chunk_keys = {_writes_ref_pk(thread_id, ns, checkpoint_id, *sk.rsplit("#", 1)) for sk in write_keys}
        if head["ref_loc"]["S"] == "DYNAMODB":
            chunk_keys.add(head["ref_key"]["S"])
        keys = [(writes_pk, sk) for sk in write_keys] + [(key, PAYLOAD_SK) for key in sorted(chunk_keys)]
        items = read_items(self.client, self.table_name, keys, thread_id=thread_id)
        writes = sorted((i for i in items if i["PK"]["S"] == writes_pk), key=lambda i: i["SK"]["S"])
        if len(writes) != len(write_keys):
            return None
        if any(w["ref_loc"]["S"] == "DYNAMODB" and w["ref_key"]["S"] not in chunk_keys for w in writes):
            return None  # not where this version of the library keeps a write's payload
        payloads = {i["PK"]["S"]: i["payload"]["B"] for i in items if i["SK"]["S"] == PAYLOAD_SK}
        return writes, payloads | inline_payloads([head, *writes]) | self._s3_payloads([head, *writes])

    def _payloads(self, heads: list[dict[str, Any]], thread_id: str) -> dict[str, bytes]:
        """Each head's payload by its `ref_key`: the table's in `BatchGetItem` calls, S3's one by one."""
        in_table = [h["ref_key"]["S"] for h in heads if h["ref_loc"]["S"] == "DYNAMODB"]
        found = read_payloads(self.client, self.table_name, in_table, thread_id=thread_id) if in_table else {}
        return found | inline_payloads(heads) | self._s3_payloads(heads)

    def _s3_payloads(self, heads: list[dict[str, Any]]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for head in heads:
            if head["ref_loc"]["S"] == "S3":
                data = self.storage.retrieve_data(head["ref_key"]["S"], "S3")
                if data is not None:
                    found[head["ref_key"]["S"]] = data
        return found

    def _decode(self, head: dict[str, Any], payload: bytes) -> Any:
        compression = head.get("compression", {}).get("S")
        return self.serializer.deserialize(
            head["type"]["S"], payload, CompressionType(compression) if compression else None
        )

    def list(self, config: Any, **kwargs: Any) -> Iterator[CheckpointTuple]:
        if config is not None and "thread_id" in config.get("configurable", {}):
            configurable = config["configurable"]
            self._flush_held(str(configurable["thread_id"]), configurable.get("checkpoint_ns"))
        thread_id = (config or {}).get("configurable", {}).get("thread_id")
        with store_errors("listing the checkpoints", thread_id=str(thread_id), table=self.table_name):
            for found in super().list(config, **kwargs):
                unpacked = _unpack(found)
                if unpacked is not None:  # never None for a found checkpoint; the check is for the type
                    yield unpacked

    def _flush_held(self, thread_id: str, ns: str | None) -> None:
        """Write what the thread's run holds back in namespace `ns` (any, if None), so a read sees it."""
        batch = current_batch(thread_id)
        if batch is not None:
            with self._translated("state", {"configurable": {"thread_id": thread_id}}):
                batch.flush(ns)

    def _send(self, config: Any, items: list[dict[str, Any]], held: Held | None) -> None:
        """Write `items` now (`held` None, or no batch is open), or let the run's batch hold them back."""
        thread_id = str(config["configurable"]["thread_id"])
        batch = current_batch(thread_id)
        self._wrote(thread_id)
        try:
            with self._translated("state", config):
                if batch is None:
                    self.writer.write(items, thread_id=thread_id)
                elif held is None:
                    batch.write_now(items)
                else:
                    batch.hold(held)
        finally:
            self._wrote(thread_id)  # before and after: a read that overlapped the write is never remembered

    def _keep(self, keeping: Keeping, thread_id: str, until: datetime | None) -> None:
        """`Delivery.keep_state`: keep what the thread waits on until `until`; let go of what it moved past."""
        with self._translated("state", {"configurable": {"thread_id": thread_id}}):
            keeping.keep(thread_id, until)

    def _wrote(self, thread_id: str) -> None:
        with self._lock:
            self._versions.pop(thread_id, None)  # a read remembered before this has a token no longer current

    @contextmanager
    def _translated(self, what: str, config: Any) -> Iterator[None]:
        """Every failure of the stores as agent-wait's own error: a payload too large for its store, however it was
        found, as `ThreadStateTooLargeError`; any other as `store_errors` says."""
        thread_id = str(config["configurable"].get("thread_id"))
        try:
            with store_errors(f"writing the {what}", thread_id=thread_id, table=self.table_name):
                yield
        except PayloadTooLargeError as exc:
            raise too_large(exc, what=what, config=config, table=self.table_name, offload=self.offloads) from None
        except ServiceError as exc:  # store_errors lets only a refusal for size through
            raise too_large(exc, what=what, config=config, table=self.table_name, offload=self.offloads) from None
