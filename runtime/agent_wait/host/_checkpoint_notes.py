"""The keys of a thread's latest checkpoint, left on its lease for the next delivery: one read call fewer.

Reading the latest checkpoint takes its head (a `Query`), its writes' heads (a `Query` of their partition), and
then every payload (`BatchGetItem`). When the keys of the writes' heads are known, the heads are read by key in
the same `BatchGetItem` as the payloads, and the second `Query` is not made. The delivery that last held the
thread knows them: it read the latest checkpoint, and every checkpoint item since went through its saver.

A note is trusted only as far as that holds:
- it is left (at the lease's release) only while every checkpoint write of the delivery succeeded, and only
  if the delivery read the thread's latest checkpoint first;
- the lease write that hands the thread to the next delivery takes it off, so a delivery that dies leaves
  none for the one after it;
- it is used only when the latest head the reader finds is the checkpoint it names (a checkpoint written
  without the lease, such as `update_state` from a notebook, makes the reader read the writes' partition),
  and only when every head it names is found.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
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
    """What this process knows of each thread's latest root checkpoint: set by a read of it, kept by the saver's
    writes, forgotten when a write fails or the note is taken."""

    def __init__(self) -> None:
        self._known: dict[str, LatestKeys] = {}
        self._lock = threading.Lock()

    def read(self, thread_id: str, keys: LatestKeys) -> None:
        """The thread's latest root checkpoint was just read: these are its keys."""
        with self._lock:
            if len(self._known) >= THREADS_KEPT and thread_id not in self._known:
                self._known.clear()
            self._known[thread_id] = keys

    def wrote(self, thread_id: str, items: Sequence[dict[str, Any]]) -> None:
        """These checkpoint items of the thread landed (in order): keep what is known current."""
        checkpoints = _checkpoint_pk(thread_id)
        with self._lock:
            known = self._known.get(thread_id)
            if known is None:
                return  # nothing known to keep current: no note will be left
            for item in items:
                pk, sk = item["PK"]["S"], item["SK"]["S"]
                if pk == checkpoints:
                    ns, checkpoint_id = sk.rsplit("#", 1)
                    if ns == "" and checkpoint_id > known.checkpoint_id:  # ids sort in the order they were made
                        known = self._known[thread_id] = LatestKeys(checkpoint_id)
                elif pk == _writes_pk(thread_id, "", known.checkpoint_id):
                    known.writes.add(sk)

    def forget(self, thread_id: str) -> None:
        """Nothing is known of the thread any more (a write of its items failed: what landed of it is unknown)."""
        with self._lock:
            self._known.pop(thread_id, None)

    def known(self, thread_id: str) -> LatestKeys | None:
        """A copy of what is known of the thread's latest checkpoint, or None."""
        with self._lock:
            known = self._known.get(thread_id)
            return None if known is None else LatestKeys(known.checkpoint_id, set(known.writes))

    def take_note(self, thread_id: str) -> str | None:
        """The note to leave for the thread's next delivery (None: leave none), forgetting what is known."""
        with self._lock:
            known = self._known.pop(thread_id, None)
        return known.to_note() if known is not None else None
