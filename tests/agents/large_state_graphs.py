"""A LangGraph graph whose state passes DynamoDB's 400 KB item limit, for the checkpoint bucket tests.

    build_graph   START → remember → review → recall → END

`remember` adds `size` bytes of notes to the state (one write: a step's writes and every checkpoint after it
are that large), `review` asks finance's question, and `recall` records how many bytes of notes it was
resumed with, in `RECALLED` by order id. `REMEMBERED` counts `remember`'s runs. Always import this module as
`tests.agents.large_state_graphs`, the name the router imports it by.
"""

from __future__ import annotations

import hashlib
import operator
import threading
from collections import Counter
from typing import Annotated, Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject", "reason": "timeout"}, allow_edits=False)

_lock = threading.Lock()
REMEMBERED: Counter[str] = Counter()
"""Runs of `remember`, by order id."""
RECALLED: dict[str, int] = {}
"""Bytes of notes `recall` saw, by order id."""


class NotesState(TypedDict):
    order_id: str
    size: int
    notes: Annotated[list[str], operator.add]
    review: NotRequired[Any]


def notes_for(order_id: str, size: int) -> str:
    """`size` characters that do not compress much (hex of chained hashes), the same for the same order."""
    chunks, seed = [], order_id.encode()
    while sum(map(len, chunks)) < size:
        seed = hashlib.sha256(seed).digest()
        chunks.append(seed.hex())
    return "".join(chunks)[:size]


@wait(FINANCE)
def approve(order_id: str) -> dict[str, Any]:
    return {"status": "approved", "order_id": order_id}


def remember(state: NotesState) -> dict[str, Any]:
    with _lock:
        REMEMBERED[state["order_id"]] += 1
    return {"notes": [notes_for(state["order_id"], state["size"])]}


def review(state: NotesState) -> dict[str, Any]:
    return {"review": approve(state["order_id"])}


def recall(state: NotesState) -> dict[str, Any]:
    with _lock:
        RECALLED[state["order_id"]] = sum(map(len, state["notes"]))
    return {}


def build_graph(checkpointer: Any) -> Any:
    builder = StateGraph(NotesState)
    for node in (remember, review, recall):
        builder.add_node(node.__name__, node)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "review")
    builder.add_edge("review", "recall")
    builder.add_edge("recall", END)
    return builder.compile(checkpointer=checkpointer)
