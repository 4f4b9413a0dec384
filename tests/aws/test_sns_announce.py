"""SnsAnnounce over real HTTP against moto: the contract, filter-policy routing, SNS's limits, FIFO dedup."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from agent_wait import WaitPolicy, publish
from agent_wait.aws import SnsAnnounce
from agent_wait.testing import announce_contract
from agent_wait.testing.announce_contract import AnnounceHarness, sample_envelope

RULES = announce_contract.REQUIRED + announce_contract.OPTIONAL


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_sns_announce_conforms_on_a_standard_topic(rule: Any, sns_harness: Callable[..., AnnounceHarness]) -> None:
    rule(lambda delivers=None: sns_harness(delivers))


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_sns_announce_conforms_on_a_fifo_topic(rule: Any, sns_harness: Callable[..., AnnounceHarness]) -> None:
    rule(lambda delivers=None: sns_harness(delivers, fifo=True))


def _subscribe(sns: Any, topic_arn: str, queue: Any, filter_policy: dict[str, Any]) -> None:
    sns.subscribe(
        TopicArn=topic_arn,
        Protocol="sqs",
        Endpoint=queue.arn,
        Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps(filter_policy)},
    )


def test_subscription_filter_policy_routes_on_a_policy_tag(
    sns_harness: Callable[..., AnnounceHarness], make_queue: Callable[..., Any]
) -> None:
    # GIVEN a topic with a finance queue (approver_group = finance) and a queue for every other group
    harness = sns_harness()
    sns, topic_arn = harness.extra["client"], harness.extra["topic_arn"]
    finance, others = make_queue("finance"), make_queue("others")
    _subscribe(sns, topic_arn, finance, {"approver_group": ["finance"]})
    _subscribe(sns, topic_arn, others, {"approver_group": [{"anything-but": ["finance"]}]})
    finance_q = sample_envelope(policy=WaitPolicy(tags={"approver_group": "finance"}))
    ops_q = sample_envelope(policy=WaitPolicy(tags={"approver_group": "ops"}))

    # WHEN one question for each group is published
    assert publish(finance_q, harness.announcer).ok
    assert publish(ops_q, harness.announcer).ok

    # THEN each queue holds exactly its own group's question
    assert [body["question_id"] for body in finance.bodies()] == [finance_q.question_id]
    assert [body["question_id"] for body in others.bodies()] == [ops_q.question_id]


def test_transition_attribute_lets_a_subscription_take_only_new_questions(
    sns_harness: Callable[..., AnnounceHarness], make_queue: Callable[..., Any]
) -> None:
    # GIVEN a subscription that filters on transition = created
    harness = sns_harness()
    created_only = make_queue("created")
    _subscribe(harness.extra["client"], harness.extra["topic_arn"], created_only, {"transition": ["created"]})
    envelope = sample_envelope()

    # WHEN the question is created, answered and resumed
    for step in ("created", "answered", "resumed"):
        assert publish(envelope.for_transition(step), harness.announcer).ok

    # THEN the subscription received only wait.created
    assert [body["type"] for body in created_only.bodies()] == ["wait.created"]


def test_message_carries_subject_transition_thread_and_tags(sns_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a topic with a raw-delivery queue
    harness = sns_harness()
    envelope = sample_envelope(policy=WaitPolicy(tags={"approver_group": "finance", "region": "eu"}))

    # WHEN the answered transition is published
    assert publish(envelope.for_transition("answered"), harness.announcer).ok

    # THEN the message attributes are transition, thread_id and every tag, and the body is the envelope
    [message] = harness.extra["queue"].drain()
    attributes = {name: value["StringValue"] for name, value in message["MessageAttributes"].items()}
    assert attributes == {
        "transition": "answered",
        "thread_id": envelope.thread_id,
        "approver_group": "finance",
        "region": "eu",
    }
    assert json.loads(message["Body"])["type"] == "wait.answered"


def test_subject_is_the_envelope_type(sns_harness: Callable[..., AnnounceHarness], record_calls: Any) -> None:
    # GIVEN a recorded SNS client
    harness = sns_harness()
    calls = record_calls(harness.extra["client"], "Publish")

    # WHEN a question is published
    assert publish(sample_envelope(), harness.announcer).ok

    # THEN Subject is wait.created
    assert [call["Subject"] for call in calls] == ["wait.created"]


def test_empty_tag_values_are_skipped_not_refused(sns_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a policy with an empty tag value (SNS refuses empty String attributes)
    harness = sns_harness()
    envelope = sample_envelope(policy=WaitPolicy(tags={"approver_group": "", "team": "refunds"}))

    # WHEN it is published
    report = publish(envelope, harness.announcer)

    # THEN it is delivered, without the empty tag
    assert report.ok, report.deliveries
    [message] = harness.extra["queue"].drain()
    assert set(message["MessageAttributes"]) == {"transition", "thread_id", "team"}


def test_tag_cannot_overwrite_a_built_in_attribute(
    sns_harness: Callable[..., AnnounceHarness], caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN tags named like the built-in attributes
    harness = sns_harness()
    envelope = sample_envelope(policy=WaitPolicy(tags={"transition": "forged", "thread_id": "someone-else"}))

    # WHEN the question is published
    with caplog.at_level(logging.WARNING, logger="agent_wait.channels.announce"):
        assert publish(envelope, harness.announcer).ok

    # THEN the built-ins keep their values and one line explains both dropped tags
    [message] = harness.extra["queue"].drain()
    attributes = {name: value["StringValue"] for name, value in message["MessageAttributes"].items()}
    assert attributes == {"transition": "created", "thread_id": envelope.thread_id}
    [line] = [r.getMessage() for r in caplog.records if r.name == "agent_wait.channels.announce.aws"]
    assert "'transition' (would replace the built-in" in line
    assert "'thread_id' (would replace the built-in" in line


def test_tags_over_sns_limits_are_dropped_with_one_explanation_not_a_failed_publish(
    sns_harness: Callable[..., AnnounceHarness], record_calls: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN names SNS refuses, then more valid tags than SNS's 10 attributes leave room for
    bad_names = ["AWS.team", "amazon.x", ".lead", "trail.", "a..b", "has space", "ü", "n" * 257]
    valid = [f"tag{n}" for n in range(10)]
    tags = dict.fromkeys(bad_names + valid, "v")
    harness = sns_harness()
    calls = record_calls(harness.extra["client"], "Publish")
    envelope = sample_envelope(policy=WaitPolicy(tags=tags))

    # WHEN the question is published
    with caplog.at_level(logging.WARNING, logger="agent_wait.channels.announce"):
        report = publish(envelope, harness.announcer)

    # THEN it is delivered with 10 attributes (two built-ins, the first 8 valid tags) ...
    assert report.ok, report.deliveries
    assert harness.announcer.stats.failed == 0
    [call] = calls
    assert list(call["MessageAttributes"]) == ["transition", "thread_id", *valid[:8]]
    assert len(harness.extra["queue"].drain()) == 1
    # ... and exactly one log line names every dropped tag with its reason
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("agent_wait.channels.announce")]
    assert len(lines) == 1, lines
    assert "left 10 policy tag(s) out" in lines[0]
    for name in [*bad_names[:7], "tag8", "tag9"]:
        assert repr(name) in lines[0], name
    assert "SNS reserves names starting with 'AWS.'" in lines[0]
    assert "SNS allows 10 message attributes" in lines[0]


def test_fifo_topic_republish_reaches_the_fifo_queue_once(sns_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a FIFO topic with a FIFO queue subscribed
    harness = sns_harness(fifo=True)
    envelope = sample_envelope()

    # WHEN the question is published and republished (fresh event_id, same dedupe_key)
    assert publish(envelope, harness.announcer).ok
    assert publish(envelope.republished(), harness.announcer).ok

    # THEN the queue holds one message, grouped by thread, deduplicated on dedupe_key
    [message] = harness.extra["queue"].drain()
    assert json.loads(message["Body"])["event_id"] == envelope.event_id
    assert message["Attributes"]["MessageGroupId"] == envelope.thread_id
    assert message["Attributes"]["MessageDeduplicationId"] == envelope.dedupe_key


def test_standard_topic_gets_no_group_or_deduplication_id(
    sns_harness: Callable[..., AnnounceHarness], record_calls: Any
) -> None:
    # GIVEN a standard topic
    harness = sns_harness()
    calls = record_calls(harness.extra["client"], "Publish")

    # WHEN a question is published
    assert publish(sample_envelope(), harness.announcer).ok

    # THEN neither FIFO parameter is sent
    [call] = calls
    assert "MessageGroupId" not in call
    assert "MessageDeduplicationId" not in call


@pytest.mark.parametrize(
    ("question_id", "thread_id"),
    [("q" * 200, "thread-1"), ("frage-zoë", "thread-1"), ("q-1", "thread with spaces")],
    ids=["too-long", "non-ascii", "space-in-thread"],
)
def test_fifo_ids_sns_would_refuse_become_their_sha256(
    question_id: str,
    thread_id: str,
    sns_harness: Callable[..., AnnounceHarness],
    record_calls: Any,
) -> None:
    # GIVEN ids that break SNS's rule for FIFO ids (1-128 ASCII letters, digits, punctuation)
    from agent_wait import Question, WaitEnvelope

    harness = sns_harness(fifo=True)
    calls = record_calls(harness.extra["client"], "Publish")
    envelope = WaitEnvelope.create(Question(thread_id, question_id, {"function": "f", "args": {}}))

    # WHEN the question is published twice
    assert publish(envelope, harness.announcer).ok
    assert publish(envelope.republished(), harness.announcer).ok

    # THEN the ids sent are stable, accepted ones: the value itself when valid, else its sha256 hex
    def expected(value: str) -> str:
        ok = 1 <= len(value) <= 128 and all(33 <= ord(c) <= 126 for c in value)
        return value if ok else hashlib.sha256(value.encode()).hexdigest()

    assert [c["MessageDeduplicationId"] for c in calls] == [expected(envelope.dedupe_key)] * 2
    assert [c["MessageGroupId"] for c in calls] == [expected(thread_id)] * 2
    assert len(harness.extra["queue"].drain()) == 1


def test_a_64_hex_question_id_is_used_as_is_in_the_deduplication_id(
    sns_harness: Callable[..., AnnounceHarness], record_calls: Any
) -> None:
    # GIVEN an async-mode question id (sha256 hex) on a FIFO topic
    from agent_wait import Question, WaitEnvelope, question_id_for

    harness = sns_harness(fifo=True)
    calls = record_calls(harness.extra["client"], "Publish")
    question_id = question_id_for("order-1", "issue_refund", {"amount": 5})
    envelope = WaitEnvelope.create(Question("order-1", question_id, {"function": "issue_refund", "args": {}}))

    # WHEN it is published
    assert publish(envelope, harness.announcer).ok

    # THEN the deduplication id is the readable dedupe_key, which fits SNS's 128 characters
    assert calls[0]["MessageDeduplicationId"] == f"wait.created:{question_id}"


def test_constructor_refuses_a_topic_name_and_a_client_with_a_region() -> None:
    # GIVEN / WHEN / THEN: a bare name is not an ARN; an injected client already has its region
    with pytest.raises(ValueError, match="must be a topic ARN"):
        SnsAnnounce("questions")
    with pytest.raises(ValueError, match="pass client= or region_name=, not both"):
        SnsAnnounce("arn:aws:sns:us-east-1:123456789012:questions", client=object(), region_name="us-east-1")
