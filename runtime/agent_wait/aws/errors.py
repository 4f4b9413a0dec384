"""How an AWS failure is told apart, written once: its error code, whether it is AWS's, a failed condition.

The host's AWS backends (the DynamoDB ledger, the SQS entry queue and dead letter) and the router use
these names, so nothing outside `agent_wait.aws` imports botocore.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

__all__ = (
    "AWS_ERRORS",
    "CONDITION_FAILED",
    "ServiceError",
    "TransportError",
    "condition_failed_item",
    "error_code",
    "error_message",
    "is_condition_failed",
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
