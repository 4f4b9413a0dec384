"""Faults in every AWS announcer: the run completes, each failure is one log line, the others still deliver."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_wait import BaseAnnounce, InMemoryAnnounce, publish
from agent_wait.aws import DynamoDbAnnounce, EventBridgeAnnounce, SnsAnnounce, SqsAnnounce
from agent_wait.testing.announce_contract import sample_envelope

TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:questions"
QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/questions"


class RaisingClient:
    """A stand-in boto3 client whose every call raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls: list[str] = []

    def __getattr__(self, operation: str) -> Callable[..., Any]:
        def call(**_: Any) -> Any:
            self.calls.append(operation)
            raise self.error

        return call


def _every_announcer(client: Any) -> list[BaseAnnounce]:
    return [
        SnsAnnounce(TOPIC_ARN, client=client),
        SqsAnnounce(QUEUE_URL, client=client),
        EventBridgeAnnounce("approvals", client=client),
        DynamoDbAnnounce("questions", client=client),
    ]


def _failure_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "agent_wait.channels.announce" and r.levelno >= logging.WARNING
    ]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (RuntimeError("connection reset by peer"), "RuntimeError: connection reset by peer"),
        (
            ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "Call"),
            "failed: ThrottlingException: Rate exceeded",
        ),
    ],
    ids=["client-raises", "throttled"],
)
def test_a_failing_client_is_one_log_line_and_the_others_still_deliver(
    error: Exception, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN every AWS announcer on a client that fails, beside an announcer that works
    announcers = _every_announcer(RaisingClient(error))
    memory = InMemoryAnnounce()
    envelope = sample_envelope()

    # WHEN a question is published to all of them
    with caplog.at_level(logging.WARNING, logger="agent_wait.channels.announce"):
        report = publish(envelope, [*announcers, memory])

    # THEN the run completes, the working announcer delivered, and each failure is one line with its reason
    assert report.delivered == ("memory",)
    assert [d.announcer for d in report.failed] == ["sns", "sqs", "eventbridge", "dynamodb"]
    assert memory.last() is envelope
    lines = _failure_lines(caplog)
    assert len(lines) == 4, lines
    for announcer in announcers:
        [line] = [line for line in lines if f"announcer={announcer.name} " in line]
        assert reason in line
        assert f"question_id={envelope.question_id}" in line
        assert announcer.stats.failed == 1


def test_missing_topic_queue_bus_and_table_are_failed_deliveries_with_aws_reasons(
    aws_client: Callable[[str], Any], caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN announcers pointed at resources that do not exist on the emulator, and one that works
    sqs = aws_client("sqs")
    missing = [
        SnsAnnounce("arn:aws:sns:us-east-1:123456789012:no-such-topic", client=aws_client("sns")),
        SqsAnnounce(sqs.meta.endpoint_url + "/123456789012/no-such-queue", client=sqs),
        EventBridgeAnnounce("no-such-bus", client=aws_client("events")),
        DynamoDbAnnounce("no-such-table", client=aws_client("dynamodb")),
    ]
    memory = InMemoryAnnounce()

    # WHEN a question is published
    with caplog.at_level(logging.WARNING, logger="agent_wait.channels.announce"):
        report = publish(sample_envelope(), [*missing, memory])

    # THEN each missing resource is one failure line naming the call, the resource and AWS's error code
    assert report.delivered == ("memory",)
    lines = _failure_lines(caplog)
    assert len(lines) == 4, lines
    expected = {
        "sns": "SNS Publish to arn:aws:sns:us-east-1:123456789012:no-such-topic failed: NotFound",
        "sqs": "no-such-queue failed: AWS.SimpleQueueService.NonExistentQueue",
        "eventbridge": "EventBridge PutEvents to bus no-such-bus failed: ResourceNotFoundException",
        "dynamodb": "DynamoDB PutItem on no-such-table failed: ResourceNotFoundException",
    }
    for name, fragment in expected.items():
        [line] = [line for line in lines if f"announcer={name} " in line]
        assert fragment in line, line


def test_failure_lines_carry_ids_never_question_content(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a question holding personal data, and announcers that fail
    envelope = sample_envelope(question={"function": "refund", "args": {"iban": "DE89370400440532013000"}})
    error = ClientError({"Error": {"Code": "ValidationException", "Message": "bad request"}}, "Call")

    # WHEN it is published
    with caplog.at_level(logging.DEBUG, logger="agent_wait"):
        publish(envelope, _every_announcer(RaisingClient(error)))

    # THEN no log line holds the question's content
    assert caplog.records
    assert not [r for r in caplog.records if "DE89370400440532013000" in r.getMessage()]
