"""Every AWS failure leaves the backends as agent-wait's own error, so the engine retries by agent-wait's tree alone.

The DynamoDB ledger, the SQS entry and dead-letter queues, and the LangGraph checkpoint saver each translate at their
boundary: a failure of the store or the network becomes `LedgerUnavailableError`, `QueueUnavailableError` or
`ThreadStateUnavailableError` (the router's `RETRYABLE`), and a request refused as invalid an error that is not
retried. A fake client raises what botocore raises.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from agent_wait.aws import DynamoDbLedger
from agent_wait.engine import SqsDeadLetter, SqsEntryQueue
from agent_wait.engine.router import RETRYABLE
from agent_wait.errors import (
    LedgerRejectedError,
    LedgerUnavailableError,
    QueueUnavailableError,
    ThreadStateError,
    ThreadStateUnavailableError,
)

THROTTLED = ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "Call")
UNREACHABLE = EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com")
INVALID = ClientError({"Error": {"Code": "ValidationException", "Message": "bad value 'secret'"}}, "Call")


class Failing:
    """A boto3 client whose every call raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def call(**_: Any) -> Any:
            raise self.error

        return call


@pytest.mark.parametrize("error", [THROTTLED, UNREACHABLE], ids=["throttled", "unreachable"])
def test_the_ledger_turns_a_failed_or_unanswered_call_into_ledger_unavailable(error: Exception) -> None:
    ledger = DynamoDbLedger("questions", client=Failing(error))
    with pytest.raises(LedgerUnavailableError, match="question table questions: get_item") as caught:
        ledger.get("t", "q")
    assert isinstance(caught.value, RETRYABLE)
    with pytest.raises(LedgerRejectedError, match="retrying cannot help"):
        DynamoDbLedger("questions", client=Failing(INVALID)).get("t", "q")


@pytest.mark.parametrize("error", [THROTTLED, UNREACHABLE], ids=["throttled", "unreachable"])
def test_the_sqs_queues_turn_a_failed_call_into_queue_unavailable(error: Exception) -> None:
    queue = SqsEntryQueue("https://sqs/entry.fifo", client=Failing(error))
    with pytest.raises(
        QueueUnavailableError, match=re.escape("entry queue https://sqs/entry.fifo: SendMessage failed")
    ) as a:
        queue.send({"thread_id": "t"}, group_id="g", deduplication_id="d")
    dead_letter = SqsDeadLetter("https://sqs/dlq.fifo", client=Failing(error))
    with pytest.raises(
        QueueUnavailableError, match=re.escape("dead-letter queue https://sqs/dlq.fifo: SendMessage")
    ) as b:
        dead_letter.send("{}", reason="bad_json", detail="d", message_id="m")
    assert isinstance(a.value, RETRYABLE)
    assert isinstance(b.value, RETRYABLE)
    assert "secret" not in str(QueueUnavailableError("x", code="ValidationException"))


def test_the_checkpoint_saver_turns_a_failed_read_into_thread_state_unavailable() -> None:
    from agent_wait.langgraph.checkpoint.batch import read_items, store_errors

    with pytest.raises(ThreadStateUnavailableError, match="BatchGetItem of checkpoints of thread 't' failed with Thr"):
        read_items(Failing(THROTTLED), "checkpoints", [("pk", "sk")], thread_id="t")
    with (
        pytest.raises(ThreadStateUnavailableError, match="got no answer from AWS"),
        store_errors("reading", thread_id="t", table="checkpoints"),
    ):
        raise UNREACHABLE
    with (
        pytest.raises(ThreadStateError, match=r"refused as invalid \(ValidationException\)") as caught,
        store_errors("writing", thread_id="t", table="checkpoints"),
    ):
        raise INVALID
    assert not isinstance(caught.value, RETRYABLE), "a request refused as invalid would be refused again"
    assert "secret" not in caught.value.message


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (THROTTLED, True),
        (UNREACHABLE, True),
        (ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}}, "PutItem"), True),
        (ClientError({"Error": {"Code": "Oops"}, "ResponseMetadata": {"HTTPStatusCode": 503}}, "GetItem"), True),
        (ClientError({"Error": {"Code": "AccessDeniedException"}}, "PutItem"), False),
        (INVALID, False),
        (ValueError("not AWS"), False),
    ],
    ids=["throttled", "unreachable", "throughput", "5xx", "access-denied", "invalid", "not-aws"],
)
def test_the_aws_host_retries_the_agents_own_aws_failure_only_when_it_could_pass(
    error: Exception, transient: bool
) -> None:
    from agent_wait.aws.errors import is_transient

    # A throttled call in a node is retried; an AccessDenied would fail the same way on every delivery, so the
    # thread fails visibly instead of being retried into the dead-letter queue.
    assert is_transient(error) is transient
