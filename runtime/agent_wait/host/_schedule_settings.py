"""The precise-deadline settings, checked: the schedule group, the sweep it invokes and the role Scheduler assumes
(`AGENT_WAIT_SCHEDULE_GROUP`, `AGENT_WAIT_SCHEDULE_TARGET_ARN`, `AGENT_WAIT_SCHEDULE_ROLE_ARN`): all three or none;
and how long an early wake-up waits (`AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.contract.schema import Settings

__all__ = ("MAX_EARLY_WAIT_SECONDS", "ScheduleSettings", "schedule_settings")

MAX_EARLY_WAIT_SECONDS = 60.0
"""The longest an early wake-up waits, and the default: Scheduler fires at most a minute before its time."""

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
    early_wait: float = MAX_EARLY_WAIT_SECONDS
    """How long the sweep, woken before a question's time, waits for it (`AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS`)."""


def schedule_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`schedules` for `HostSettings` (None: precise deadlines off), with every problem added to `problems`."""
    given = [name for name in _ALL if value[name] is not None]
    early_wait = _early_wait(value.get(Settings.SCHEDULE_EARLY_WAIT), problems, wrong)
    if not given:
        if value.get(Settings.SCHEDULE_EARLY_WAIT) is not None:
            problems.append(
                f"{Settings.SCHEDULE_EARLY_WAIT.value} is set but precise deadlines are off: set "
                f"{Settings.SCHEDULE_GROUP.value} and the two others with it, or unset it"
            )
            wrong.append(Settings.SCHEDULE_EARLY_WAIT.value)
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
    if bad or early_wait is None:
        return {"schedules": None}
    return {"schedules": ScheduleSettings(group, target, role, early_wait)}


def _early_wait(text: str | None, problems: list[str], wrong: list[str]) -> float | None:
    """The early wake-up's wait in seconds (the default when unset), or None after adding the problem."""
    if text is None:
        return MAX_EARLY_WAIT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_EARLY_WAIT_SECONDS:
        name = Settings.SCHEDULE_EARLY_WAIT.value
        problems.append(f"{name} must be a number of seconds from 0 to {MAX_EARLY_WAIT_SECONDS:g}; got {text!r}")
        wrong.append(name)
        return None
    return seconds
