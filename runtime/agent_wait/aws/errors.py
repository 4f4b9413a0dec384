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


def is_transient(exc: BaseException) -> bool:
    """True for any AWS failure (a driver error the agent's own code raised): the store's or the network's, never
    the agent's, so the router retries the message instead of failing the thread."""
    return isinstance(exc, AWS_ERRORS)


@contextmanager
def queue_errors(where: str) -> Iterator[None]:
    """An SQS failure of the call `where` names, raised as `QueueUnavailableError` (its code kept, its text not)."""
    try:
        yield
    except AWS_ERRORS as exc:
        code = error_code(exc)
        raise QueueUnavailableError(f"{where} failed with {code}; the message is retried", code=code) from exc
