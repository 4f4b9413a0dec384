"""Rules of the core: questions recorded once and read back, by thread, by id, by status."""

from __future__ import annotations

import uuid
from datetime import timedelta

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.policy.wait_policy import WaitPolicy
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, make_decision, sample_envelope


def open_records_the_question(make: LedgerFactory) -> None:
    """`open` records a question as open, with every envelope field, floats and falsy values intact."""
    ledger = make()
    envelope = sample_envelope()
    opened = ledger.open(envelope, now=T0)
    assert opened.created, "the first open must create the row"
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None, "an opened question must be readable"
    assert record.status is QuestionStatus.OPEN, f"expected open, got {record.status}"
    assert record.envelope.to_dict() == envelope.to_dict(), (
        f"expected {envelope.to_dict()}, got {record.envelope.to_dict()}"
    )
    assert not record.announced, "a new question is not announced yet"


def reopen_never_overwrites(make: LedgerFactory) -> None:
    """Opening a recorded question again changes nothing: not its status, outcome, nor `expires_at`."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    ledger.decide(
        envelope.thread_id, envelope.question_id, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=T0
    )
    later = WaitEnvelope.create(
        Question(
            envelope.thread_id,
            envelope.question_id,
            envelope.question,
            WaitPolicy(timeout="P9D"),
            asked_at=T0 + timedelta(days=1),
        )
    )
    again = ledger.open(later, now=T0 + timedelta(days=1))
    assert not again.created, "a republish must not create a second row"
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None, "a republished question must still be readable"
    assert record.status is QuestionStatus.ANSWERED, f"status was clobbered: {record.status}"
    assert record.expires_at == envelope.expires_at, f"expires_at moved: {envelope.expires_at} -> {record.expires_at}"


def the_trace_a_question_was_asked_in_is_kept_with_it(make: LedgerFactory) -> None:
    """`open(trace=...)` keeps the trace context with the row, read back by id too; a republish keeps the first;
    a question opened without one has none."""
    ledger = make()
    envelope, untraced = sample_envelope(), sample_envelope()
    first = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "xray": "Root=1-5759e988-bd"}
    ledger.open(envelope, now=T0, trace=first)
    ledger.open(envelope, now=T0, trace={"traceparent": "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
    ledger.open(untraced, now=T0)
    record, found = ledger.get(envelope.thread_id, envelope.question_id), ledger.find(envelope.question_id)
    assert record is not None, "an opened question must be readable"
    assert found is not None, "an opened question must be found by its id"
    assert dict(record.trace or {}) == first, f"expected the first trace {first}, got {record.trace}"
    assert dict(found.trace or {}) == first, f"find must read the trace too, got {found.trace}"
    plain = ledger.get(untraced.thread_id, untraced.question_id)
    assert plain is not None, "an opened question must be readable"
    assert plain.trace is None, f"a question opened without a trace has none, got {plain.trace}"


def questions_lists_a_thread_by_status(make: LedgerFactory) -> None:
    """`questions(thread, status=...)` lists that thread's questions only, filtered by status."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    one, two = sample_envelope(thread_id=thread), sample_envelope(thread_id=thread)
    other = sample_envelope()
    for envelope in (one, two, other):
        ledger.open(envelope, now=T0)
    ledger.decide(thread, two.question_id, make_decision(QuestionStatus.CANCELLED, None), now=T0)
    assert {r.question_id for r in ledger.questions(thread)} == {one.question_id, two.question_id}
    assert [r.question_id for r in ledger.questions(thread, status=QuestionStatus.OPEN)] == [one.question_id]
    assert ledger.thread_exists(thread), "a thread with questions exists"
    assert not ledger.thread_exists(f"thread-{uuid.uuid4().hex}"), "an unknown thread does not exist"


def a_question_is_found_by_its_id_alone(make: LedgerFactory) -> None:
    """`find(question_id)` returns the question's row without its thread id; an unknown id is None."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    found = ledger.find(envelope.question_id)
    assert found is not None, "an opened question must be found by its id"
    assert (found.thread_id, found.status) == (envelope.thread_id, QuestionStatus.OPEN), f"got {found!r}"
    assert ledger.find(f"q-{uuid.uuid4().hex}") is None, "an unknown id is not found"


def pages_list_a_status_soonest_deadline_first(make: LedgerFactory) -> None:
    """`page` walks every question of a status, soonest deadline first, filtered by due time and tag."""
    ledger = make()
    tag = uuid.uuid4().hex
    asked = [T0 + timedelta(minutes=minutes) for minutes in (3, 1, 2)]
    envelopes = [sample_envelope(asked_at=at, tags={"batch": tag}) for at in asked]
    for envelope in envelopes:
        ledger.open(envelope, now=T0)
    seen, cursor = [], None
    while True:
        page = ledger.page(QuestionStatus.OPEN, limit=2, cursor=cursor, tag=("batch", tag))
        seen += [r.question_id for r in page.records]
        cursor = page.cursor
        if cursor is None:
            break
    expected = [e.question_id for e in sorted(envelopes, key=lambda e: e.expires_at or "")]
    assert seen == expected, f"expected {expected}, got {seen}"
    due = ledger.page(QuestionStatus.OPEN, limit=10, due_before=envelopes[2].expires_at, tag=("batch", tag)).records
    assert [r.question_id for r in due] == expected[:2], "due_before keeps only those due by then"
