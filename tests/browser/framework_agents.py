"""A refund agent in each framework the router hosts besides LangGraph, for the inbox's browser tests.

The start message's `input` is the prompt `"refund:<order>:<amount>"`. The model (scripted, no network) calls
`issue_refund(order_id, amount)` once; the tool is `@wait` under a policy that allows edits, and the amount it
really pays is kept per order in `PAID`, so a test sees what an edited approval paid. Once the tool has
answered, the model replies in text and the run ends.

    AGENT_WAIT_GRAPH=tests.browser.framework_agents:strands_refund       a Strands agent factory
    AGENT_WAIT_GRAPH=tests.browser.framework_agents:pydantic_ai_refund   a Pydantic AI agent
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import AsyncGenerator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from strands.models.model import Model
from strands.types.streaming import StreamEvent

import agent_wait.pydantic_ai
import agent_wait.strands
from agent_wait import WaitPolicy
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests, RunContext
from strands import Agent as StrandsAgent
from strands import tool

POLICY = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "note": "nobody answered in time"},
    allowed_actions=["approve", "reject"],
    tags={"approver_group": "finance"},
    allow_edits=True,
)
"""Finance approves or rejects within three days (rejected if nobody does); an approver may edit the call."""

_lock = threading.Lock()
PAID: defaultdict[str, list[int]] = defaultdict(list)
"""Per order id, the amount of every refund the tool's body paid."""


def paid(order_id: str) -> list[int]:
    with _lock:
        return list(PAID[order_id])


def _pay(order_id: str, amount: int) -> str:
    with _lock:
        PAID[order_id].append(amount)
    return f"refunded {amount} on {order_id}"


def _asked(prompt: str) -> tuple[str, dict[str, Any]]:
    """The refund a prompt `refund:<order>:<amount>` asks for: a call id unique to the order, the tool's arguments.

    (A model's call ids are unique; Pydantic AI's question id is the call id, so one per order here too.)
    """
    _, order_id, amount = prompt.split(":")
    return f"refund-{order_id}", {"order_id": order_id, "amount": int(amount)}


# -- Strands ----------------------------------------------------------------------------------------------------


class PromptedStrandsModel(Model):
    """Calls `issue_refund` with what the prompt asks; once a tool result is back it answers in text."""

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> Any:
        return {}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model has no structured output")

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        last = messages[-1]["content"]
        yield {"messageStart": {"role": "assistant"}}
        if any("toolResult" in block for block in last):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        call_id, args = _asked("".join(block.get("text", "") for block in last))
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": "issue_refund"}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def _strands_tool() -> Any:
    @tool(context=True)
    @agent_wait.strands.wait(POLICY)
    def issue_refund(order_id: str, amount: int) -> str:
        """Refund `amount` cents on an order."""
        return _pay(order_id, amount)

    return issue_refund


STRANDS_TOOL = _strands_tool()


def _strands_agent(session_manager: Any) -> StrandsAgent:
    return StrandsAgent(
        model=PromptedStrandsModel(),
        tools=[STRANDS_TOOL],
        callback_handler=None,
        session_manager=session_manager,
    )


strands_refund = agent_wait.strands.hosted(_strands_agent)

# -- Pydantic AI ------------------------------------------------------------------------------------------------


def _pydantic_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(part, UserPromptPart) for part in last.parts):
        call_id, args = _asked(next(str(part.content) for part in last.parts if isinstance(part, UserPromptPart)))
        return ModelResponse(parts=[ToolCallPart("issue_refund", args, tool_call_id=call_id)])
    return ModelResponse(parts=[TextPart("done")])


_pydantic_agent: PydanticAgent[Any, Any] = PydanticAgent(
    FunctionModel(_pydantic_model), output_type=[str, DeferredToolRequests]
)


@_pydantic_agent.tool
@agent_wait.pydantic_ai.wait(POLICY)
def issue_refund(ctx: RunContext[Any], order_id: str, amount: int) -> str:
    """Refund `amount` cents on an order."""
    return _pay(order_id, amount)


pydantic_ai_refund = _pydantic_agent
"""A Pydantic AI agent as is (no dependencies, the prompt is the start's input)."""
