"""A scripted Strands model provider: the first request calls the given tools, the next one reports their results.

A real subclass of `strands.models.Model` streaming real events; no network, no Bedrock. (This
directory has no `__init__.py` on purpose: `tests/strands` as a package would shadow the real `strands`.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from strands.models.model import Model
from strands.types.streaming import StreamEvent

from strands import Agent


class ScriptedModel(Model):
    """Calls `calls` (tool name, input, toolUseId) in one assistant message, then answers with text.

    The text is the JSON of `{toolUseId: tool result text}`; every such dict is also kept in `seen`,
    and every tool spec offered is kept in `specs`.
    """

    def __init__(self, calls: Sequence[tuple[str, dict[str, Any], str]]) -> None:
        self.calls = list(calls)
        self.seen: list[dict[str, Any]] = []
        self.specs: dict[str, Any] = {}

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> Any:
        return {}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model has no structured output")

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        self.specs.update({spec["name"]: spec for spec in tool_specs or []})
        results = [block["toolResult"] for block in messages[-1]["content"] if "toolResult" in block]
        yield {"messageStart": {"role": "assistant"}}
        if results:
            seen = {r["toolUseId"]: _text(r) for r in results}
            self.seen.append(seen)
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": json.dumps(seen)}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for name, tool_input, tool_use_id in self.calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}

    @property
    def last_seen(self) -> dict[str, Any]:
        assert self.seen, "the model never received a tool result"
        return self.seen[-1]


def _text(result: Any) -> Any:
    """A tool result's text, parsed as JSON when it is JSON; status errors are marked."""
    text = "".join(block.get("text", "") for block in result["content"])
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    return {"error": value} if result.get("status") == "error" else value


def scripted_agent(
    tools: Sequence[Any], *calls: tuple[str, dict[str, Any], str], **agent_kwargs: Any
) -> tuple[Agent, ScriptedModel]:
    """A Strands agent with `tools`, driven by a `ScriptedModel` of `calls`."""
    model = ScriptedModel(calls)
    return Agent(model=model, tools=list(tools), callback_handler=None, **agent_kwargs), model
