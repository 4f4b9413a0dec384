"""Small real LangGraph graphs for the binding's tests, over InMemorySaver and SqliteSaver.

Nothing here is mocked: every graph is a compiled `StateGraph` with a real checkpointer, every
question goes through LangGraph's own `interrupt()`, and every answer comes back through
`Command(resume={question_id: answer})`, exactly as the router sends it.
"""

# No `from __future__ import annotations` here: `State`'s hints must be real objects. Its module is named
# plain `conftest`, and LangGraph resolves string hints through sys.modules["conftest"], which may be
# another folder's conftest.

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

import agent_wait.asking.wait as wait_module
from agent_wait import InMemoryAnnounce

CHECKPOINTERS = ("memory", "sqlite")

ASKED_AT = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)


class State(TypedDict, total=False):
    """The state of every small graph here.

    `action`, `status`, `error`, `refused` and `note` exist so that a `@wait` node's in-place return
    (a rejection, an `edit_refused` value, an answer) lands in the state where a test can see it;
    LangGraph silently drops update keys the state does not declare.
    """

    order_id: str
    amount: int
    result: Any
    action: str
    status: str
    error: str
    refused: list[str]
    note: str


@pytest.fixture(params=CHECKPOINTERS)
def checkpointer(request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver]:
    """Each graph test runs once on InMemorySaver and once on SqliteSaver (a real serialising store)."""
    if request.param == "memory":
        yield InMemorySaver()
        return
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


@pytest.fixture(params=CHECKPOINTERS)
def async_saver(request: pytest.FixtureRequest) -> Callable[[], Any]:
    """`async with async_saver() as saver:` InMemorySaver or AsyncSqliteSaver, made inside the running loop."""
    kind = request.param

    @asynccontextmanager
    async def make() -> AsyncIterator[BaseCheckpointSaver]:
        if kind == "memory":
            yield InMemorySaver()
            return
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
            yield saver

    return make


@pytest.fixture
def asked_at(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """Freeze the clock `ask` and `@wait` read when a question is first asked, so `expires_at` can be pinned."""
    # Every binding packs its question with agent_wait.asking.wait.pack_question, which reads this clock.
    monkeypatch.setattr(wait_module, "utc_now", lambda: ASKED_AT)
    return ASKED_AT


@pytest.fixture
def memory() -> InMemoryAnnounce:
    return InMemoryAnnounce()


@pytest.fixture
def thread_id(unique: str) -> str:
    return f"thread-{unique}"


@pytest.fixture
def config(thread_id: str) -> dict[str, Any]:
    """The run config the router passes: only the thread id."""
    return {"configurable": {"thread_id": thread_id}}


def linear_graph(
    checkpointer: BaseCheckpointSaver, *nodes: Callable[..., Any], state: type = State, store: Any = None
) -> Any:
    """START -> nodes[0] -> ... -> END, compiled with `checkpointer`; nodes are named after their functions."""
    builder = StateGraph(state)
    previous = START
    for node in nodes:
        builder.add_node(node.__name__, node)
        builder.add_edge(previous, node.__name__)
        previous = node.__name__
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=checkpointer, store=store)


@pytest.fixture
def build_graph() -> Callable[..., Any]:
    """`build_graph(saver, node_a, ...)`: a linear graph over a saver of the test's choosing (async tests)."""
    return linear_graph


@pytest.fixture
def graph_of(checkpointer: BaseCheckpointSaver) -> Callable[..., Any]:
    """`graph_of(node_a, node_b)`: a linear graph over the parametrized checkpointer."""
    return lambda *nodes, state=State, store=None: linear_graph(checkpointer, *nodes, state=state, store=store)


def _resume(graph: Any, config: dict[str, Any], result: dict[str, Any], value: Any, *, index: int = 0) -> Any:
    question_id = result["__interrupt__"][index].id
    return graph.invoke(Command(resume={question_id: value}), config)


async def _aresume(graph: Any, config: dict[str, Any], result: dict[str, Any], value: Any, *, index: int = 0) -> Any:
    question_id = result["__interrupt__"][index].id
    return await graph.ainvoke(Command(resume={question_id: value}), config)


@pytest.fixture
def resume() -> Callable[..., Any]:
    """`resume(graph, config, result, answer)`: answer the question `result` is parked on, as the router does."""
    return _resume


@pytest.fixture
def aresume() -> Callable[..., Any]:
    """`await aresume(graph, config, result, answer)`: the same with `ainvoke`."""
    return _aresume


class Calls:
    """Counts calls of a body and keeps the arguments it ran with."""

    def __init__(self) -> None:
        self.args: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> None:
        self.args.append(kwargs)

    @property
    def count(self) -> int:
        return len(self.args)

    @property
    def last(self) -> dict[str, Any]:
        return self.args[-1]


@pytest.fixture
def calls() -> Calls:
    return Calls()
