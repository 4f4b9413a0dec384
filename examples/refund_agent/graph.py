"""The refund agent: a real LangGraph graph that asks finance before a large refund.

    START → load_order → refund → notify → END

`refund` calls `issue_refund`, which waits for finance (`@wait`, timeout P3D, default reject,
actions approve/reject, tag `approver_group=finance`) only when the amount is over the auto-approve
limit. The question is announced again after four hours (`wait.reminder`) and, after two days,
escalated to `approver_group=finance-managers` (`wait.escalated`). Every refund is written to a table,
one row per execution, so each scenario can show the refund ran exactly 0 or 1 times. The router names
this module as `examples.refund_agent.graph:build_graph` (in the wheel,
`agent_wait.examples.refund_agent.graph:build_graph`).
"""

from __future__ import annotations

import os
import uuid
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import Escalation, WaitPolicy
from agent_wait.langgraph import wait

from .settings import REFUND_TABLE_VARIABLE

AUTO_APPROVE_LIMIT = 500
"""Refunds up to this amount (in the order's currency units) are approved by policy."""

FINANCE = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "reason": "no response within P3D"},
    allowed_actions=("approve", "reject"),
    tags={"approver_group": "finance"},
    # An approver approves or rejects the refund as asked; nobody may approve a different amount.
    allow_edits=False,
    # Nobody has answered after four hours: announce the question again (wait.reminder).
    reminders=["PT4H"],
    escalation=[
        # Still open after two days: announce it again as wait.escalated, tagged approver_group=finance-managers
        # (the tag is laid over finance's, so an SNS filter policy on it reaches the managers). The policy
        # names no answerers, so anyone who can reach a way in (the queue, the answer API, a signed link)
        # may answer before and after this step: a step that adds groups to an unrestricted question keeps
        # it unrestricted. With answerer_groups=["finance"] on the policy, this step would let
        # finance-managers answer too, and finance would keep its right.
        Escalation(
            after="P2D",
            tags={"approver_group": "finance-managers"},
            answerer_groups=["finance-managers"],
        ),
    ],
)


class RefundState(TypedDict):
    order_id: str
    amount: int
    customer: NotRequired[str]
    refund: NotRequired[dict[str, Any]]
    notice: NotRequired[str]


def _record_refund(order_id: str, refund_id: str, amount: int) -> None:
    import boto3

    table = os.environ.get(REFUND_TABLE_VARIABLE)
    if not table:
        raise RuntimeError(f"{REFUND_TABLE_VARIABLE} is not set; the RefundAgentStack sets it for the router")
    boto3.client("dynamodb").put_item(
        TableName=table,
        Item={"order_id": {"S": order_id}, "refund_id": {"S": refund_id}, "amount": {"N": str(amount)}},
    )


@wait(FINANCE, when=lambda order_id, amount: amount > AUTO_APPROVE_LIMIT)
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    """Pay the refund: the side effect that must run at most once per order."""
    refund_id = f"rf-{uuid.uuid4().hex[:12]}"
    _record_refund(order_id, refund_id, amount)
    return {"status": "refunded", "refund_id": refund_id, "amount": amount}


def load_order(state: RefundState) -> dict[str, Any]:
    """Validate the order the start message names (a real agent would read it from the order system)."""
    amount = state.get("amount")
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError(f"order {state.get('order_id')!r}: amount must be a positive whole number")
    return {"customer": state.get("customer") or "customer@example.com"}


def refund(state: RefundState) -> dict[str, Any]:
    return {"refund": issue_refund(state["order_id"], state["amount"])}


def notify(state: RefundState) -> dict[str, Any]:
    outcome = state.get("refund", {})
    if outcome.get("status") == "refunded":
        return {"notice": f"Refund of {outcome['amount']} issued for order {state['order_id']}."}
    reason = outcome.get("reason") or outcome.get("note") or "not approved"
    return {"notice": f"Refund for order {state['order_id']} declined: {reason}."}


def build_graph(checkpointer: Any) -> Any:
    """The compiled refund graph; the router passes its DynamoDB checkpointer."""
    builder = StateGraph(RefundState)
    builder.add_node("load_order", load_order)
    builder.add_node("refund", refund)
    builder.add_node("notify", notify)
    builder.add_edge(START, "load_order")
    builder.add_edge("load_order", "refund")
    builder.add_edge("refund", "notify")
    builder.add_edge("notify", END)
    return builder.compile(checkpointer=checkpointer)
