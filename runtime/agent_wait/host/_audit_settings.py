"""The audit settings, checked: who may read the audit trail (`AGENT_WAIT_AUDIT_GROUP`). How long a decided question's
row is kept is a retention setting (`agent_wait.host._retention_settings`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_wait.contract.schema import Settings

__all__ = ("audit_settings",)

_GROUP = re.compile(r"[^\s,]{1,256}")
"""One group name, as `AnswerApiProps(audit_group=...)` takes it: a groups claim is read as a list of names split at
spaces and commas (`host.api.groups_from_claims`), so a name holding either could never match."""


def audit_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`audit_group` for `HostSettings`, with every problem added to `problems`."""
    return {"audit_group": _group(value, problems, wrong)}


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
