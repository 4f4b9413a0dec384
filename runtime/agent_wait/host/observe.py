"""Metrics the host emits, behind a tiny interface so the same router runs on Lambda, locally and in tests."""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any, Protocol

__all__ = ("METRIC_NAMES", "HostMetrics", "PowertoolsMetrics", "RecordingMetrics")

METRIC_NAMES = {
    "asked": "QuestionsAsked",
    "accepted": "AnswersAccepted",
    "refused": "AnswersRefused",
    "expired": "QuestionsExpired",
    "cancelled": "QuestionsCancelled",
    "time_to_answer": "TimeToAnswerSeconds",
    "announce_failed": "AnnounceFailures",
    "dead_lettered": "MessagesDeadLettered",
    "starts": "StartsApplied",
    "starts_replayed": "StartsReplayed",
    "overdue": "OverdueQuestions",
    "overdue_age": "OverdueQuestionAgeSeconds",
    "oldest_open_age": "OldestOpenQuestionAgeSeconds",
    "reannounced": "QuestionsReannounced",
    "agent_failed": "AgentFailures",
    "retried": "ThreadsRetried",
    "router_errors": "RouterErrors",
    "thread_busy": "ThreadBusy",
    "sweep_errors": "SweepErrors",
}
"""Every metric name, in the `AgentWait` namespace; refusals and dead letters carry a `reason` dimension.

`AgentFailures` (reason `start`, `resume` or `retry`) counts runs whose agent raised: the thread is failed
until `agent-wait retry`. `RouterErrors` (reason: the error type) counts records the router could not
apply this time and handed back to SQS. `SweepErrors` (reason: the step) counts what one sweep run had
to skip. `ThreadBusy` counts deliveries that waited out another delivery's lease on their thread.
"""


class HostMetrics(Protocol):
    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None: ...

    def seconds(self, name: str, value: float) -> None: ...


class RecordingMetrics:
    """Keeps every metric in memory: `counts[("AnswersRefused", "expired")]`, `timings["TimeToAnswerSeconds"]`."""

    def __init__(self) -> None:
        self.counts: defaultdict[tuple[str, str | None], float] = defaultdict(float)
        self.timings: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None:
        with self._lock:
            self.counts[(name, reason)] += value

    def seconds(self, name: str, value: float) -> None:
        with self._lock:
            self.timings.setdefault(name, []).append(value)

    def total(self, name: str) -> float:
        return sum(value for (metric, _), value in self.counts.items() if metric == name)


class PowertoolsMetrics:
    """Emit through a Powertools `Metrics` (CloudWatch embedded metric format), flushed by `@log_metrics`.

    Every metric lands in the wrapped `Metrics`' namespace with its `service` dimension (and any default
    dimensions). A count with a `reason` is emitted twice: the total under the same dimensions as every other
    metric (what the construct's alarms watch, `SweepErrors` and `RouterErrors` among them), and the
    breakdown under those dimensions plus `reason`.

    Args:
        metrics: a Powertools `Metrics`, e.g. `agent_wait.host._powertools.metrics()`.
    """

    def __init__(self, metrics: Any) -> None:
        from aws_lambda_powertools.metrics import MetricUnit, single_metric

        self._metrics = metrics
        self._unit = MetricUnit
        self._single_metric = single_metric

    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None:
        self._metrics.add_metric(name=name, unit=self._unit.Count, value=value)
        if reason is None:
            return
        from aws_lambda_powertools.metrics.functions import is_metrics_disabled

        if is_metrics_disabled():  # single_metric flushes on its own and does not check this itself
            return
        # A reason dimension needs its own metric set, or it would apply to every metric in the batch. A single
        # metric starts with no dimensions at all: give it the batch's, so both land under the same service.
        dimensions = {str(k): str(v) for k, v in (getattr(self._metrics, "default_dimensions", None) or {}).items()}
        service = self._metrics.service
        if service:
            dimensions["service"] = str(service)
        with self._single_metric(
            name=name,
            unit=self._unit.Count,
            value=value,
            namespace=self._metrics.namespace,
            default_dimensions=dimensions,
        ) as metric:
            metric.add_dimension(name="reason", value=reason)

    def seconds(self, name: str, value: float) -> None:
        self._metrics.add_metric(name=name, unit=self._unit.Seconds, value=value)
