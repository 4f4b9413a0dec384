"""Rules of the core: each question decided once, by whom and how, and resumed only after."""

from __future__ import annotations

import uuid

from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import (
    Decision,
)
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, make_decision, race, sample_envelope


def first_decision_wins(make: LedgerFactory) -> None:
    """The first decision moves open to its outcome; a second, different one loses and learns the winner."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    first = ledger.decide(
        envelope.thread_id,
        envelope.question_id,
        make_decision(QuestionStatus.ANSWERED, {"action": "approve"}, "A"),
        now=T0,
    )
    second = ledger.decide(
        envelope.thread_id,
        envelope.question_id,
        make_decision(QuestionStatus.ANSWERED, {"action": "reject"}, "B"),
        now=T0,
    )
    assert first.won, "the first decision must win"
    assert not second.won, "a second decision must lose"
    assert second.record.answer_id == "A", f"the loser must see the winner's answer id, got {second.record.answer_id!r}"
    assert second.record.answer == {"action": "approve"}, f"the winner's answer changed: {second.record.answer!r}"


def a_decision_records_who_made_it_and_how(make: LedgerFactory) -> None:
    """The claimed answerer, the transport's identity, the way it came and an untrusted claim are all kept."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    decision = Decision(
        QuestionStatus.ANSWERED,
        {"action": "approve"},
        "a-1",
        "sqs:AROAOTHER",
        sender="AROAOTHER:lambda",
        via="queue",
        claimed_by="cfo@example.com",
    )
    ledger.decide(envelope.thread_id, envelope.question_id, decision, now=T0)
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None
    got = (record.answered_by, record.sender, record.via, record.claimed_by)
    assert got == ("sqs:AROAOTHER", "AROAOTHER:lambda", "queue", "cfo@example.com"), f"got {got}"


def a_cancel_keeps_who_cancelled_and_why(make: LedgerFactory) -> None:
    """A person's cancel is kept with its reason (and whoever cancelled); a decision without one reads back None."""
    ledger = make()
    cancelled, answered = sample_envelope(), sample_envelope()
    for envelope in (cancelled, answered):
        ledger.open(envelope, now=T0)
    reason = "the customer withdrew the request"
    decision = Decision(
        QuestionStatus.CANCELLED, {"action": "reject"}, "c-1", "ops@example.com", via="api", reason=reason
    )
    ledger.decide(cancelled.thread_id, cancelled.question_id, decision, now=T0)
    ledger.decide(answered.thread_id, answered.question_id, make_decision(QuestionStatus.ANSWERED, None), now=T0)
    record = ledger.get(cancelled.thread_id, cancelled.question_id)
    other = ledger.get(answered.thread_id, answered.question_id)
    assert record is not None
    assert other is not None
    got = (record.status, record.answered_by, record.reason, record.answer)
    assert got == (QuestionStatus.CANCELLED, "ops@example.com", reason, {"action": "reject"}), f"got {got}"
    assert other.reason is None, f"a decision without a reason read back {other.reason!r}"


def racing_decisions_have_one_winner(make: LedgerFactory) -> None:
    """Eight threads deciding the same question at once: exactly one wins."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)

    def decide(index: int) -> bool:
        decision = make_decision(QuestionStatus.ANSWERED, {"action": "approve", "i": index})
        return ledger.decide(envelope.thread_id, envelope.question_id, decision, now=T0).won

    winners = race(8, decide)
    assert len(winners) == 1, f"expected exactly one winner, got {len(winners)} of 8"


def decide_unknown_question_raises_key_error(make: LedgerFactory) -> None:
    """Deciding a question that was never opened raises KeyError and creates no row."""
    ledger = make()
    envelope = sample_envelope()
    try:
        ledger.decide(envelope.thread_id, envelope.question_id, make_decision(QuestionStatus.ANSWERED, None), now=T0)
    except KeyError:
        pass
    else:
        raise AssertionError("deciding an unknown question must raise KeyError")
    assert ledger.get(envelope.thread_id, envelope.question_id) is None, "a phantom row was created"


def resumed_only_after_a_decision(make: LedgerFactory) -> None:
    """`mark_resumed` refuses an open question, moves a decided one to resumed once, and keeps its outcome."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    assert not ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0), (
        "an open question cannot be resumed"
    )
    ledger.decide(
        envelope.thread_id, envelope.question_id, make_decision(QuestionStatus.EXPIRED, {"action": "reject"}), now=T0
    )
    assert ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0), "a decided question can be resumed"
    assert not ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0), "resumed only once"
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None, "a resumed question must still be readable"
    assert record.status is QuestionStatus.RESUMED, f"expected resumed, got {record.status}"
    assert record.outcome is QuestionStatus.EXPIRED, f"the outcome must survive resuming, got {record.outcome}"


def pages_list_resumed_questions_by_their_status(make: LedgerFactory) -> None:
    """Once resumed, a question is listed as `resumed` and no longer under its outcome (a backend may keep it in its
    status index under the outcome, then a page may hold fewer than `limit` and still have a cursor)."""
    ledger = make()
    tag = uuid.uuid4().hex
    resumed, answered = sample_envelope(tags={"batch": tag}), sample_envelope(tags={"batch": tag})
    for envelope in (resumed, answered):
        ledger.open(envelope, now=T0)
        ledger.decide(
            envelope.thread_id, envelope.question_id, make_decision(QuestionStatus.ANSWERED, {"a": 1}), now=T0
        )
    ledger.mark_resumed(resumed.thread_id, resumed.question_id, now=T0)

    def listed(status: QuestionStatus) -> list[str]:
        seen, cursor = [], None
        for _ in range(1000):
            page = ledger.page(status, limit=1, cursor=cursor, tag=("batch", tag))
            assert len(page.records) <= 1, f"a page holds at most limit questions, got {len(page.records)}"
            seen += [r.question_id for r in page.records]
            cursor = page.cursor
            if cursor is None:
                return seen
        raise AssertionError(f"listing {status.value} never ended")

    assert listed(QuestionStatus.RESUMED) == [resumed.question_id], "a resumed question is listed as resumed"
    assert listed(QuestionStatus.ANSWERED) == [answered.question_id], "and no longer as its outcome"
