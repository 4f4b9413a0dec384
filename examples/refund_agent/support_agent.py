"""A LangChain support agent that refunds through `HumanInTheLoopMiddleware`: the demo's middleware scenario.

    create_agent(model, tools=[issue_refund], middleware=[HumanInTheLoopMiddleware(...)])

The middleware asks finance before every refund (approve, edit or reject), in its own shape; the
router announces it like any question and takes the middleware's own `{"decisions": [...]}` answer
(or ours, `{"action": "approve"}`). The model is scripted, so the demo needs no LLM: it asks for the
refund the user's message names (`"<order id>:<amount>"`) and reports once the tool has answered.
Refunds go to the stack's refunds table, one row per execution, like the refund graph's.
Needs `langchain` (installed with the dev dependencies); the deployed stack runs `graph.py`.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from .graph import _record_refund

__all__ = ("SUPPORT_GRAPH", "build_graph", "start_input")

SUPPORT_GRAPH = f"{__package__}.support_agent:build_graph"
"""What `AGENT_WAIT_GRAPH` names to run this agent behind the router."""


@tool
def issue_refund(order_id: str, amount: int) -> str:
    """Refund `amount` on an order."""
    _record_refund(order_id, f"rf-{uuid.uuid4().hex[:12]}", amount)
    return f"refunded {amount} on {order_id}"


class ScriptedModel(BaseChatModel):
    """Calls `issue_refund` for the order the user names, then answers with what the tool (or finance) said."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=str(results[-1].content)))])
        order_id, amount = str(next(m for m in messages if isinstance(m, HumanMessage)).content).split(":")
        call = {"name": "issue_refund", "args": {"order_id": order_id, "amount": int(amount)}, "id": "refund-1"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=[call]))])


def build_graph(checkpointer: Any) -> Any:
    """The compiled agent; every refund waits for finance's decision."""
    review: dict[str, Any] = {
        "issue_refund": {"allowed_decisions": ["approve", "edit", "reject"], "description": "Refund requested"}
    }
    return create_agent(
        ScriptedModel(),
        tools=[issue_refund],
        middleware=[HumanInTheLoopMiddleware(interrupt_on=review)],
        checkpointer=checkpointer,
    )


def start_input(order_id: str, amount: int) -> dict[str, Any]:
    """The start message's `input`: the customer's request."""
    return {"messages": [{"role": "user", "content": f"{order_id}:{amount}"}]}
