"""The A2A setting, checked: the hosted agent as an A2A agent (`AGENT_WAIT_AGENT_CARD`), or None when A2A is off."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.host.a2a.agent import A2aAgent

__all__ = ("a2a_settings",)

_EXAMPLE = '{"name": "Refunds", "description": "Refunds an order; asks finance over the limit"}'


def a2a_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`a2a` for `HostSettings`: the agent `AGENT_WAIT_AGENT_CARD` describes, with every problem added to `problems`."""
    text = value[Settings.AGENT_CARD]
    if text is None:
        return {"a2a": None}
    try:
        agent = A2aAgent.from_json(json.loads(text))
    except ValueError as exc:  # bad JSON, or an ArgumentError saying what is wrong
        problems.append(f"{Settings.AGENT_CARD.value} must be a JSON object such as {_EXAMPLE}: {exc}")
        wrong.append(Settings.AGENT_CARD.value)
        return {"a2a": None}
    return {"a2a": agent}
