"""The audit settings, checked: who may read the audit trail (`AGENT_WAIT_AUDIT_GROUP`) and how long a decided
question's row is kept (`AGENT_WAIT_DECIDED_RETENTION`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from agent_wait.common.durations import MAX_DURATION, DurationSyntaxError, parse_duration
from agent_wait.contract.schema import Settings

__all__ = ("MIN_RETENTION", "audit_settings")

MIN_RETENTION = timedelta(days=1)
"""The shortest `AGENT_WAIT_DECIDED_RETENTION`: a decided row must outlive its hand-over and its notices."""
_GROUP = re.compile(r"[^\s,]{1,256}")
"""One group name, as `AnswerApiProps(audit_group=...)` takes it: a groups claim is read as a list of names split at
spaces and commas (`host.api.groups_from_claims`), so a name holding either could never match."""


def audit_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`audit_group` and `decided_retention` for `HostSettings`, with every problem added to `problems`."""
    return {"audit_group": _group(value, problems, wrong), "decided_retention": _retention(value, problems, wrong)}


def _group(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> str | None:
    """`AGENT_WAIT_AUDIT_GROUP`: one group name; None when unset (nobody may read the audit trail)."""
    text = value[Settings.AUDIT_GROUP]
    if text is None or _GROUP.fullmatch(text):
        return text
    problems.append(
        f"{Settings.AUDIT_GROUP.value} must be one group name such as 'auditors' (no spaces or commas; the groups "
        f"claim is read as a list of names); got {text!r}"
    )
    wrong.append(Settings.AUDIT_GROUP.value)
    return None


def _retention(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> timedelta | None:
    """`AGENT_WAIT_DECIDED_RETENTION`: an ISO 8601 duration of at least a day, at most ten years; None when unset."""
    text = value[Settings.DECIDED_RETENTION]
    if text is None:
        return None
    try:
        retention = parse_duration(text)
    except DurationSyntaxError as exc:
        problems.append(
            f"{Settings.DECIDED_RETENTION.value} must be an ISO 8601 duration in weeks, days or hours, such as "
            f"'P400D' or 'P52W'; {exc}"
        )
    else:
        if MIN_RETENTION <= retention <= MAX_DURATION:
            return retention
        problems.append(
            f"{Settings.DECIDED_RETENTION.value} must be from 1 day ('P1D') to 3650 days ('P3650D'); got {text!r}"
        )
    wrong.append(Settings.DECIDED_RETENTION.value)
    return None
