"""Checkpoint retention (`AGENT_WAIT_CHECKPOINT_RETENTION`): every item the router's saver writes gets the checkpoint
table's TTL that far ahead and every offloaded object the tag the bucket's lifecycle rule expires; a head past its TTL
reads as gone; and the checkpoint a thread waits on is held (no TTL, no tag) while its question may be answered after
that, then let go when the thread moves past it.

The router handler runs on the moto stack with real-shaped SQS FIFO events, under a clock the test moves
(`clock_scope`), with every payload offloaded (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES=1`) so each piece has an object.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.retention_graphs as graphs
from tests.support.aws_stack import HostStack, answer_message, reset_handlers, run_router, sqs_record, start_message

from agent_wait.common.times import clock_scope
from agent_wait.contract.schema import Settings
from agent_wait.langgraph.checkpoint import retention

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
RETENTION = timedelta(days=30)
TAG = {"Key": "ttl-days", "Value": "31"}


@pytest.fixture
def kept(host: HostStack, monkeypatch: pytest.MonkeyPatch, unique: str) -> _Store:
    """The router with a bucket, every payload offloaded, a 30-day retention and the open-ended refund graph."""
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=host.endpoint)
    bucket = f"checkpoints-{unique}"
    s3.create_bucket(Bucket=bucket)
    for name, value in {
        Settings.GRAPH: "tests.agents.retention_graphs:build_graph",
        Settings.CHECKPOINT_BUCKET: bucket,
        Settings.CHECKPOINT_OFFLOAD_BYTES: "1",
        Settings.CHECKPOINT_RETENTION: "P30D",
    }.items():
        monkeypatch.setenv(name.value, value)
    reset_handlers()
    return _Store(host, s3, bucket)


class _Store:
    """What the checkpoint table and the bucket hold of a thread."""

    def __init__(self, host: HostStack, s3: Any, bucket: str) -> None:
        self.host, self.s3, self.bucket = host, s3, bucket

    def items(self, thread: str) -> list[dict[str, Any]]:
        found = self.host.dynamodb.scan(TableName=self.host.checkpoint_table)["Items"]
        return [i for i in found if f"_{thread}#" in i["PK"]["S"] or i["PK"]["S"] == f"CHECKPOINT_{thread}"]

    def objects(self, thread: str) -> dict[str, list[dict[str, str]]]:
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=f"{thread}/").get("Contents", [])
        return {o["Key"]: self.s3.get_object_tagging(Bucket=self.bucket, Key=o["Key"])["TagSet"] for o in listed}

    def latest(self, thread: str) -> tuple[list[dict[str, Any]], set[str]]:
        """The latest root checkpoint's head, payload and writes items, and its objects' keys."""
        items = self.items(thread)
        head = max((i for i in items if i["PK"]["S"] == f"CHECKPOINT_{thread}"), key=lambda i: i["SK"]["S"])
        checkpoint = head["id"]["S"]
        mine = [i for i in items if i is head or checkpoint in i["PK"]["S"]]
        return mine, {i["ref_key"]["S"] for i in mine if i.get("ref_loc", {}).get("S") == "S3"}


def _deliver(message: dict[str, Any], thread: str, at: datetime, lambda_context: Any) -> None:
    with clock_scope(lambda: at):
        response = run_router(sqs_record(message, group_id=thread, sent_at=at), context=lambda_context)
    assert response == {"batchItemFailures": []}


def _ttl(item: dict[str, Any]) -> int | None:
    return int(item["ttl"]["N"]) if "ttl" in item else None


def test_every_item_and_object_of_a_finished_thread_expires_the_retention_after_it_was_written(
    kept: _Store, unique: str, lambda_context: Any
) -> None:
    # GIVEN the router keeping checkpoints 30 days
    thread = f"order-{unique}"
    # WHEN a thread runs to its end at T0 (under the limit: nothing to ask)
    _deliver(start_message(thread, f"o-{unique}", amount=100), thread, T0, lambda_context)
    # THEN every item it wrote expires 30 days after T0, and every object carries the tag the bucket expires
    items = kept.items(thread)
    assert items
    assert {_ttl(i) for i in items} == {int((T0 + RETENTION).timestamp())}
    objects = kept.objects(thread)
    assert objects
    assert all(tags == [TAG] for tags in objects.values())
    assert graphs.FINISHED[f"o-{unique}"] == 1


def test_a_checkpoint_past_its_retention_and_partly_deleted_reads_as_none_never_as_an_older_one(
    kept: _Store, unique: str, lambda_context: Any
) -> None:
    import boto3

    from agent_wait.host import checkpoint_saver

    # GIVEN a thread that finished at T0, kept 30 days
    thread = f"order-{unique}"
    _deliver(start_message(thread, f"o-{unique}", amount=100), thread, T0, lambda_context)
    saver = checkpoint_saver(kept.host.checkpoint_table, boto3.Session(region_name="us-east-1"), bucket=kept.bucket)
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    past = T0 + RETENTION + timedelta(seconds=1)
    # WHEN it is read past its retention before anything was deleted: it is whole, and read as it is
    with clock_scope(lambda: past):
        whole = saver.get_tuple(config)
    assert whole is not None
    assert whole.checkpoint["channel_values"]["done"] is True
    # WHEN S3 has expired the latest checkpoint's object before DynamoDB deleted its head
    _, objects = kept.latest(thread)
    for key in objects:
        kept.s3.delete_object(Bucket=kept.bucket, Key=key)
    with clock_scope(lambda: past):
        after = saver.get_tuple(config)
    with clock_scope(lambda: T0 + timedelta(days=1)):
        within = saver.get_tuple(config)
    # THEN past its retention the thread has no checkpoint (it would start afresh), though older ones are still there;
    # within it, a missing payload is a write that never landed, and the one before is read, as the library does
    assert after is None
    assert within is not None
    assert within.checkpoint["id"] != whole.checkpoint["id"]


def test_a_thread_waiting_on_a_question_without_a_deadline_keeps_its_checkpoint_until_it_moves_on(
    kept: _Store, unique: str, lambda_context: Any
) -> None:
    # GIVEN a thread that asks finance with no deadline at T0
    thread, order = f"order-{unique}", f"o-{unique}"
    _deliver(start_message(thread, order), thread, T0, lambda_context)
    (question,) = kept.host.ledger().questions(thread)
    # THEN the checkpoint it waits on is held: its items carry no TTL and its objects no tag
    waited, objects = kept.latest(thread)
    assert waited
    assert [_ttl(i) for i in waited] == [None] * len(waited)
    assert objects
    tags = kept.objects(thread)
    assert all(tags[key] == [] for key in objects)
    # and what it moved past already still expires 30 days after T0
    older = [i for i in kept.items(thread) if i not in waited]
    assert older
    assert {_ttl(i) for i in older} == {int((T0 + RETENTION).timestamp())}

    # WHEN finance answers 100 days later, past the retention
    answered = T0 + timedelta(days=100)
    _deliver(answer_message(thread, question.question_id), thread, answered, lambda_context)
    # THEN the agent went on from where it waited (no second run of `prepare`) and finished
    assert (graphs.PREPARED[order], graphs.FINISHED[order]) == (1, 1)
    # and the checkpoint it moved past is let go: its items expire 30 days after the answer, its objects are tagged
    for item in kept.items(thread):
        if item in older:
            continue
        assert _ttl(item) == int((answered + RETENTION).timestamp()), item["PK"]["S"]
    assert all(tags == [TAG] for tags in kept.objects(thread).values())


def test_a_deadline_further_out_than_the_retention_holds_the_checkpoint(
    kept: _Store, monkeypatch: pytest.MonkeyPatch, unique: str, lambda_context: Any
) -> None:
    # GIVEN a graph whose question has a 60-day deadline, twice the retention
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.retention_graphs:build_long_wait_graph")
    reset_handlers()
    thread = f"order-{unique}"
    # WHEN the thread asks at T0
    _deliver(start_message(thread, f"o-{unique}"), thread, T0, lambda_context)
    # THEN the checkpoint it waits on carries no TTL: the question may be answered (or expire) after 30 days
    waited, _ = kept.latest(thread)
    assert [_ttl(i) for i in waited] == [None] * len(waited)


def test_a_deadline_within_the_retention_writes_nothing_more(
    kept: _Store, monkeypatch: pytest.MonkeyPatch, unique: str, lambda_context: Any
) -> None:
    # GIVEN the refund graph, whose question has a 3-day deadline (3 days and the 14-day grace: within 30 days)
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_graph")
    reset_handlers()
    kept_calls: list[str] = []
    for name in ("hold", "let_go"):
        original = getattr(retention.Keeper, name)
        monkeypatch.setattr(
            retention.Keeper,
            name,
            lambda self, pieces, *args, _name=name, _original=original: (
                kept_calls.extend([_name] * len(pieces)),
                _original(self, pieces, *args),
            )[1],
        )
    thread = f"order-{unique}"
    # WHEN finance is asked at T0 and answers a day later
    _deliver(start_message(thread, f"o-{unique}"), thread, T0, lambda_context)
    (question,) = kept.host.ledger().questions(thread)
    _deliver(answer_message(thread, question.question_id), thread, T0 + timedelta(days=1), lambda_context)
    # THEN nothing was held or let go, and every item expires 30 days after it was written
    assert kept_calls == []
    allowed = {int((T0 + RETENTION).timestamp()), int((T0 + timedelta(days=1) + RETENTION).timestamp())}
    assert {_ttl(i) for i in kept.items(thread)} <= allowed


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"retention": timedelta(hours=36)}, "retention must be a timedelta of whole days"),
        ({"retention": 30}, "retention must be a timedelta of whole days"),
        ({"retention": timedelta(days=30), "ttl_seconds": 86_400}, "pass retention or the library's ttl_seconds"),
    ],
)
def test_the_saver_refuses_a_retention_it_cannot_keep(given: dict[str, Any], says: str) -> None:
    import boto3

    from agent_wait.errors import ArgumentError
    from agent_wait.langgraph.checkpoint.saver import TaskAtomicDynamoDBSaver

    with pytest.raises(ArgumentError, match=says):
        TaskAtomicDynamoDBSaver("checkpoints", session=boto3.Session(region_name="us-east-1"), **given)


def test_a_failed_thread_keeps_the_checkpoint_its_retry_resumes_from_until_the_retry(
    kept: _Store, monkeypatch: pytest.MonkeyPatch, unique: str, lambda_context: Any
) -> None:
    import tests.agents.graphs as refund_graphs
    from tests.support.aws_stack import records_from_queue

    from agent_wait.engine import SqsEntryQueue, retry_thread

    # GIVEN the refund graph, whose review raises after finance approves (a bug after the side effect)
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_graph")
    reset_handlers()
    thread, order = f"order-{unique}", f"o-{unique}"
    monkeypatch.setattr(refund_graphs, "FAIL_AFTER_REFUND", {order})
    _deliver(start_message(thread, order), thread, T0, lambda_context)
    (question,) = kept.host.ledger().questions(thread)
    # WHEN finance approves a day later and the resume fails the thread
    _deliver(answer_message(thread, question.question_id), thread, T0 + timedelta(days=1), lambda_context)
    assert kept.host.ledger().thread_failure(thread) is not None
    # THEN the checkpoint the retry resumes from is held, however long the operator takes
    waited, objects = kept.latest(thread)
    assert [_ttl(i) for i in waited] == [None] * len(waited)
    assert all(kept.objects(thread)[key] == [] for key in objects)

    # WHEN the bug is fixed and the operator retries 100 days later
    monkeypatch.setattr(refund_graphs, "FAIL_AFTER_REFUND", set())
    retried = T0 + timedelta(days=100)
    retry_thread(kept.host.ledger(), SqsEntryQueue(kept.host.queue_url, client=kept.host.sqs), thread, retry_id="r-1")
    with clock_scope(lambda: retried):
        (record,) = records_from_queue(kept.host.entry_messages(), kept.host.queue_arn)
        assert run_router(record, context=lambda_context) == {"batchItemFailures": []}
    # THEN the run finishes from that checkpoint, and everything it held expires 30 days after the retry
    assert refund_graphs.node_runs("finish", order) == 1
    assert all(_ttl(i) is not None for i in kept.items(thread))
    assert max(_ttl(i) or 0 for i in kept.items(thread)) == int((retried + RETENTION).timestamp())
