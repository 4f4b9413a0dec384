"""Two deploys of one refund graph, for the version guard on the emulator (docs/versions.md).

    build_v1    START → approve → refund → END     version "1": `approve` waits on `@wait issue_refund`
    build_v2    START → review → refund → END      version "2": `approve` renamed `review` (the waiting node is gone)
    migrated    build_v2 with a migration that carries the decided answer into the state and goes on to `refund`

The router loads each by `AGENT_WAIT_GRAPH="tests.agents.versioned_graphs:<name>"`. Refunds paid are counted per
order in `PAID`, so a test can assert the resume ran exactly once, or not at all.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.asking.versions import Migrated, VersionChange
from agent_wait.langgraph import versioned, wait

PAID: Counter[str] = Counter()
MIGRATIONS: list[VersionChange] = []


class Refund(TypedDict, total=False):
    order_id: str
    amount: int
    approval: Any
    paid: bool


@wait(WaitPolicy(timeout="P3D", default={"action": "reject"}))
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    return {"action": "approve"}


def approve(state: Refund) -> Refund:
    return {"approval": issue_refund(state["order_id"], state["amount"])}


def review(state: Refund) -> Refund:
    return {"approval": issue_refund(state["order_id"], state["amount"])}


def refund(state: Refund) -> Refund:
    approval = state.get("approval")
    if isinstance(approval, dict) and approval.get("action") == "approve":
        PAID[state["order_id"]] += 1
        return {"paid": True}
    return {"paid": False}


def _build(waits_in: str, node: Any, checkpointer: Any) -> Any:
    builder = StateGraph(Refund)
    builder.add_node(waits_in, node)
    builder.add_node("refund", refund)
    builder.add_edge(START, waits_in)
    builder.add_edge(waits_in, "refund")
    builder.add_edge("refund", END)
    return builder.compile(checkpointer=checkpointer)


def build_v1(checkpointer: Any) -> Any:
    return _build("approve", approve, checkpointer)


def build_v2(checkpointer: Any) -> Any:
    return _build("review", review, checkpointer)


def migrate(change: VersionChange) -> Migrated:
    """`approve` is gone: the decided answer goes into the state, and the thread goes on to `refund`."""
    MIGRATIONS.append(change)
    return Migrated(update={"approval": change.answer}, goto="refund")


v1 = versioned(build_v1, version="1")
v2 = versioned(build_v2, version="2")
migrated = versioned(build_v2, version="2", migration=migrate)
