"""Precise deadlines for the deployed functions: EventBridge Scheduler schedules when `AGENT_WAIT_SCHEDULE_*` is set."""

from __future__ import annotations

from typing import Any

from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.host.settings import HostSettings

__all__ = ("deadline_schedules",)


def deadline_schedules(
    settings: HostSettings, *, session: Any = None, metrics: Any = None, log: Any = None
) -> DeadlineSchedules | None:
    """The schedules the router, the sweep and the answer API keep in step with the ledger; None when off."""
    if settings.schedules is None:
        return None
    import boto3

    from agent_wait.aws.scheduler import EventBridgeSchedules

    session = session or boto3.Session()
    backend = EventBridgeSchedules(
        settings.schedules.group,
        settings.schedules.target_arn,
        settings.schedules.role_arn,
        client=session.client("scheduler"),
    )
    return DeadlineSchedules(backend, metrics=metrics, log=log)
