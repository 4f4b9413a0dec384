"""The refund lifecycle's stack for the benches: the graph the router runs, the host's resources on moto (in a
process of its own), and the counting of every AWS call and the capacity units it uses, at list prices.

Shared by `bench_lifecycle_calls.py`, `bench_router_memory.py` and the other benches: one stack, measured the same
way everywhere.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from _capacity import item_size, read_units, write_units
from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

REGION = "us-east-1"

# us-east-1 list prices (on-demand, Standard table class, x86 Lambda); free tiers ignored.
PRICE = {
    "dynamodb_wru": 0.625 / 1e6,  # per write request unit (on-demand, since the Nov 2024 price cut)
    "dynamodb_rru": 0.125 / 1e6,  # per read request unit
    "sqs_fifo_request": 0.50 / 1e6,  # per FIFO request (each 64 KB chunk of a payload is one request)
    "sns_publish": 0.50 / 1e6,  # per standard-topic publish; delivery to SQS subscribers is free
    "lambda_request": 0.20 / 1e6,
    "lambda_gb_second": 0.0000166667,
    "lambda_gb_second_arm64": 0.0000133334,  # Graviton: 20 % less per GB-s; requests cost the same
    "sfn_transition": 0.025 / 1000,  # Step Functions standard workflows
    "events_put": 1.00 / 1e6,  # EventBridge custom events, per PutEvents entry (each 64 KB chunk)
    "apigw_http_request": 1.00 / 1e6,  # API Gateway HTTP API, the first 300 million requests a month
    "ses_email": 0.10 / 1000,  # SES outbound, per email (per recipient)
    "logs_ingested_byte": 0.50 / 1024**3,  # CloudWatch Logs ingestion, Standard class, per byte ($0.50 per GB)
}
LOG_EVENT_OVERHEAD = 26
"""Bytes CloudWatch Logs adds to each event's UTF-8 message when it sizes a `PutLogEvents` batch; the benches count
each line so, as an estimate of what ingestion bills (its price is per GB ingested)."""


# -- the graph the router runs (no AWS calls of its own, so every call counted is agent-wait's) ------------


class State(TypedDict):
    order_id: str
    amount: int
    refund: NotRequired[Any]
    done: NotRequired[bool]


@wait(WaitPolicy(timeout="P3D", default={"action": "reject"}), when=lambda order_id, amount: amount > 500)
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    return {"status": "refunded", "amount": amount}


def build_graph(checkpointer: Any) -> Any:
    """START → prepare → review (asks finance over 500) → finish → END."""
    builder = StateGraph(State)
    builder.add_node("prepare", lambda state: {})
    builder.add_node("review", lambda state: {"refund": issue_refund(state["order_id"], state["amount"])})
    builder.add_node("finish", lambda state: {"done": True})
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)


# -- the stack on moto --------------------------------------------------------------------------------------


@dataclass
class Stack:
    endpoint: str
    table: str
    checkpoint_table: str
    queue_url: str
    dlq_url: str
    topic_arn: str


@contextmanager
def moto_stack(prefix: str = "bench") -> Iterator[Stack]:
    """Start moto, create the host's resources from agent_wait.contract.schema, point AGENT_WAIT_* at them."""
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    import logging

    import boto3

    from agent_wait.contract.schema import CHECKPOINT_TABLE, QUESTION_TABLE, Settings

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    # The emulator runs in a process of its own, so the router's measured time (what Lambda bills) is the
    # router's CPU and its wait for replies, not moto's own work on the same interpreter.
    with moto_server() as endpoint:
        dynamodb = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
        dynamodb.create_table(**QUESTION_TABLE.create_table_request(f"{prefix}-questions"))
        dynamodb.create_table(**CHECKPOINT_TABLE.create_table_request(f"{prefix}-checkpoints"))
        sqs = boto3.client("sqs", region_name=REGION, endpoint_url=endpoint)
        fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
        dlq_url = sqs.create_queue(QueueName=f"{prefix}-dlq.fifo", Attributes=fifo)["QueueUrl"]
        queue_url = sqs.create_queue(QueueName=f"{prefix}-entry.fifo", Attributes=fifo)["QueueUrl"]
        sns = boto3.client("sns", region_name=REGION, endpoint_url=endpoint)
        topic_arn = sns.create_topic(Name=f"{prefix}-announce")["TopicArn"]
        stack = Stack(endpoint, f"{prefix}-questions", f"{prefix}-checkpoints", queue_url, dlq_url, topic_arn)
        os.environ.update(
            {
                "AWS_ENDPOINT_URL": endpoint,
                Settings.GRAPH.value: "_refund_stack:build_graph",
                Settings.TABLE.value: stack.table,
                Settings.CHECKPOINT_TABLE.value: stack.checkpoint_table,
                Settings.QUEUE_URL.value: stack.queue_url,
                Settings.DLQ_URL.value: stack.dlq_url,
                Settings.TOPIC_ARN.value: stack.topic_arn,
            }
        )
        yield stack


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's server in its own process on a free loopback port (its endpoint), stopped when the block ends."""
    server, endpoint = _moto_process()
    try:
        yield endpoint
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:  # still serving a slow request (a 10,000-row table): the figures are in
            server.kill()
            server.wait(timeout=10)


def _moto_process() -> tuple[subprocess.Popen[bytes], str]:
    """moto's server in its own process on a free loopback port; waits until it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
            return server, endpoint
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise RuntimeError(f"moto's server did not answer on {endpoint} within 30 s")


# -- counting calls and capacity units ---------------------------------------------------------------------


@dataclass
class Call:
    service: str
    operation: str
    resource: str
    wru: float = 0.0
    rru: float = 0.0
    items: int = 0
    """Items a read returned."""
    index: str = ""
    """The index a query read, if any."""
    role: str = ""
    """Who made the call, when the counter was told (`CallCounter.role`): `router`, `api`, `sender`, ..."""


@dataclass
class CallCounter:
    """botocore hooks: one `Call` per API call, with DynamoDB capacity units estimated from item sizes.

    Writes: 1 WRU per KB of the larger of the item before and after, plus one per global secondary
    index the item is in before or after (two when the index key changes: a delete and a put). Reads as
    DynamoDB bills them (`_capacity.read_units`): item by item for `GetItem`/`BatchGetItem`, the sum for
    `Query`, halved for eventually consistent reads.
    """

    reader: Any
    indexes: tuple[tuple[str, str], ...]
    calls: list[Call] = field(default_factory=list)
    keys: dict[str, list[str]] = field(default_factory=dict)
    counting: bool = True
    """Off while the router is timed: sizing a write reads the item before and after it, which Lambda never does."""
    role: str = ""
    """Stamped on each call counted (`Call.role`); with `only_roles`, a call made with no role is not counted."""
    only_roles: bool = False

    def register(self, session: Any) -> None:
        session.events.register("before-parameter-build.*.*", self.before)
        session.events.register("after-call.*.*", self.after)

    def register_everywhere(self) -> None:
        """Count the calls of every botocore session made from now on (the handlers build their own clients), as
        the emulator's IAM check hooks them; only calls made while `role` is set are counted."""
        import botocore.handlers

        self.only_roles = True
        botocore.handlers.BUILTIN_HANDLERS.extend([("before-parameter-build", self.before), ("after-call", self.after)])

    def _off(self) -> bool:
        return not self.counting or (self.only_roles and not self.role)

    def before(self, event_name: str, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if self._off():
            return
        _, service, operation = event_name.split(".")[:3]
        context["bench_params"] = params
        if service == "dynamodb" and operation in ("PutItem", "UpdateItem", "DeleteItem"):
            context["bench_before"] = self._current(params)
        if service == "dynamodb" and operation == "TransactWriteItems":  # each item as it was, before the write
            context["bench_before"] = [self._current(_transacted(item)) for item in params["TransactItems"]]

    def after(self, event_name: str, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if self._off() or "bench_params" not in context:
            return
        _, service, operation = event_name.split(".")[:3]
        params = context.get("bench_params", {})
        batch_tables = list(params.get("RequestItems") or ())  # BatchWriteItem, BatchGetItem: one table each here
        resource = (
            params.get("TableName")
            or (batch_tables[0] if batch_tables else None)
            or (_transacted(params["TransactItems"][0])["TableName"] if params.get("TransactItems") else None)
            or params.get("QueueUrl", "").rsplit("/", 1)[-1]
            or params.get("TopicArn")
        )
        resource = resource or params.get("FromEmailAddress") or params.get("EventBusName") or ""
        call = Call(service, operation, str(resource), index=str(params.get("IndexName", "")), role=self.role)
        if service == "dynamodb":
            if operation in ("PutItem", "UpdateItem", "DeleteItem"):
                before = context.get("bench_before") or {}
                after = self._current(params) or {}
                call.wru = write_units(before, after) + self._index_writes(before, after)
            elif operation == "TransactWriteItems":  # a door's decision and its hand-over, both or neither
                # Each item's write costs twice a plain one's (DynamoDB's prepare and commit); the index writes it
                # causes are not transactional and cost as usual. A cancelled transaction is not priced here.
                for item, before in zip(params["TransactItems"], context.get("bench_before") or [], strict=False):
                    after = self._current(_transacted(item)) or {}
                    call.wru += 2 * write_units(before or {}, after) + self._index_writes(before or {}, after)
            elif operation == "BatchWriteItem":  # new items on the checkpoint table, which has no index
                puts = [r["PutRequest"]["Item"] for r in params["RequestItems"][resource] if "PutRequest" in r]
                call.wru = sum(write_units(None, item) for item in puts)
            elif operation == "BatchGetItem":
                found = parsed.get("Responses", {}).get(resource, [])
                asked = params["RequestItems"][resource]
                consistent = bool(asked.get("ConsistentRead"))
                call.rru = read_units(operation, found, consistent=consistent, asked=len(asked["Keys"]))
                call.items = len(found)
            elif operation == "GetItem":
                found = [parsed["Item"]] if parsed.get("Item") else []
                call.rru = read_units(operation, found, consistent=bool(params.get("ConsistentRead")), asked=1)
                call.items = 1 if parsed.get("Item") else 0
            elif operation == "Query":
                call.rru = read_units(operation, parsed.get("Items", []), consistent=bool(params.get("ConsistentRead")))
                call.items = len(parsed.get("Items", []))
        self.calls.append(call)

    def _current(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The item `params` (a write's, or one item of a transaction) names, as it is now."""
        counting, self.counting = self.counting, False  # the reader's own calls are the bench's, never counted
        try:
            key = params.get("Key") or {
                name: params["Item"][name] for name in self._key_names(params["TableName"]) if name in params["Item"]
            }
            return self.reader.get_item(TableName=params["TableName"], Key=key, ConsistentRead=True).get("Item")
        finally:
            self.counting = counting

    def _key_names(self, table: str) -> list[str]:
        if table not in self.keys:
            schema = self.reader.describe_table(TableName=table)["Table"]["KeySchema"]
            self.keys[table] = [k["AttributeName"] for k in schema]
        return self.keys[table]

    def _index_writes(self, before: dict[str, Any], after: dict[str, Any]) -> int:
        """Index write units as DynamoDB bills them, by each index's projection (`agent_wait.contract.schema`).

        An index is written when the item enters it or leaves it (one write), when its key changes (two: a
        delete and a put), or, with the key unchanged, when an attribute it projects changes (one; never for
        a keys-only index, whose attributes are all keys). Each write is 1 WRU per KB of the index item: the
        projected attributes, the keys, and 100 bytes of overhead. An index not in the schema projects ALL.
        """
        from agent_wait.contract.schema import QUESTION_TABLE

        shapes = {(i.partition_key, i.sort_key): i for i in QUESTION_TABLE.indexes}
        table_keys = {QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key}
        units = 0
        for partition, sort in self.indexes:
            shape = shapes.get((partition, sort))
            keep: set[str] | None = None  # None: every attribute (ALL)
            if shape is not None and (shape.keys_only or shape.include):
                keep = {partition, sort, *table_keys, *shape.include}
            old = before if keep is None else {k: v for k, v in before.items() if k in keep}
            new = after if keep is None else {k: v for k, v in after.items() if k in keep}
            old_units = math.ceil((item_size(old) + 100) / 1024)
            new_units = math.ceil((item_size(new) + 100) / 1024)
            key_before = (before.get(partition), before.get(sort)) if partition in before and sort in before else None
            key_after = (after.get(partition), after.get(sort)) if partition in after and sort in after else None
            if key_before is None and key_after is None:
                continue
            if key_before is None:
                units += new_units
            elif key_after is None:
                units += old_units
            elif key_before != key_after:
                units += old_units + new_units
            elif old != new:
                units += new_units
        return units

    def mark(self) -> int:
        return len(self.calls)


def _transacted(item: dict[str, Any]) -> dict[str, Any]:
    """The write one `TransactItems` entry holds (`Update`, `Put`, `Delete` or `ConditionCheck`): its table and key."""
    (write,) = item.values()
    return write


# -- one lifecycle, as Lambda's SQS event source drives it -------------------------------------------------


def _dedup(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def asked_question(reader: Any, stack: Stack, thread_id: str) -> str:
    """The id of the one question `thread_id` asked, read from its question row's key."""
    (question_id,) = [
        item["sk"]["S"].removeprefix("WAIT#")
        for item in reader.query(
            TableName=stack.table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :w)",
            ExpressionAttributeValues={":pk": {"S": f"THREAD#{thread_id}"}, ":w": {"S": "WAIT#"}},
        )["Items"]
    ]
    return question_id


def deliver(sqs: Any, stack: Stack, router: Any, message: dict[str, Any], group: str) -> float:
    """Sender → entry queue → event source receive → router → event source delete. Returns router seconds."""
    body = json.dumps(message)
    sqs.send_message(QueueUrl=stack.queue_url, MessageBody=body, MessageGroupId=group)
    return deliver_sent(sqs, stack, router)


def deliver_sent(sqs: Any, stack: Stack, router: Any) -> float:
    """Event source receive → router → event source delete, for the one message waiting on the entry queue (one a
    door sent, or `deliver`'s). Returns router seconds."""
    (received,) = sqs.receive_message(
        QueueUrl=stack.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=0
    )["Messages"]
    started = time.perf_counter()
    router.handle(
        received["Body"],
        message_id=received["MessageId"],
        deduplication_id=received["Attributes"].get("MessageDeduplicationId") or _dedup(received["Body"]),
    )
    elapsed = time.perf_counter() - started
    sqs.delete_message(QueueUrl=stack.queue_url, ReceiptHandle=received["ReceiptHandle"])
    return elapsed
