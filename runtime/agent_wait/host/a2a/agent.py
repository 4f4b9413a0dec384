"""The hosted agent as an A2A agent: what its agent card says about it (`AGENT_WAIT_AGENT_CARD`). Standard library
only, so the settings read it without the `a2a` extra."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.errors import ArgumentError

__all__ = ("A2aAgent", "A2aSkill")

_SKILL_FIELDS = ("id", "name", "description", "tags")


@dataclass(frozen=True, slots=True)
class A2aSkill:
    """One skill the agent card lists."""

    id: str
    """A short id, unique on the card (`refund`)."""
    name: str
    """Its name for people (`Refund an order`)."""
    description: str
    """What it does, and what input it takes."""
    tags: tuple[str, ...] = ()
    """Keywords a client may search by."""


@dataclass(frozen=True, slots=True)
class A2aAgent:
    """The hosted agent's card fields.

    Example:
        A2aAgent.from_json({"name": "Refunds", "description": "Refunds an order; asks finance over 500"})
    """

    name: str
    """The agent's name on its card."""
    description: str
    """What the agent does, and what a message to it should hold (a data part with its input)."""
    skills: tuple[A2aSkill, ...] = ()
    """Its skills; none: one skill named after the agent."""
    version: str = "1.0.0"
    """The agent's own version, on its card."""
    private_push: bool = False
    """Allow push-notification URLs on loopback and private addresses (`agent-wait dev` and tests). Off by default:
    a signed-in caller must not make the router post inside the network it runs in (169.254.169.254, ...)."""

    @classmethod
    def from_json(cls, data: Any) -> A2aAgent:
        """The agent a JSON object describes.

        Raises:
            ArgumentError: not an object, `name` or `description` missing or not text, an unknown field, or a skill
                that is not an object with text `id`, `name` and `description` (the message names which).
        """
        if not isinstance(data, Mapping):
            raise ArgumentError(f"got a {type(data).__name__}, not an object")
        unknown = sorted(set(data) - {"name", "description", "skills", "version", "private_push"})
        if unknown:
            raise ArgumentError(f"unknown field(s) {unknown}; use name, description, skills, version and private_push")
        for key in ("name", "description"):
            if not isinstance(data.get(key), str) or not data[key].strip():
                raise ArgumentError(f"{key} must be non-empty text")
        skills = data.get("skills") or []
        if not isinstance(skills, list):
            raise ArgumentError("skills must be a list of objects")
        version = data.get("version", "1.0.0")
        if not isinstance(version, str):
            raise ArgumentError("version must be text")
        private_push = data.get("private_push", False)
        if not isinstance(private_push, bool):
            raise ArgumentError("private_push must be true or false")
        skill_list = tuple(_skill(i, s) for i, s in enumerate(skills))
        return cls(data["name"], data["description"], skill_list, version, private_push)


def _skill(index: int, data: Any) -> A2aSkill:
    if not isinstance(data, Mapping) or any(not isinstance(data.get(k), str) for k in _SKILL_FIELDS[:3]):
        raise ArgumentError(f"skills[{index}] must be an object with text id, name and description")
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ArgumentError(f"skills[{index}].tags must be a list of text")
    return A2aSkill(data["id"], data["name"], data["description"], tuple(tags))
