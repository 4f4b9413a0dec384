"""A refund graph whose question needs a passkey: `require_passkey=True`, edits allowed, one approver.

Always import this module as `tests.agents.passkey_graphs`, the name the router imports it by.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

SIGNED = WaitPolicy(timeout="P1D", default={"action": "reject"}, allow_edits=True, require_passkey=True)
"""Every answer (approve or reject) is confirmed with the answerer's passkey."""
PAID: list[tuple[str, int]] = []


class State(TypedDict):
    order_id: str
    amount: int
    refund: NotRequired[Any]


@wait(SIGNED)
def signed_refund(order_id: str, amount: int) -> dict[str, Any]:
    PAID.append((order_id, amount))
    return {"status": "refunded", "amount": amount}


def build_passkey_graph(checkpointer: Any) -> Any:
    def review(state: State) -> dict[str, Any]:
        return {"refund": signed_refund(state["order_id"], state["amount"])}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)
