"""`LambdaCallbacks`: complete a durable function's callback with its answer (SendDurableExecutionCallbackSuccess).

Every Lambda failure leaves as an error of `agent_wait.errors`, told apart by what retrying would do:

- refused (`CallbackTimeoutException`: the callback timed out or was closed already; `ResourceNotFoundException`, or
  any HTTP 404, which the SDK's local runner sends without an error type; `InvalidParameterValueException`):
  `CallbackRefusedError`. The execution no longer waits on it; the router records
  the question `failed`, never `resumed`.
- for now (throttled, a fault on Lambda's side, no connection): `CallbackUnavailableError`; the message is retried.
- anything else (`AccessDeniedException`, a KMS key the role may not use): `ConfigurationError` naming the grant to
  fix; the thread is failed visibly until `agent-wait retry`.
"""

from __future__ import annotations

from typing import Any

from agent_wait.aws._clients import make_client
from agent_wait.aws.errors import AWS_ERRORS, error_code, is_transient
from agent_wait.errors import CallbackRefusedError, CallbackUnavailableError, ConfigurationError

__all__ = ("REFUSED_CODES", "LambdaCallbacks")

REFUSED_CODES = frozenset({"CallbackTimeoutException", "ResourceNotFoundException", "InvalidParameterValueException"})
"""Lambda's codes for a callback it will never complete now, however often asked."""


class LambdaCallbacks:
    """Complete durable functions' callbacks through Lambda's API (`agent_wait.callbacks.CallbackCompleter`).

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

    def succeed(self, callback_id: str, result: str) -> None:
        """Complete `callback_id` with `result` (JSON text); see the module docstring for what each failure raises."""
        try:
            self.client.send_durable_execution_callback_success(CallbackId=callback_id, Result=result.encode("utf-8"))
        except AWS_ERRORS as exc:
            code = error_code(exc)
            if code in REFUSED_CODES or _http_status(exc) == 404:
                raise CallbackRefusedError(
                    f"Lambda refused to complete the callback ({code}): it timed out, was completed already or is "
                    "unknown, so the durable execution no longer waits on this answer",
                    code=code,
                ) from exc
            if is_transient(exc):
                raise CallbackUnavailableError(
                    f"SendDurableExecutionCallbackSuccess failed with {code}; the answer is retried", code=code
                ) from exc
            raise ConfigurationError(
                [
                    f"SendDurableExecutionCallbackSuccess failed with {code}: grant this function "
                    "lambda:SendDurableExecutionCallbackSuccess on the durable function (and its key, if it has one), "
                    "then run agent-wait retry on the thread"
                ]
            ) from exc


def _http_status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode") if isinstance(response, dict) else None
    return status if isinstance(status, int) else None
