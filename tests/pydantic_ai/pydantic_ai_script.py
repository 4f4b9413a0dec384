"""A scripted Pydantic AI model: the first request calls the given tools, the next one reports their returns.

No network: this is Pydantic AI's own `FunctionModel` driven by a script. (This directory has no
`__init__.py` on purpose: `tests/pydantic_ai` as a package would shadow the real `pydantic_ai`.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai import Agent, DeferredToolRequests


@dataclass
class Script:
    """Tool calls the model makes on its first request; what it saw on every later one."""

    calls: Sequence[tuple[str, dict[str, Any], str]]
    """(tool name, args, tool_call_id) per call, all in one model response."""
    seen: list[dict[str, Any]] = field(default_factory=list)
    """The tool returns the model received, one dict {tool_call_id: content} per later request."""
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The JSON schema of every tool the model was offered, by name."""

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.schemas.update({tool.name: tool.parameters_json_schema for tool in info.function_tools})
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
        if returns:
            seen = {p.tool_call_id: p.content for p in returns}
            self.seen.append(seen)
            return ModelResponse(parts=[TextPart(json.dumps(seen, default=str))])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=tid) for name, args, tid in self.calls])

    @property
    def last_seen(self) -> dict[str, Any]:
        assert self.seen, "the model never received a tool return"
        return self.seen[-1]


def scripted_agent(*calls: tuple[str, dict[str, Any], str]) -> tuple[Agent[Any, Any], Script]:
    """An agent whose output may be deferred calls, driven by a `Script` of `calls`."""
    script = Script(calls)
    agent: Agent[Any, Any] = Agent(FunctionModel(script), output_type=[str, DeferredToolRequests])
    return agent, script
