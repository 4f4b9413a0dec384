"""Graphs for the retention tests: a refund that asks with no deadline or with one further out than the retention.

    build_graph            START → prepare → review → finish → END; over 500, `review` asks with no deadline
    build_long_wait_graph  the same, asking with a 60-day deadline (and no extension)

Under 500 the thread finishes without asking. `FINISHED` counts `finish`'s runs by order id, so a test can tell a
resume that went on from the parked state from one that started afresh. Import this module as
`tests.agents.retention_graphs`, the name the router imports it by.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

OPEN_ENDED = WaitPolicy(allow_edits=False)
"""No deadline: the question waits until someone answers."""
LONG_WAIT = WaitPolicy(timeout="P60D", default={"action": "reject"}, allow_edits=False)
"""A deadline two retentions away."""

_lock = threading.Lock()
FINISHED: Counter[str] = Counter()
PREPARED: Counter[str] = Counter()


class State(TypedDict):
    order_id: str
    amount: int
    review: NotRequired[Any]
    done: NotRequired[bool]


@wait(OPEN_ENDED, when=lambda order_id, amount: amount > 500)
def approve(order_id: str, amount: int) -> dict[str, Any]:
    return {"status": "approved", "order_id": order_id}


@wait(LONG_WAIT, when=lambda order_id, amount: amount > 500)
def approve_later(order_id: str, amount: int) -> dict[str, Any]:
    return {"status": "approved", "order_id": order_id}


def prepare(state: State) -> dict[str, Any]:
    with _lock:
        PREPARED[state["order_id"]] += 1
    return {}


def finish(state: State) -> dict[str, Any]:
    with _lock:
        FINISHED[state["order_id"]] += 1
    return {"done": True}


def _graph(checkpointer: Any, ask: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("prepare", prepare)
    builder.add_node("review", lambda state: {"review": ask(state["order_id"], state["amount"])})
    builder.add_node("finish", finish)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)


def build_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, approve)


def build_long_wait_graph(checkpointer: Any) -> Any:
    return _graph(checkpointer, approve_later)
