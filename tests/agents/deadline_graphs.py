"""Refund graphs for precise deadlines and extensions (`tests/local/test_precise_deadlines.py`).

    build_quick_graph       a PT5S deadline with a reminder two seconds before it: both fire within the test
    build_extendable_graph  a PT1H deadline, a reminder after PT30M; members of ops may extend it by up to P1D

Always import this module as `tests.agents.deadline_graphs`, the name the router imports it by.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait
from agent_wait.policy.extension import Extension
from agent_wait.policy.followup import Reminder

DEFAULT = {"action": "reject", "reason": "no decision in time"}
# Two seconds between the reminder and the deadline: a delivery the loaded CI ran a second late would otherwise find the
# deadline come too, and rightly skip the reminder.
QUICK = WaitPolicy(timeout="PT5S", default=DEFAULT, reminders=[Reminder(before_deadline="PT2S")])
EXTENDABLE = WaitPolicy(
    timeout="PT1H", default=DEFAULT, reminders=["PT30M"], extend=Extension(groups=["ops"], max_total="P1D")
)


class State(TypedDict):
    order_id: str
    amount: int
    refund: NotRequired[Any]


@wait(QUICK, decision="decision")
def quick_refund(order_id: str, amount: int, decision: Any = None) -> dict[str, Any]:
    return {"status": "decided", "decision": decision}


@wait(EXTENDABLE, decision="decision")
def extendable_refund(order_id: str, amount: int, decision: Any = None) -> dict[str, Any]:
    return {"status": "decided", "decision": decision}


def _graph(checkpointer: Any, refund: Any) -> Any:
    def review(state: State) -> dict[str, Any]:
        return {"refund": refund(state["order_id"], state["amount"])}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)


def build_quick_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, quick_refund)


def build_extendable_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, extendable_refund)
