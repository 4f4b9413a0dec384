"""SqsAnnounce over real HTTP against moto: the contract, FIFO grouping and dedup, standard queues."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy, publish
from agent_wait.aws import SqsAnnounce
from agent_wait.testing import announce_contract
from agent_wait.testing.announce_contract import AnnounceHarness, sample_envelope

RULES = announce_contract.REQUIRED + announce_contract.OPTIONAL


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_sqs_announce_conforms_on_a_standard_queue(rule: Any, sqs_harness: Callable[..., AnnounceHarness]) -> None:
    rule(lambda delivers=None: sqs_harness(delivers))


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_sqs_announce_conforms_on_a_fifo_queue(rule: Any, sqs_harness: Callable[..., AnnounceHarness]) -> None:
    rule(lambda delivers=None: sqs_harness(delivers, fifo=True))


def test_fifo_republish_is_one_message_grouped_by_thread(sqs_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a FIFO queue
    harness = sqs_harness(fifo=True)
    envelope = sample_envelope()

    # WHEN the question is published and then republished (fresh event_id, same dedupe_key)
    assert publish(envelope, harness.announcer).ok
    assert publish(envelope.republished(), harness.announcer).ok

    # THEN the queue swallowed the republish: one message, group = thread id, dedup id = dedupe_key
    [message] = harness.extra["queue"].drain()
    assert json.loads(message["Body"])["event_id"] == envelope.event_id
    assert message["Attributes"]["MessageGroupId"] == envelope.thread_id
    assert message["Attributes"]["MessageDeduplicationId"] == envelope.dedupe_key


def test_fifo_group_id_can_be_overridden(sqs_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a FIFO queue grouped by tenant instead of thread
    harness = sqs_harness(fifo=True, group_id=lambda envelope: envelope.tags["tenant"])
    envelope = sample_envelope(policy=WaitPolicy(tags={"tenant": "acme"}))

    # WHEN a question is published
    assert publish(envelope, harness.announcer).ok

    # THEN its message group is the tenant
    [message] = harness.extra["queue"].drain()
    assert message["Attributes"]["MessageGroupId"] == "acme"


def test_group_id_returning_nothing_is_a_failed_delivery_not_an_exception(
    sqs_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN a group_id function that returns an empty string
    harness = sqs_harness(fifo=True, group_id=lambda envelope: "")

    # WHEN a question is published
    report = publish(sample_envelope(), harness.announcer)

    # THEN the delivery failed and says why
    assert not report.ok
    assert "group_id must return a non-empty string" in (report.failed[0].error or "")


def test_standard_queue_gets_no_group_or_deduplication_id(
    sqs_harness: Callable[..., AnnounceHarness], record_calls: Any
) -> None:
    # GIVEN a standard queue (moto would accept either id; AWS refuses a dedup id here)
    harness = sqs_harness()
    calls = record_calls(harness.extra["client"], "SendMessage")

    # WHEN a question is published
    assert publish(sample_envelope(), harness.announcer).ok

    # THEN neither FIFO parameter is sent
    [call] = calls
    assert "MessageGroupId" not in call
    assert "MessageDeduplicationId" not in call


def test_group_id_on_a_standard_queue_is_refused_at_construction() -> None:
    # GIVEN / WHEN / THEN: contradictory options fail where they are written
    with pytest.raises(ValueError, match=r"group_id applies only to FIFO queues \(URL ending \.fifo\)"):
        SqsAnnounce(
            "https://sqs.us-east-1.amazonaws.com/123456789012/questions",
            group_id=lambda envelope: "x",
            client=object(),
        )


def test_message_attributes_carry_transition_and_thread(sqs_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a standard queue
    harness = sqs_harness()
    envelope = sample_envelope()

    # WHEN the question is announced as resumed
    assert publish(envelope.for_transition("resumed"), harness.announcer).ok

    # THEN the message says which transition and thread it is about without parsing the body
    [message] = harness.extra["queue"].drain()
    attributes = {name: value["StringValue"] for name, value in message["MessageAttributes"].items()}
    assert attributes == {"transition": "resumed", "thread_id": envelope.thread_id}


def test_characters_sqs_refuses_are_escaped_and_the_value_is_unchanged(
    sqs_harness: Callable[..., AnnounceHarness], record_calls: Any
) -> None:
    # GIVEN a question holding U+FFFF, which SQS refuses in a message body (moto does not check)
    harness = sqs_harness()
    calls = record_calls(harness.extra["client"], "SendMessage")
    question = {"function": "f", "args": {"note": "end\uffff", "name": "Zoë"}}
    envelope = WaitEnvelope.create(Question("thread-1", "q-escape", question))

    # WHEN it is published
    assert publish(envelope, harness.announcer).ok

    # THEN the body spells it as a JSON escape, and parses back to the same question
    body = calls[0]["MessageBody"]
    assert "\uffff" not in body
    assert "\\uffff" in body
    assert json.loads(body)["question"] == question
    assert harness.read_back()[0]["question"] == question
