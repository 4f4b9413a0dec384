"""A state past DynamoDB's 400 KB item limit: stored in the checkpoint bucket when there is one, and when there is
none, dead-lettered at once as `checkpoint_too_large` with the thread failed, never retried until SQS gives up.

Every test drives `agent_wait.host.router.handler` with real-shaped SQS FIFO events on the moto stack; the graph
is `tests.agents.large_state_graphs` (a step that adds `size` bytes of notes, then finance's question).
"""

from __future__ import annotations

from typing import Any

import pytest
import tests.agents.large_state_graphs as notes
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    records_from_queue,
    reset_handlers,
    run_router,
    sqs_record,
)

from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import SqsEntryQueue, retry_thread
from agent_wait.engine.dead_letter import DETAIL_ATTRIBUTE, REASON_ATTRIBUTE
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings

LARGE = 450_000
"""Bytes of notes one step adds: over DynamoDB's 400 KB item limit, over the saver's 350 KB offload threshold."""


@pytest.fixture
def notes_graph(host: HostStack, monkeypatch: pytest.MonkeyPatch) -> HostStack:
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.large_state_graphs:build_graph")
    reset_handlers()
    return host


def _bucket_on(host: HostStack, monkeypatch: pytest.MonkeyPatch, unique: str) -> tuple[Any, str]:
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=host.endpoint)
    bucket = f"checkpoints-{unique}"
    s3.create_bucket(Bucket=bucket)
    monkeypatch.setenv(Settings.CHECKPOINT_BUCKET.value, bucket)
    reset_handlers()
    return s3, bucket


def _retry_with_the_bucket_on(
    host: HostStack, monkeypatch: pytest.MonkeyPatch, unique: str, thread_id: str, lambda_context: FakeLambdaContext
) -> None:
    """The operator turns the checkpoint bucket on and retries the failed thread; the router applies the retry."""
    _bucket_on(host, monkeypatch, unique)
    retry_thread(host.ledger(), SqsEntryQueue(host.queue_url, client=host.sqs), thread_id, retry_id="r-1")
    records = records_from_queue(host.entry_messages(), host.queue_arn)
    assert run_router(*records, context=lambda_context) == {"batchItemFailures": []}


def _start(thread_id: str, order_id: str, size: int, start_id: str, receive_count: int = 1) -> dict[str, Any]:
    body = {"thread_id": thread_id, "start_id": start_id, "input": {"order_id": order_id, "size": size, "notes": []}}
    return sqs_record(body, group_id=thread_id, message_id=f"m-{start_id}", receive_count=receive_count)


def _dead_letters(host: HostStack) -> list[tuple[str, str]]:
    return [
        (
            m["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"],
            m["MessageAttributes"][DETAIL_ATTRIBUTE]["StringValue"],
        )
        for m in host.dead_letters()
    ]


def test_a_state_over_400_kb_round_trips_through_the_checkpoint_bucket(
    notes_graph: HostStack,
    lambda_context: FakeLambdaContext,
    monkeypatch: pytest.MonkeyPatch,
    unique: str,
    outcomes: list[Any],
) -> None:
    # GIVEN the router's saver has a checkpoint bucket
    host = notes_graph
    s3, bucket = _bucket_on(host, monkeypatch, unique)
    thread_id, order_id = f"notes-{unique}", f"o-{unique}"

    # WHEN a step adds 450 KB to the state and the graph parks on a question
    assert run_router(_start(thread_id, order_id, LARGE, "s-1"), context=lambda_context) == {"batchItemFailures": []}
    assert outcomes[-1].kind.value == "started"
    (question,) = host.ledger().questions(thread_id)

    # THEN the step's packed writes and the checkpoints after it are in the bucket, not in DynamoDB
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert any(key.startswith(f"{thread_id}/checkpoints/") and "/writes/" in key for key in keys), keys
    assert any(key.startswith(f"{thread_id}/checkpoints/") and "/writes/" not in key for key in keys), keys

    # WHEN finance approves
    answer = sqs_record(answer_message(thread_id, question.question_id, answer_id="a-1"), group_id=thread_id)
    assert run_router(answer, context=lambda_context) == {"batchItemFailures": []}

    # THEN the agent resumed with its full state, having run the large step once
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("applied", None)
    assert notes.RECALLED[order_id] == LARGE
    assert notes.REMEMBERED[order_id] == 1
    assert host.dead_letters() == []


def test_without_the_bucket_an_oversize_checkpoint_is_dead_lettered_at_once_and_fails_the_thread(
    notes_graph: HostStack,
    lambda_context: FakeLambdaContext,
    monkeypatch: pytest.MonkeyPatch,
    unique: str,
    outcomes: list[Any],
) -> None:
    # GIVEN no checkpoint bucket, and a step whose writes are 450 KB
    host = notes_graph
    thread_id, order_id = f"notes-{unique}", f"o-{unique}"

    # WHEN its start arrives, on its first receive of five
    response = run_router(_start(thread_id, order_id, LARGE, "s-1"), context=lambda_context)

    # THEN the router does not hand it back to SQS to fail four more times: it is dead-lettered now, with the reason
    assert response == {"batchItemFailures": []}
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("dead_lettered", "checkpoint_too_large")
    ((reason, detail),) = _dead_letters(host)
    assert reason == "checkpoint_too_large"
    assert f"thread {thread_id!r} is " in detail
    assert "AGENT_WAIT_CHECKPOINT_BUCKET" in detail
    assert f"agent-wait retry {thread_id}" in detail
    assert notes.notes_for(order_id, 64) not in detail  # ids and sizes only, never the state
    failure = host.ledger().thread_failure(thread_id)
    assert failure is not None
    assert failure.error == "ThreadStateTooLargeError"

    # AND a redelivery runs nothing
    again = run_router(_start(thread_id, order_id, LARGE, "s-1", receive_count=2), context=lambda_context)
    assert again == {"batchItemFailures": []}
    assert outcomes[-1].kind.value == "start_replayed"
    assert notes.REMEMBERED[order_id] == 1

    # WHEN the bucket is turned on and the operator retries the thread
    _retry_with_the_bucket_on(host, monkeypatch, unique, thread_id, lambda_context)

    # THEN the run goes on and parks on its question; the step whose writes could not be stored ran again, once
    assert outcomes[-1].kind.value == "retried"
    (question,) = host.ledger().questions(thread_id)
    assert question.status is QuestionStatus.OPEN
    assert host.ledger().thread_failure(thread_id) is None
    assert notes.REMEMBERED[order_id] == 2


def test_a_chat_that_outgrows_the_item_limit_fails_its_turn_and_the_retry_reruns_no_step(
    notes_graph: HostStack,
    lambda_context: FakeLambdaContext,
    monkeypatch: pytest.MonkeyPatch,
    unique: str,
    outcomes: list[Any],
) -> None:
    # GIVEN a thread whose turns each add 150 KB (each step's writes fit; the checkpoint grows)
    host = notes_graph
    thread_id, order_id = f"chat-{unique}", f"o-{unique}"
    for turn in (1, 2):
        assert run_router(_start(thread_id, order_id, 150_000, f"s-{turn}"), context=lambda_context) == {
            "batchItemFailures": []
        }
        question = next(q for q in host.ledger().questions(thread_id) if q.status is QuestionStatus.OPEN)
        answer = sqs_record(answer_message(thread_id, question.question_id, answer_id=f"a-{turn}"), group_id=thread_id)
        assert run_router(answer, context=lambda_context) == {"batchItemFailures": []}
        assert outcomes[-1].kind.value == "applied"

    # WHEN the third turn's checkpoint passes 400 KB
    assert run_router(_start(thread_id, order_id, 150_000, "s-3"), context=lambda_context) == {"batchItemFailures": []}

    # THEN the turn is dead-lettered as checkpoint_too_large, its step's writes kept
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("dead_lettered", "checkpoint_too_large")
    assert "the checkpoint of thread" in outcomes[-1].detail
    assert notes.REMEMBERED[order_id] == 3

    # WHEN the bucket is turned on and the thread retried
    _retry_with_the_bucket_on(host, monkeypatch, unique, thread_id, lambda_context)

    # THEN the turn finishes from its stored writes, without running its step again, and parks
    assert outcomes[-1].kind.value == "retried"
    assert notes.REMEMBERED[order_id] == 3
    question = next(q for q in host.ledger().questions(thread_id) if q.status is QuestionStatus.OPEN)
    answer = sqs_record(answer_message(thread_id, question.question_id, answer_id="a-3"), group_id=thread_id)
    assert run_router(answer, context=lambda_context) == {"batchItemFailures": []}
    assert notes.RECALLED[order_id] == 450_000


def test_the_checkpoint_bucket_setting_is_a_bucket_name() -> None:
    base = {
        Settings.GRAPH.value: "tests.agents.large_state_graphs:build_graph",
        Settings.TABLE.value: "questions",
        Settings.CHECKPOINT_TABLE.value: "checkpoints",
        Settings.DLQ_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq.fifo",
    }
    assert HostSettings.from_env("router", base).checkpoint_bucket is None
    named = {**base, Settings.CHECKPOINT_BUCKET.value: "my-stack-checkpoints-1a2b3c"}
    assert HostSettings.from_env("router", named).checkpoint_bucket == "my-stack-checkpoints-1a2b3c"
    with pytest.raises(ConfigurationError, match="must be an S3 bucket name") as refused:
        HostSettings.from_env("router", {**base, Settings.CHECKPOINT_BUCKET.value: "arn:aws:s3:::checkpoints"})
    assert refused.value.variables == (Settings.CHECKPOINT_BUCKET.value,)


def test_dynamodb_refusing_an_item_for_its_size_is_told_as_too_large_too(
    host: HostStack, monkeypatch: pytest.MonkeyPatch, unique: str
) -> None:
    """The saver's own check leaves 1 KB for an item's keys; should DynamoDB still refuse one, the error is the same."""
    import boto3
    from langgraph.checkpoint.base import empty_checkpoint

    import agent_wait.langgraph.checkpoint.sizes as sizes
    from agent_wait.errors import ThreadStateTooLargeError
    from agent_wait.host import checkpoint_saver

    monkeypatch.setattr(sizes, "PAYLOAD_LIMIT", 10 * 1024 * 1024)  # let DynamoDB (moto) refuse it
    saver = checkpoint_saver(host.checkpoint_table, boto3.Session(region_name="us-east-1"))
    config = {"configurable": {"thread_id": f"t-{unique}", "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"notes": notes.notes_for(unique, LARGE)}
    with pytest.raises(ThreadStateTooLargeError, match="AGENT_WAIT_CHECKPOINT_BUCKET") as refused:
        saver.put(config, checkpoint, {}, {})
    assert (refused.value.thread_id, refused.value.size) == (f"t-{unique}", 0)
    assert "is too large" in refused.value.message
