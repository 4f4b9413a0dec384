"""A thread parked on one question through the router on the emulator, and ways to answer and inspect it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.aws_stack import reset_handlers

from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import Router
from agent_wait.host import HostSettings, build_router


@dataclass
class Parked:
    router: Router
    thread_id: str
    question_id: str

    def answer(self, answer: Any, answer_id: str = "a-1") -> Any:
        message = {"thread_id": self.thread_id, "question_id": self.question_id, "answer": answer}
        return self.router.handle(json.dumps({**message, "answer_id": answer_id}))

    def record(self) -> Any:
        record = self.router.ledger.get(self.thread_id, self.question_id)
        assert record is not None
        return record

    def status(self) -> QuestionStatus:
        return self.record().status

    def values(self) -> dict[str, Any]:
        """The thread's graph state now."""
        config = {"configurable": {"thread_id": self.thread_id}}
        return self.router.adapter.graph.get_state(config).values  # type: ignore[attr-defined]


def router_for(graph: str, monkeypatch: pytest.MonkeyPatch) -> Router:
    """The router over `graph` (`module:attr`), on the `host` fixture's resources."""
    monkeypatch.setenv(Settings.GRAPH.value, graph)
    reset_handlers()
    return build_router(HostSettings.from_env("router"))


def parking_router(graph: str, monkeypatch: pytest.MonkeyPatch, prefix: str) -> Callable[[dict[str, Any]], Parked]:
    """A way to park a new thread of `graph` on its one question: give it the graph input, get the `Parked`."""
    router = router_for(graph, monkeypatch)
    count = iter(range(1000))

    def start(graph_input: dict[str, Any]) -> Parked:
        n = next(count)
        thread_id = f"{prefix}-{n}"
        started = router.handle(json.dumps({"thread_id": thread_id, "input": graph_input, "start_id": f"s-{n}"}))
        (question_id,) = started.asked
        return Parked(router, thread_id, question_id)

    return start
