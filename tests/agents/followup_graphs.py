"""Refund graphs whose question has follow-ups: reminders and an escalation step, or a two-person quorum.

    build_escalating_graph  finance may approve; reminded after PT4H and P1D before the P3D deadline;
                            after P2D also routed to finance-managers, who may then answer too
    build_quorum_graph      two distinct approvers needed, any reject decides at once; reminded after P1D
    build_named_graph       only alice may approve, named by her address as a policy author might write it
    build_busy_graph        two distinct approvers needed; reminded after PT1H, escalated to managers after
                            PT2H, due in P1D: every kind of envelope a question can owe

Always import this module as `tests.agents.followup_graphs`, the name the router imports it by.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait
from agent_wait.policy.followup import Escalation, Reminder

DEFAULT = {"action": "reject", "reason": "no decision in time"}

ESCALATING = WaitPolicy(
    timeout="P3D",
    default=DEFAULT,
    tags={"approver_group": "finance"},
    answerer_groups=["finance"],
    reminders=["PT4H", Reminder(before_deadline="P1D")],
    escalation=[
        Escalation(after="P2D", tags={"approver_group": "finance-managers"}, answerer_groups=["finance-managers"])
    ],
)
QUORUM = WaitPolicy(timeout="P3D", default=DEFAULT, quorum=2, reminders=["P1D"])
NAMED = WaitPolicy(timeout="P3D", default=DEFAULT, answerer_principals=["email:Alice@Example.com"])
BUSY = WaitPolicy(
    timeout="P1D",
    default=DEFAULT,
    quorum=2,
    reminders=["PT1H"],
    escalation=[Escalation(after="PT2H", tags={"approver_group": "managers"})],
)

PAID: list[str] = []
"""Order ids refunded, in order (each must appear at most once)."""


class State(TypedDict):
    order_id: str
    amount: int
    refund: NotRequired[Any]


@wait(ESCALATING)
def escalating_refund(order_id: str, amount: int) -> dict[str, Any]:
    PAID.append(order_id)
    return {"status": "refunded", "amount": amount}


@wait(QUORUM, decision="decision")
def quorum_refund(order_id: str, amount: int, decision: Any = None) -> dict[str, Any]:
    if isinstance(decision, dict) and decision.get("action") == "approve":
        PAID.append(order_id)
        return {"status": "refunded", "amount": amount, "votes": decision.get("votes")}
    return {"status": "refused", "decision": decision}


@wait(NAMED)
def named_refund(order_id: str, amount: int) -> dict[str, Any]:
    PAID.append(order_id)
    return {"status": "refunded", "amount": amount}


@wait(BUSY, decision="decision")
def busy_refund(order_id: str, amount: int, decision: Any = None) -> dict[str, Any]:
    if isinstance(decision, dict) and decision.get("action") == "approve":
        PAID.append(order_id)
        return {"status": "refunded", "amount": amount}
    return {"status": "refused", "decision": decision}


def _graph(checkpointer: Any, refund: Any) -> Any:
    def review(state: State) -> dict[str, Any]:
        return {"refund": refund(state["order_id"], state["amount"])}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)


def build_escalating_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, escalating_refund)


def build_quorum_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, quorum_refund)


def build_named_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, named_refund)


def build_busy_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, busy_refund)
