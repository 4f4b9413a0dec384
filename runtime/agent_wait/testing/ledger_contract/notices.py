"""Rules of the lifecycle envelopes a question owes (`FollowUpLedger.owe_notices`, `told`): owed by name, kept due
until told, never lost to a decision."""

from __future__ import annotations

import uuid
from datetime import timedelta

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import Decision, Progress
from agent_wait.testing.ledger_contract._support import (
    T0,
    LedgerFactory,
    make_decision,
    make_vote,
    row_of,
    sample_envelope,
)


def owed_notices_keep_a_question_due_until_they_are_told(make: LedgerFactory) -> None:
    """`owe_notices` adds to a row's `notices` and makes it due at once, whatever its status (`due` lists it);
    `told` takes off what went out: with nothing left it sets the due time given, with more added meanwhile it
    keeps the row due; told twice, it says False."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    base = T0 - timedelta(days=3650)  # the soonest due rows of a shared store
    envelope = sample_envelope(thread_id=thread)
    ledger.open(envelope, now=base)
    question_id = envelope.question_id
    ledger.decide(thread, question_id, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=base)
    ledger.mark_resumed(thread, question_id, now=base)

    ledger.owe_notices(thread, question_id, ["answered"], now=base)
    ledger.owe_notices(thread, question_id, ["resumed", "answered"], now=base)
    owing = row_of(ledger, thread, question_id)
    assert sorted(owing.notices) == ["answered", "resumed"], f"owed notices add up, got {owing.notices}"
    assert owing.due_at == format_rfc3339(base), f"a question that owes notices is due at once, got {owing!r}"
    due = [r.question_id for r in ledger.due(base + timedelta(seconds=1), limit=1000) if r.thread_id == thread]
    assert due == [question_id], f"due lists a resumed question that owes notices, got {due}"

    assert ledger.told(thread, question_id, ["answered"], due_at=None) is True
    partly = row_of(ledger, thread, question_id)
    assert (partly.notices, partly.due_at) == (("resumed",), format_rfc3339(base)), f"still owes: {partly!r}"
    assert ledger.told(thread, question_id, ["answered"], due_at=None) is False, "told already: nothing to take off"
    assert row_of(ledger, thread, question_id).notices == ("resumed",), "a second telling takes off nothing else"
    assert ledger.told(thread, question_id, ["resumed"], due_at=None) is True
    told = row_of(ledger, thread, question_id)
    assert (told.notices, told.due_at) == ((), None), f"owing nothing, it is not due: {told!r}"
    assert ledger.told(thread, question_id, ["resumed"], due_at=None) is False, "told twice: nothing to take off"
    left = [r.question_id for r in ledger.due(base + timedelta(days=1), limit=1000) if r.thread_id == thread]
    assert left == [], f"a question that owes nothing leaves the due list, got {left}"
    assert told.status is QuestionStatus.RESUMED, f"telling never changes the status: {told!r}"


def a_decision_keeps_an_unannounced_question_owing_its_wait_created(make: LedgerFactory) -> None:
    """A question decided before its `wait.created` went out keeps its unannounced mark, whichever write decides it
    (`decide`, a door's decision to hand over, a quorum's deciding `advance`), so whoever announces the decision
    owes the `wait.created` first; owing `created` by name takes the mark off, in that same write."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    base = T0 - timedelta(days=3650)  # the soonest due rows of a shared store
    queue, door, quorum = (sample_envelope(thread_id=thread, quorum=q) for q in (None, None, 1))
    for envelope in (queue, door, quorum):
        ledger.open(envelope, now=base)  # put unannounced: its announcement never succeeded
    at = format_rfc3339(base)
    ledger.decide(thread, queue.question_id, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=base)
    handed = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-door", "ana", via="api", hand_over_at=at)
    ledger.decide(thread, door.question_id, handed, now=base)
    deciding = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-bo", "bo")
    progress = Progress(votes=(make_vote("bo", "approve", "a-bo"),), version=1)
    ledger.advance(thread, quorum.question_id, progress, expected_version=0, due_at=None, decision=deciding, now=base)
    for envelope in (queue, door, quorum):
        decided = row_of(ledger, thread, envelope.question_id)
        assert decided.status is QuestionStatus.ANSWERED, f"decided, got {decided!r}"
        assert not decided.announced, f"a decision must keep the unannounced mark, got {decided!r}"

    ledger.owe_notices(thread, queue.question_id, ["created", "answered"], now=base)
    owing = row_of(ledger, thread, queue.question_id)
    assert owing.announced, f"owing `created` by name takes the unannounced mark off, got {owing!r}"
    assert sorted(owing.notices) == ["answered", "created"], f"both owed by name, got {owing.notices}"
    assert owing.due_at == at, f"owing, it is due at once, got {owing!r}"
    assert ledger.told(thread, queue.question_id, ["created", "answered"], due_at=None)
    told = row_of(ledger, thread, queue.question_id)
    assert (told.announced, told.notices, told.due_at) == (True, (), None), f"told, it owes nothing: {told!r}"
    for envelope in (door, quorum):
        ledger.owe_notices(thread, envelope.question_id, ["created"], now=base)
        ledger.told(thread, envelope.question_id, ["created"], due_at=None)
    ledger.mark_resumed(thread, door.question_id, now=base)


def each_counted_step_is_owed_apart(make: LedgerFactory) -> None:
    """Owed names keep a repeating step's count (`voted:1`, `voted:2`, `reminder:1`): each is owed and taken off on
    its own, never folded into one."""
    ledger = make()
    envelope = sample_envelope(quorum=3)
    thread, question = envelope.thread_id, envelope.question_id
    base = T0 - timedelta(days=3650)
    ledger.open(envelope, now=base)
    ledger.owe_notices(thread, question, ["voted:1"], now=base)
    ledger.owe_notices(thread, question, ["reminder:1", "voted:2"], now=base)
    owing = row_of(ledger, thread, question)
    assert sorted(owing.notices) == ["reminder:1", "voted:1", "voted:2"], f"each step apart, got {owing.notices}"
    assert ledger.told(thread, question, ["voted:1", "reminder:1"], due_at=None)
    left = row_of(ledger, thread, question)
    assert left.notices == ("voted:2",), f"only what was told is taken off, got {left.notices}"
    assert left.due_at == format_rfc3339(base), f"still owing, it stays due, got {left!r}"
    ledger.told(thread, question, ["voted:2"], due_at=None)
    ledger.decide(thread, question, make_decision(QuestionStatus.CANCELLED, None), now=base)


def resuming_keeps_a_question_due_while_it_owes_notices(make: LedgerFactory) -> None:
    """`mark_resumed` takes a hand-over's due time off, but never the due time of notices still owed."""
    ledger = make()
    envelope = sample_envelope()
    thread, question = envelope.thread_id, envelope.question_id
    base = T0 - timedelta(days=3650)
    ledger.open(envelope, now=base)
    at = format_rfc3339(base)
    decision = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-door", "ana", via="api", hand_over_at=at)
    ledger.decide(thread, question, decision, now=base)
    ledger.owe_notices(thread, question, ["answered"], now=base)
    assert ledger.mark_resumed(thread, question, now=base), "a decided question owing notices can be resumed"
    row = row_of(ledger, thread, question)
    assert (row.status, row.notices) == (QuestionStatus.RESUMED, ("answered",)), f"got {row!r}"
    assert question in [r.question_id for r in ledger.due(base + timedelta(minutes=1), limit=1000)], (
        "a resumed question owing notices stays due until they are told"
    )
    ledger.told(thread, question, ["answered"], due_at=None)
