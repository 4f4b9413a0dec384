"""Rules of the `hand-overs` capability (`HandOverLedger`): a door's decision and its hand-over are one write, which
lands only while the thread is free, not failed, and parked on the question. A backend that declares it declares
leases and failures too (a door's hand-over is read by the next lease)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import Progress
from agent_wait.testing.ledger_contract._support import (
    T0,
    LedgerFactory,
    make_decision,
    make_failure,
    make_vote,
    race,
    row_of,
    sample_envelope,
)


def _parked(make: LedgerFactory, *, quorum: int | None = None) -> tuple[Any, str, str]:
    """A fresh question on a thread whose last run (a lease released) recorded it open."""
    ledger = make()
    envelope = sample_envelope(quorum=quorum)
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    assert ledger.acquire_lease(thread, "run-1", now=T0, seconds=60) is not None
    ledger.release_lease(thread, "run-1", open_questions=[question])
    return ledger, thread, question


def a_door_decides_and_hands_over_in_one_write(make: LedgerFactory) -> None:
    """A question read with its free thread is decided with its hand-over: the row says so, and the next lease reads
    the question among the decisions waiting for the agent. A question never asked is not found."""
    ledger, thread, question = _parked(make)
    assert ledger.answer_view(f"q-{uuid.uuid4().hex}", now=T0) is None, "an unknown question must not be found"
    view = ledger.answer_view(question, now=T0)
    assert view is not None, "the question must be found by its id alone"
    assert (view.record.question_id, view.busy, view.failure) == (question, False, None), view
    assert view.open_questions == (question,), f"the thread's open questions must be read with it, got {view!r}"
    handed = ledger.hand_over(view.record, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=T0)
    assert (handed.won, handed.thread_moved) == (True, False), handed
    assert handed.record.status is QuestionStatus.ANSWERED, f"the result must be the decided row, got {handed!r}"
    assert row_of(ledger, thread, question).status is QuestionStatus.ANSWERED
    lease = ledger.acquire_lease(thread, "run-2", now=T0 + timedelta(seconds=1), seconds=60)
    assert lease is not None
    assert lease.handed_over == (question,), f"the next lease must read the hand-over, got {lease.handed_over!r}"
    again = ledger.answer_view(question, now=T0 + timedelta(seconds=2), thread_id=thread)
    assert again is not None, "the question must be found by its thread and id"
    assert again.busy, "a view under a running lease must say the thread is busy"


def a_door_never_decides_while_a_run_holds_the_thread(make: LedgerFactory) -> None:
    """While a run holds the thread, or after its lease ran out on a run that died (its redelivery takes it over),
    a door's view is busy and its hand-over writes nothing; once released, it lands."""
    ledger, thread, question = _parked(make)
    read = row_of(ledger, thread, question)
    decision = make_decision(QuestionStatus.ANSWERED, {"action": "approve"})
    assert ledger.acquire_lease(thread, "run-2", now=T0, seconds=60) is not None
    for at in (T0 + timedelta(seconds=1), T0 + timedelta(seconds=120)):  # running, then run out on a dead run
        view = ledger.answer_view(question, now=at)
        assert view is not None, "the question must be found by its id alone"
        assert view.busy, f"a thread a run holds must be busy at {at}, got {view!r}"
        handed = ledger.hand_over(read, decision, now=at)
        assert (handed.won, handed.thread_moved) == (False, True), handed
        assert row_of(ledger, thread, question).status is QuestionStatus.OPEN, "nothing may be written"
    ledger.release_lease(thread, "run-2")
    assert ledger.hand_over(read, decision, now=T0 + timedelta(seconds=121)).won, "a released thread is free"


def a_door_never_decides_on_a_failed_thread_or_a_question_the_agent_moved_past(make: LedgerFactory) -> None:
    """A thread that failed, or whose last run left the question behind, moved: the hand-over writes nothing."""
    ledger, thread, question = _parked(make)
    read = row_of(ledger, thread, question)
    decision = make_decision(QuestionStatus.ANSWERED, {"action": "approve"})
    assert ledger.acquire_lease(thread, "run-2", now=T0, seconds=60) is not None
    ledger.release_lease(thread, "run-2", open_questions=["another-question"])
    moved = ledger.hand_over(read, decision, now=T0)
    assert (moved.won, moved.thread_moved) == (False, True), f"the agent moved past it: {moved!r}"
    ledger.begin_start(thread, "s-1", marker=None, now=T0)
    ledger.mark_failed(make_failure(thread, "start", "s-1", "s-1"))
    assert ledger.acquire_lease(thread, "run-3", now=T0, seconds=60) is not None
    ledger.release_lease(thread, "run-3", open_questions=[question])
    view = ledger.answer_view(question, now=T0)
    assert view is not None, "the question must be found by its id alone"
    assert view.failure is not None, f"the view must carry the failure, got {view!r}"
    failed = ledger.hand_over(read, decision, now=T0)
    assert (failed.won, failed.thread_moved) == (False, True), f"the thread failed: {failed!r}"
    assert row_of(ledger, thread, question).status is QuestionStatus.OPEN


def a_question_decided_first_is_not_handed_over_again(make: LedgerFactory) -> None:
    """Eight doors racing to hand over one question: one wins; every other learns the winner, and one hand-over is
    recorded."""
    ledger, thread, question = _parked(make)
    read = row_of(ledger, thread, question)
    decisions = [make_decision(QuestionStatus.ANSWERED, {"action": "approve"}, f"a-{n}") for n in range(8)]
    winners = race(8, lambda n: ledger.hand_over(read, decisions[n], now=T0).won)
    assert len(winners) == 1, f"one hand-over must win, got {winners}"
    lost = ledger.hand_over(read, make_decision(QuestionStatus.ANSWERED, {"action": "reject"}), now=T0)
    assert (lost.won, lost.thread_moved) == (False, False), lost
    assert lost.record.answer_id == f"a-{winners[0]}", f"the loser must see the winner, got {lost.record!r}"
    lease = ledger.acquire_lease(thread, "run-2", now=T0, seconds=60)
    assert lease is not None, "a released thread's lease must be granted"
    assert lease.handed_over == (question,), f"one hand-over must be recorded, got {lease.handed_over!r}"


def a_deciding_vote_hands_over_only_at_the_version_read(make: LedgerFactory) -> None:
    """A quorum's deciding vote is handed over with its votes only while the row is at the version read; a vote that
    landed first makes it lose, with the row as it stands."""
    ledger, thread, question = _parked(make, quorum=2)
    read = row_of(ledger, thread, question)
    first = make_vote("a@example.com", "approve")
    landed = ledger.advance(
        thread, question, replace(read.progress, votes=(first,), version=1), expected_version=0, due_at=None, now=T0
    )
    assert landed.won, landed
    second = make_vote("b@example.com", "approve")
    both = Progress(votes=(first, second), version=1)
    decision = make_decision(QuestionStatus.ANSWERED, {"action": "approve"})
    stale = ledger.hand_over(read, decision, now=T0, progress=both)
    assert (stale.won, stale.thread_moved) == (False, False), f"a stale version must lose, got {stale!r}"
    assert stale.record.progress.version == 1, stale.record
    now_read = row_of(ledger, thread, question)
    handed = ledger.hand_over(now_read, decision, now=T0, progress=replace(both, version=2))
    assert handed.won, handed
    row = row_of(ledger, thread, question)
    assert (row.status, len(row.progress.votes)) == (QuestionStatus.ANSWERED, 2), row
