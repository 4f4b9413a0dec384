"""What every AWS announcer shares: building a client, translating botocore errors, wire-safe text."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from boto3.session import Session
from botocore.config import Config
from botocore.exceptions import NoRegionError

from agent_wait.aws.errors import AWS_ERRORS, error_code, error_message
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.messages import fifo_id
from agent_wait.errors import ArgumentError, AwsDeliveryError, ConfigurationError

__all__ = ("CLIENT_CONFIG", "AwsDeliveryError", "error_code", "fifo_id", "make_client", "translate_errors", "wire_json")

CLIENT_CONFIG = Config(
    connect_timeout=5,
    read_timeout=10,
    retries={"mode": "standard", "total_max_attempts": 3},  # the first call and two retries
)
"""Short timeouts and few retries for clients we build: an announcer runs inside the agent's own invocation,
so a slow or throttled backend must cost seconds, not botocore's default minute per attempt. A failure is
not lost: the question stays in the ledger and the sweep announces it again."""


_NOT_WIRE_SAFE = re.compile("[\ud800-\udfff\ufffe\uffff]")
"""Characters SQS refuses in a body or attribute (and SNS cannot hand on to SQS). JSON can escape them."""


def make_client(service: str, *, client: Any = None, region_name: str | None = None, owner: str) -> Any:
    """Return `client` if one was injected, else a new boto3 client for `service` with `CLIENT_CONFIG`.

    Each announcer gets its own session: `publish` runs announcers on several threads, and boto3's default
    session is not safe to build clients from concurrently.

    Args:
        service: the boto3 service name (`"sns"`, `"sqs"`, `"events"`, `"dynamodb"`).
        client: an already-built client (tests, a custom endpoint, shared connection pools).
        region_name: the region for a client built here; botocore's usual lookup when None.
        owner: the announcer's class name, for error messages.

    Raises:
        ArgumentError: both `client` and `region_name` were given (a `ValueError`).
        ConfigurationError: no client was injected and no region can be found.
    """
    if client is not None:
        if region_name is not None:
            raise ArgumentError(
                f"{owner}: pass client= or region_name=, not both; an injected client already has its region"
            )
        return client
    try:
        return Session(region_name=region_name).client(service, config=CLIENT_CONFIG)
    except NoRegionError:
        # botocore reads AWS_DEFAULT_REGION but not AWS_REGION, which Lambda and many shells set.
        fallback = os.environ.get("AWS_REGION")
        if fallback:
            return Session(region_name=fallback).client(service, config=CLIENT_CONFIG)
        raise ConfigurationError(
            [f"{owner} needs an AWS region: pass region_name='us-east-1' (or your region) or set AWS_DEFAULT_REGION"],
            variables=("AWS_DEFAULT_REGION", "AWS_REGION"),
        ) from None


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Re-raise botocore errors from the block as `AwsDeliveryError` naming `action`, the code and AWS's reason.

    Other exceptions (a broken injected client) pass through untouched; the base class reports them the same way.
    """
    try:
        yield
    except AWS_ERRORS as exc:
        if not hasattr(exc, "response"):  # AWS never answered: botocore's own text says why
            raise AwsDeliveryError(f"{action} failed: {exc}") from exc
        code = error_code(exc)
        raise AwsDeliveryError(f"{action} failed: {code}: {error_message(exc) or 'no message'}", code=code) from exc


def wire_json(envelope: WaitEnvelope) -> str:
    """The envelope as compact JSON, with characters SQS refuses (U+FFFE, U+FFFF, lone surrogates) escaped.

    The JSON value is the same either way; only its spelling changes, and only when it has to.
    """
    text = envelope.to_json()
    if _NOT_WIRE_SAFE.search(text):
        return json.dumps(envelope.to_dict(), separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return text
