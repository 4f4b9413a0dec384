"""A refund graph whose policy allows standing grants, for the grant tests; the router loads it by
`AGENT_WAIT_GRAPH="tests.agents.grant_graphs:build_granted_refund_graph"`.

    START → refund → END   (`issue_refund(order_id, amount)` asks, under `GRANTING`, every time)

`REFUNDS` counts the body's runs by order id, so a test can show each approved refund ran exactly once.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait
from agent_wait.policy import GrantOffer, GrantRequest, Grants
from agent_wait.policy.pins import Pin

UP_TO_500_FOR_AN_HOUR = GrantOffer(
    "Approve, and allow refunds up to 500 for an hour (3 uses)",
    GrantRequest(scope="agent", ttl=timedelta(hours=1), uses=3, pins={"amount": Pin("at_most", 500)}),
)
"""The fixed grant the policy offers doors without a form (Teams and email links, Slack's buttons)."""

GRANTING = WaitPolicy(
    timeout="P1D",
    default={"action": "reject"},
    tags={"team": "finance"},
    grants=Grants(max_ttl="PT1H", max_uses=3, offers=[UP_TO_500_FOR_AN_HOUR]),
)

_lock = threading.Lock()
REFUNDS: Counter[str] = Counter()
"""Runs of `issue_refund`'s body, by order id."""


class RefundState(TypedDict):
    order_id: str
    amount: int
    result: NotRequired[Any]


@wait(GRANTING)
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    with _lock:
        REFUNDS[order_id] += 1
    return {"status": "refunded", "amount": amount}


def refund(state: RefundState) -> dict[str, Any]:
    return {"result": issue_refund(state["order_id"], state["amount"])}


def build_granted_refund_graph(checkpointer: Any) -> Any:
    builder = StateGraph(RefundState)
    builder.add_node("refund", refund)
    builder.add_edge(START, "refund")
    builder.add_edge("refund", END)
    return builder.compile(checkpointer=checkpointer)
