"""The precise-deadline settings, checked: the schedule group, the sweep it invokes and the role Scheduler assumes
(`AGENT_WAIT_SCHEDULE_GROUP`, `AGENT_WAIT_SCHEDULE_TARGET_ARN`, `AGENT_WAIT_SCHEDULE_ROLE_ARN`): all three or none."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.schema import Settings

__all__ = ("ScheduleSettings", "schedule_settings")

_GROUP = re.compile(r"[0-9A-Za-z_.-]{1,64}")
_ARN = re.compile(r"arn:aws[a-z-]*:(lambda|iam):[^\s]+")
_ALL = (Settings.SCHEDULE_GROUP, Settings.SCHEDULE_TARGET_ARN, Settings.SCHEDULE_ROLE_ARN)


@dataclass(frozen=True, slots=True)
class ScheduleSettings:
    """Where precise-deadline schedules go (`agent_wait.aws.scheduler.EventBridgeSchedules`)."""

    group: str
    """The schedule group (`AGENT_WAIT_SCHEDULE_GROUP`)."""
    target_arn: str
    """The sweep function each schedule invokes (`AGENT_WAIT_SCHEDULE_TARGET_ARN`)."""
    role_arn: str
    """The role Scheduler assumes to invoke it (`AGENT_WAIT_SCHEDULE_ROLE_ARN`)."""


def schedule_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`schedules` for `HostSettings` (None: precise deadlines off), with every problem added to `problems`."""
    given = [name for name in _ALL if value[name] is not None]
    if not given:
        return {"schedules": None}
    if len(given) != len(_ALL):
        missing = [name.value for name in _ALL if value[name] is None]
        problems.append(
            f"precise deadlines need {', '.join(n.value for n in _ALL)} together; {', '.join(missing)} not set "
            "(AgentWait(precise_deadlines=True) sets all three)"
        )
        wrong.extend(missing)
        return {"schedules": None}
    group, target, role = (str(value[name]) for name in _ALL)
    bad = []
    if not _GROUP.fullmatch(group):
        bad.append((Settings.SCHEDULE_GROUP, f"a schedule group name (1-64 of A-Z a-z 0-9 _ . -); got {group!r}"))
    if not _ARN.fullmatch(target) or ":lambda:" not in target:
        bad.append((Settings.SCHEDULE_TARGET_ARN, f"the sweep function's ARN (arn:aws:lambda:...); got {target!r}"))
    if not _ARN.fullmatch(role) or ":iam:" not in role:
        bad.append((Settings.SCHEDULE_ROLE_ARN, f"an IAM role ARN (arn:aws:iam::...:role/...); got {role!r}"))
    for name, what in bad:
        problems.append(f"{name.value} must be {what}")
        wrong.append(name.value)
    return {"schedules": None if bad else ScheduleSettings(group, target, role)}
