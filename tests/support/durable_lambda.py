"""The durable execution SDK's local Lambda API (its test runner's web server), refusing callbacks as AWS does.

The runner answers `SendDurableExecutionCallbackSuccess` for a callback that is closed already (completed, failed or
timed out) with HTTP 404 and an error type boto3 cannot read (its body says `Type`), exactly as it answers an unknown
callback id. AWS documents `CallbackTimeoutException`, HTTP 400, for the first ("the callback ID token has either
expired or the callback associated with the token has already been closed") and `ResourceNotFoundException`, HTTP
404, for a resource that does not exist
(https://docs.aws.amazon.com/lambda/latest/api/API_SendDurableExecutionCallbackSuccess.html). `lambda_api_server`
serves the runner's executor through `AwsShapedCallbacks`, which answers so, with the type in `__type`, where boto3
reads an error's code.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aws_durable_execution_sdk_python_testing.exceptions import (
    CallbackTimeoutException,
    IllegalStateException,
    ResourceNotFoundException,
)
from aws_durable_execution_sdk_python_testing.web.server import WebServer, WebServiceConfig

__all__ = ("AwsShapedCallbacks", "lambda_api_server")


class _Closed(CallbackTimeoutException):
    http_status_code = 400

    def to_dict(self) -> dict[str, Any]:
        return {"__type": "CallbackTimeoutException", "message": self.message}


class _Unknown(ResourceNotFoundException):
    def to_dict(self) -> dict[str, Any]:
        return {"__type": "ResourceNotFoundException", "Message": self.Message}


class AwsShapedCallbacks:
    """The runner's executor, whose callback completions are refused with AWS's codes; everything else as it is."""

    def __init__(self, executor: Any) -> None:
        self._executor = executor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executor, name)

    def send_callback_success(self, callback_id: str, result: bytes | None = None) -> Any:
        try:
            return self._executor.send_callback_success(callback_id=callback_id, result=result)
        except ResourceNotFoundException as exc:
            # The runner wraps every failure in ResourceNotFoundException; a callback no longer STARTED is closed.
            if isinstance(exc.__cause__, IllegalStateException):
                raise _Closed("the callback has already been closed") from exc
            raise _Unknown(exc.Message) from exc


@contextmanager
def lambda_api_server(runner: Any) -> Iterator[str]:
    """Serve `runner`'s Lambda API over HTTP on 127.0.0.1, callbacks refused as AWS does; yields its endpoint URL."""
    server = WebServer(
        WebServiceConfig(host="127.0.0.1", port=0, log_level=logging.WARNING), AwsShapedCallbacks(runner._executor)
    )
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    serving.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
