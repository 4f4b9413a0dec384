"""The checkpoint offload threshold (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`): with the bucket, a payload over it goes to
S3 and one under it stays in the checkpoint table; a threshold out of range, or without a bucket, is refused at cold
start with the variable named.

The router tests drive `agent_wait.host.router.handler` with real-shaped SQS FIFO events on the moto stack; the graph
is `tests.agents.large_state_graphs` (a step that adds `size` bytes of notes, then finance's question).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import tests.agents.large_state_graphs as notes
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    reset_handlers,
    run_router,
    sqs_record,
)

from agent_wait.contract.schema import Settings
from agent_wait.errors import ArgumentError, ConfigurationError
from agent_wait.host import HostSettings
from agent_wait.host import settings as host_settings

BASE = {
    Settings.GRAPH.value: "tests.agents.large_state_graphs:build_graph",
    Settings.TABLE.value: "questions",
    Settings.CHECKPOINT_TABLE.value: "checkpoints",
    Settings.DLQ_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq.fifo",
    Settings.CHECKPOINT_BUCKET.value: "my-stack-checkpoints-1a2b3c",
}
THRESHOLD = 16 * 1024


def test_the_threshold_is_read_when_set_and_left_to_the_saver_when_not() -> None:
    assert HostSettings.from_env("router", BASE).checkpoint_offload_bytes is None
    chosen = {**BASE, Settings.CHECKPOINT_OFFLOAD_BYTES.value: "16384"}
    assert HostSettings.from_env("router", chosen).checkpoint_offload_bytes == THRESHOLD


@pytest.mark.parametrize("text", ["16KB", "0", "-1", "1.5", "408577", "1e6"])
def test_a_threshold_that_is_not_a_byte_count_in_range_is_refused_with_the_range(text: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        HostSettings.from_env("router", {**BASE, Settings.CHECKPOINT_OFFLOAD_BYTES.value: text})
    assert refused.value.variables == (Settings.CHECKPOINT_OFFLOAD_BYTES.value,)
    expected = (
        f"AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES must be a whole number of bytes from 1 to 408576 (the largest payload "
        f"the checkpoint table keeps); got {text!r}"
    )
    assert expected in refused.value.message


def test_a_threshold_without_the_bucket_is_refused_since_nothing_would_be_offloaded() -> None:
    without = {k: v for k, v in BASE.items() if k != Settings.CHECKPOINT_BUCKET.value}
    with pytest.raises(ConfigurationError, match="needs AGENT_WAIT_CHECKPOINT_BUCKET") as refused:
        HostSettings.from_env("router", {**without, Settings.CHECKPOINT_OFFLOAD_BYTES.value: "16384"})
    assert refused.value.variables == (Settings.CHECKPOINT_OFFLOAD_BYTES.value,)


def test_the_settings_restate_the_savers_payload_limit() -> None:
    from agent_wait.langgraph.checkpoint.saver import PAYLOAD_LIMIT

    assert host_settings.PAYLOAD_LIMIT == PAYLOAD_LIMIT


@pytest.mark.parametrize("bad", [0, 408_577, 16.0, "16384", True])
def test_the_saver_refuses_a_threshold_it_cannot_use(bad: Any) -> None:
    import boto3

    from agent_wait.langgraph.checkpoint.saver import TaskAtomicDynamoDBSaver

    expected = (
        "offload_over must be a whole number of bytes from 1 to 408576 (the largest payload the table keeps); "
        f"got {bad!r}"
    )
    with pytest.raises(ArgumentError, match=re.escape(expected)) as refused:
        TaskAtomicDynamoDBSaver("checkpoints", session=boto3.Session(region_name="us-east-1"), offload_over=bad)
    assert refused.value.argument == "offload_over"


@pytest.fixture
def bucket_with_threshold(host: HostStack, monkeypatch: pytest.MonkeyPatch, unique: str) -> tuple[HostStack, Any, str]:
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=host.endpoint)
    bucket = f"checkpoints-{unique}"
    s3.create_bucket(Bucket=bucket)
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.large_state_graphs:build_graph")
    monkeypatch.setenv(Settings.CHECKPOINT_BUCKET.value, bucket)
    monkeypatch.setenv(Settings.CHECKPOINT_OFFLOAD_BYTES.value, str(THRESHOLD))
    reset_handlers()
    return host, s3, bucket


def _lifecycle(host: HostStack, context: FakeLambdaContext, thread_id: str, order_id: str, size: int) -> None:
    body = {"thread_id": thread_id, "start_id": f"s-{thread_id}", "input": {"order_id": order_id, "size": size}}
    assert run_router(sqs_record(body, group_id=thread_id), context=context) == {"batchItemFailures": []}
    (question,) = host.ledger().questions(thread_id)
    answer = sqs_record(answer_message(thread_id, question.question_id, answer_id=f"a-{thread_id}"), group_id=thread_id)
    assert run_router(answer, context=context) == {"batchItemFailures": []}


def _objects(s3: Any, bucket: str, thread_id: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"{thread_id}/").get("Contents", [])]


def test_a_state_over_the_threshold_goes_to_the_bucket_and_one_under_it_stays_in_the_table(
    bucket_with_threshold: tuple[HostStack, Any, str],
    lambda_context: FakeLambdaContext,
    unique: str,
    outcomes: list[Any],
) -> None:
    # GIVEN the router's saver offloads over 16 KB (the library alone would keep anything under 350 KB in DynamoDB)
    host, s3, bucket = bucket_with_threshold

    # WHEN one thread adds 32 KB of notes and another 4 KB, and each is answered
    _lifecycle(host, lambda_context, f"big-{unique}", f"o-big-{unique}", 32_000)
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("applied", None)
    _lifecycle(host, lambda_context, f"small-{unique}", f"o-small-{unique}", 4_000)
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("applied", None)

    # THEN the 32 KB step's writes and the checkpoints after it are S3 objects, and the thread resumed with them whole
    big = _objects(s3, bucket, f"big-{unique}")
    assert any("/writes/" in key for key in big), big
    assert any("/writes/" not in key for key in big), big
    assert notes.RECALLED[f"o-big-{unique}"] == 32_000
    # AND nothing of the 4 KB thread left the table
    assert _objects(s3, bucket, f"small-{unique}") == []
    assert notes.RECALLED[f"o-small-{unique}"] == 4_000
