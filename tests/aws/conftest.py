"""Fixtures for the AWS announcers: real resources on the embedded moto server, and harnesses over them.

Each `*_harness` fixture is a factory that creates fresh resources (unique names: the server lives for
the session) and returns an `AnnounceHarness` the conformance suite can drive.
"""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from agent_wait.aws import DynamoDbAnnounce, EventBridgeAnnounce, SnsAnnounce, SqsAnnounce
from agent_wait.aws.dynamodb import envelope_from_row
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.schema import QUESTION_TABLE, question_key, thread_key
from agent_wait.testing.announce_contract import AnnounceHarness

Delivers = Iterable[Transition | str] | None


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass
class Queue:
    """An SQS queue on the moto server and everything received from it so far (received = deleted)."""

    client: Any
    url: str
    arn: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    def drain(self) -> list[dict[str, Any]]:
        """Receive until the queue is empty, deleting as we go; returns every message received so far."""
        while True:
            batch = self.client.receive_message(
                QueueUrl=self.url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=0,
                MessageAttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
            ).get("Messages", [])
            if not batch:
                return self.messages
            for message in batch:
                self.client.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])
            self.messages.extend(batch)

    def bodies(self) -> list[Any]:
        """Every body received so far, parsed as JSON."""
        return [json.loads(message["Body"]) for message in self.drain()]


@pytest.fixture
def sqs_client(aws_client: Callable[[str], Any]) -> Any:
    return aws_client("sqs")


@pytest.fixture
def make_queue(sqs_client: Any) -> Callable[..., Queue]:
    """`make_queue("finance", fifo=True)`: a fresh queue with a unique name."""

    def make(prefix: str = "q", *, fifo: bool = False) -> Queue:
        name = _name(prefix) + (".fifo" if fifo else "")
        attributes = {"FifoQueue": "true"} if fifo else {}
        url = sqs_client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = sqs_client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return Queue(sqs_client, url, arn)

    return make


@pytest.fixture
def record_calls() -> Callable[[Any, str], list[dict[str, Any]]]:
    """`record_calls(client, "Publish")`: a list that receives a copy of the parameters of every such call.

    The call still goes over HTTP to moto; this shows what boto3 was asked to send, which matters where
    moto accepts what AWS refuses (attribute names, FIFO id lengths, characters in a body).
    """

    def record(client: Any, operation: str) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        service = client.meta.service_model.service_id.hyphenize()

        def keep(params: dict[str, Any], **_: Any) -> None:
            calls.append(copy.deepcopy(params))

        client.meta.events.register(f"provide-client-params.{service}.{operation}", keep)
        return calls

    return record


@pytest.fixture
def sns_harness(aws_client: Callable[[str], Any], make_queue: Callable[..., Queue]) -> Callable[..., AnnounceHarness]:
    """A topic with one raw-delivery queue subscribed; `read_back` reads the queue."""
    sns = aws_client("sns")

    def make(delivers: Delivers = None, *, fifo: bool = False) -> AnnounceHarness:
        name = _name("questions") + (".fifo" if fifo else "")
        arn = sns.create_topic(Name=name, Attributes={"FifoTopic": "true"} if fifo else {})["TopicArn"]
        queue = make_queue("sns", fifo=fifo)
        sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue.arn, Attributes={"RawMessageDelivery": "true"})
        return AnnounceHarness(
            SnsAnnounce(arn, client=sns, delivers=delivers),
            read_back=queue.bodies,
            break_backend=lambda: sns.delete_topic(TopicArn=arn),
            keeps_one_per_key=fifo,
            extra={"queue": queue, "client": sns, "topic_arn": arn},
        )

    return make


@pytest.fixture
def sqs_harness(sqs_client: Any, make_queue: Callable[..., Queue]) -> Callable[..., AnnounceHarness]:
    """A fresh queue; `read_back` reads it."""

    def make(delivers: Delivers = None, *, fifo: bool = False, **options: Any) -> AnnounceHarness:
        queue = make_queue("announce", fifo=fifo)
        return AnnounceHarness(
            SqsAnnounce(queue.url, client=sqs_client, delivers=delivers, **options),
            read_back=queue.bodies,
            break_backend=lambda: sqs_client.delete_queue(QueueUrl=queue.url),
            keeps_one_per_key=fifo,
            extra={"queue": queue, "client": sqs_client},
        )

    return make


EVERY_AGENT_WAIT_EVENT = {"source": ["agent-wait"]}


@pytest.fixture
def eventbridge_harness(
    aws_client: Callable[[str], Any], make_queue: Callable[..., Queue]
) -> Callable[..., AnnounceHarness]:
    """A bus with a rule sending every agent-wait event to a queue; `read_back` returns each event's detail."""
    events = aws_client("events")

    def make(delivers: Delivers = None, *, pattern: Mapping[str, Any] = EVERY_AGENT_WAIT_EVENT) -> AnnounceHarness:
        bus, rule = _name("bus"), _name("rule")
        events.create_event_bus(Name=bus)
        queue = make_queue("events")
        events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=rule, EventBusName=bus, Targets=[{"Id": "questions", "Arn": queue.arn}])

        def break_backend() -> None:
            events.remove_targets(Rule=rule, EventBusName=bus, Ids=["questions"])
            events.delete_rule(Name=rule, EventBusName=bus)
            events.delete_event_bus(Name=bus)

        return AnnounceHarness(
            EventBridgeAnnounce(bus, client=events, delivers=delivers),
            read_back=lambda: [event["detail"] for event in queue.bodies()],
            break_backend=break_backend,
            extra={"queue": queue, "client": events, "bus": bus},
        )

    return make


@dataclass
class QuestionTable:
    """A table with exactly the shape of `agent_wait.contract.schema.QUESTION_TABLE`."""

    name: str
    client: Any
    table: Any
    """The boto3 `Table` resource."""


@pytest.fixture
def make_question_table(aws_client: Callable[[str], Any], moto_server: str) -> Callable[[], QuestionTable]:
    import boto3

    client = aws_client("dynamodb")
    resource = boto3.resource("dynamodb", region_name="us-east-1", endpoint_url=moto_server)

    def make() -> QuestionTable:
        name = _name("questions")
        client.create_table(**QUESTION_TABLE.create_table_request(name))
        client.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": QUESTION_TABLE.ttl_attribute},
        )
        return QuestionTable(name, client, resource.Table(name))

    return make


@pytest.fixture
def dynamodb_harness(make_question_table: Callable[[], QuestionTable]) -> Callable[..., AnnounceHarness]:
    """A fresh question table; `read_back` scans it; the harness claims the ledger-row capabilities."""
    counter = itertools.count()

    def make(delivers: Delivers = None, *, via: str = "table", **options: Any) -> AnnounceHarness:
        questions = make_question_table()
        if via == "table":
            announcer = DynamoDbAnnounce(questions.name, table=questions.table, delivers=delivers, **options)
        else:
            announcer = DynamoDbAnnounce(questions.name, client=questions.client, delivers=delivers, **options)

        def read_back() -> list[dict[str, Any]]:
            return [envelope_from_row(row) for row in questions.table.scan(ConsistentRead=True)["Items"]]

        def host_write(envelope: WaitEnvelope, fields: Mapping[str, Any]) -> None:
            names = {f"#f{n}": name for n, name in zip(counter, fields, strict=False)}
            questions.table.update_item(
                Key={
                    QUESTION_TABLE.partition_key: thread_key(envelope.thread_id),
                    QUESTION_TABLE.sort_key: question_key(envelope.question_id),
                },
                UpdateExpression="SET " + ", ".join(f"{alias} = :{alias[1:]}" for alias in names),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={f":{alias[1:]}": fields[name] for alias, name in names.items()},
            )

        return AnnounceHarness(
            announcer,
            read_back=read_back,
            break_backend=lambda: questions.client.delete_table(TableName=questions.name),
            keeps_one_per_key=True,
            read_item=lambda envelope: announcer.get_row(envelope.thread_id, envelope.question_id),
            host_write=host_write,
            extra={"table": questions},
        )

    return make
