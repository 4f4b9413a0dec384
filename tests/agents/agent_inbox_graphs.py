"""A graph written for LangGraph's Agent Inbox: it parks on `interrupt([HumanInterrupt])` and acts on the reply.

The router loads it by `AGENT_WAIT_GRAPH="tests.agents.agent_inbox_graphs:build_agent_inbox_graph"`. It
follows the Agent Inbox pattern: `response = interrupt([request])[0]`, then `accept` runs the action as
asked, `edit` runs it with `response["args"]["args"]`, `response` records the reviewer's text for the
model, and `ignore` skips it. The start's `order_id` and `amount` are the action's arguments; `ACTIONS`
records what ran.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

_lock = threading.Lock()
ACTIONS: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
"""Per order id: the arguments of every refund that really ran."""

CONFIG = {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": True}
"""The `HumanInterruptConfig` (`langgraph.prebuilt.interrupt`, whose classes are deprecated; the shapes are not)."""


class InboxState(TypedDict):
    order_id: str
    amount: int
    outcome: NotRequired[str]


def actions(order_id: str) -> list[dict[str, Any]]:
    with _lock:
        return list(ACTIONS[order_id])


def review(state: InboxState) -> dict[str, Any]:
    request: dict[str, Any] = {
        "action_request": {
            "action": "issue_refund",
            "args": {"order_id": state["order_id"], "amount": state["amount"]},
        },
        "config": CONFIG,
        "description": f"Refund {state['amount']} cents on order {state['order_id']}?",
    }
    response: dict[str, Any] = interrupt([request])[0]
    if response["type"] == "accept":
        return {"outcome": _refund(request["action_request"]["args"])}
    if response["type"] == "edit":
        edited = response["args"]
        assert isinstance(edited, dict)
        return {"outcome": _refund(edited["args"])}
    if response["type"] == "response":
        return {"outcome": f"reviewer said: {response['args']}"}
    return {"outcome": "ignored"}


def _refund(args: dict[str, Any]) -> str:
    with _lock:
        ACTIONS[args["order_id"]].append(dict(args))
    return f"refunded {args['amount']}"


def build_agent_inbox_graph(checkpointer: Any) -> Any:
    builder = StateGraph(InboxState)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)
