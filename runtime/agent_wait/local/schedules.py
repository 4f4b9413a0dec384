"""Emulated EventBridge Scheduler delivery: moto keeps schedules but never fires them, so this does.

moto implements Scheduler's API (create, update, get, list, delete), which the router, the sweep and the answer
API call as they would on AWS (`agent_wait.aws.scheduler`); it never invokes a schedule's target. `ScheduleDelivery`
plays that part on the laptop: it reads the group's one-time schedules back from the emulator, waits until the
earliest one's `at()` time, invokes its target with the schedule's `Input` (locally: the sweep handler, in this
process) and deletes it, as `ActionAfterCompletion=DELETE` does. It is the emulator's stand-in, not AWS's timing:
AWS's own lateness is in `bench/bench_deadline_lateness.py` and docs/scaling.md.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent_wait.common.times import clock_scope, utc_now

__all__ = (
    "LOCAL_SCHEDULER_ROLE",
    "Delivered",
    "ScheduleDelivery",
    "due_time",
    "ensure_schedule_group",
    "local_schedule_settings",
    "stack_delivery",
)

LOCAL_SCHEDULER_ROLE = "arn:aws:iam::123456789012:role/agent-wait-local-scheduler"
"""The role schedules name on the emulator when the template names none (the emulator's Scheduler assumes no role;
a template's role is named by its stand-in ARN, `agent_wait.local.deploy`, which its `iam:PassRole` grant names)."""


@dataclass(frozen=True, slots=True)
class Delivered:
    """One schedule this emulation fired."""

    name: str
    due: datetime
    """Its `at()` time."""
    delivered: datetime
    """When its target was invoked."""
    input: dict[str, Any]
    """What the target received."""

    @property
    def late_seconds(self) -> float:
        return (self.delivered - self.due).total_seconds()


def due_time(expression: str) -> datetime | None:
    """The time of a one-time schedule's `at(yyyy-mm-ddThh:mm:ss)` expression (UTC), or None for another kind."""
    if not (expression.startswith("at(") and expression.endswith(")")):
        return None
    return datetime.fromisoformat(expression[3:-1]).replace(tzinfo=UTC)


class ScheduleDelivery:
    """Fire the one-time schedules of `group` on the emulator at their time (see the module docstring).

    Args:
        client: a boto3 `scheduler` client on the emulator.
        group: the schedule group (`AGENT_WAIT_SCHEDULE_GROUP`).
        invoke: called with a schedule's target ARN and its input, as Scheduler invokes the target.
        clock: now, in UTC.
        on_time: run each target as if Scheduler fired it exactly at its time (`utc_now()` inside the target reads the
            schedule's time): a test on a loaded machine, whose delivery may come seconds late, still sees each step
            in its order (a reminder before its deadline). `agent-wait dev` fires at the real time.
    """

    def __init__(
        self,
        client: Any,
        group: str,
        invoke: Callable[[str, dict[str, Any]], Any],
        *,
        clock: Callable[[], datetime] = utc_now,
        on_time: bool = False,
    ) -> None:
        self.client = client
        self.group = group
        self.invoke = invoke
        self.clock = clock
        self.on_time = on_time
        self.delivered: list[Delivered] = []
        """Every schedule fired so far, in order."""

    def ensure_group(self) -> None:
        """Create the schedule group on the emulator unless it is there (the construct creates it on AWS)."""
        ensure_schedule_group(self.client, self.group)

    def pending(self) -> list[tuple[datetime, str]]:
        """The group's one-time schedules as (time, name), earliest first."""
        names = [s["Name"] for s in self.client.list_schedules(GroupName=self.group).get("Schedules", [])]
        times = []
        for name in names:
            at = due_time(self.client.get_schedule(Name=name, GroupName=self.group)["ScheduleExpression"])
            if at is not None:
                times.append((at, name))
        return sorted(times)

    def deliver_due(self) -> list[Delivered]:
        """Fire every schedule whose time has come; what was fired."""
        now, fired = self.clock(), []
        for at, name in self.pending():
            if at > now:
                break
            schedule = self.client.get_schedule(Name=name, GroupName=self.group)
            target = schedule["Target"]
            payload = json.loads(target.get("Input") or "{}")
            if schedule.get("ActionAfterCompletion", "DELETE") == "DELETE":
                self.client.delete_schedule(Name=name, GroupName=self.group)
            with clock_scope(lambda at=at: at) if self.on_time else contextlib.nullcontext():
                self.invoke(target["Arn"], payload)
            delivered = Delivered(name, at, self.clock(), payload)
            self.delivered.append(delivered)
            fired.append(delivered)
        return fired

    def wait_and_deliver(self, *, timeout: float, poll: float = 0.5) -> list[Delivered]:
        """A timer: sleep until the earliest schedule's time (at most `timeout` seconds), then fire what is due.

        The schedules are read again at least every `poll` seconds, for one put meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pending = self.pending()
            if pending:
                wait = (pending[0][0] - self.clock()).total_seconds()
                if wait <= 0:
                    return self.deliver_due()
                time.sleep(min(wait, poll, max(deadline - time.monotonic(), 0)))
            else:
                time.sleep(min(poll, max(deadline - time.monotonic(), 0)))
        return []


def ensure_schedule_group(client: Any, group: str) -> None:
    """Create `group` with the emulator's `scheduler` client unless it is there (the construct creates it on AWS)."""
    try:
        client.get_schedule_group(Name=group)
    except client.exceptions.ResourceNotFoundException:
        client.create_schedule_group(Name=group)


def local_schedule_settings(
    environment: Mapping[str, str], client: Callable[[str], Any], *, sweep_arn: str
) -> dict[str, str]:
    """The precise-deadline settings to add to a local stack's `environment`, after creating its schedule group.

    A template with `AgentWait(precise_deadlines=True)` names the group, the sweep function's ARN and the role
    Scheduler assumes; the emulator deploys no function, so the sweep's ARN (built from the account and region)
    resolves to nothing, and the functions would refuse to start without it. Here it gets a stand-in: `sweep_arn`
    (the local sweep's own ARN; the emulated delivery invokes this process's sweep whatever a schedule names). The
    role resolves to its stand-in ARN (`LOCAL_SCHEDULER_ROLE` if the template names none). The group, which moto's
    CloudFormation does not create, is created in the emulator, so the router's first schedule has somewhere to go.
    Nothing is added when precise deadlines are off.
    """
    from agent_wait.contract.schema import Settings

    group = environment.get(Settings.SCHEDULE_GROUP.value)
    if not group:
        return {}
    ensure_schedule_group(client("scheduler"), group)
    added: dict[str, str] = {}
    if not environment.get(Settings.SCHEDULE_TARGET_ARN.value):
        added[Settings.SCHEDULE_TARGET_ARN.value] = sweep_arn
    if not environment.get(Settings.SCHEDULE_ROLE_ARN.value):
        added[Settings.SCHEDULE_ROLE_ARN.value] = LOCAL_SCHEDULER_ROLE
    return added


def stack_delivery(stack: Any) -> ScheduleDelivery | None:
    """The emulated delivery for an `EmulatedStack` whose functions have precise deadlines on
    (`AGENT_WAIT_SCHEDULE_GROUP` set, as `AgentWait(precise_deadlines=True)` sets it); None when they are off.

    Its group is the one the stack made when it deployed (`local_schedule_settings`); each schedule's target is this
    process's sweep handler, on the stack's clock. `agent-wait dev` calls `deliver_due()` on every turn of its loop
    (about once a second).
    """
    from agent_wait.contract.schema import Settings

    group = stack.environment.get(Settings.SCHEDULE_GROUP.value)
    if not group:
        return None

    def invoke(arn: str, payload: dict[str, Any]) -> Any:
        from agent_wait.common.times import clock_scope
        from agent_wait.host import sweep
        from agent_wait.local.handlers import SWEEP_HANDLER, LambdaContext

        running_as = getattr(stack, "running_as", None)  # the stack's IAM check: the sweep's calls are the sweep's
        with clock_scope(stack.clock), running_as(SWEEP_HANDLER) if running_as else contextlib.nullcontext():
            return sweep.handler(payload, LambdaContext(SWEEP_HANDLER))

    clock = lambda: stack.clock()  # noqa: E731, PLW0108 - read on every call: `EmulatedStack.at()` swaps the clock
    return ScheduleDelivery(stack.client("scheduler"), group, invoke, clock=clock)
