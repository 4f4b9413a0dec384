"""The named policies `ask_person` may ask under, configured on the host: a client picks one, never widens it.

The operator names each policy the MCP server offers (`AgentWait(mcp=McpProps(policies={...}))`, deployed as the
API function's `AGENT_WAIT_MCP_POLICIES`: `{"policies": {"<name>": <WaitPolicy.to_dict()>, ...}, "default": "<name>"}`).
A call names one (`policy`), or gives `tags` that select exactly one (every tag given equals that policy's tag),
or names none and gets the default. Who may answer, the deadline and its default are the policy's: a client cannot
name answerers, and an unknown policy is refused (`ArgumentError`, which the tool answers as an error result).
Standard library only.

Example:
    >>> from agent_wait.policy import WaitPolicy
    >>> named = McpPolicies({"refunds": WaitPolicy(timeout="P1D", default={"action": "reject"})}, default="refunds")
    >>> named.select(None, None)[0]
    'refunds'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_wait.contract.settings import Settings
from agent_wait.errors import ArgumentError, ConfigurationError, PolicyError
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("POLICIES_VARIABLE", "McpPolicies")

POLICIES_VARIABLE = Settings.MCP_POLICIES.value
"""The API function's setting that names the MCP server's policies (JSON); unset: the MCP routes answer 404."""


@dataclass(frozen=True)
class McpPolicies:
    """The policies `ask_person` may ask under, by name, and which applies when a call names none.

    Args:
        policies: each policy by the name a client gives (`policy`).
        default: the name used when a call names no policy and gives no tags; None: a call must name one.
    """

    policies: Mapping[str, WaitPolicy]
    default: str | None = None
    _names: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.policies:
            raise ConfigurationError(["the MCP server needs at least one named policy"], variables=[POLICIES_VARIABLE])
        if self.default is not None and self.default not in self.policies:
            raise ConfigurationError(
                [f"the default MCP policy {self.default!r} is not one of the named policies {sorted(self.policies)}"],
                variables=[POLICIES_VARIABLE],
            )
        object.__setattr__(self, "_names", tuple(sorted(self.policies)))

    @property
    def names(self) -> tuple[str, ...]:
        """The policies' names, sorted (what `tools/list` offers as the `policy` argument's enum)."""
        return self._names

    def select(self, name: object, tags: object) -> tuple[str, WaitPolicy]:
        """The (name, policy) a call asks under: the one it names, else the one its tags select, else the default.

        Raises:
            ArgumentError: an unknown name, tags that are not strings or select no policy or several, or no
                policy named, no tags and no default.
        """
        if name is not None:
            if not isinstance(name, str) or name not in self.policies:
                raise ArgumentError(
                    f"unknown policy {name!r}; this server asks under {list(self.names)} (the operator names them)",
                    argument="policy",
                )
            return name, self.policies[name]
        if tags is not None:
            return self._by_tags(tags)
        if self.default is None:
            raise ArgumentError(f"name a policy: one of {list(self.names)}", argument="policy")
        return self.default, self.policies[self.default]

    def _by_tags(self, tags: object) -> tuple[str, WaitPolicy]:
        if not isinstance(tags, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items()):
            raise ArgumentError('tags must be an object of strings, e.g. {"team": "finance"}', argument="tags")
        if not tags:
            raise ArgumentError("tags must name at least one tag, or leave tags out", argument="tags")
        found = [n for n in self.names if all(self.policies[n].tags.get(k) == v for k, v in tags.items())]
        if len(found) != 1:
            what = "no policy" if not found else f"several policies {found}"
            raise ArgumentError(
                f"the tags {dict(tags)} select {what}; name a policy: one of {list(self.names)}", argument="tags"
            )
        return found[0], self.policies[found[0]]

    def to_json(self) -> str:
        """The setting's text (`AGENT_WAIT_MCP_POLICIES`), as `from_json` reads it back."""
        policies = {name: policy.to_dict() for name, policy in self.policies.items()}
        return json.dumps({"policies": policies, "default": self.default}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> McpPolicies:
        """Read the setting written by `to_json`.

        Raises:
            ConfigurationError: not JSON, not the setting's shape, or a policy that is not a valid `WaitPolicy`.
        """
        try:
            data: Any = json.loads(text)
        except ValueError:
            data = None
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("policies"), dict)
            or set(data) - {"policies", "default"}
        ):
            raise ConfigurationError(
                [
                    f'{POLICIES_VARIABLE} must be JSON like {{"policies": {{"refunds": {{"timeout": "P1D"}}}}, '
                    '"default": "refunds"}}'
                ],
                variables=[POLICIES_VARIABLE],
            )
        policies: dict[str, WaitPolicy] = {}
        problems: list[str] = []
        for name, fields in data["policies"].items():
            try:
                policies[name] = WaitPolicy.from_dict(fields if isinstance(fields, dict) else {"policy": fields})
            except PolicyError as exc:
                problems.append(f"{POLICIES_VARIABLE}: policy {name!r}: {exc}")
        if problems:
            raise ConfigurationError(problems, variables=[POLICIES_VARIABLE])
        default = data.get("default")
        if default is not None and not isinstance(default, str):
            raise ConfigurationError(
                [f"{POLICIES_VARIABLE}: default must be a policy's name"], variables=[POLICIES_VARIABLE]
            )
        return cls(policies, default)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> McpPolicies | None:
        """The policies `environ` names (`AGENT_WAIT_MCP_POLICIES`), or None when the MCP server is off."""
        text = environ.get(POLICIES_VARIABLE)
        return cls.from_json(text) if text else None
