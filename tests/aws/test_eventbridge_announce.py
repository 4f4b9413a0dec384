"""EventBridgeAnnounce over real HTTP against moto: the contract, rule routing, failures inside an HTTP 200."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from agent_wait import InMemoryAnnounce, WaitPolicy, publish
from agent_wait.aws import EventBridgeAnnounce
from agent_wait.testing import announce_contract
from agent_wait.testing.announce_contract import AnnounceHarness, sample_envelope

RULES = announce_contract.REQUIRED + announce_contract.OPTIONAL


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_eventbridge_announce_conforms(rule: Any, eventbridge_harness: Callable[..., AnnounceHarness]) -> None:
    rule(lambda delivers=None: eventbridge_harness(delivers))


def test_rule_pattern_routes_finance_questions_to_its_queue(
    eventbridge_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN a rule matching new questions for the finance approvers, targeting a queue
    pattern = {
        "source": ["agent-wait"],
        "detail-type": ["wait.created"],
        "detail": {"tags": {"approver_group": ["finance"]}},
    }
    harness = eventbridge_harness(pattern=pattern)
    finance_q = sample_envelope(policy=WaitPolicy(tags={"approver_group": "finance"}))
    ops_q = sample_envelope(policy=WaitPolicy(tags={"approver_group": "ops"}))

    # WHEN a finance question, an ops question and the finance question's answer are put on the bus
    for envelope in (finance_q, ops_q, finance_q.for_transition("answered")):
        assert publish(envelope, harness.announcer).ok

    # THEN only the new finance question reached the queue, as a whole event with the envelope as detail
    [event] = harness.extra["queue"].bodies()
    assert event["source"] == "agent-wait"
    assert event["detail-type"] == "wait.created"
    assert event["detail"] == finance_q.to_dict()


def _stubbed_events() -> tuple[Any, Stubber]:
    client = boto3.client("events", region_name="us-east-1")
    return client, Stubber(client)


def test_failed_entry_inside_http_200_is_a_failed_delivery_with_its_error_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN PutEvents answering HTTP 200 with FailedEntryCount=1 and an entry error code
    client, stubber = _stubbed_events()
    stubber.add_response(
        "put_events",
        {
            "FailedEntryCount": 1,
            "Entries": [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again later"}],
        },
        {"Entries": ANY},
    )
    bus = EventBridgeAnnounce("approvals", client=client)
    memory = InMemoryAnnounce()

    # WHEN a question is published to the bus and to another announcer
    with stubber, caplog.at_level(logging.WARNING, logger="agent_wait.channels.announce"):
        report = publish(sample_envelope(), [bus, memory])

    # THEN the bus delivery failed, was counted and logged once with the code; the other still delivered
    assert report.delivered == ("memory",)
    [failure] = report.failed
    assert "InternalFailure: try again later" in (failure.error or "")
    assert bus.stats.failed == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "agent_wait.channels.announce"]
    assert len(lines) == 1
    assert "announcer=eventbridge" in lines[0]
    assert "FailedEntryCount=1" in lines[0]
    assert "InternalFailure" in lines[0]


def test_entry_error_code_counts_even_when_failed_entry_count_is_zero() -> None:
    # GIVEN a response whose count disagrees with its entries (trust the entries too)
    client, stubber = _stubbed_events()
    stubber.add_response(
        "put_events",
        {"FailedEntryCount": 0, "Entries": [{"ErrorCode": "ThrottlingException", "ErrorMessage": "slow down"}]},
    )
    bus = EventBridgeAnnounce("approvals", client=client)

    # WHEN a question is published
    with stubber:
        report = publish(sample_envelope(), bus)

    # THEN it is a failed delivery naming the code
    assert not report.ok
    assert "ThrottlingException: slow down" in (report.failed[0].error or "")


def test_put_events_entry_has_source_detail_type_detail_and_bus(record_calls: Any, aws_client: Any) -> None:
    # GIVEN a custom source on the default bus
    events = aws_client("events")
    calls = record_calls(events, "PutEvents")
    bus = EventBridgeAnnounce("default", source="com.example.refunds", client=events)
    envelope = sample_envelope()

    # WHEN a question is published
    assert publish(envelope, bus).ok

    # THEN the one entry carries the source, the envelope type and the envelope JSON, on that bus
    [entry] = calls[0]["Entries"]
    assert entry["Source"] == "com.example.refunds"
    assert entry["DetailType"] == "wait.created"
    assert entry["EventBusName"] == "default"
    assert json.loads(entry["Detail"]) == envelope.to_dict()


def test_source_reserved_for_aws_is_refused_at_construction() -> None:
    # GIVEN / WHEN / THEN: EventBridge reserves aws.* sources for AWS services
    with pytest.raises(ValueError, match=r"must not start with 'aws\.'"):
        EventBridgeAnnounce("approvals", source="aws.refunds", client=object())
