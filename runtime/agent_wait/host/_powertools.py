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
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.tracing.base import BaseProvider, BaseSegment

from agent_wait.errors import require_extra

__all__ = (
    "DEFAULT_METRICS_NAMESPACE",
    "DEFAULT_SERVICE_NAME",
    "METRICS_NAMESPACE_VARIABLE",
    "SERVICE_NAME_VARIABLE",
    "PowertoolsMetrics",
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
    """A Powertools `Logger` for `service_name()`; its level comes from `LOG_LEVEL` (Powertools reads it).

    At INFO each handler writes one line per unit of work (a message, a request, a sweep run); the steps between are
    DEBUG. `POWERTOOLS_LOGGER_SAMPLE_RATE` (Powertools reads it too, and draws again at every invocation) turns DEBUG
    on for that share of invocations: the steps of a sample, at a fraction of DEBUG's bytes (docs/cost.md, "Logs").
    """
    return Logger(service=service_name())


def metrics() -> Metrics:
    """A Powertools `Metrics` in `metrics_namespace()` with the `service` dimension `service_name()`.

    Wrap it in `agent_wait.engine.metrics.PowertoolsMetrics` so metrics with a `reason` carry the same
    namespace and `service` dimension as the rest.
    """
    return Metrics(namespace=metrics_namespace(), service=service_name())


def tracer() -> Tracer:
    """A Powertools `Tracer` for `service_name()`: off outside Lambda or with `POWERTOOLS_TRACE_DISABLED=true`.

    Off (Powertools' own rule decides), it is given a provider that records nothing instead of the X-Ray
    recorder, so the X-Ray SDK is not imported: that import costs about 0.15 s of every cold start, for
    nothing when tracing is off (the AgentWait construct's default).

    Raises:
        MissingExtraError: the X-Ray SDK (`aws-lambda-powertools[tracer]`, part of the `host` extra) is not
            installed; `Tracer` needs it even when tracing is off.
    """
    require_extra("agent_wait.host", "aws_xray_sdk", "host", load=False)
    if Tracer._is_tracer_disabled():  # Powertools reads the environment only; it imports nothing
        return Tracer(service=service_name(), disabled=True, auto_patch=False, provider=_TracingOff())
    return Tracer(service=service_name())


class _NoSegment(BaseSegment):
    """The segment an off tracer hands its decorators: every call does nothing."""

    def close(self, end_time: int | None = None) -> None:
        pass

    def add_subsegment(self, subsegment: Any) -> None:
        pass

    def remove_subsegment(self, subsegment: Any) -> None:
        pass

    def put_annotation(self, key: str, value: Any) -> None:
        pass

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        pass

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        pass


class _TracingOff(BaseProvider):
    """A Powertools tracing provider that records nothing, for a `Tracer` that is off."""

    @contextmanager
    def in_subsegment(self, name: Any = None, **kwargs: Any) -> Iterator[BaseSegment]:
        yield _NoSegment()

    @asynccontextmanager
    async def in_subsegment_async(self, name: Any = None, **kwargs: Any) -> AsyncIterator[BaseSegment]:
        yield _NoSegment()

    def put_annotation(self, key: str, value: Any) -> None:
        pass

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        pass

    def patch(self, modules: Sequence[str]) -> None:
        pass

    def patch_all(self) -> None:
        pass


class PowertoolsMetrics:
    """Emit through a Powertools `Metrics` (CloudWatch embedded metric format), flushed by `@log_metrics`.

    Every metric lands in the wrapped `Metrics`' namespace with its `service` dimension (and any default
    dimensions). A count with a `reason` is emitted twice: the total under the same dimensions as every other
    metric (what the construct's alarms watch, `SweepErrors` and `RouterErrors` among them), and the
    breakdown under those dimensions plus `reason`. A timing with `dimensions` is emitted only under those
    dimensions added to the others (`agent_wait.engine.metrics.EMITTED` lists every combination).

    Args:
        metrics: a Powertools `Metrics`, e.g. `metrics()` of this module.
    """

    def __init__(self, metrics: Any) -> None:
        from aws_lambda_powertools.metrics import MetricUnit, single_metric

        self._metrics = metrics
        self._unit = MetricUnit
        self._single_metric = single_metric

    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None:
        self._metrics.add_metric(name=name, unit=self._unit.Count, value=value)
        if reason is not None:
            self._single(name, self._unit.Count, value, {"reason": reason})

    def seconds(self, name: str, value: float, *, dimensions: Mapping[str, str] | None = None) -> None:
        if not dimensions:
            self._metrics.add_metric(name=name, unit=self._unit.Seconds, value=value)
            return
        self._single(name, self._unit.Seconds, value, dimensions)

    def _single(self, name: str, unit: Any, value: float, dimensions: Mapping[str, str]) -> None:
        """Emit one metric under the batch's dimensions plus `dimensions`, in a metric set of its own."""
        from aws_lambda_powertools.metrics.functions import is_metrics_disabled

        if is_metrics_disabled():  # single_metric flushes on its own and does not check this itself
            return
        # Extra dimensions need their own metric set, or they would apply to every metric in the batch. A single
        # metric starts with no dimensions at all: give it the batch's, so both land under the same service.
        base = {str(k): str(v) for k, v in (getattr(self._metrics, "default_dimensions", None) or {}).items()}
        service = self._metrics.service
        if service:
            base["service"] = str(service)
        with self._single_metric(
            name=name, unit=unit, value=value, namespace=self._metrics.namespace, default_dimensions=base
        ) as metric:
            for key, dimension in dimensions.items():
                metric.add_dimension(name=key, value=dimension)
