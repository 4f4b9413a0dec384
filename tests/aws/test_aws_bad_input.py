"""Bad input on the way to AWS: refused by the core before any announcer runs, or carried faithfully."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from agent_wait import EnvelopeError, Question, QuestionTooLargeError, WaitEnvelope, publish
from agent_wait.testing.announce_contract import AnnounceHarness


@pytest.fixture
def every_backend(
    sns_harness: Callable[..., AnnounceHarness],
    sqs_harness: Callable[..., AnnounceHarness],
    eventbridge_harness: Callable[..., AnnounceHarness],
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> list[AnnounceHarness]:
    """One fresh harness per AWS announcer."""
    return [sns_harness(), sqs_harness(fifo=True), eventbridge_harness(), dynamodb_harness()]


def test_non_json_question_is_refused_before_anything_is_announced(every_backend: list[AnnounceHarness]) -> None:
    # GIVEN a question holding a datetime and a set (not JSON)
    # WHEN it is asked
    with pytest.raises(EnvelopeError, match=r"question\.args\.when is a datetime, which is not JSON"):
        Question("t-1", "q-1", {"function": "f", "args": {"when": datetime.now(UTC), "ids": {1, 2}}})

    # THEN no envelope exists, so no backend received anything
    assert all(harness.read_back() == [] for harness in every_backend)


def test_question_of_200_kib_is_refused_by_the_size_guard_before_any_announcer_runs(
    every_backend: list[AnnounceHarness],
) -> None:
    # GIVEN a 200 KiB question (over MAX_QUESTION_BYTES, which every backend could carry)
    blob = "x" * (200 * 1024)

    # WHEN it is asked
    with pytest.raises(QuestionTooLargeError, match="Publish a reference instead") as refused:
        Question("t-1", "q-big", {"function": "f", "args": {"blob": blob}})

    # THEN the error carries its numbers, and no backend received anything
    assert refused.value.size > refused.value.limit == 64 * 1024
    assert all(harness.read_back() == [] for harness in every_backend)


def test_nested_decimals_floats_and_unicode_arrive_as_plain_json_on_every_backend(
    every_backend: list[AnnounceHarness],
) -> None:
    # GIVEN a question built from DynamoDB-style Decimals, floats and non-ASCII text
    question = {
        "function": "issue_refund",
        "args": {"amount": Decimal("410.25"), "items": [{"qty": Decimal(2), "rate": Decimal("0.1")}]},
        "ratio": 1 / 3,
        "note": "Zoë — 払い戻し 🧾",
    }
    envelope = WaitEnvelope.create(Question("thread-ü", "q-unicode-1", question))
    expected: dict[str, Any] = {
        "function": "issue_refund",
        "args": {"amount": 410.25, "items": [{"qty": 2, "rate": 0.1}]},
        "ratio": 1 / 3,
        "note": "Zoë — 払い戻し 🧾",
    }

    # WHEN it is published to every AWS announcer at once
    report = publish(envelope, [harness.announcer for harness in every_backend])

    # THEN every backend holds the same plain-JSON question
    assert report.ok, report.deliveries
    assert envelope.question == expected
    for harness in every_backend:
        [held] = harness.read_back()
        assert held["question"] == expected, harness.announcer.name
        assert held["thread_id"] == "thread-ü"
