"""The host's AWS resources on the embedded moto server, real-shaped SQS events, a Lambda context (a pytest plugin
every folder gets through tests/conftest.py).

Every table, queue and topic is shaped by `agent_wait.contract.schema`, as the CDK constructs make them.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import logging
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_wait.aws import DynamoDbLedger
from agent_wait.contract.schema import CHECKPOINT_TABLE, ENTRY_QUEUE, QUESTION_TABLE, Settings

REGION = "us-east-1"


def create_question_table(client: Any, name: str) -> None:
    client.create_table(**QUESTION_TABLE.create_table_request(name))


@pytest.fixture
def question_table(moto_server: str) -> tuple[str, Any]:
    """One question table shared by the tests of a process (rules use fresh ids); (name, client).

    Made again when it is gone: a test that runs moto in-process (`mock_aws`) resets the embedded server's state
    when it ends, and under pytest-xdist such a test may run on this worker between two users of the table.
    """
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = "questions-shared"
    try:
        client.describe_table(TableName=name)
    except client.exceptions.ResourceNotFoundException:
        create_question_table(client, name)
    return name, client


# -- real-shaped SQS FIFO events (tests/events/*.json are in the shape of AWS's own samples) --------------

EVENTS = Path(__file__).resolve().parent.parent / "events"
_sequence = itertools.count(18888226144718700000)


def load_event(name: str) -> dict[str, Any]:
    """A sample event from tests/events, as Lambda hands it to the handler."""
    return json.loads((EVENTS / name).read_text())


def sqs_record(
    body: str | dict[str, Any],
    *,
    group_id: str,
    deduplication_id: str | None = None,
    message_id: str | None = None,
    receive_count: int = 1,
    queue_arn: str = "arn:aws:sqs:us-east-1:123456789012:agent-wait-entry.fifo",
    sent_at: datetime | None = None,
    sender_id: str | None = None,
) -> dict[str, Any]:
    """One SQS FIFO record shaped like the sample, with its own body, group, ids and a fresh sequence number.

    A redelivery is the same record again (same `messageId` and deduplication id) with a higher
    `ApproximateReceiveCount` and a new receipt handle. `SentTimestamp` is `sent_at`, now by default.
    """
    text = body if isinstance(body, str) else json.dumps(body)
    record = copy.deepcopy(load_event("sqs_fifo_start.json")["Records"][0])
    message_id = message_id or str(uuid.uuid4())
    record.update(
        messageId=message_id,
        receiptHandle=f"AQEB{uuid.uuid4().hex}{uuid.uuid4().hex}==",
        body=text,
        md5OfBody=hashlib.md5(text.encode("utf-8")).hexdigest(),
        eventSourceARN=queue_arn,
        awsRegion=queue_arn.split(":")[3],
    )
    record["attributes"].update(
        SentTimestamp=str(int((sent_at or datetime.now(UTC)).timestamp() * 1000)),
        SenderId=sender_id or record["attributes"]["SenderId"],
        ApproximateReceiveCount=str(receive_count),
        SequenceNumber=str(next(_sequence)),
        MessageGroupId=group_id,
        MessageDeduplicationId=deduplication_id or hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
    return record


def sqs_event(*records: dict[str, Any]) -> dict[str, Any]:
    return {"Records": list(records)}


def run_router(*records: dict[str, Any], context: Any) -> dict[str, Any]:
    """Call the router Lambda handler with `records`, as the SQS event source does; its batch response."""
    from agent_wait.host import router

    return router.handler(sqs_event(*records), context)


@pytest.fixture
def outcomes() -> Iterator[list[Any]]:
    """Every outcome the router handler reports during the test, in order."""
    from agent_wait.host import router

    seen: list[Any] = []
    router.OUTCOME_LISTENERS.append(seen.append)
    try:
        yield seen
    finally:
        router.OUTCOME_LISTENERS.remove(seen.append)


def records_from_queue(messages: list[dict[str, Any]], queue_arn: str) -> list[dict[str, Any]]:
    """Turn messages received from a FIFO queue (AttributeNames=All) into event records, as Lambda's poller does."""
    records = []
    for message in messages:
        attributes = message.get("Attributes", {})
        record = sqs_record(
            message["Body"],
            group_id=attributes["MessageGroupId"],
            deduplication_id=attributes["MessageDeduplicationId"],
            message_id=message["MessageId"],
            receive_count=int(attributes.get("ApproximateReceiveCount", "1")),
            queue_arn=queue_arn,
        )
        record["receiptHandle"] = message["ReceiptHandle"]
        if "SequenceNumber" in attributes:
            record["attributes"]["SequenceNumber"] = attributes["SequenceNumber"]
        if "SentTimestamp" in attributes:
            record["attributes"]["SentTimestamp"] = attributes["SentTimestamp"]
        if "AWSTraceHeader" in attributes:  # the X-Ray header the sender attached (a system attribute)
            record["attributes"]["AWSTraceHeader"] = attributes["AWSTraceHeader"]
        # Message attributes (received with MessageAttributeNames=All) in the event's shape: the trace context.
        record["messageAttributes"] = {
            name: {"stringValue": value.get("StringValue"), "dataType": value["DataType"]}
            for name, value in message.get("MessageAttributes", {}).items()
        }
        records.append(record)
    return records


@dataclass
class FakeLambdaContext:
    """The attributes Powertools reads from Lambda's context object."""

    function_name: str = "agent-wait-router"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:agent-wait-router"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/agent-wait-router"
    log_stream_name: str = "2026/09/11/[$LATEST]0123456789abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


@pytest.fixture
def lambda_context() -> FakeLambdaContext:
    return FakeLambdaContext()


# -- the host's AWS resources on moto ----------------------------------------------------------------------


def create_checkpoint_table(client: Any, name: str) -> None:
    """The checkpoint table `langgraph_checkpoint_aws.DynamoDBSaver` needs: string keys PK and SK."""
    client.create_table(**CHECKPOINT_TABLE.create_table_request(name))


def _drain(sqs: Any, queue_url: str, *, delete: bool = True) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=0,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            VisibilityTimeout=0 if not delete else 30,
        ).get("Messages", [])
        if not batch:
            return messages
        messages.extend(batch)
        if not delete:
            return messages
        for message in batch:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


@dataclass
class HostStack:
    """The router's and the sweep's resources on moto, named uniquely for one test, and ways to read them."""

    endpoint: str
    table: str
    checkpoint_table: str
    queue_url: str
    queue_arn: str
    dlq_url: str
    topic_arn: str
    watch_url: str
    dynamodb: Any
    sqs: Any
    announced: list[dict[str, Any]] = field(default_factory=list)

    def ledger(self) -> DynamoDbLedger:
        return DynamoDbLedger(self.table, client=self.dynamodb)

    def announcements(self) -> list[dict[str, Any]]:
        """Every envelope the SNS topic delivered so far (through a raw SQS subscription), in order."""
        for message in _drain(self.sqs, self.watch_url):
            self.announced.append(json.loads(message["Body"]))
        return self.announced

    def types_for(self, question_id: str) -> list[str]:
        return [e["type"] for e in self.announcements() if e["question_id"] == question_id]

    def dead_letters(self) -> list[dict[str, Any]]:
        return _drain(self.sqs, self.dlq_url)

    def entry_messages(self) -> list[dict[str, Any]]:
        return _drain(self.sqs, self.queue_url)


@pytest.fixture
def host(moto_server: str, monkeypatch: pytest.MonkeyPatch, unique: str) -> Iterator[HostStack]:
    """Fresh tables, entry queue, DLQ and topic for one test; the router's environment points at them.

    `AGENT_WAIT_GRAPH` is `tests.agents.graphs:build_graph`; a test can set another and call `reset_handlers()`.
    """
    import boto3

    dynamodb = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)
    sqs = boto3.client("sqs", region_name=REGION, endpoint_url=moto_server)
    sns = boto3.client("sns", region_name=REGION, endpoint_url=moto_server)
    table, checkpoints = f"questions-{unique}", f"checkpoints-{unique}"
    create_question_table(dynamodb, table)
    create_checkpoint_table(dynamodb, checkpoints)
    fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    dlq_url = sqs.create_queue(QueueName=f"entry-dlq-{unique}.fifo", Attributes=fifo)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(ENTRY_QUEUE.max_receive_count)})
    queue_url = sqs.create_queue(QueueName=f"entry-{unique}.fifo", Attributes={**fifo, "RedrivePolicy": redrive})[
        "QueueUrl"
    ]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    topic_arn = sns.create_topic(Name=f"announce-{unique}")["TopicArn"]
    watch_url = sqs.create_queue(QueueName=f"watch-{unique}")["QueueUrl"]
    watch_arn = sqs.get_queue_attributes(QueueUrl=watch_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=watch_arn, Attributes={"RawMessageDelivery": "true"})

    environment = {
        "AWS_ENDPOINT_URL": moto_server,
        Settings.GRAPH.value: "tests.agents.graphs:build_graph",
        Settings.TABLE.value: table,
        Settings.CHECKPOINT_TABLE.value: checkpoints,
        Settings.QUEUE_URL.value: queue_url,
        Settings.DLQ_URL.value: dlq_url,
        Settings.TOPIC_ARN.value: topic_arn,
    }
    for name in Settings:
        monkeypatch.delenv(name.value, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    reset_handlers()
    try:
        yield HostStack(
            moto_server, table, checkpoints, queue_url, queue_arn, dlq_url, topic_arn, watch_url, dynamodb, sqs
        )
    finally:
        reset_handlers()


def reset_handlers() -> None:
    """Forget the handlers' cold-start state (settings, clients, the loaded graph)."""
    import agent_wait.host.router
    import agent_wait.host.sweep

    agent_wait.host.router.reset()
    agent_wait.host.sweep.reset()


# The embedded moto server logs every HTTP request at INFO; keep test output about the router.
logging.getLogger("werkzeug").setLevel(logging.WARNING)


def _serialize_moto_dynamodb_writes() -> None:
    """Make moto's conditional writes atomic, as DynamoDB's are.

    moto checks a write's condition and applies it without a lock, and its server handles requests on
    several threads, so two concurrent conditional writes to one item can both succeed (seen: two racing
    answers both won `decide`). DynamoDB serializes writes to an item; the race tests need that guarantee.
    """
    from moto.dynamodb.models import DynamoDBBackend

    if getattr(DynamoDBBackend, "_agent_wait_serialized", False):
        return
    lock = threading.RLock()
    for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
        original = getattr(DynamoDBBackend, name)

        def serialized(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            with lock:
                return _original(self, *args, **kwargs)

        setattr(DynamoDBBackend, name, functools.wraps(original)(serialized))
    DynamoDBBackend._agent_wait_serialized = True  # type: ignore[attr-defined]


_serialize_moto_dynamodb_writes()


# -- messages --------------------------------------------------------------------------------------------


def start_message(thread_id: str, order_id: str, amount: int = 900, *, start_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"thread_id": thread_id, "input": {"order_id": order_id, "amount": amount}}
    if start_id is not None:
        message["start_id"] = start_id
    return message


def answer_message(thread_id: str, question_id: str, action: str = "approve", **fields: Any) -> dict[str, Any]:
    return {"thread_id": thread_id, "question_id": question_id, "answer": {"action": action}, **fields}
