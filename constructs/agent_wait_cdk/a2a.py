"""`A2aProps`: the hosted agent called over A2A v1.0, as `AgentWait(a2a=...)` takes it (docs/a2a.md).

With it, the answer API serves the agent's card (`GET /.well-known/agent-card.json`, no authorizer) and its
JSON-RPC endpoint (`POST /a2a`, behind the JWT authorizer), and the router tells each task's push-notification
configs of its state changes. Both functions get `AGENT_WAIT_AGENT_CARD`; their bundles keep `a2a-sdk`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_wait_cdk import _shapes as shapes

__all__ = ("A2aProps",)


@dataclass(frozen=True, kw_only=True)
class A2aProps:
    """What the hosted agent's A2A card says about it.

    Example:
        AgentWait(
            self, "AgentWait", graph="my_agent.graph:build_graph", answer_api=True, answer_api_props=...,
            a2a=A2aProps(name="Refunds", description="Refunds an order: send {order_id, amount} as a data part"),
        )
    """

    name: str
    """The agent's name on its card."""
    description: str
    """What the agent does, and what its first message should hold (a data part with the agent's input)."""
    skills: Sequence[Mapping[str, object]] = ()
    """Its skills, each `{"id", "name", "description", "tags"}`. Default none: one skill named after the agent."""
    version: str = "1.0.0"
    """The agent's own version, on its card."""

    def environment(self) -> dict[str, str]:
        """`AGENT_WAIT_AGENT_CARD` for the router and the answer API."""
        card: dict[str, object] = {"name": self.name, "description": self.description, "version": self.version}
        if self.skills:
            card["skills"] = [dict(skill) for skill in self.skills]
        return {shapes.ENV_AGENT_CARD: json.dumps(card, separators=(",", ":"))}
