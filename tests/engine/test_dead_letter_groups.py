"""The FIFO groups of dead letters with no thread: one per message, never one shared group.

On a high-throughput FIFO dead-letter queue (how `EntryQueue` creates it) the throughput quota applies per
message group, and SQS hands out no more of a group's messages while some are in flight: one shared group
for every malformed message would cap them at one group's rate and let `agent-wait dead-letters list` and
`redrive` see only the first ten.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from tests.support.aws_stack import FakeLambdaContext, HostStack, run_router, sqs_record

from agent_wait.cli._dead_letters import list_dead_letters, redrive
from agent_wait.cli._target import Target
from agent_wait.engine import SqsDeadLetter
from agent_wait.engine.dead_letter import MALFORMED_GROUP_PREFIX, REASON_ATTRIBUTE, malformed_group_id

MALFORMED = 12
"""More than SQS hands out of one group at a time (ten)."""


def _target(host: HostStack) -> Target:
    return Target(queue_url=host.queue_url, table=host.table, endpoint_url=host.endpoint, dead_letter_url=host.dlq_url)


def _high_throughput_queue(host: HostStack, name: str) -> str:
    attributes = {
        "FifoQueue": "true",
        "ContentBasedDeduplication": "true",
        "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId",
    }
    return host.sqs.create_queue(QueueName=f"{name}.fifo", Attributes=attributes)["QueueUrl"]


# Dead-letter metrics carry a reason dimension, so they flush on their own; Powertools then warns that the
# batch's own metric set is empty.
@pytest.mark.filterwarnings("ignore:No application metrics to publish")
def test_every_malformed_dead_letter_can_be_listed_and_redriven_in_one_run(
    host: HostStack, lambda_context: FakeLambdaContext
) -> None:
    # GIVEN more unreadable bodies than SQS hands out of one group at a time, dead-lettered by the router
    records = [sqs_record(f"not JSON {i}", group_id=f"g-{i}") for i in range(MALFORMED)]
    for batch in (records[:10], records[10:]):
        assert run_router(*batch, context=lambda_context) == {"batchItemFailures": []}

    # WHEN the operator lists them
    listed = list_dead_letters(_target(host))

    # THEN every one is listed, each in a group of its own derived from its message id
    assert sorted(m.body for m in listed) == sorted(r["body"] for r in records)
    assert {m.reason for m in listed} == {"not_json"}
    assert sorted(m.group_id or "" for m in listed) == sorted(
        malformed_group_id(r["body"], r["messageId"]) for r in records
    )
    assert all((m.group_id or "").startswith(MALFORMED_GROUP_PREFIX) for m in listed)
    # AND one redrive moves every one back to the entry queue, each under its own group
    moved, kept = redrive(_target(host))
    assert (len(moved), kept) == (MALFORMED, [])
    back = host.entry_messages()
    assert sorted(m["Body"] for m in back) == sorted(r["body"] for r in records)
    assert len({m["Attributes"]["MessageGroupId"] for m in back}) == MALFORMED
    assert host.dead_letters() == []


def test_a_malformed_message_dead_lettered_twice_is_kept_once_on_a_high_throughput_queue(
    host: HostStack, unique: str
) -> None:
    # GIVEN a high-throughput FIFO dead-letter queue (deduplication holds only within a message group)
    dead_letter = SqsDeadLetter(_high_throughput_queue(host, f"dlq-ht-{unique}"), client=host.sqs)

    # WHEN one unreadable message is dead-lettered on two receives (a redelivery), and two others once each:
    # one with an id, one without (its body is its identity)
    for _ in range(2):
        dead_letter.send("not JSON", reason="not_json", detail="d", message_id=f"m-{unique}")
    dead_letter.send("not JSON either", reason="not_json", detail="d", message_id=f"n-{unique}")
    dead_letter.send("{]", reason="not_json", detail="d", message_id=None)
    dead_letter.send("{]", reason="not_json", detail="d", message_id=None)

    # THEN the redelivered ones are kept once each, every message in a group of its own
    held = _drain_all(host, dead_letter.queue_url)
    assert sorted(m["Body"] for m in held) == ["not JSON", "not JSON either", "{]"]
    assert {m["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] for m in held} == {"not_json"}
    by_body = {m["Body"]: m["Attributes"]["MessageGroupId"] for m in held}
    assert by_body["not JSON"] == MALFORMED_GROUP_PREFIX + hashlib.sha256(f"m-{unique}".encode()).hexdigest()
    assert (
        by_body["{]"] == MALFORMED_GROUP_PREFIX + hashlib.sha256(hashlib.sha256(b"{]").hexdigest().encode()).hexdigest()
    )
    assert len(set(by_body.values())) == 3
    assert all(len(group) <= 128 for group in by_body.values())  # SQS's limit on a group id


def test_a_dead_letter_with_a_thread_stays_in_its_threads_group(host: HostStack, unique: str) -> None:
    # GIVEN a message whose thread is known (a redrive must keep that thread's order)
    dead_letter = SqsDeadLetter(host.dlq_url, client=host.sqs)

    # WHEN it is dead-lettered
    dead_letter.send('{"thread_id": "t"}', reason="bad_input", detail="d", message_id="m-1", thread_id=f"t-{unique}")

    # THEN its group is the thread's, not a malformed one
    [held] = host.dead_letters()
    assert held["Attributes"]["MessageGroupId"] == f"t-{unique}"


def _drain_all(host: HostStack, queue_url: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while batch := host.sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    ).get("Messages", []):
        found.extend(batch)
        for message in batch:
            host.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return found
