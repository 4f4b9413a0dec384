"""A real `create_agent` graph with LangChain's `HumanInTheLoopMiddleware` and a scripted chat model.

The router loads it by `AGENT_WAIT_GRAPH="tests.agents.hitl_graphs:build_hitl_graph"`. The model reads the
user's message and calls tools; once a tool has answered (or a reviewer has, in its place) it finishes:

    "refund:<order>:<amount>"   one call to issue_refund (approve, edit, reject or respond allowed)
    "close:<order>"             one call to close_case (approve or reject only)
    "both:<order>:<amount>"     both calls in one turn: one interrupt with two action requests

Tools record what ran in `RUNS`, so a test sees whether a tool ran and with which arguments.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

_lock = threading.Lock()
RUNS: defaultdict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
"""Per order id: every tool call that really ran, as (tool name, arguments)."""

INTERRUPT_ON: dict[str, Any] = {
    "issue_refund": {"allowed_decisions": ["approve", "edit", "reject", "respond"]},
    "close_case": {"allowed_decisions": ["approve", "reject"]},
}


def runs(order_id: str) -> list[tuple[str, dict[str, Any]]]:
    with _lock:
        return list(RUNS[order_id])


@tool
def issue_refund(order_id: str, amount: int) -> str:
    """Refund `amount` cents on an order."""
    with _lock:
        RUNS[order_id].append(("issue_refund", {"order_id": order_id, "amount": amount}))
    return f"refunded {amount}"


@tool
def close_case(order_id: str) -> str:
    """Close the order's support case."""
    with _lock:
        RUNS[order_id].append(("close_case", {"order_id": order_id}))
    return "closed"


class ScriptedModel(BaseChatModel):
    """Calls the tools the user's message names, then answers "done" once any tool result is back."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        if any(isinstance(m, ToolMessage) for m in messages):
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="done"))])
        text = str(next(m for m in messages if isinstance(m, HumanMessage)).content)
        kind, order_id, *rest = text.split(":")
        calls = []
        if kind in ("refund", "both"):
            calls.append({"name": "issue_refund", "args": {"order_id": order_id, "amount": int(rest[0])}, "id": "c1"})
        if kind in ("close", "both"):
            calls.append({"name": "close_case", "args": {"order_id": order_id}, "id": "c2"})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=calls))])


def build_hitl_graph(checkpointer: Any) -> Any:
    """`create_agent` with both tools gated by `HumanInTheLoopMiddleware` (batched mode, the default)."""
    return create_agent(
        ScriptedModel(),
        tools=[issue_refund, close_case],
        middleware=[HumanInTheLoopMiddleware(interrupt_on=INTERRUPT_ON)],
        checkpointer=checkpointer,
    )


def start_input(kind: str, order_id: str, amount: int = 900) -> dict[str, Any]:
    text = f"{kind}:{order_id}" if kind == "close" else f"{kind}:{order_id}:{amount}"
    return {"messages": [{"role": "user", "content": text}]}


def build_hitl_per_call_graph(checkpointer: Any) -> Any:
    """The same agent in per-call mode: one interrupt per gated tool call, each with a typed `response_schema`."""
    return create_agent(
        ScriptedModel(),
        tools=[issue_refund, close_case],
        middleware=[HumanInTheLoopMiddleware(interrupt_on=INTERRUPT_ON, interrupt_mode="per_call")],
        checkpointer=checkpointer,
    )
