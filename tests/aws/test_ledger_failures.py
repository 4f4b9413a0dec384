"""Recording a failure never fails on the values it records: a failed start whose input the table cannot hold is
still recorded failed (its input left out), so the thread is retryable instead of wedged."""

from __future__ import annotations

from typing import Any

from agent_wait.aws import DynamoDbLedger
from agent_wait.ledger import FailureKind, StartState, ThreadFailure
from agent_wait.testing.ledger_contract import T0


def test_a_failed_start_with_an_input_the_table_cannot_hold_is_recorded_failed_without_it(
    question_table: tuple[str, Any], unique: str
) -> None:
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    thread_id = f"t-{unique}"
    ledger.begin_start(thread_id, "s-1", marker=None, now=T0)
    failure = ThreadFailure(thread_id, FailureKind.START, "s-1", "s-1", "RuntimeError", "2026-09-11T09:00:00Z")

    # an integer past what DynamoDB (and a checkpoint) can hold; on main this raised after the thread was marked
    ledger.mark_failed(failure, start_input={"account": 10**40})

    start = ledger.start_record(thread_id, "s-1")
    assert start is not None
    assert start.state is StartState.FAILED, "the start must not stay running: nothing could retry it"
    assert start.input is None
    assert ledger.thread_failure(thread_id) == failure
    assert [f.thread_id for f in ledger.failures() if f.thread_id == thread_id] == [thread_id]
