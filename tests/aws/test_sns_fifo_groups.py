"""SnsAnnounce's FIFO message groups: one per thread, which is what makes message-group throughput scope pay.

`AgentWait(topic_fifo=True)` creates its topic in `FifoThroughputScope.MESSAGE_GROUP`, where SNS applies the
throughput quota per message group and deduplicates within a group. That buys throughput only if envelopes
are spread over many groups (one constant group would cap the topic at one group's rate), and deduplication
by `dedupe_key` keeps working only if every envelope of a question lands in the same group.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agent_wait import Question, WaitEnvelope, publish
from agent_wait.testing.announce_contract import AnnounceHarness


def _question(thread_id: str, question_id: str) -> WaitEnvelope:
    return WaitEnvelope.create(Question(thread_id, question_id, {"function": "issue_refund", "args": {}}))


def test_each_thread_publishes_in_its_own_group_and_a_thread_in_one_group(
    sns_harness: Callable[..., AnnounceHarness], record_calls: Any
) -> None:
    # GIVEN a FIFO topic, and two threads each with a question answered, resumed, then a second question
    harness = sns_harness(fifo=True)
    calls = record_calls(harness.extra["client"], "Publish")
    sent: list[WaitEnvelope] = []
    for thread_id in ("order-a", "order-b"):
        first, second = _question(thread_id, f"{thread_id}-q1"), _question(thread_id, f"{thread_id}-q2")
        sent += [first, first.for_transition("answered"), first.for_transition("resumed"), second]

    # WHEN every envelope is published
    for envelope in sent:
        assert publish(envelope, harness.announcer).ok

    # THEN the groups are the threads: two groups, never one for the whole topic nor one per question ...
    groups = [call["MessageGroupId"] for call in calls]
    assert groups == [envelope.thread_id for envelope in sent]
    assert set(groups) == {"order-a", "order-b"}
    # ... every envelope of one question shares its group, so deduplication within a group still sees them all
    by_question: dict[str, set[str]] = {}
    for envelope, group in zip(sent, groups, strict=True):
        by_question.setdefault(envelope.question_id, set()).add(group)
    assert all(len(found) == 1 for found in by_question.values()), by_question
    # ... and the subscribed FIFO queue holds each thread's envelopes in the order they were published
    delivered = [(m["Attributes"]["MessageGroupId"], json.loads(m["Body"])) for m in harness.extra["queue"].drain()]
    for thread_id in ("order-a", "order-b"):
        got = [(body["question_id"], body["type"]) for group, body in delivered if group == thread_id]
        expected = [(e.question_id, e.type) for e in sent if e.thread_id == thread_id]
        assert got == expected


def test_a_republish_in_the_threads_group_is_delivered_once(
    sns_harness: Callable[..., AnnounceHarness], record_calls: Any
) -> None:
    # GIVEN a FIFO topic (deduplication within a message group in message-group scope)
    harness = sns_harness(fifo=True)
    calls = record_calls(harness.extra["client"], "Publish")
    envelope = _question("order-c", "order-c-q1")

    # WHEN the sweep republishes the question (a fresh event id, the same dedupe_key)
    assert publish(envelope, harness.announcer).ok
    assert publish(envelope.republished(), harness.announcer).ok

    # THEN both publishes used the same group and deduplication id, and one message arrived
    assert {(c["MessageGroupId"], c["MessageDeduplicationId"]) for c in calls} == {("order-c", envelope.dedupe_key)}
    assert len(harness.extra["queue"].drain()) == 1
