"""How an AWS failure is told apart, written once: its error code, whether it is AWS's, a failed condition.

The AWS backends (the DynamoDB ledger, the SQS queues, the LangGraph checkpoint saver) use these names to turn
every AWS failure into an error of `agent_wait.errors` at their boundary, so nothing outside them imports
botocore and the engine retries only agent-wait's own errors. `is_transient` is what the AWS host gives the
router for a driver error raised inside the agent's own code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_wait.errors import QueueUnavailableError

__all__ = (
    "AWS_ERRORS",
    "CONDITION_FAILED",
    "TRANSIENT_CODES",
    "ServiceError",
    "TransportError",
    "condition_failed_item",
    "error_code",
    "error_message",
    "is_condition_failed",
    "is_transient",
    "queue_errors",
)

ServiceError = ClientError
"""AWS answered, with an error (throttled, refused, not found): `error_code` says which."""
TransportError = BotoCoreError
"""AWS never answered (connection, timeout, no credentials, no endpoint)."""
AWS_ERRORS: tuple[type[Exception], ...] = (ServiceError, TransportError)
"""Every failure an AWS call raises. It is the store's or the network's, never the agent's: retry the message."""
CONDITION_FAILED = "ConditionalCheckFailedException"
"""DynamoDB's code for a conditional write whose condition did not hold (someone else wrote first)."""


def _error(exc: BaseException) -> dict[str, Any]:
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    return error if isinstance(error, dict) else {}


def error_code(exc: BaseException) -> str:
    """The AWS error code (`ThrottlingException`); `Unknown` when AWS sent none; the type name if it never answered."""
    if not isinstance(getattr(exc, "response", None), dict):
        return type(exc).__name__
    return str(_error(exc).get("Code") or "Unknown")


def error_message(exc: BaseException) -> str:
    """AWS's own reason text, or "" (it may quote a value: keep it out of logs above DEBUG)."""
    return str(_error(exc).get("Message") or "")


def is_condition_failed(exc: BaseException) -> bool:
    """True when `exc` is DynamoDB refusing a conditional write because its condition did not hold."""
    return isinstance(exc, ServiceError) and error_code(exc) == CONDITION_FAILED


def condition_failed_item(exc: BaseException) -> dict[str, Any] | None:
    """The item as it was, which DynamoDB returns with a failed condition (`ReturnValuesOnConditionCheckFailure`)."""
    response = getattr(exc, "response", None)
    item = response.get("Item") if isinstance(response, dict) else None
    return item if isinstance(item, dict) else None


TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "SlowDown",
        "LimitExceededException",
        "TransactionConflictException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "InternalServerException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
"""AWS error codes that say "not now" (throttled, busy, a passing fault of the service): worth the same call later."""


def is_transient(exc: BaseException) -> bool:
    """Whether an AWS failure the agent's own code raised is worth retrying the message for.

    True when AWS never answered (connection, timeout), throttled the call, or failed on its side (a code in
    `TRANSIENT_CODES`, or HTTP 5xx): the router retries the message. False for anything else, such as
    `AccessDenied` or a `ValidationException`, which would fail the same way on every delivery: the router fails
    the thread visibly (`agent_failed`) instead of retrying it into the dead-letter queue.
    """
    if isinstance(exc, TransportError):
        return True
    if not isinstance(exc, ServiceError):
        return False
    status = getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
    return error_code(exc) in TRANSIENT_CODES or (isinstance(status, int) and status >= 500)


@contextmanager
def queue_errors(where: str) -> Iterator[None]:
    """An SQS failure of the call `where` names, raised as `QueueUnavailableError` (its code kept, its text not)."""
    try:
        yield
    except AWS_ERRORS as exc:
        code = error_code(exc)
        raise QueueUnavailableError(f"{where} failed with {code}; the message is retried", code=code) from exc
