"""The router Lambda, driven with real-shaped SQS FIFO events against moto: one outcome per question.

Every test here calls `agent_wait.host.router.handler(event, context)` exactly as Lambda's SQS event
source does, with the refund graph from tests/agents/graphs.py on `DynamoDBSaver`, the question ledger on
DynamoDB, the DLQ on SQS FIFO and announcements on SNS (read back through a raw SQS subscription).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    load_event,
    reset_handlers,
    sqs_event,
    sqs_record,
    start_message,
)

from agent_wait.asking.versions import Version
from agent_wait.contract.envelope import ENVELOPE_FIELDS
from agent_wait.contract.schema import QuestionStatus, Settings, question_key, shard_key, thread_key


def _handle(*records: dict[str, Any], context: FakeLambdaContext) -> dict[str, Any]:
    from agent_wait.host import router

    return router.handler(sqs_event(*records), context)


def _parked(host: HostStack, thread_id: str, order_id: str, context: FakeLambdaContext, **start: Any) -> str:
    """Start a refund over the limit; return the question it parks on."""
    response = _handle(sqs_record(start_message(thread_id, order_id, **start), group_id=thread_id), context=context)
    assert response == {"batchItemFailures": []}
    (record,) = host.ledger().questions(thread_id)
    return record.question_id


def test_a_start_records_and_announces_its_question_and_an_approve_resumes_once(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a start message for a refund over the auto-approve limit
    thread_id, order_id = f"order-{unique}", f"o-{unique}"

    # WHEN the router handles it
    response = _handle(
        sqs_record(start_message(thread_id, order_id, start_id=f"s-{unique}"), group_id=thread_id),
        context=lambda_context,
    )

    # THEN the batch succeeds, the question is in the ledger, open, with every envelope field
    assert response == {"batchItemFailures": []}
    (record,) = host.ledger().questions(thread_id)
    question_id = record.question_id
    assert record.status is QuestionStatus.OPEN
    assert record.announced
    item = host.dynamodb.get_item(
        TableName=host.table, Key={"pk": {"S": thread_key(thread_id)}, "sk": {"S": question_key(question_id)}}
    )["Item"]
    assert item["status"] == {"S": "open"}
    # Announced, so the sweep has nothing to retry: it is due next at its deadline (its policy has no follow-ups)
    assert "announce_due" not in item
    assert record.expires_at is not None
    assert (item["due"], item["due_at"]) == ({"S": shard_key("due", question_id, 8)}, {"S": record.expires_at})
    assert record.due_at == record.expires_at
    # A lean row: the thread id is its key's, reply_with is rebuilt, a null field is left off (read back as None)
    assert set(ENVELOPE_FIELDS) - {"type", "event_id", "thread_id", "reply_with", "answer_ttl", "correlation"} <= set(
        item
    )
    assert [name for name, value in item.items() if "NULL" in value] == []
    # ... and announced on SNS with the same fields
    (created,) = [e for e in host.announcements() if e["type"] == "wait.created"]
    stored = record.envelope.to_dict()
    for field in ENVELOPE_FIELDS:
        if field not in ("type", "event_id"):
            assert created[field] == stored[field], field
    assert created["question"] == {"function": "issue_refund", "args": {"order_id": order_id, "amount": 900}}
    assert created["allowed_actions"] == ["approve", "reject"]
    assert created["default"] == {"action": "reject", "reason": "timeout"}
    assert created["reply_to"] == {"queue_url": host.queue_url}
    assert created["source"]["function"] == "issue_refund"
    assert Version.from_text(created["source"]["version"]).signature  # its version stamp (docs/versions.md)
    assert graphs.body_runs(order_id) == 0

    # WHEN finance approves
    answer = answer_message(thread_id, question_id, answered_by="finance@example.com", answer_id=f"a-{unique}")
    response = _handle(sqs_record(answer, group_id=thread_id), context=lambda_context)

    # THEN the refund ran once, the row is resumed with its outcome, and the transitions were announced
    assert response == {"batchItemFailures": []}
    assert graphs.body_runs(order_id) == 1
    assert graphs.refunds_paid(order_id) == 1
    resumed = host.ledger().get(thread_id, question_id)
    assert resumed is not None
    assert resumed.status is QuestionStatus.RESUMED
    assert resumed.outcome is QuestionStatus.ANSWERED
    assert resumed.answer == {"action": "approve"}
    assert resumed.answered_by == "finance@example.com"
    assert resumed.answer_id == f"a-{unique}"
    assert host.types_for(question_id) == ["wait.created", "wait.answered", "wait.resumed"]


def test_the_sample_answer_event_shape_is_handled(host: HostStack, lambda_context: FakeLambdaContext) -> None:
    # GIVEN the sample start and answer events exactly as stored (tests/events), answer pointed at the real question
    start = load_event("sqs_fifo_start.json")
    response = _handle(*start["Records"], context=lambda_context)
    assert response == {"batchItemFailures": []}
    (record,) = host.ledger().questions("order-4471")
    answer = load_event("sqs_fifo_answer.json")
    body = json.loads(answer["Records"][0]["body"])
    body.update(question_id=record.question_id, valid_until="2999-01-01T00:00:00Z")
    answer["Records"][0]["body"] = json.dumps(body)

    # WHEN the router handles the answer event
    response = _handle(*answer["Records"], context=lambda_context)

    # THEN it is applied: the row is resumed and records who answered
    assert response == {"batchItemFailures": []}
    applied = host.ledger().get("order-4471", record.question_id)
    assert applied is not None
    assert applied.status is QuestionStatus.RESUMED
    assert applied.answered_by == "finance@example.com"
    assert applied.answer_id == "slack-7a1f"


# -- a start is applied once ---------------------------------------------------------------------------------


def test_a_redelivered_start_while_parked_republishes_and_does_not_run_the_graph(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a start (no start_id: its SQS deduplication id identifies it) that parked the thread
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    first = sqs_record(start_message(thread_id, order_id), group_id=thread_id, deduplication_id=f"dedup-{unique}")
    assert _handle(first, context=lambda_context) == {"batchItemFailures": []}
    (record,) = host.ledger().questions(thread_id)
    runs = (graphs.node_runs("prepare", order_id), graphs.node_runs("review", order_id))

    # WHEN SQS redelivers the same message
    again = {**first, "attributes": {**first["attributes"], "ApproximateReceiveCount": "2"}}
    assert _handle(again, context=lambda_context) == {"batchItemFailures": []}

    # THEN no node ran again, no new question was asked, and the open question was announced again
    assert (graphs.node_runs("prepare", order_id), graphs.node_runs("review", order_id)) == runs
    assert [r.question_id for r in host.ledger().questions(thread_id)] == [record.question_id]
    created = [e for e in host.announcements() if e["type"] == "wait.created"]
    assert len(created) == 2
    assert created[0]["event_id"] != created[1]["event_id"]
    assert created[0]["expires_at"] == created[1]["expires_at"] == record.expires_at


def test_a_start_resent_with_the_same_start_id_is_not_run_again(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a start with its own start_id that parked the thread
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    _parked(host, thread_id, order_id, lambda_context, start_id=f"s-{unique}")
    runs = graphs.node_runs("prepare", order_id)

    # WHEN the sender resends it as a new SQS message (new message and deduplication ids, same start_id)
    resent = sqs_record(start_message(thread_id, order_id, start_id=f"s-{unique}"), group_id=thread_id)
    assert _handle(resent, context=lambda_context) == {"batchItemFailures": []}

    # THEN the graph did not run again
    assert graphs.node_runs("prepare", order_id) == runs
    assert len(host.ledger().questions(thread_id)) == 1


def test_a_redelivered_start_after_an_auto_approved_run_refunds_nothing_again(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a refund under the limit: the run approves and refunds by itself and finishes, no question
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    first = sqs_record(start_message(thread_id, order_id, amount=120), group_id=thread_id)
    assert _handle(first, context=lambda_context) == {"batchItemFailures": []}
    assert graphs.refunds_paid(order_id) == 1
    assert host.ledger().questions(thread_id) == []

    # WHEN SQS redelivers the start
    assert _handle({**first, "receiptHandle": "AQEBredelivered=="}, context=lambda_context) == {"batchItemFailures": []}

    # THEN nothing ran again: the refund body ran once and no node ran twice
    assert graphs.body_runs(order_id) == 1
    assert graphs.refunds_paid(order_id) == 1
    assert graphs.node_runs("prepare", order_id) == 1
    assert graphs.node_runs("finish", order_id) == 1


def test_a_new_start_on_a_known_thread_is_a_new_turn_and_cancels_the_question_left_open(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a thread parked on a question from its first turn
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    first_question = _parked(host, thread_id, order_id, lambda_context, start_id=f"s1-{unique}")

    # WHEN a new start (another start_id) arrives on the same thread
    second = sqs_record(start_message(thread_id, order_id, amount=950, start_id=f"s2-{unique}"), group_id=thread_id)
    assert _handle(second, context=lambda_context) == {"batchItemFailures": []}

    # THEN the graph ran a new turn, which asked anew; the first question was cancelled and announced so
    assert graphs.node_runs("prepare", order_id) == 2
    rows = {r.question_id: r for r in host.ledger().questions(thread_id)}
    assert rows[first_question].status is QuestionStatus.CANCELLED
    (new_question,) = [qid for qid, r in rows.items() if r.status is QuestionStatus.OPEN]
    assert new_question != first_question
    assert host.types_for(first_question) == ["wait.created", "wait.cancelled"]
    assert rows[new_question].envelope.question["args"]["amount"] == 950


# -- FIFO batches ----------------------------------------------------------------------------------------------


def test_a_failing_thread_fails_only_its_own_records_in_a_fifo_batch(
    host: HostStack, lambda_context: FakeLambdaContext
) -> None:
    # GIVEN the sample two-thread batch, a second record for the first thread, and a graph whose run for
    # the first thread's order hits a throttled AWS call (a failure to retry, not the agent's)
    event = load_event("sqs_fifo_batch_two_threads.json")
    failing, healthy = event["Records"]
    follow_up = sqs_record(start_message("order-5001", "5001", start_id="later"), group_id="order-5001")
    graphs.THROTTLE_ORDERS.add("5001")
    try:
        # WHEN the router handles the batch (failing thread first, its follow-up last)
        response = _handle(failing, healthy, follow_up, context=lambda_context)
    finally:
        graphs.THROTTLE_ORDERS.discard("5001")

    # THEN only the failing thread's records are reported, and the other thread went on
    assert response == {
        "batchItemFailures": [
            {"itemIdentifier": failing["messageId"]},
            {"itemIdentifier": follow_up["messageId"]},
        ]
    }
    assert [r.status for r in host.ledger().questions("order-5002")] == [QuestionStatus.OPEN]
    assert host.ledger().questions("order-5001") == []


# -- graphs that ask more than once ---------------------------------------------------------------------------


def test_two_questions_open_at_once_are_answered_independently(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a graph with two interrupting nodes in parallel, parked on both
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_parallel_graph")
    reset_handlers()
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    _handle(sqs_record(start_message(thread_id, order_id), group_id=thread_id), context=lambda_context)
    rows = {r.envelope.question["function"]: r.question_id for r in host.ledger().questions(thread_id)}
    assert set(rows) == {"issue_refund", "notify_customer"}

    # WHEN the refund question is approved
    approve = answer_message(thread_id, rows["issue_refund"])
    assert _handle(sqs_record(approve, group_id=thread_id), context=lambda_context) == {"batchItemFailures": []}

    # THEN the refund ran, its question is resumed, and the other question is still open (not cancelled)
    assert graphs.refunds_paid(order_id) == 1
    status = {r.question_id: r.status for r in host.ledger().questions(thread_id)}
    assert status == {rows["issue_refund"]: QuestionStatus.RESUMED, rows["notify_customer"]: QuestionStatus.OPEN}
    assert graphs.node_runs("finish", order_id) == 0

    # WHEN the other is answered
    other = answer_message(thread_id, rows["notify_customer"], "reject")
    assert _handle(sqs_record(other, group_id=thread_id), context=lambda_context) == {"batchItemFailures": []}

    # THEN the run finished once, and the refund did not run again
    assert graphs.node_runs("finish", order_id) == 1
    assert graphs.body_runs(order_id) == 1
    assert all(r.status is QuestionStatus.RESUMED for r in host.ledger().questions(thread_id))


def test_a_graph_that_asks_twice_in_sequence_records_the_second_question_when_it_resumes(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a graph that asks finance, then asks again to close the case
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_two_step_graph")
    reset_handlers()
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    first = _parked(host, thread_id, order_id, lambda_context)

    # WHEN the first is approved
    _handle(sqs_record(answer_message(thread_id, first), group_id=thread_id), context=lambda_context)

    # THEN the first is resumed and the second is open and announced
    rows = {r.question_id: r for r in host.ledger().questions(thread_id)}
    (second,) = [qid for qid in rows if qid != first]
    assert rows[first].status is QuestionStatus.RESUMED
    assert rows[second].status is QuestionStatus.OPEN
    assert rows[second].envelope.question["function"] == "close_case"
    assert host.types_for(second) == ["wait.created"]

    # WHEN the second is approved, the run finishes
    _handle(sqs_record(answer_message(thread_id, second), group_id=thread_id), context=lambda_context)
    assert graphs.node_runs("finish", order_id) == 1
    assert graphs.refunds_paid(order_id) == 1


def test_reset_makes_the_next_invocation_read_the_environment_again(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_wait.errors import ConfigurationError
    from agent_wait.host import router

    # GIVEN a router that has handled a message (its settings, clients and graph are built)
    _parked(host, f"order-{unique}", f"o-{unique}", lambda_context)
    # WHEN a setting goes away, the warm router carries on with what it built
    monkeypatch.delenv(Settings.TABLE.value)
    _parked(host, f"order-{unique}-warm", f"o-{unique}-warm", lambda_context)
    # THEN after reset() the next invocation is a cold start again, and reads (and refuses) the environment
    router.reset()
    with pytest.raises(ConfigurationError, match=Settings.TABLE.value):
        _handle(
            sqs_record(start_message(f"order-{unique}-cold", "o"), group_id=f"order-{unique}-cold"),
            context=lambda_context,
        )
    reset_handlers()
