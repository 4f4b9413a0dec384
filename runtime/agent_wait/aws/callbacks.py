"""`LambdaCallbacks`: complete a durable function's callback with its answer (SendDurableExecutionCallbackSuccess).

A callback completed with this very answer already counts as completed: the router may die after Lambda accepted
the completion and before the row says `resumed`, and SQS then delivers the answer again. Lambda refuses that second
completion with `CallbackTimeoutException`, which it also sends for a callback that timed out or was closed by
someone else, so the execution's history (`GetDurableExecutionHistory`) tells them apart: only a `CallbackSucceeded`
of this callback whose result is exactly this answer is taken as delivered.

Every other Lambda failure leaves as an error of `agent_wait.errors`, told apart by what retrying would do:

- refused (`CallbackTimeoutException`: timed out, or closed otherwise; `ResourceNotFoundException`, or any HTTP 404:
  a callback id Lambda does not know; `InvalidParameterValueException`): `CallbackRefusedError`. The execution no
  longer waits on it; the router records the question `failed`, never `resumed`.
- for now (throttled, a fault on Lambda's side, no connection), completing or reading the history:
  `CallbackUnavailableError`; the message is retried.
- anything else (`AccessDeniedException`, a KMS key the role may not use): `ConfigurationError` naming the grant to
  fix; the thread is failed visibly until `agent-wait retry`. A history the router may not read only leaves the
  refusal as Lambda gave it (logged: grant `lambda:GetDurableExecutionHistory`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from agent_wait.aws._clients import make_client
from agent_wait.aws.errors import AWS_ERRORS, error_code, is_transient
from agent_wait.errors import CallbackRefusedError, CallbackUnavailableError, ConfigurationError

__all__ = ("CLOSED_CODE", "REFUSED_CODES", "LambdaCallbacks")

logger = logging.getLogger("agent_wait.aws")

CLOSED_CODE = "CallbackTimeoutException"
"""Lambda's code for a callback that "has either expired or ... has already been closed" (its API reference): which
of the two, the execution's history says."""
REFUSED_CODES = frozenset({CLOSED_CODE, "ResourceNotFoundException", "InvalidParameterValueException"})
"""Lambda's codes for a callback it will never complete now, however often asked."""
CLOSING_EVENTS = frozenset({"CallbackSucceeded", "CallbackFailed", "CallbackTimedOut"})
"""History events that close a callback operation."""
MAX_HISTORY_PAGES = 20
"""How many pages of an execution's history are read for one callback before it counts as not delivered."""


class LambdaCallbacks:
    """Complete durable functions' callbacks through Lambda's API (`agent_wait.asking.callbacks.CallbackCompleter`).

    Args:
        client: a boto3 Lambda client; one is built (short timeouts, few retries) on first use when None.
        region_name: the region of the client built here; cannot be combined with `client`.
    """

    def __init__(self, *, client: Any = None, region_name: str | None = None) -> None:
        self._client = client
        self._region_name = region_name
        if client is not None:
            make_client("lambda", client=client, region_name=region_name, owner="LambdaCallbacks")  # checks the pair

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client("lambda", region_name=self._region_name, owner="LambdaCallbacks")
        return self._client

    def succeed(self, callback_id: str, result: str, *, execution: str | None = None) -> None:
        """Complete `callback_id` with `result` (JSON text); see the module docstring for what each failure raises.

        Args:
            callback_id: the callback the durable execution waits on.
            result: the answer, as JSON text.
            execution: the durable execution's ARN, which lets a refusal as closed be checked against its history
                (a callback completed with this `result` already counts as completed). None: a refusal stands.
        """
        try:
            self.client.send_durable_execution_callback_success(CallbackId=callback_id, Result=result.encode("utf-8"))
        except AWS_ERRORS as exc:
            code = error_code(exc)
            if code == CLOSED_CODE and execution is not None and self._completed_with(execution, callback_id, result):
                logger.info("callback completed already with this answer; counted as completed", extra={"code": code})
                return
            raise _failure(exc, code) from exc

    def _completed_with(self, execution: str, callback_id: str, result: str) -> bool:
        """Whether the execution's history says `callback_id` succeeded with exactly `result`.

        Raises:
            CallbackUnavailableError: the history could not be read for now.
        """
        try:
            closing = _closing_event(self._history(execution), callback_id)
        except AWS_ERRORS as exc:
            code = error_code(exc)
            if is_transient(exc):
                raise CallbackUnavailableError(
                    f"GetDurableExecutionHistory failed with {code}; the answer is retried", code=code
                ) from exc
            logger.warning(
                "the durable execution's history could not be read: a callback Lambda refused as closed is taken as "
                "refused; grant this function lambda:GetDurableExecutionHistory on the durable function",
                extra={"code": code},
            )
            return False
        if closing is None or closing.get("EventType") != "CallbackSucceeded":
            return False
        completed = (closing.get("CallbackSucceededDetails") or {}).get("Result") or {}
        return not completed.get("Truncated") and completed.get("Payload") == result

    def _history(self, execution: str) -> Iterator[Mapping[str, Any]]:
        """The execution's history events, oldest first, at most `MAX_HISTORY_PAGES` pages."""
        marker: str | None = None
        for _ in range(MAX_HISTORY_PAGES):
            page = self.client.get_durable_execution_history(
                DurableExecutionArn=execution, IncludeExecutionData=True, **({"Marker": marker} if marker else {})
            )
            yield from page.get("Events") or ()
            marker = page.get("NextMarker")
            if not marker:
                return


def _closing_event(events: Iterator[Mapping[str, Any]], callback_id: str) -> Mapping[str, Any] | None:
    """The event that closed `callback_id`'s operation (succeeded, failed, timed out), or None."""
    operation: str | None = None
    for event in events:
        started = event.get("CallbackStartedDetails")
        if isinstance(started, Mapping) and started.get("CallbackId") == callback_id:
            operation = event.get("Id")
        elif operation is not None and event.get("Id") == operation and event.get("EventType") in CLOSING_EVENTS:
            return event
    return None


def _failure(exc: BaseException, code: str) -> Exception:
    """The error of `agent_wait.errors` a failed completion leaves as (the module docstring's three kinds)."""
    if code in REFUSED_CODES or _http_status(exc) == 404:
        return CallbackRefusedError(
            f"Lambda refused to complete the callback ({code}): it timed out, was completed already or is "
            "unknown, so the durable execution no longer waits on this answer",
            code=code,
        )
    if is_transient(exc):
        return CallbackUnavailableError(
            f"SendDurableExecutionCallbackSuccess failed with {code}; the answer is retried", code=code
        )
    return ConfigurationError(
        [
            f"SendDurableExecutionCallbackSuccess failed with {code}: grant this function "
            "lambda:SendDurableExecutionCallbackSuccess on the durable function (and its key, if it has one), "
            "then run agent-wait retry on the thread"
        ]
    )


def _http_status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode") if isinstance(response, dict) else None
    return status if isinstance(status, int) else None
