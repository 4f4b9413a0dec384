"""`EventBridgeSchedules`: precise-deadline wake-ups as EventBridge Scheduler one-time schedules.

Each `Wake` (`agent_wait.engine.schedules`) becomes one schedule in the stack's schedule group:
`at(<time>)` in UTC, no flexible window, `ActionAfterCompletion=DELETE` (gone once it fired), and as its target
the sweep function, invoked with `{"question": {"thread_id", "question_id"}}` through the role Scheduler assumes.
A name that exists is moved (`UpdateSchedule`), so putting the same wake twice leaves one schedule; deleting one
that is not there is fine. Every other AWS failure becomes `ScheduleUnavailableError` here, at the boundary.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Protocol

from agent_wait.aws._clients import make_client
from agent_wait.aws.errors import AWS_ERRORS, error_code
from agent_wait.errors import ScheduleUnavailableError

__all__ = ("CONFLICT", "NOT_FOUND", "EventBridgeSchedules", "Wake", "at_expression")

CONFLICT = "ConflictException"
"""Scheduler's code for a schedule name that exists already."""
NOT_FOUND = "ResourceNotFoundException"
"""Scheduler's code for a schedule (or group) that is not there."""


class Wake(Protocol):
    """One wake-up as `agent_wait.engine.schedules.Wake` holds it (this provider does not import the engine)."""

    @property
    def name(self) -> str: ...
    @property
    def at(self) -> datetime: ...
    @property
    def target_input(self) -> dict[str, Any]: ...


def at_expression(wake: Wake) -> str:
    """`at(yyyy-mm-ddThh:mm:ss)`, in UTC, to the second (Scheduler's one-time form has no fraction)."""
    return f"at({wake.at.strftime('%Y-%m-%dT%H:%M:%S')})"


class EventBridgeSchedules:
    """One-time schedules in `group` that invoke `target_arn` (the sweep function) as `role_arn`.

    Args:
        group: the schedule group (`AGENT_WAIT_SCHEDULE_GROUP`).
        target_arn: the sweep function's ARN (`AGENT_WAIT_SCHEDULE_TARGET_ARN`).
        role_arn: the role Scheduler assumes to invoke it (`AGENT_WAIT_SCHEDULE_ROLE_ARN`).
        client: a boto3 `scheduler` client; one is built when omitted.

    Example:
        schedules = DeadlineSchedules(EventBridgeSchedules("agent-wait", sweep_arn, role_arn))
    """

    def __init__(self, group: str, target_arn: str, role_arn: str, *, client: Any = None) -> None:
        self.group = group
        self.target_arn = target_arn
        self.role_arn = role_arn
        self.client = make_client("scheduler", client=client, owner="EventBridgeSchedules")

    def put(self, wake: Wake) -> None:
        """Create the schedule, or move the one of that name to `wake.at`."""
        request = {
            "Name": wake.name,
            "GroupName": self.group,
            "ScheduleExpression": at_expression(wake),
            "ScheduleExpressionTimezone": "UTC",
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "ActionAfterCompletion": "DELETE",
            "Target": {
                "Arn": self.target_arn,
                "RoleArn": self.role_arn,
                "Input": json.dumps(wake.target_input, separators=(",", ":")),
                "RetryPolicy": {"MaximumEventAgeInSeconds": 3600, "MaximumRetryAttempts": 10},
            },
        }
        try:
            self.client.create_schedule(**request)
            return
        except AWS_ERRORS as exc:
            if error_code(exc) != CONFLICT:
                raise _unavailable("CreateSchedule", wake.name, exc) from exc
        try:
            self.client.update_schedule(**request)  # a redelivery, a second sweep, an extension: the same name
        except AWS_ERRORS as exc:
            raise _unavailable("UpdateSchedule", wake.name, exc) from exc

    def delete(self, name: str) -> None:
        """Delete the schedule `name`; one that fired (and deleted itself) or was never put is fine."""
        try:
            self.client.delete_schedule(Name=name, GroupName=self.group)
        except AWS_ERRORS as exc:
            if error_code(exc) != NOT_FOUND:
                raise _unavailable("DeleteSchedule", name, exc) from exc


def _unavailable(call: str, name: str, exc: BaseException) -> ScheduleUnavailableError:
    code = error_code(exc)
    return ScheduleUnavailableError(f"Scheduler {call} of {name} failed with {code}", code=code)
