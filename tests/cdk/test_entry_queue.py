"""The entry FIFO queue and its FIFO dead-letter queue."""

from __future__ import annotations

import re

import pytest
from aws_cdk import Duration, Stack
from aws_cdk.assertions import Match, Template
from tests.cdk.conftest import Synth, inline_code, new_app

from agent_wait_cdk import AgentWait, AgentWaitPropsError, EntryQueue, EntryQueueProps, RouterProps


def entry_and_dlq(synth: Synth) -> tuple[tuple[str, dict], tuple[str, dict]]:
    queues = synth.resources("AWS::SQS::Queue")
    (entry_id,) = [k for k, v in queues.items() if "RedrivePolicy" in v["Properties"] and "AgentWait" in k]
    dlq_id = queues[entry_id]["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    return (entry_id, queues[entry_id]), (dlq_id, queues[dlq_id])


def test_entry_queue_is_fifo_with_content_based_deduplication(refund: Synth) -> None:
    (_, entry), (_, dlq) = entry_and_dlq(refund)
    assert entry["Properties"]["FifoQueue"] is True
    assert entry["Properties"]["ContentBasedDeduplication"] is True
    assert dlq["Properties"]["FifoQueue"] is True


def test_both_queues_run_in_high_throughput_fifo_mode(refund: Synth, features: Synth) -> None:
    """Deduplication within the message group (one thread), throughput quota per group, not per queue."""
    for synth in (refund, features):
        for _, queue in entry_and_dlq(synth):
            assert queue["Properties"]["DeduplicationScope"] == "messageGroup"
            assert queue["Properties"]["FifoThroughputLimit"] == "perMessageGroupId"


def test_a_standalone_entry_queue_is_high_throughput_too(quiet: Synth) -> None:
    stack = Stack(new_app(), "S")
    EntryQueue(stack, "Entry", queue_name="entry.fifo")
    template = Template.from_stack(stack)
    template.resource_properties_count_is(
        "AWS::SQS::Queue",
        {"FifoQueue": True, "DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"},
        2,
    )


def test_redrive_moves_a_message_after_five_receives(refund: Synth) -> None:
    (_, entry), (dlq_id, _) = entry_and_dlq(refund)
    assert entry["Properties"]["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]},
        "maxReceiveCount": 5,
    }


def test_queues_use_sqs_managed_encryption_by_default(refund: Synth) -> None:
    for _, queue in entry_and_dlq(refund):
        assert queue["Properties"]["SqsManagedSseEnabled"] is True
        assert "KmsMasterKeyId" not in queue["Properties"]


def test_queues_use_the_customer_key_when_given(features: Synth) -> None:
    for _, queue in entry_and_dlq(features):
        assert queue["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": ["Key961B73FD", "Arn"]}


def test_both_queues_refuse_plain_http(refund: Synth) -> None:
    for queue_id, _ in entry_and_dlq(refund):
        refund.template.has_resource_properties(
            "AWS::SQS::QueuePolicy",
            {
                "Queues": [{"Ref": queue_id}],
                "PolicyDocument": {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Action": "sqs:*",
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            )
                        ]
                    )
                },
            },
        )


def test_visibility_timeout_is_six_times_the_router_timeout(refund: Synth, features: Synth) -> None:
    (_, entry), _ = entry_and_dlq(refund)
    assert entry["Properties"]["VisibilityTimeout"] == 360  # router.timeout 1 minute
    (_, entry), _ = entry_and_dlq(features)
    assert entry["Properties"]["VisibilityTimeout"] == 720  # router.timeout 2 minutes


def test_retention_defaults_and_prop(refund: Synth, features: Synth) -> None:
    (_, entry), (_, dlq) = entry_and_dlq(refund)
    assert entry["Properties"]["MessageRetentionPeriod"] == 4 * 86400
    assert dlq["Properties"]["MessageRetentionPeriod"] == 14 * 86400
    (_, entry), _ = entry_and_dlq(features)
    assert entry["Properties"]["MessageRetentionPeriod"] == 7 * 86400


def test_queues_are_retained_by_default(quiet: Synth) -> None:
    stack = Stack(new_app(), "S")
    EntryQueue(stack, "Entry")
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::SQS::Queue", 2)
    for queue in template.find_resources("AWS::SQS::Queue").values():
        assert queue["DeletionPolicy"] == "Retain"


def test_a_visibility_timeout_under_six_router_timeouts_is_refused() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(
        AgentWaitPropsError,
        match=re.escape(
            "queue.visibility_timeout must be at least 720 seconds (six times router.timeout, so a retried "
            "batch is not seen twice while the first attempt runs); got 300 seconds"
        ),
    ):
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            router=RouterProps(timeout=Duration.minutes(2)),
            queue=EntryQueueProps(visibility_timeout=Duration.minutes(5)),
        )


def test_entry_queue_props_are_checked_together() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as info:
        EntryQueue(
            stack,
            "Entry",
            visibility_timeout=Duration.hours(13),
            retention_period=Duration.days(15),
            max_receive_count=0,
            queue_name="entry",
        )
    assert info.value.problems == (
        "visibility_timeout must be between 0 and 43200 seconds; got 46800 seconds",
        "retention_period must be between 60 and 1209600 seconds; got 1296000 seconds",
        "max_receive_count must be between 1 and 1000 receives; got 0 receives",
        "queue_name must end in '.fifo' (the entry queue is FIFO); got 'entry'",
    )
