"""How long the router's checkpoints are kept: `retention` after a thread last wrote them, and for as long as the
thread waits on them.

Every item the saver writes carries the checkpoint table's TTL attribute (`ttl`) `retention` ahead, by the saver's
clock, and every object it offloads carries the tag `ttl-days=<retention's days + 1>` (`ObjectTag`), which the
checkpoint bucket's lifecycle rule expires that many days after the object was written (`CheckpointBucket`): one day
later than the items that name it, since S3 rounds its count up to midnight and DynamoDB deletes some time after the
TTL, so no object goes before its checkpoint. A latest checkpoint past its TTL and partly deleted already (DynamoDB
and S3 each delete in their own time) is read as none, so a thread past its retention starts afresh, never from an
older part of its history; one still whole is read as it is.

A thread waiting on a question must not lose the checkpoint it waits on, however long the question stays open. Once
the agent ran, the engine tells the saver (`agent_wait.asking.delivery.Delivery.keep_state`) until when the thread
may still need it: its open questions' latest possible deadline (extensions included) plus a grace, or
`UNTIL_MOVED_ON` for a question without a deadline or a failed thread waiting for its retry. The saver then holds
what the thread's latest checkpoint in each namespace is made of (`KeptTracker`: its head, its payload, its writes)
if any of it would expire earlier: the items lose their TTL and the objects their tag, so neither the table's TTL
nor the bucket's rule can take them. When a later delivery moves past a held checkpoint (or nothing waits on it any
more), the saver lets it go: its items get a TTL `retention` ahead again and its objects are copied onto themselves
with the tag, so S3 counts their days from then. A hold or a release is a write per item and per object, made only
when a thread waits past its checkpoint's expiry: a question whose latest deadline, plus the grace, falls within the
retention costs nothing more. Items written without a TTL (before retention, or with `retention=None`) read as held,
and are let go the same way once the thread moves past them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from langgraph_checkpoint_aws.checkpoint.dynamodb.unified_repository import (
    _checkpoint_pk,  # pyright: ignore[reportPrivateUsage]  # the library's own key layout, not a copy of it
)

from agent_wait.asking.delivery import UNTIL_MOVED_ON
from agent_wait.aws.errors import ServiceError, error_code
from agent_wait.errors import ArgumentError
from agent_wait.langgraph.checkpoint.batch import PAYLOAD_SK

__all__ = (
    "TTL",
    "Keeping",
    "KeptTracker",
    "ObjectTag",
    "Piece",
    "Retention",
    "TaggedObjects",
    "check_retention",
    "expired",
)

TTL = "ttl"
"""The checkpoint table's TTL attribute (`agent_wait.contract.schema.CHECKPOINT_TABLE`), as `DynamoDBSaver` names it."""
THREADS_KEPT = 1024
"""Threads a warm router tracks; past it they are all dropped (a dropped thread is tracked again at its next read)."""
_GONE = frozenset({"ConditionalCheckFailedException", "NoSuchKey", "404"})
"""What a hold or a release finds for a piece never written (a checkpoint compacted away) or already deleted."""


@dataclass(frozen=True)
class ObjectTag:
    """The tag every offloaded object is written with, and the bucket's lifecycle rule expires.

    `ttl-days` is the tag `langgraph_checkpoint_aws`'s own `StorageStrategy(ttl_seconds=...)` writes; its value is
    the retention's days plus one (see the module docstring).
    """

    days: int
    key: str = "ttl-days"

    @classmethod
    def for_retention(cls, retention: timedelta) -> ObjectTag:
        return cls(retention.days + 1)

    @property
    def query(self) -> str:
        """As `PutObject` and `CopyObject` take it (`Tagging`)."""
        return f"{self.key}={self.days}"


@dataclass(frozen=True)
class Retention:
    """How long the saver keeps what it writes: `keep_for` after its write, by `clock`."""

    keep_for: timedelta
    clock: Callable[[], datetime]

    @property
    def tag(self) -> ObjectTag:
        return ObjectTag.for_retention(self.keep_for)

    def now(self) -> int:
        return int(self.clock().timestamp())

    def expiry(self) -> int:
        """The TTL of an item written or let go now."""
        return int((self.clock() + self.keep_for).timestamp())

    def stamp(self, items: Iterable[dict[str, Any]]) -> None:
        """Give each item the TTL of one written now."""
        ttl = {"N": str(self.expiry())}
        for item in items:
            item[TTL] = ttl

    def holds(self, until: datetime | None) -> bool:
        """Whether what a thread waits on must stay held: it may be needed after anything let go now expires."""
        return until is not None and (until >= UNTIL_MOVED_ON or until.timestamp() > self.expiry())


class TaggedObjects:
    """An S3 client whose `put_object` writes every object with `tag` (every other call goes through)."""

    def __init__(self, client: Any, tag: ObjectTag) -> None:
        self._client = client
        self.tag = tag

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def put_object(self, **params: Any) -> Any:
        return self._client.put_object(**params, Tagging=self.tag.query)


@dataclass(frozen=True, slots=True)
class Piece:
    """One head of a checkpoint (or of one of its writes) and where its payload is; they are written, kept and let go
    together."""

    key: tuple[str, str]
    """The head's (`PK`, `SK`)."""
    payload: tuple[str, str] | None
    """The payload item's key, when the table keeps the payload."""
    object_key: str | None
    """The payload object's key, when the bucket keeps it."""
    ttl: int | None
    """The head's TTL; None: held (no TTL)."""


@dataclass(slots=True)
class _Kept:
    """One thread's latest checkpoint in each namespace, with its pieces, and the held pieces read since `begin`."""

    latest: dict[str, str] = field(default_factory=dict)
    pieces: dict[tuple[str, str], dict[tuple[str, str], Piece]] = field(default_factory=dict)
    """By (namespace, checkpoint id), for the latest and any newer checkpoint whose head has not landed yet."""
    held: dict[tuple[str, str], Piece] = field(default_factory=dict)
    """Pieces found held when read: let go once the thread no longer waits on them."""

    def saw_checkpoint(self, ns: str, checkpoint_id: str) -> None:
        if checkpoint_id > self.latest.get(ns, ""):  # ids sort in the order they were made
            self.latest[ns] = checkpoint_id
            self.pieces = {at: kept for at, kept in self.pieces.items() if at[0] != ns or at[1] >= checkpoint_id}

    def saw(self, ns: str, checkpoint_id: str, piece: Piece) -> None:
        if checkpoint_id >= self.latest.get(ns, ""):
            self.pieces.setdefault((ns, checkpoint_id), {})[piece.key] = piece

    def waited_on(self) -> list[Piece]:
        """What the thread's latest checkpoints are made of, in every namespace."""
        return [piece for ns, latest in self.latest.items() for piece in self.pieces.get((ns, latest), {}).values()]


class KeptTracker:
    """What each held thread's latest checkpoints are made of, learnt from the saver's reads and from every batch of
    items that landed (as `agent_wait.langgraph.checkpoint.notes.LatestTracker`, whose ordering argument holds here
    too: it only adds, and the newest id wins), and what of it is held."""

    def __init__(self, thread_checkpoints: Callable[[str], str], writes_prefix: Callable[[str], str]) -> None:
        self._checkpoints = thread_checkpoints
        self._writes_prefix = writes_prefix
        self._threads: dict[str, _Kept] = {}
        self._lock = threading.Lock()

    def begin(self, thread_id: str) -> None:
        with self._lock:
            if len(self._threads) >= THREADS_KEPT and thread_id not in self._threads:
                self._threads.clear()
            self._threads[thread_id] = _Kept()

    def end(self, thread_id: str) -> None:
        with self._lock:
            self._threads.pop(thread_id, None)

    def read(
        self, thread_id: str, ns: str, head: dict[str, Any], writes: Sequence[dict[str, Any]], locate: Locate
    ) -> None:
        """A read of the thread's latest checkpoint in `ns` found `head` and `writes` (with their TTLs)."""
        checkpoint_id = head["id"]["S"]
        with self._lock:
            kept = self._threads.get(thread_id)
            if kept is None:
                return
            kept.saw_checkpoint(ns, checkpoint_id)
            for item in (head, *writes):
                piece = _piece(item, locate)
                kept.saw(ns, checkpoint_id, piece)
                if piece.ttl is None:
                    kept.held[piece.key] = piece

    def wrote(self, thread_id: str, items: Sequence[dict[str, Any]], locate: Locate) -> None:
        """These checkpoint items of the thread landed (their payload items are placed by their heads)."""
        checkpoints, writes = self._checkpoints(thread_id), self._writes_prefix(thread_id)
        with self._lock:
            kept = self._threads.get(thread_id)
            if kept is None:
                return
            for item in items:
                pk, sk = item["PK"]["S"], item["SK"]["S"]
                if pk == checkpoints:
                    ns, checkpoint_id = sk.rsplit("#", 1)
                    kept.saw_checkpoint(ns, checkpoint_id)
                elif pk.startswith(writes) and "checkpoint_id" in item:
                    checkpoint_id = item["checkpoint_id"]["S"]
                    ns = pk[len(writes) : -len(checkpoint_id) - 1]
                else:
                    continue  # a payload item: its head places it
                kept.saw(ns, checkpoint_id, _piece(item, locate))

    def plan(self, thread_id: str, *, holds: bool, until: int | None) -> tuple[list[Piece], list[Piece]]:
        """What to hold and what to give a fresh TTL (let go, or refresh).

        With `holds`, every piece of the latest checkpoints that has a TTL is held, and the held pieces read that the
        thread no longer waits on are let go. Without, every held piece is let go, and a piece that would expire before
        `until` (written by an earlier delivery) is refreshed.
        """
        with self._lock:
            kept = self._threads.get(thread_id)
            if kept is None:
                return [], []
            waited = kept.waited_on()
            current = {piece.key for piece in waited}
            held = {piece.key: piece for piece in waited if piece.ttl is None} | kept.held
            if holds:
                return [p for p in waited if p.ttl is not None], [p for k, p in held.items() if k not in current]
            stale = [p for p in waited if p.ttl is not None and until is not None and p.ttl < until]
            return [], [*held.values(), *stale]

    def done(self, thread_id: str, pieces: Sequence[Piece], ttl: int | None) -> None:
        """`pieces` now carry `ttl` (None: held)."""
        with self._lock:
            kept = self._threads.get(thread_id)
            if kept is None:
                return
            for piece in pieces:
                changed = replace(piece, ttl=ttl)
                for at in kept.pieces.values():
                    if piece.key in at:
                        at[piece.key] = changed
                if ttl is None:
                    kept.held[piece.key] = changed
                else:
                    kept.held.pop(piece.key, None)


Locate = Callable[[str], str]
"""The bucket key of a payload's `ref_key` (the saver's `s3_key_prefix` before it)."""


def _piece(item: dict[str, Any], locate: Locate) -> Piece:
    ref_loc, ref_key = item.get("ref_loc", {}).get("S"), item.get("ref_key", {}).get("S")
    ttl = item.get(TTL, {}).get("N")
    return Piece(
        key=(item["PK"]["S"], item["SK"]["S"]),
        payload=(ref_key, PAYLOAD_SK) if ref_loc == "DYNAMODB" and ref_key else None,
        object_key=locate(ref_key) if ref_loc == "S3" and ref_key else None,
        ttl=int(ttl) if ttl is not None else None,
    )


class Keeper:
    """Holds and lets go of pieces: one `UpdateItem` per item (never creating one), one S3 call per object."""

    def __init__(self, *, dynamodb: Any, table: str, s3: Any | None, bucket: str | None, tag: ObjectTag) -> None:
        self.dynamodb, self.table, self.s3, self.bucket, self.tag = dynamodb, table, s3, bucket, tag

    def hold(self, pieces: Sequence[Piece]) -> None:
        for piece in pieces:
            for key in _items_of(piece):
                self._update(key, f"REMOVE #{TTL}", {})
            if piece.object_key is not None and self.s3 is not None:
                _unless_gone(self.s3.delete_object_tagging, {"Bucket": self.bucket, "Key": piece.object_key})

    def let_go(self, pieces: Sequence[Piece], ttl: int) -> None:
        for piece in pieces:
            for key in _items_of(piece):
                self._update(key, f"SET #{TTL} = :ttl", {":ttl": {"N": str(ttl)}})
            if piece.object_key is not None and self.s3 is not None:
                # S3 counts an object's days from its creation: a copy onto itself, tagged, counts from now.
                copy = {"Bucket": self.bucket, "Key": piece.object_key}
                tagged = {"MetadataDirective": "REPLACE", "TaggingDirective": "REPLACE", "Tagging": self.tag.query}
                _unless_gone(self.s3.copy_object, {**copy, "CopySource": copy, **tagged})

    def _update(self, key: tuple[str, str], expression: str, values: dict[str, Any]) -> None:
        request: dict[str, Any] = {
            "TableName": self.table,
            "Key": {"PK": {"S": key[0]}, "SK": {"S": key[1]}},
            "UpdateExpression": expression,
            "ConditionExpression": "attribute_exists(PK)",  # an update never creates the item it names
            "ExpressionAttributeNames": {f"#{TTL}": TTL},
        }
        if values:
            request["ExpressionAttributeValues"] = values
        _unless_gone(self.dynamodb.update_item, request)


def _items_of(piece: Piece) -> list[tuple[str, str]]:
    return [piece.key] if piece.payload is None else [piece.key, piece.payload]


def _unless_gone(call: Callable[..., Any], request: dict[str, Any]) -> None:
    """Make the call; a piece that is not there (never written, or deleted) is nothing to keep."""
    try:
        call(**request)
    except ServiceError as exc:
        if error_code(exc) not in _GONE:
            raise


class Keeping:
    """The saver's retention in one place: what it writes is stamped and tracked, what its threads wait on is held
    (`Delivery.keep_state` calls `keep`), and what they moved past is let go.

    Args:
        retention: how long, and by which clock.
        dynamodb: the checkpoint table's client (never the collecting one: holds are written at once).
        table: the checkpoint table's name.
        s3: the bucket's client, or None without a bucket.
        bucket: the bucket's name, or None.
        locate: a payload's bucket key from its `ref_key`.
        tracker: what each held thread's latest checkpoints are made of.
    """

    def __init__(
        self,
        retention: Retention,
        *,
        dynamodb: Any,
        table: str,
        s3: Any | None,
        bucket: str | None,
        locate: Locate,
        tracker: KeptTracker,
    ) -> None:
        self.retention = retention
        self.tracker = tracker
        self.locate = locate
        self.keeper = Keeper(dynamodb=dynamodb, table=table, s3=s3, bucket=bucket, tag=retention.tag)

    @classmethod
    def of(cls, retention: Retention, dynamodb: Any, storage: Any) -> Keeping:
        """The retention of a saver whose table client is `dynamodb` and whose storage is `storage` (the library's
        `StorageStrategy`, its S3 client already tagging)."""
        return cls(
            retention,
            dynamodb=dynamodb,
            table=storage.table_name,
            s3=storage.s3_client if storage.s3_enabled else None,
            bucket=storage.s3_bucket,
            locate=storage._prefixed_s3_key,  # the library's own bucket key for a payload
            tracker=KeptTracker(_checkpoint_pk, lambda thread_id: f"WRITES_{thread_id}#"),
        )

    def stamp(self, items: Sequence[dict[str, Any]]) -> None:
        """Give `items`, about to be written, their TTL."""
        self.retention.stamp(items)

    def landed(self, thread_id: str, items: Sequence[dict[str, Any]]) -> None:
        """`items` of the thread landed."""
        self.tracker.wrote(thread_id, items, self.locate)

    def read(self, thread_id: str, ns: str, head: dict[str, Any], writes: Sequence[dict[str, Any]]) -> None:
        """A read of the thread's latest checkpoint in `ns` found `head` and `writes`."""
        self.tracker.read(thread_id, ns, head, writes, self.locate)

    def keep(self, thread_id: str, until: datetime | None) -> None:
        """Keep what the thread waits on until `until` (see the module docstring); let go of what it moved past."""
        holds = self.retention.holds(until)
        moment = None if until is None or until >= UNTIL_MOVED_ON else int(until.timestamp())
        holding, going = self.tracker.plan(thread_id, holds=holds, until=moment)
        if holding:
            self.keeper.hold(holding)
            self.tracker.done(thread_id, holding, None)
        if going:
            ttl = self.retention.expiry()
            self.keeper.let_go(going, ttl)
            self.tracker.done(thread_id, going, ttl)


def expired(head: dict[str, Any], now: datetime) -> bool:
    """Whether a head's TTL has passed: DynamoDB deletes it some time after."""
    ttl = head.get(TTL, {}).get("N")
    return ttl is not None and int(ttl) <= now.timestamp()


def check_retention(retention: timedelta | None, ttl_seconds: Any) -> None:
    """Refuse a retention that is not whole days, or one given with the library's `ttl_seconds`."""
    if retention is None:
        return
    if not isinstance(retention, timedelta) or retention < timedelta(days=1) or retention % timedelta(days=1):
        raise ArgumentError(
            f"retention must be a timedelta of whole days (the bucket's lifecycle counts days), such as "
            f"timedelta(days=30), or None to keep everything; got {retention!r}",
            argument="retention",
        )
    if ttl_seconds:
        raise ArgumentError(
            "pass retention or the library's ttl_seconds, not both: retention replaces it (its TTL counts from every "
            "write, by wall time, and it sets the bucket's lifecycle rules itself)",
            argument="ttl_seconds",
        )
