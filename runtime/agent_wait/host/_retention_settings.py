"""How long the host keeps what it stores, read and checked with the rest of `HostSettings`: a thread's checkpoints
after its last write (`AGENT_WAIT_CHECKPOINT_RETENTION`), a decided question's row after its decision
(`AGENT_WAIT_DECIDED_RETENTION`) and a channel's record after its last send (`AGENT_WAIT_CHANNEL_RECORD_RETENTION`).

Unset, each has its default (nothing is kept for ever unless asked); `never` keeps that store for ever. What each
default is and why: docs/operate.md, "What is kept, and for how long".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agent_wait.common.durations import MAX_DURATION, DurationSyntaxError, parse_duration
from agent_wait.contract.schema import Settings

__all__ = (
    "CHANNEL_RECORD_RETENTION",
    "CHECKPOINT_RETENTION",
    "DECIDED_RETENTION",
    "NEVER",
    "retention_settings",
)

NEVER = "never"
"""What a retention setting says to keep its store for ever."""
CHECKPOINT_RETENTION = timedelta(days=30)
"""A thread's checkpoints after its last write: longer than any message can wait on SQS (14 days) and a month to retry
a failed thread, as long as the functions' logs are kept (`AgentWait(log_retention=ONE_MONTH)`)."""
DECIDED_RETENTION = timedelta(days=400)
"""A decided question's row after its decision: a year of audit, and a month to export it (docs/audit.md)."""
CHANNEL_RECORD_RETENTION = timedelta(days=90)
"""A channel's record of a question's messages after its last send: what updates a message after its decision."""


@dataclass(frozen=True)
class _Rule:
    """One retention setting: its default, its range, and whether it must be whole days."""

    setting: Settings
    field: str
    default: timedelta
    minimum: timedelta
    whole_days: bool = False
    why_minimum: str = ""


_RULES = (
    _Rule(
        Settings.CHECKPOINT_RETENTION,
        "checkpoint_retention",
        CHECKPOINT_RETENTION,
        timedelta(days=14),
        whole_days=True,
        why_minimum="a message may wait on SQS 14 days, and its thread's checkpoint must outlive it",
    ),
    _Rule(Settings.DECIDED_RETENTION, "decided_retention", DECIDED_RETENTION, timedelta(days=1)),
    _Rule(Settings.CHANNEL_RECORD_RETENTION, "channel_record_retention", CHANNEL_RECORD_RETENTION, timedelta(days=1)),
)


def retention_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`checkpoint_retention`, `decided_retention` and `channel_record_retention` for `HostSettings` (None: kept for
    ever), each problem added to `problems`."""
    return {rule.field: _retention(rule, value[rule.setting], problems, wrong) for rule in _RULES}


def _retention(rule: _Rule, text: str | None, problems: list[str], wrong: list[str]) -> timedelta | None:
    if text is None:
        return rule.default
    if text.lower() == NEVER:
        return None
    name = rule.setting.value
    days = "whole days " if rule.whole_days else ""
    try:
        retention = parse_duration(text)
    except DurationSyntaxError as exc:
        problems.append(
            f"{name} must be an ISO 8601 duration in {days or 'weeks, days or hours '}such as 'P30D' or 'P52W', or "
            f"'never'; {exc}"
        )
    else:
        low, high = rule.minimum.days, MAX_DURATION.days
        if rule.whole_days and retention % timedelta(days=1):
            problems.append(f"{name} must be a whole number of days (the bucket's lifecycle counts days); got {text!r}")
        elif not rule.minimum <= retention <= MAX_DURATION:
            because = f" ({rule.why_minimum})" if rule.why_minimum else ""
            problems.append(
                f"{name} must be from {low} day{'s' if low > 1 else ''} ('P{low}D') to {high} days ('P{high}D'), or "
                f"'never'{because}; got {text!r}"
            )
        else:
            return retention
    wrong.append(name)
    return None
