"""The lease note is complete or not left: whatever order a delivery's writes land and report in, the keys the
tracker keeps are the keys a full read of the table finds.

The property drives a model table and a `LatestTracker` through arbitrary interleavings of what happens while a
thread is held: the delivery's first read (its head query, its writes query, and the moment it is recorded), and
batches of items that each begin, land in the table, and report to the tracker, in any order across batches (a
branch's writes may land before the checkpoint they belong to, or report before it does).
"""

from __future__ import annotations

import itertools
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_wait.langgraph.checkpoint.notes import LatestKeys, LatestTracker

THREAD = "t"


def _checkpoint(ns: str, checkpoint_id: str) -> dict[str, Any]:
    return {"PK": {"S": f"CHECKPOINT_{THREAD}"}, "SK": {"S": f"{ns}#{checkpoint_id}"}}


def _write(ns: str, checkpoint_id: str, head: str) -> dict[str, Any]:
    return {
        "PK": {"S": f"WRITES_{THREAD}#{ns}#{checkpoint_id}"},
        "SK": {"S": head},
        "checkpoint_id": {"S": checkpoint_id},
    }


def _payload(key: str) -> dict[str, Any]:
    return {"PK": {"S": f"CHUNK_{THREAD}#{key}"}, "SK": {"S": "CHUNK"}}


@dataclass
class Table:
    """The checkpoint items of one thread, as a full read sees them."""

    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def land(self, batch: list[dict[str, Any]]) -> None:
        for item in batch:
            self.items[(item["PK"]["S"], item["SK"]["S"])] = item

    def latest(self) -> str:
        roots = [sk.rsplit("#", 1)[1] for pk, sk in self.items if pk == f"CHECKPOINT_{THREAD}" and sk.startswith("#")]
        return max(roots, default="")

    def heads(self, checkpoint_id: str) -> set[str]:
        return {sk for pk, sk in self.items if pk == f"WRITES_{THREAD}##{checkpoint_id}"}

    def full_read(self) -> LatestKeys:
        latest = self.latest()
        return LatestKeys(latest, self.heads(latest))


def _steps(draw: Any, first: int, count: int) -> list[list[dict[str, Any]]]:
    """`count` steps after checkpoint `first`: each a root checkpoint, its tasks' writes, a subgraph's items."""
    items = []
    for step in range(first, first + count):
        checkpoint_id = f"c-{step:03d}"
        items.append([_checkpoint("", checkpoint_id), _payload(f"#{checkpoint_id}")])
        for task in range(draw(st.integers(0, 3))):
            heads = [f"task{task}#{i}" for i in range(draw(st.integers(1, 2)))]
            if draw(st.booleans()):
                heads = [f"task{task}#-3"]  # an interrupt's special slot
            items.append([_write("", checkpoint_id, head) for head in heads])
        if draw(st.booleans()):  # a subgraph's checkpoint and writes: never the root's latest
            items.append([_checkpoint("child:1", f"c-{step:03d}x"), _write("child:1", checkpoint_id, "sub#0")])
    return items


@st.composite
def histories(draw: Any) -> tuple[Table, list[list[dict[str, Any]]], list[str]]:
    """A table as the delivery before left it, the batches this delivery lands, and an order of events."""
    table = Table()
    before = draw(st.integers(0, 3))
    for batch in _steps(draw, 0, before):
        table.land(batch)
    pieces = [item for batch in _steps(draw, before, draw(st.integers(1, 4))) for item in batch]
    # Cut the run's items into batches as the saver sends them: several saves may go in one BatchWriteItem.
    batches, start = [], 0
    while start < len(pieces):
        size = draw(st.integers(1, 4))
        batches.append(pieces[start : start + size])
        start += size
    # Each batch begins, lands, then reports; the read queries its head, then its writes, then is recorded.
    actors = {f"b{n}": ["begin", "land", "report"] for n in range(len(batches))}
    actors["read"] = ["head", "writes", "record"]
    order: list[str] = []
    while actors:
        actor = draw(st.sampled_from(sorted(actors)))
        order.append(f"{actor}:{actors[actor].pop(0)}")
        if not actors[actor]:
            del actors[actor]
    return table, batches, order


@settings(max_examples=400, deadline=None)
@given(histories())
def test_the_tracked_keys_equal_a_full_read_in_any_interleaving(history: Any) -> None:
    table, batches, order = history
    tracker = LatestTracker()
    tracker.begin(THREAD)  # the delivery's first read begins tracking before its queries
    landing: dict[str, AbstractContextManager[None]] = {}
    head = ""
    read: LatestKeys | None = None
    for event in order:
        actor, step = event.split(":")
        if actor == "read":
            if step == "head":
                head = table.latest()
            elif step == "writes":
                read = LatestKeys(head, table.heads(head))
            else:
                tracker.read(THREAD, read)
            continue
        batch = batches[int(actor[1:])]
        if step == "begin":
            landing[actor] = tracker.landing(THREAD)
            landing[actor].__enter__()
        elif step == "land":
            table.land(batch)
        else:
            tracker.wrote(THREAD, batch)
            landing.pop(actor).__exit__(None, None, None)
    assert tracker.known(THREAD) == table.full_read()


def test_keys_are_known_only_after_a_full_read_and_while_no_write_is_on_its_way() -> None:
    tracker = LatestTracker()
    tracker.wrote(THREAD, [_checkpoint("", "c-1")])
    assert tracker.known(THREAD) is None, "nothing is tracked before the delivery begins"
    tracker.begin(THREAD)
    tracker.wrote(THREAD, [_write("", "c-2", "b#0")])  # a branch's write, before its checkpoint
    assert tracker.known(THREAD) is None, "no full read yet: what landed before the delivery is unknown"
    tracker.read(THREAD, LatestKeys("c-1", {"a#0"}))
    with tracker.landing(THREAD):
        assert tracker.known(THREAD) is None, "a write on its way may land anything"
        tracker.wrote(THREAD, [_checkpoint("", "c-2"), _checkpoint("child:1", "c-9"), _payload("#c-2")])
    assert tracker.known(THREAD) == LatestKeys("c-2", {"b#0"}), "the branch's write counts once its checkpoint lands"
    assert tracker.take_note(THREAD) == LatestKeys("c-2", {"b#0"}).to_note()
    assert tracker.take_note(THREAD) is None, "a note is taken once"


def _spoiled(how: str) -> LatestTracker:
    tracker = LatestTracker()
    tracker.begin(THREAD)
    tracker.read(THREAD, LatestKeys("c-1", set()))
    if how == "failed write":
        try:
            with tracker.landing(THREAD):
                raise TimeoutError("the write may or may not have landed")
        except TimeoutError:
            pass
    elif how == "passed-over head":
        tracker.read(THREAD, None)
    else:  # a write head without the checkpoint id this version places it by
        tracker.wrote(THREAD, [{"PK": {"S": f"WRITES_{THREAD}##c-1"}, "SK": {"S": "a#0"}}])
    return tracker


def test_a_failed_write_a_passed_over_head_or_an_unplaceable_item_leaves_no_note() -> None:
    for how in ("failed write", "passed-over head", "unplaceable item"):
        tracker = _spoiled(how)
        tracker.wrote(THREAD, [_checkpoint("", "c-2")])
        tracker.read(THREAD, LatestKeys("c-2", set()))
        assert tracker.known(THREAD) is None, how
        assert tracker.take_note(THREAD) is None, how
        tracker.begin(THREAD)
        tracker.read(THREAD, LatestKeys("c-2", set()))
        assert tracker.known(THREAD) == LatestKeys("c-2", set()), f"{how}: the next delivery tracks afresh"


def test_a_warm_process_tracks_a_bounded_number_of_threads() -> None:
    from agent_wait.langgraph.checkpoint.notes import THREADS_KEPT

    tracker = LatestTracker()
    for n in itertools.islice(itertools.count(), THREADS_KEPT + 1):
        tracker.begin(f"t-{n}")
        tracker.read(f"t-{n}", LatestKeys("c-1", set()))
    assert tracker.known("t-0") is None, "past the bound, older threads are dropped (a note fewer, no more)"
    assert tracker.known(f"t-{THREADS_KEPT}") == LatestKeys("c-1", set())
