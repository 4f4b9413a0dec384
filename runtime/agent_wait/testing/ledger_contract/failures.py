"""Rules of the `failures` capability (`FailureLedger`): a failure recorded once, retried once."""

from __future__ import annotations

import uuid

from agent_wait.contract.schema import QuestionStatus
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, make_decision, make_failure, sample_envelope


def a_failed_resume_is_recorded_and_retried_once(make: LedgerFactory) -> None:
    """`mark_failed` moves an answered question to `failed` and marks the thread; one `begin_retry` takes it back."""
    ledger = make()
    envelope = sample_envelope()
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    ledger.decide(thread, question, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1"), now=T0)
    failure = make_failure(thread, "answer", question, "a-1")
    ledger.mark_failed(failure)
    ledger.mark_failed(failure)  # a redelivery records the same failure again
    record = ledger.get(thread, question)
    assert record is not None, f"expected failed, got {record!r}"
    assert record.status is QuestionStatus.FAILED, f"expected failed, got {record!r}"
    assert record.outcome is QuestionStatus.ANSWERED, f"the outcome must be kept, got {record.outcome}"
    assert record.failure == failure, f"expected {failure!r}, got {record.failure!r}"
    assert ledger.thread_failure(thread) == failure, "the thread must say it is failed"
    assert failure in ledger.failures(limit=1000), "failures() must list the failed question"
    assert ledger.begin_retry(failure, "r-1", now=T0), "the first retry takes the row"
    assert ledger.begin_retry(failure, "r-1", now=T0), "the same retry again still holds it (a redelivery)"
    assert not ledger.begin_retry(failure, "r-2", now=T0), "another retry must not take it too"
    record = ledger.get(thread, question)
    assert record is not None, f"back to answered, got {record!r}"
    assert record.status is QuestionStatus.ANSWERED, f"back to answered, got {record!r}"
    assert ledger.mark_resumed(thread, question, now=T0), "a retried decision can resume"
    ledger.clear_failure(thread)
    assert ledger.thread_failure(thread) is None, "a cleared thread is not failed"
    assert failure not in ledger.failures(limit=1000), "a retried question is not listed as failed"


def a_failed_start_keeps_its_input_for_a_retry(make: LedgerFactory) -> None:
    """A failed start is listed, keeps its input, and a retry moves it back to running once."""
    ledger = make()
    thread, start_id = f"thread-{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    ledger.begin_start(thread, start_id, marker=None, now=T0)
    failure = make_failure(thread, "start", start_id, start_id)
    ledger.mark_failed(failure, start_input={"order_id": "o-1", "amount": 900.5})
    start = ledger.start_record(thread, start_id)
    assert start is not None, f"expected a failed start, got {start!r}"
    assert start.state == "failed", f"expected a failed start, got {start!r}"
    assert start.input == {"order_id": "o-1", "amount": 900.5}, f"the input must be kept, got {start.input!r}"
    assert ledger.thread_failure(thread) == failure
    assert failure in ledger.failures(limit=1000), "failures() must list the failed start"
    assert ledger.questions(thread) == [], "a failed start is not a question"
    assert ledger.begin_retry(failure, "r-1", now=T0)
    assert not ledger.begin_retry(failure, "r-2", now=T0)
    start = ledger.start_record(thread, start_id)
    assert start is not None, f"got {start!r}"
    assert (start.state, start.retry_id) == ("running", "r-1"), f"got {start!r}"
    assert failure not in ledger.failures(limit=1000), "a retried start is not listed as failed"
