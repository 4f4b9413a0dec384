"""The refund agent with one change for the answer API tests: only the finance group may answer.

The refund example's policy lets anyone signed in answer; this one sets `answerer_groups=("finance",)`
so a user outside finance gets a 403. The refund is recorded in the stack's refunds table, one row per
execution, like the example's. `AGENT_WAIT_GRAPH=local_api_graph:build_graph` names it (this directory
is on `sys.path` while its tests run).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from examples.refund_agent.graph import AUTO_APPROVE_LIMIT, RefundState, load_order, notify
from examples.refund_agent.settings import REFUND_TABLE_VARIABLE
from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

FINANCE_ONLY = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "reason": "no response within P3D"},
    allowed_actions=("approve", "reject"),
    tags={"approver_group": "finance"},
    answerer_groups=("finance",),
)


@wait(FINANCE_ONLY, when=lambda order_id, amount: amount > AUTO_APPROVE_LIMIT)
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    """Pay the refund: one row in the refunds table per execution."""
    import boto3

    refund_id = f"rf-{uuid.uuid4().hex[:12]}"
    boto3.client("dynamodb").put_item(
        TableName=os.environ[REFUND_TABLE_VARIABLE],
        Item={"order_id": {"S": order_id}, "refund_id": {"S": refund_id}, "amount": {"N": str(amount)}},
    )
    return {"status": "refunded", "refund_id": refund_id, "amount": amount}


def refund(state: RefundState) -> dict[str, Any]:
    return {"refund": issue_refund(state["order_id"], state["amount"])}


def build_graph(checkpointer: Any) -> Any:
    """The compiled graph: load_order → refund (finance only) → notify."""
    builder = StateGraph(RefundState)
    builder.add_node("load_order", load_order)
    builder.add_node("refund", refund)
    builder.add_node("notify", notify)
    builder.add_edge(START, "load_order")
    builder.add_edge("load_order", "refund")
    builder.add_edge("refund", "notify")
    builder.add_edge("notify", END)
    return builder.compile(checkpointer=checkpointer)
