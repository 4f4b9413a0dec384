"""Graphs whose branches run at once, one of them asking; the router loads them by `AGENT_WAIT_GRAPH`.

    build_three_branch_graph   START → prep → {a, b, c} → join → END   (b asks)
    build_fan_out_graph        START → prep → Send(worker, 0..3) → join → END   (worker 1 asks)

Every node execution is counted per thread (`RUNS`), so a test can tell a branch that ran again from one
that ran once. A node that asks counts each time it runs up to its question. Always import this module as
`tests.agents.branch_graphs`, the name the router imports it by.
"""

from __future__ import annotations

import operator
import threading
from collections import Counter
from typing import Annotated, Any, TypedDict

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agent_wait import WaitPolicy
from agent_wait.langgraph import ask

POLICY = WaitPolicy(timeout="P1D", default={"action": "reject"}, allow_edits=False)
WORKERS = 4
"""Branches `build_fan_out_graph` sends; worker 1 asks."""

_lock = threading.Lock()
RUNS: Counter[tuple[str, str]] = Counter()
"""Executions of each node, by (thread id, node); a `Send` worker is named `worker-<n>`."""


class Branches(TypedDict):
    log: Annotated[list[str], operator.add]


class Work(TypedDict):
    n: int


def _ran(node: str) -> None:
    thread_id = str(get_config()["configurable"]["thread_id"])
    with _lock:
        RUNS[(thread_id, node)] += 1


def runs(thread_id: str) -> dict[str, int]:
    """How many times each node ran on the thread."""
    with _lock:
        return {node: count for (thread, node), count in RUNS.items() if thread == thread_id}


def _quiet(node: str) -> Any:
    def run(state: Any) -> dict[str, Any]:
        _ran(node)
        return {"log": [node]}

    run.__name__ = node
    return run


def _asks(node: str) -> Any:
    def run(state: Any) -> dict[str, Any]:
        _ran(node)
        answer = ask({"node": node}, POLICY)
        return {"log": [f"{node}:{answer['action']}"]}

    run.__name__ = node
    return run


def build_three_branch_graph(checkpointer: Any) -> Any:
    """START → prep → {a, b, c} → join: a and c finish while b asks."""
    builder = StateGraph(Branches)
    for node in (_quiet("prep"), _quiet("a"), _asks("b"), _quiet("c"), _quiet("join")):
        builder.add_node(node.__name__, node)
    builder.add_edge(START, "prep")
    for branch in ("a", "b", "c"):
        builder.add_edge("prep", branch)
    builder.add_edge(["a", "b", "c"], "join")
    builder.add_edge("join", END)
    return builder.compile(checkpointer=checkpointer)


def _worker(work: Work) -> dict[str, Any]:
    name = f"worker-{work['n']}"
    if work["n"] == 1:
        return _asks(name)(work)
    return _quiet(name)(work)


def build_fan_out_graph(checkpointer: Any) -> Any:
    """START → prep → `Send("worker", n)` for n in 0..3 → join: worker 1 asks while the others finish."""
    builder = StateGraph(Branches)
    builder.add_node("prep", _quiet("prep"))
    builder.add_node("worker", _worker)
    builder.add_node("join", _quiet("join"))
    builder.add_edge(START, "prep")
    builder.add_conditional_edges("prep", lambda state: [Send("worker", {"n": n}) for n in range(WORKERS)], ["worker"])
    builder.add_edge("worker", "join")
    builder.add_edge("join", END)
    return builder.compile(checkpointer=checkpointer)
