"""The keys of a thread's latest checkpoint, left on its lease for the next delivery: one read call fewer.

Reading the latest checkpoint takes its head (a `Query`), its writes' heads (a `Query` of their partition), and
then every payload (`BatchGetItem`). When the keys of the writes' heads are known, the heads are read by key in
the same `BatchGetItem` as the payloads, and the second `Query` is not made. The delivery that last held the
thread knows them: it read the latest checkpoint, and every checkpoint item since went through its saver.

A note is either complete or not left at all:
- it is left (at the lease's release) only while every checkpoint write of the delivery succeeded, none is still
  on its way, and the delivery read the thread's latest checkpoint first;
- it names every write head the table holds for that checkpoint, in whatever order the writes landed: parallel
  branches write from their own threads, so a branch's writes may land before the checkpoint they belong to
  (`LatestTracker` only adds what it learns, so the order cannot matter);
- the lease write that hands the thread to the next delivery takes it off, so a delivery that dies leaves
  none for the one after it;
- it is used only when the latest head the reader finds is the checkpoint it names (a checkpoint written
  without the lease, such as `update_state` from a notebook, makes the reader read the writes' partition),
  and only when every head it names is found.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph_checkpoint_aws.checkpoint.dynamodb.unified_repository import (
    _checkpoint_pk,  # pyright: ignore[reportPrivateUsage]  # the library's own key layout, not a copy of it
    _writes_pk,  # pyright: ignore[reportPrivateUsage]
)

__all__ = ("NOTE_WRITES_LIMIT", "LatestKeys", "LatestTracker")

NOTE_WRITES_LIMIT = 40
"""Past this many writes on the latest checkpoint no note is left: its heads and payloads would need more than
one `BatchGetItem` (100 keys), and the partition's `Query` is then the cheaper read."""
THREADS_KEPT = 1024
"""Threads whose latest keys a warm router keeps; past it they are all dropped (a note fewer each, no more)."""


@dataclass(slots=True)
class LatestKeys:
    """A thread's latest checkpoint in the root namespace (`""` when it has none) and its writes' sort keys."""

    checkpoint_id: str
    writes: set[str] = field(default_factory=set)
    """`<task id>#<index>`, the sort key of each write head in the checkpoint's writes partition."""

    def to_note(self) -> str | None:
        if not self.checkpoint_id or len(self.writes) > NOTE_WRITES_LIMIT:
            return None
        return json.dumps({"checkpoint": self.checkpoint_id, "writes": sorted(self.writes)}, separators=(",", ":"))

    @classmethod
    def from_note(cls, note: str | None) -> LatestKeys | None:
        """The keys a note names, or None for no note or one this version cannot read (then nothing is trusted)."""
        if not note:
            return None
        try:
            parsed = json.loads(note)
            checkpoint_id, writes = parsed["checkpoint"], parsed["writes"]
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(checkpoint_id, str) or not isinstance(writes, list):
            return None
        if not all(isinstance(w, str) and "#" in w for w in writes):
            return None
        return cls(checkpoint_id, set(writes))


class LatestTracker:
    """What this process knows of each held thread's latest root checkpoint, kept so that it is complete or unused.

    A delivery `begin`s tracking at its first read of the thread. From then on it learns from two sources, in
    whatever order its threads report them: the full reads it makes (`read`) and every batch of items that landed
    (`wrote`; parallel branches write from their own threads, so a branch's writes can land before the checkpoint
    they belong to). Both only add: the latest checkpoint is the newest id seen, and each checkpoint's writes are
    every head seen for it. Union and maximum do not depend on order, so any interleaving ends in the same keys;
    and every item in the table was either there before the first read's query or landed after `begin`, so those
    keys are what a full read would find.

    Anything that could make that untrue spoils the thread until its next `begin`: a write that failed (what
    landed of it is unknown), a read that passed over a head, an item this version cannot place. A note is left
    only from a thread that is tracked, unspoiled, and has no write on its way.
    """

    def __init__(self) -> None:
        self._threads: dict[str, _Tracked] = {}
        self._lock = threading.Lock()

    def begin(self, thread_id: str) -> None:
        """A delivery's first read of the thread is about to be made: track it afresh from here."""
        with self._lock:
            if len(self._threads) >= THREADS_KEPT and thread_id not in self._threads:
                self._threads.clear()
            self._threads[thread_id] = _Tracked()

    def read(self, thread_id: str, keys: LatestKeys | None) -> None:
        """A full read of the thread's latest root checkpoint found `keys` (None: it passed over a head)."""
        with self._lock:
            tracked = self._threads.get(thread_id)
            if tracked is None or tracked.spoiled:
                return
            if keys is None:
                tracked.spoiled = True
                return
            tracked.saw_checkpoint(keys.checkpoint_id)
            tracked.saw_writes(keys.checkpoint_id, keys.writes)
            tracked.read = True

    def wrote(self, thread_id: str, items: Sequence[dict[str, Any]]) -> None:
        """These checkpoint items of the thread landed."""
        checkpoints = _checkpoint_pk(thread_id)
        with self._lock:
            tracked = self._threads.get(thread_id)
            if tracked is None or tracked.spoiled:
                return
            for item in items:
                pk, sk = item["PK"]["S"], item["SK"]["S"]
                if pk == checkpoints:
                    ns, checkpoint_id = sk.rsplit("#", 1)
                    if ns == "":
                        tracked.saw_checkpoint(checkpoint_id)
                elif pk.startswith("WRITES_"):
                    checkpoint_id = item.get("checkpoint_id", {}).get("S")
                    if checkpoint_id is None:
                        tracked.spoiled = True  # a write head this version cannot place
                        return
                    if pk == _writes_pk(thread_id, "", checkpoint_id):
                        tracked.saw_writes(checkpoint_id, {sk})

    @contextmanager
    def landing(self, thread_id: str) -> Iterator[None]:
        """A write of the thread's items is on its way for the block; a failure spoils the thread."""
        with self._lock:
            tracked = self._threads.get(thread_id)
            if tracked is not None:
                tracked.in_flight += 1
        try:
            yield
        except BaseException:
            self.spoil(thread_id)
            raise
        finally:
            with self._lock:
                if tracked is not None:
                    tracked.in_flight -= 1

    def spoil(self, thread_id: str) -> None:
        """What the table holds of the thread is no longer known for sure: leave no note, trust no keys."""
        with self._lock:
            tracked = self._threads.get(thread_id)
            if tracked is not None:
                tracked.spoiled = True

    def known(self, thread_id: str) -> LatestKeys | None:
        """The keys of the thread's latest root checkpoint as far as they are known for sure, or None."""
        with self._lock:
            tracked = self._threads.get(thread_id)
            return None if tracked is None else tracked.keys()

    def take_note(self, thread_id: str) -> str | None:
        """The note to leave for the thread's next delivery (None: leave none); tracking of the thread ends."""
        with self._lock:
            tracked = self._threads.pop(thread_id, None)
            keys = None if tracked is None else tracked.keys()
        return None if keys is None else keys.to_note()


@dataclass(slots=True)
class _Tracked:
    """One thread's root checkpoints and write heads seen since its delivery began."""

    latest: str = ""
    writes: dict[str, set[str]] = field(default_factory=dict)
    """Write heads by checkpoint id, for the latest and any newer checkpoint whose head has not landed yet."""
    read: bool = False
    """A full read of the latest checkpoint was made since the delivery began: what landed before it is known."""
    in_flight: int = 0
    """Writes of the thread on their way: what they land is not known until they return."""
    spoiled: bool = False

    def saw_checkpoint(self, checkpoint_id: str) -> None:
        if checkpoint_id > self.latest:  # ids sort in the order they were made
            self.latest = checkpoint_id
            self.writes = {cid: heads for cid, heads in self.writes.items() if cid >= checkpoint_id}

    def saw_writes(self, checkpoint_id: str, heads: set[str]) -> None:
        if checkpoint_id >= self.latest:  # writes of an older checkpoint are never the latest's
            self.writes.setdefault(checkpoint_id, set()).update(heads)

    def keys(self) -> LatestKeys | None:
        if self.spoiled or self.in_flight or not self.read:
            return None
        return LatestKeys(self.latest, set(self.writes.get(self.latest, ())))
