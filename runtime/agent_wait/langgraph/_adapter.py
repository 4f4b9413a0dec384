"""`LangGraphAdapter`: drive a compiled LangGraph graph for a host (the router, `WaitPublisher`)."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from typing import Any

from langgraph.types import Command

from agent_wait._delivery import RunBatcher
from agent_wait.adapter import RunOutcome
from agent_wait.envelope import Question
from agent_wait.errors import ArgumentError
from agent_wait.langgraph._interrupts import question_from_interrupt, questions_from_result

__all__ = ("LangGraphAdapter",)

try:  # LangGraph 1.2 and later
    from langgraph.channels.delta import DeltaChannel
except ImportError:  # pragma: no cover - an older LangGraph has no DeltaChannel
    DeltaChannel = None


def uses_delta_channels(graph: Any) -> bool:
    """Whether the graph keeps a channel as deltas (`DeltaChannel`), whose value is rebuilt from the writes of
    earlier checkpoints: then no saved write may be left out, even one a later checkpoint already holds."""
    channels = getattr(graph, "channels", None) or {}
    return DeltaChannel is not None and any(isinstance(channel, DeltaChannel) for channel in channels.values())


class LangGraphAdapter:
    """Run, resume and inspect a compiled graph by thread id. The graph must have a checkpointer.

    Args:
        graph: a compiled graph (`builder.compile(checkpointer=...)`).
        use_async: drive the graph with `ainvoke` (for graphs with `async def` nodes).
        durability: LangGraph's checkpoint durability. `"sync"` (the default here; LangGraph's own is
            `"async"`) saves each step before the next one starts, so a host that dies mid-run re-runs
            at most the step in flight; with `"async"` later steps, and their side effects, can run
            ahead of a save that never lands and run again on redelivery.
    """

    framework = "langgraph"
    reruns_on_resume = True
    """LangGraph runs the interrupted node again from its start on resume: a host binds a `@wait` question's answer
    to the call it asked (`agent_wait.adapter.resume_value_for`), so a re-run with other arguments runs nothing."""

    def __init__(self, graph: Any, *, use_async: bool = False, durability: str = "sync") -> None:
        if getattr(graph, "checkpointer", None) in (None, False):
            raise ArgumentError(
                "LangGraphAdapter needs a graph compiled with a checkpointer (builder.compile(checkpointer=...)); "
                "without one a parked run cannot be resumed"
            )
        self.graph = graph
        self.use_async = use_async
        self.durability = durability

    @staticmethod
    def config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    def _invoke(self, value: Any, thread_id: str) -> RunOutcome:
        config = self.config(thread_id)
        # A checkpointer that batches a run's writes (agent-wait's DynamoDB saver) watches its tasks start and end.
        checkpointer = self.graph.checkpointer
        compact = not uses_delta_channels(self.graph)
        batch = checkpointer.batched_run(thread_id, compact=compact) if isinstance(checkpointer, RunBatcher) else None
        with batch if batch is not None else nullcontext() as watcher:
            if watcher is not None:
                config["callbacks"] = [watcher]
            if self.use_async:
                result = asyncio.run(self.graph.ainvoke(value, config, durability=self.durability))
            else:
                result = self.graph.invoke(value, config, durability=self.durability)
        # result["__interrupt__"] is the source of truth for what is pending after a run (DESIGN.md).
        return RunOutcome(result, tuple(questions_from_result(result, thread_id)))

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        return self._invoke(value, thread_id)

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        return self._invoke(Command(resume={question_id: answer}), thread_id)

    def continue_run(self, thread_id: str) -> RunOutcome:
        # invoke(None) continues from the last checkpoint; completed steps are not run again.
        return self._invoke(None, thread_id)

    def pending(self, thread_id: str) -> list[Question]:
        state = self.graph.get_state(self.config(thread_id))
        return [question_from_interrupt(item, thread_id) for item in state.interrupts]

    def progress(self, thread_id: str) -> str | None:
        state = self.graph.get_state(self.config(thread_id))
        return (state.config or {}).get("configurable", {}).get("checkpoint_id")

    def unfinished(self, thread_id: str) -> bool:
        state = self.graph.get_state(self.config(thread_id))
        # `state.next` leaves out tasks whose writes were saved before the crash, but the checkpoint that
        # would apply them never was: any task still listed means a run stopped part-way.
        return bool(state.tasks) and not state.interrupts
