"""Rules of the `leases` capability (`LeaseLedger`): one holder per thread, and what a release records."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, make_failure


def one_lease_per_thread(make: LedgerFactory) -> None:
    """A thread's lease has one holder until released or expired; it carries the thread's failure; it never
    makes an unknown thread exist."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, f"a free thread's lease must be granted, got {first!r}"
    assert first.failure is None, f"a free thread's lease must be granted, got {first!r}"
    assert ledger.acquire_lease(thread, "h-2", now=T0 + timedelta(seconds=30), seconds=60) is None, (
        "a held lease must refuse another holder"
    )
    assert not ledger.thread_exists(thread), "a lease alone does not make a thread exist"
    ledger.release_lease(thread, "h-2")  # not the holder: changes nothing
    assert ledger.acquire_lease(thread, "h-3", now=T0 + timedelta(seconds=31), seconds=60) is None
    ledger.release_lease(thread, "h-1")
    second = ledger.acquire_lease(thread, "h-2", now=T0 + timedelta(seconds=32), seconds=60)
    assert second is not None, "a released lease must be granted again"
    taken = ledger.acquire_lease(thread, "h-4", now=T0 + timedelta(seconds=200), seconds=60)
    assert taken is not None, "an expired lease (its holder died) must be taken over"
    ledger.release_lease(thread, "h-4")
    ledger.begin_start(thread, "s-1", marker=None, now=T0)
    failure = make_failure(thread, "start", "s-1", "s-1")
    ledger.mark_failed(failure)
    leased = ledger.acquire_lease(thread, "h-5", now=T0 + timedelta(seconds=300), seconds=60)
    assert leased is not None, f"the lease must carry the failure, got {leased!r}"
    assert leased.failure == failure, f"the lease must carry the failure, got {leased!r}"


def racing_leases_have_one_holder(make: LedgerFactory) -> None:
    """Eight threads reaching for one thread's lease at once: exactly one holds it."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    barrier = threading.Barrier(8)
    got: list[str] = []
    lock = threading.Lock()

    def reach(holder: str) -> None:
        barrier.wait()
        if ledger.acquire_lease(thread, holder, now=T0, seconds=60) is not None:
            with lock:
                got.append(holder)

    racers = [threading.Thread(target=reach, args=(f"h-{n}",)) for n in range(8)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert len(got) == 1, f"expected one holder, got {got}"


def a_release_records_the_open_questions_the_next_lease_reads(make: LedgerFactory) -> None:
    """`release_lease(open_questions=...)` records the thread's open ids; the next lease carries them; a release
    without them, or by a delivery that no longer holds the lease, leaves them as they were."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, "a free thread's lease must be granted"
    assert first.open_questions is None, f"nothing was recorded yet, got {first.open_questions}"
    ledger.release_lease(thread, "h-1", open_questions=("q-1", "q-2"))
    second = ledger.acquire_lease(thread, "h-2", now=T0, seconds=60)
    assert second is not None, "a released lease must be granted again"
    assert second.open_questions == ("q-1", "q-2"), f"expected the recorded ids, got {second.open_questions}"
    ledger.release_lease(thread, "h-9", open_questions=())  # not the holder: changes nothing
    ledger.release_lease(thread, "h-2")  # the agent did not run: the ids stay
    third = ledger.acquire_lease(thread, "h-3", now=T0, seconds=60)
    assert third is not None, "a released lease must be granted again"
    assert third.open_questions == ("q-1", "q-2"), f"expected the ids kept, got {third.open_questions}"
    ledger.release_lease(thread, "h-3", open_questions=())
    fourth = ledger.acquire_lease(thread, "h-4", now=T0, seconds=60)
    assert fourth is not None, "a released lease must be granted again"
    assert fourth.open_questions == (), f"expected no open question recorded, got {fourth.open_questions}"


def a_release_records_the_decisions_handed_over_until_one_clears_them(make: LedgerFactory) -> None:
    """`release_lease(handed_over=...)` records the decisions that wait for the agent; every later lease carries
    them until a release clears them (empty); a release without them, or by a non-holder, leaves them as they are."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, "a free thread's lease must be granted"
    assert first.handed_over == (), f"nothing was handed over yet, got {first.handed_over}"
    ledger.release_lease(thread, "h-1", handed_over=("q-1",))
    second = ledger.acquire_lease(thread, "h-2", now=T0, seconds=60)
    assert second is not None, "a released lease must be granted again"
    assert second.handed_over == ("q-1",), f"expected the decision handed over, got {second.handed_over}"
    ledger.release_lease(thread, "h-9", handed_over=())  # not the holder: changes nothing
    ledger.release_lease(thread, "h-2", open_questions=("q-2",))  # not applied yet: it stays
    third = ledger.acquire_lease(thread, "h-3", now=T0, seconds=60)
    assert third is not None, "a released lease must be granted again"
    assert third.handed_over == ("q-1",), f"expected the decision kept, got {third.handed_over}"
    ledger.release_lease(thread, "h-3", handed_over=())
    fourth = ledger.acquire_lease(thread, "h-4", now=T0, seconds=60)
    assert fourth is not None, "a released lease must be granted again"
    assert fourth.handed_over == (), f"expected none once applied, got {fourth.handed_over}"
    assert fourth.open_questions == ("q-2",), "clearing the hand-overs leaves the open ids alone"


def a_release_records_the_finished_start_the_next_lease_reads(make: LedgerFactory) -> None:
    """`release_lease(finished_start=...)` records that start as finished; every later lease carries it until a
    release names another; a release without it, or by a non-holder, leaves it as it is."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, "a free thread's lease must be granted"
    assert first.finished_start is None, f"nothing was finished yet, got {first.finished_start}"
    ledger.release_lease(thread, "h-1", finished_start="s-1")
    second = ledger.acquire_lease(thread, "h-2", now=T0, seconds=60)
    assert second is not None, "a released lease must be granted again"
    assert second.finished_start == "s-1", f"expected the finished start, got {second.finished_start}"
    ledger.release_lease(thread, "h-9", finished_start="s-9")  # not the holder: changes nothing
    ledger.release_lease(thread, "h-2", open_questions=("q-1",))  # an answer: the finished start stays
    third = ledger.acquire_lease(thread, "h-3", now=T0, seconds=60)
    assert third is not None, "a released lease must be granted again"
    assert third.finished_start == "s-1", f"expected the start kept, got {third.finished_start}"
    ledger.release_lease(thread, "h-3", finished_start="s-2")
    fourth = ledger.acquire_lease(thread, "h-4", now=T0, seconds=60)
    assert fourth is not None, "a released lease must be granted again"
    assert fourth.finished_start == "s-2", f"expected the later start, got {fourth.finished_start}"
    assert ledger.finished_start(thread) == "s-2", "read again, the thread says the same as its lease"
    ledger.release_lease(thread, "h-4")


def a_holder_that_does_not_run_the_agent_never_takes_over_a_dead_run(make: LedgerFactory) -> None:
    """`acquire_lease(runs_agent=False)` (a door) takes a free lease and one a door left to expire, never one whose
    holder ran the agent and died before its release, however long ago: only another run takes that over, and once
    that run released the thread it is free for a door again."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    later = T0 + timedelta(seconds=3600)
    assert ledger.acquire_lease(thread, "run-1", now=T0, seconds=60) is not None, "a free thread's lease"
    # run-1 dies running the agent: its lease expires unreleased.
    assert ledger.acquire_lease(thread, "door-1", now=later, seconds=30, runs_agent=False) is None, (
        "a door must not take over the lease of a run that died: what the thread records may be stale"
    )
    taken = ledger.acquire_lease(thread, "run-2", now=later, seconds=60)
    assert taken is not None, "another run must take over the lease of a run that died"
    ledger.release_lease(thread, "run-2")
    door = ledger.acquire_lease(thread, "door-2", now=later, seconds=30, runs_agent=False)
    assert door is not None, "a lease a run released must be free for a door"
    # door-2 dies deciding: its lease expires unreleased.
    assert ledger.acquire_lease(thread, "run-3", now=later, seconds=60) is None, "a door's lease holds until it ends"
    after = later + timedelta(seconds=31)
    again = ledger.acquire_lease(thread, "door-3", now=after, seconds=30, runs_agent=False)
    assert again is not None, "a door must take over the lease of a door that died"
    ledger.release_lease(thread, "door-3")
    assert ledger.acquire_lease(thread, "door-4", now=after, seconds=30, runs_agent=False) is not None, (
        "a lease a door released must be free for a door"
    )
