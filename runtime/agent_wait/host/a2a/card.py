"""The hosted agent's public A2A card: its JSON-RPC endpoint, how to sign in, what it can do."""

from __future__ import annotations

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)

from agent_wait.host.a2a.agent import A2aAgent

__all__ = ("RPC_PATH", "agent_card")

RPC_PATH = "/a2a"
"""Where the JSON-RPC endpoint is served on the answer API."""


def agent_card(agent: A2aAgent, api_url: str) -> AgentCard:
    """The hosted agent's public card: its JSON-RPC endpoint (`<api>/a2a`, A2A 1.0), bearer JWT auth, push
    notifications and no streaming."""
    skills = agent.skills or ()
    listed = [
        AgentSkill(id=skill.id, name=skill.name, description=skill.description, tags=list(skill.tags))
        for skill in skills
    ] or [AgentSkill(id="run", name=agent.name, description=agent.description, tags=["agent-wait"])]
    card = AgentCard(
        name=agent.name,
        description=agent.description,
        version=agent.version,
        supported_interfaces=[
            AgentInterface(url=f"{api_url.rstrip('/')}{RPC_PATH}", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False, push_notifications=True),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=listed,
    )
    card.security_schemes["bearer"].CopyFrom(
        SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer", bearer_format="JWT"))
    )
    card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList()}))
    return card
