"""Poison input is refused on first sight: a value the parser could read but a store could not hold is
dead-lettered at its first receive with a typed reason, and nothing is written for it.

Before, each of these was retried five times and left SQS to move it with no reason; a start whose
question could not be stored left the agent parked with no ledger row, invisible to the sweep.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import FakeLambdaContext, HostStack, answer_message, run_router, sqs_record, start_message

from agent_wait.contract.schema import thread_key
from agent_wait.engine import InMemoryDeadLetter, OutcomeKind, RecordingMetrics, Router, failed_threads
from agent_wait.engine.dead_letter import DETAIL_ATTRIBUTE, REASON_ATTRIBUTE
from agent_wait.ledger import FailureKind, InMemoryLedger

DEEP = 40


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def _start(thread_id: str, value: Any) -> str:
    return json.dumps({"thread_id": thread_id, "input": value, "start_id": "s-1"})


def _answer(thread_id: str, answer: Any, **fields: Any) -> str:
    return json.dumps({"thread_id": thread_id, "question_id": "q-1", "answer": answer, **fields})


POISON: dict[str, tuple[Any, str]] = {
    # name: (build the body for a thread id, the dead-letter reason)
    "number beyond DynamoDB's range": (lambda t: _start(t, {"amount": 1e300}), "bad_input"),
    "number below DynamoDB's range": (lambda t: _start(t, {"amount": 1e-300}), "bad_input"),
    "integer of 41 digits": (lambda t: _start(t, {"account": 10**40 + 7}), "bad_input"),
    # Issue 25: 10**40 has one significant digit, which passed as storable; 2**64 is past msgpack's 64 bits.
    "integer 10**40": (lambda t: _start(t, {"account": 10**40}), "bad_input"),
    "integer past 64 bits": (lambda t: _start(t, {"account": 2**64}), "bad_input"),
    "answer integer 10**40": (lambda t: _answer(t, {"action": "approve", "amount": 10**40}), "bad_answer"),
    "answer integer below -2**63": (lambda t: _answer(t, {"action": "approve", "amount": -(2**63) - 1}), "bad_answer"),
    "answer number beyond range": (lambda t: _answer(t, {"action": "approve", "amount": 1e300}), "bad_answer"),
    "answer over 64 KiB": (lambda t: _answer(t, {"action": "approve", "note": "x" * 70_000}), "bad_answer"),
    "answer nested too deep": (lambda t: _answer(t, {"action": "approve", "why": _nested(DEEP)}), "bad_answer"),
    "input nested past the parser": (lambda t: f'{{"thread_id": "{t}", "input": {"[" * 100_000}}}', "too_deep"),
    "lone surrogate in an answer key": (lambda t: _answer(t, {"action": "approve", "\ud800": 1}), "bad_answer"),
    "answer id claiming agent-wait's own": (
        lambda t: _answer(t, {"action": "approve"}, answer_id="agent-wait:cancelled:q-1"),
        "bad_answer_id",
    ),
}


@pytest.mark.parametrize("case", list(POISON), ids=list(POISON))
def test_poison_is_dead_lettered_with_its_reason_at_the_first_receive_and_writes_nothing(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, case: str
) -> None:
    # GIVEN a message whose value no store downstream can hold
    thread_id = f"order-{unique}"
    build, reason = POISON[case]
    body = build(thread_id)

    # WHEN its first delivery reaches the router
    response = run_router(sqs_record(body, group_id=thread_id), context=lambda_context)

    # THEN it is not handed back to SQS: it is dead-lettered now, with its typed reason, saying what to do
    assert response == {"batchItemFailures": []}
    [dead] = host.dead_letters()
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == reason
    assert dead["MessageAttributes"][DETAIL_ATTRIBUTE]["StringValue"]
    # AND nothing was written for its thread
    rows = host.dynamodb.query(
        TableName=host.table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": thread_key(thread_id)}},
    )["Items"]
    assert rows == []


def test_a_thread_id_with_a_lone_surrogate_is_dead_lettered_at_once(
    host: HostStack, lambda_context: FakeLambdaContext
) -> None:
    # GIVEN a start whose thread id holds a lone surrogate (valid JSON, not valid Unicode)
    body = '{"thread_id": "order-\\ud800", "input": {"amount": 900}}'

    # WHEN the router handles it
    response = run_router(sqs_record(body, group_id="order-x"), context=lambda_context)

    # THEN it is dead-lettered now as a bad thread id
    assert response == {"batchItemFailures": []}
    [dead] = host.dead_letters()
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == "bad_thread_id"


def test_a_question_no_store_can_hold_fails_the_start_visibly_never_an_invisible_parked_agent(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a graph that parks on a plain interrupt() whose value DynamoDB cannot store (1e300)
    from tests.support.aws_stack import reset_handlers

    monkeypatch.setenv("AGENT_WAIT_GRAPH", "tests.agents.graphs:build_unstorable_question_graph")
    reset_handlers()
    thread_id, order_id = f"order-{unique}", f"o-{unique}"

    # WHEN its start is handled
    record = sqs_record(start_message(thread_id, order_id, start_id="s-1"), group_id=thread_id)
    assert run_router(record, context=lambda_context) == {"batchItemFailures": []}

    # THEN the start is dead-lettered once as agent_failed and the thread is listed as failed, by type
    [dead] = host.dead_letters()
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == "agent_failed"
    [failure] = [f for f in failed_threads(host.ledger(), limit=1000) if f.thread_id == thread_id]
    assert (failure.kind, failure.error) == (FailureKind.START, "EnvelopeError")
    assert graphs.node_runs("ask_raw", order_id) == 1


def test_a_write_the_store_refuses_as_invalid_is_dead_lettered_not_retried() -> None:
    # GIVEN a ledger whose store refuses the decision's write as invalid (DynamoDB ValidationException)
    from agent_wait.errors import LedgerRejectedError
    from agent_wait.ledger import Decision

    class RefusingLedger(InMemoryLedger):
        def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: Any) -> Any:
            raise LedgerRejectedError(
                "question table t: update_item was refused as invalid", code="ValidationException"
            )

    from langgraph.checkpoint.memory import InMemorySaver

    from agent_wait.langgraph import LangGraphAdapter

    ledger, dead_letter = RefusingLedger(), InMemoryDeadLetter()
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())),
        ledger,
        dead_letter=dead_letter,
        metrics=RecordingMetrics(),
    )
    started = router.handle(json.dumps(start_message("t-1", "o-refused", start_id="s-1")))
    (question_id,) = started.asked

    # WHEN an answer arrives
    outcome = router.handle(json.dumps(answer_message("t-1", question_id)))

    # THEN it is dead-lettered at once with its reason, never raised for SQS to retry
    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, "rejected_by_store")
    [dead] = dead_letter.records
    assert (dead.reason, dead.thread_id) == ("rejected_by_store", "t-1")
