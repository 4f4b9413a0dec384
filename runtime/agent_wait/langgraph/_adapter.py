"""`LangGraphAdapter`: drive a compiled LangGraph graph for a host (the router, `WaitPublisher`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from langgraph.types import Command, Interrupt

from agent_wait.asking.adapter import RunOutcome
from agent_wait.asking.delivery import RunBatcher
from agent_wait.asking.versions import (
    Compatibility,
    Migrated,
    Migration,
    Version,
    asked_function,
    function_problems,
    with_version,
)
from agent_wait.asking.wait import MARKER
from agent_wait.contract.envelope import Question
from agent_wait.errors import ArgumentError, VersionChangedError
from agent_wait.langgraph._interrupts import question_from_interrupt, questions_from_result
from agent_wait.langgraph._versions import graph_fingerprint, orphaned_interrupts, wait_functions

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
        version: your own name for this deploy of the graph (a date, a release), stamped on each question beside
            the graph's structure hash; a resume under another one is guarded (docs/versions.md). None: the hash only.
        migration: called when a question asked under another version resumes; it receives the old and new
            versions, the state and the answer (`agent_wait.asking.versions.VersionChange`) and returns
            `agent_wait.asking.versions.Migrated` or None (docs/versions.md). None: the policy's `on_new_version`
            decides.
    """

    framework = "langgraph"
    reruns_on_resume = True
    """LangGraph runs the interrupted node again from its start on resume: a host binds a `@wait` question's answer
    to the call it asked (`agent_wait.asking.adapter.resume_value_for`), so a re-run with other arguments runs
    nothing."""

    def __init__(
        self,
        graph: Any,
        *,
        use_async: bool = False,
        durability: str = "sync",
        version: str | None = None,
        migration: Migration | None = None,
    ) -> None:
        if getattr(graph, "checkpointer", None) in (None, False):
            raise ArgumentError(
                "LangGraphAdapter needs a graph compiled with a checkpointer (builder.compile(checkpointer=...)); "
                "without one a parked run cannot be resumed"
            )
        if version is not None and (not isinstance(version, str) or not version.strip()):
            raise ArgumentError(f"version must be a non-empty string such as '2026-12-04', or None; got {version!r}")
        if migration is not None and not callable(migration):
            raise ArgumentError(
                "migration must be a function of an agent_wait.asking.versions.VersionChange; "
                f"got a {type(migration).__name__}"
            )
        self.graph = graph
        self.use_async = use_async
        self.durability = durability
        self.version = version
        self.migration = migration

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
        return RunOutcome(result, tuple(self._stamped(q) for q in questions_from_result(result, thread_id)))

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        return self._invoke(value, thread_id)

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        return self._invoke(Command(resume={question_id: answer}), thread_id)

    def continue_run(self, thread_id: str) -> RunOutcome:
        # invoke(None) continues from the last checkpoint; completed steps are not run again.
        return self._invoke(None, thread_id)

    def pending(self, thread_id: str) -> list[Question]:
        """The questions the thread waits on, including any in a node the graph running now no longer has: the
        thread still waits there, and the version guard decides what its answer does (docs/versions.md)."""
        state = self.graph.get_state(self.config(thread_id))
        parked = [*state.interrupts, *orphaned_interrupts(self.graph, state)]
        return [self._stamped(question_from_interrupt(item, thread_id)) for item in parked]

    def progress(self, thread_id: str) -> str | None:
        state = self.graph.get_state(self.config(thread_id))
        return (state.config or {}).get("configurable", {}).get("checkpoint_id")

    def unfinished(self, thread_id: str) -> bool:
        state = self.graph.get_state(self.config(thread_id))
        # `state.next` leaves out tasks whose writes were saved before the crash, but the checkpoint that
        # would apply them never was: any task still listed means a run stopped part-way.
        return bool(state.tasks) and not state.interrupts

    # -- versions (docs/versions.md) ------------------------------------------------------------------

    @functools.cached_property
    def _graph_hash(self) -> str:
        return graph_fingerprint(self.graph)

    @functools.cached_property
    def _wait_functions(self) -> dict[str, str]:
        return wait_functions(self.graph)

    def deployed_version(self) -> Version:
        """The graph running now: its structure's hash and the user-set version."""
        return Version(graph=self._graph_hash, user=self.version)

    def _stamped(self, question: Question) -> Question:
        function = asked_function(question)
        signature = self._wait_functions.get(function) if function is not None else None
        stamp = replace(self.deployed_version(), function=function, signature=signature)
        return replace(question, source=with_version(question.source, stamp))

    def compatibility(self, thread_id: str, question_id: str, stamped: Version) -> Compatibility:
        """Whether the question can still resume in the graph running now: LangGraph still prepares the task it
        waits in (the node exists and is reached), and its `@wait` function exists with the same parameters."""
        state = self.graph.get_state(self.config(thread_id))
        node = next((task.name for task in state.tasks for item in task.interrupts if item.id == question_id), None)
        current = replace(
            self.deployed_version(),
            node=node,
            function=stamped.function,
            signature=self._wait_functions.get(stamped.function) if stamped.function is not None else None,
        )
        problems: tuple[str, ...] = ()
        if node is None:
            # The node is gone: its name is in the question it parked on (`ask` and `@wait` record it).
            node = next((_asked_in(i) for i in orphaned_interrupts(self.graph, state) if i.id == question_id), None)
            problems = (f"the node {node or '(unknown)'} it waits in is not in the graph running now",)
        asked = replace(stamped, node=node)
        return Compatibility(current, problems + function_problems(stamped, current), asked)

    def thread_state(self, thread_id: str) -> Any:
        """The thread's state values, as a migration receives them."""
        return self.graph.get_state(self.config(thread_id)).values

    def resume_migrated(self, thread_id: str, question_id: str, answer: Any, migrated: Migrated) -> RunOutcome:
        """Go on as a migration said: to `goto` with `update` applied, or resume the answer with `update` applied.

        Raises:
            VersionChangedError: `goto` names a node the graph running now does not have.
        """
        update = dict(migrated.update) if migrated.update is not None else None
        if migrated.goto is not None:
            if migrated.goto not in self.graph.nodes:
                raise VersionChangedError(
                    f"the migration sends thread {thread_id} to node {migrated.goto!r}, which the graph running now "
                    f"does not have (it has {sorted(n for n in self.graph.nodes if not n.startswith('__'))})",
                    thread_id=thread_id,
                    question_id=question_id,
                )
            return self._invoke(Command(update=update, goto=migrated.goto), thread_id)
        return self._invoke(Command(resume={question_id: answer}, update=update), thread_id)


def _asked_in(item: Interrupt) -> str | None:
    """The node an `ask`/`@wait` question was asked in, as it recorded it; None for a bare interrupt."""
    value = item.value
    meta = value.get(MARKER) if isinstance(value, Mapping) else None
    node = meta.get("node") if isinstance(meta, Mapping) else None
    return node if isinstance(node, str) else None
