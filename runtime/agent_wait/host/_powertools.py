"""The Powertools `Logger`, `Metrics` and `Tracer` the Lambda handlers use, configured from the environment.

Each handler module builds its own at import time with these factories, so both functions honour the
same settings: `POWERTOOLS_SERVICE_NAME` (default `agent-wait`) names the service in every log line and
is the `service` dimension of every metric; `POWERTOOLS_METRICS_NAMESPACE` (default `AgentWait`) is the
CloudWatch namespace. The `AgentWait` construct sets both; the defaults are what its alarms watch.

Tracing is Powertools' `Tracer` (X-Ray). It turns itself off outside Lambda and when
`POWERTOOLS_TRACE_DISABLED` is true (the construct sets it unless `tracing=Tracing.ACTIVE`), so tests and
the local runner make no X-Ray calls.

Example:
    logger, metrics, tracer = _powertools.logger(), _powertools.metrics(), _powertools.tracer()

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event, context): ...
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from aws_lambda_powertools import Logger, Metrics, Tracer

from agent_wait.errors import require_extra

__all__ = (
    "DEFAULT_METRICS_NAMESPACE",
    "DEFAULT_SERVICE_NAME",
    "METRICS_NAMESPACE_VARIABLE",
    "SERVICE_NAME_VARIABLE",
    "logger",
    "metrics",
    "metrics_namespace",
    "service_name",
    "tracer",
)

SERVICE_NAME_VARIABLE = "POWERTOOLS_SERVICE_NAME"
METRICS_NAMESPACE_VARIABLE = "POWERTOOLS_METRICS_NAMESPACE"
DEFAULT_SERVICE_NAME = "agent-wait"
"""The service when `POWERTOOLS_SERVICE_NAME` is unset: the `service` dimension the construct's alarms watch."""
DEFAULT_METRICS_NAMESPACE = "AgentWait"
"""The namespace when `POWERTOOLS_METRICS_NAMESPACE` is unset: the one the construct's alarms watch."""


def service_name(environ: Mapping[str, str] | None = None) -> str:
    """`POWERTOOLS_SERVICE_NAME`, or `agent-wait` when it is unset or blank."""
    env = os.environ if environ is None else environ
    return (env.get(SERVICE_NAME_VARIABLE) or "").strip() or DEFAULT_SERVICE_NAME


def metrics_namespace(environ: Mapping[str, str] | None = None) -> str:
    """`POWERTOOLS_METRICS_NAMESPACE`, or `AgentWait` when it is unset or blank."""
    env = os.environ if environ is None else environ
    return (env.get(METRICS_NAMESPACE_VARIABLE) or "").strip() or DEFAULT_METRICS_NAMESPACE


def logger() -> Logger:
    """A Powertools `Logger` for `service_name()`; its level comes from `LOG_LEVEL` (Powertools reads it)."""
    return Logger(service=service_name())


def metrics() -> Metrics:
    """A Powertools `Metrics` in `metrics_namespace()` with the `service` dimension `service_name()`.

    Wrap it in `agent_wait.host.observe.PowertoolsMetrics` so metrics with a `reason` carry the same
    namespace and `service` dimension as the rest.
    """
    return Metrics(namespace=metrics_namespace(), service=service_name())


def tracer() -> Tracer:
    """A Powertools `Tracer` for `service_name()`: off outside Lambda or with `POWERTOOLS_TRACE_DISABLED=true`.

    Raises:
        MissingExtraError: the X-Ray SDK (`aws-lambda-powertools[tracer]`, part of the `host` extra) is not
            installed; `Tracer` needs it even when tracing is off.
    """
    require_extra("agent_wait.host", "aws_xray_sdk", "host")
    return Tracer(service=service_name())
