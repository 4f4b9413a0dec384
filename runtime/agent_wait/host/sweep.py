"""The sweep Lambda, on a schedule: overdue questions get their default; unannounced ones are announced again.

Handler: `agent_wait.host.sweep.handler`. The logic is `Sweep`, usable from any host.
"""

from __future__ import annotations

import functools
from typing import Any

from aws_lambda_powertools import Logger, Metrics

from agent_wait.host._sweep import Sweep, SweepReport
from agent_wait.host._wiring import build_sweep
from agent_wait.host.observe import PowertoolsMetrics
from agent_wait.host.settings import HostSettings

__all__ = ("Sweep", "SweepReport", "handler")

logger = Logger(service="agent-wait")
metrics = Metrics(namespace="AgentWait", service="agent-wait")


@functools.cache
def _sweep() -> Sweep:
    return build_sweep(HostSettings.from_env("sweep"), metrics=PowertoolsMetrics(metrics), log=logger)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point for the schedule; returns what this run did (ids only)."""
    report = _sweep().run()
    logger.info(
        "sweep done",
        extra={
            "expired_sent": len(report.expired_sent),
            "reannounced": len(report.reannounced),
            "overdue_age_seconds": report.overdue_age_seconds,
        },
    )
    return {
        "expired_sent": list(report.expired_sent),
        "reannounced": list(report.reannounced),
        "overdue_age_seconds": report.overdue_age_seconds,
    }
