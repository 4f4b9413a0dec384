"""`PydanticAiAdapter`: drive a Pydantic AI agent for a host (the router, `WaitPublisher`), one thread per history.

Pydantic AI keeps nothing between runs, so the adapter keeps each thread in a `HistoryStore`: the
message history, the deferred calls the last run ended on, and the answers received so far. It
writes the store before it returns, so a host that acknowledges a message after `start`/`resume`
returns never loses a run, and every write is conditional on the version it read.

Facts about Pydantic AI 2.68 it is built on (pinned in tests/pydantic_ai/test_pydantic_ai_facts.py):
a resume must answer every deferred call of the run at once; a duplicate resume from the pre-resume
history runs the tool again; the approval metadata is only on the run's output, never in
`all_messages()`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

from agent_wait.asking.adapter import RunOutcome
from agent_wait.asking.versions import ToolVersioning
from agent_wait.asking.wait import EXPIRED_WITHOUT_DEFAULT
from agent_wait.contract.envelope import Question
from agent_wait.pydantic_ai._deferred import deferred_requests_of, deferred_tool_results, question_from_call
from agent_wait.pydantic_ai._history import DynamoDbHistoryStore, HistoryStore, StoredHistory

__all__ = ("MOVED_ON", "HostedAgent", "PydanticAiAdapter", "hosted")

MOVED_ON: dict[str, Any] = {
    "action": "cancelled",
    "reason": "a new message started another turn before this call was answered",
}
"""The answer a deferred call gets when a new start arrives while it is still unanswered (it is denied).

Pydantic AI refuses a new prompt while calls are deferred, and LangGraph drops a parked question when
a new input arrives; the adapter follows LangGraph: the new turn runs, the calls it moves past are
denied with this value, and the router records their questions as cancelled.
"""

_REQUESTS = TypeAdapter(DeferredToolRequests)


def _default_prompt(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class PydanticAiAdapter(ToolVersioning):
    """Run, resume and inspect a Pydantic AI agent by thread id, keeping each thread in `history`.

    - `start` runs a new turn on the stored history. On a thread still parked on deferred calls the
      new turn moves on: answers already received are applied, the others are denied with `MOVED_ON`.
    - `resume` records the answer. While other deferred calls of the same run are unanswered it runs
      nothing and returns them as still pending (Pydantic AI takes every answer of a run at once);
      the answer that completes the set runs the agent with all of them.
    - `pending` reads the store only; it never runs the agent. An id it does not list (answered,
      or never deferred) is never resumed: `resume` for it runs nothing.
    - A run is atomic from the host's point of view: the store is written after the run returns.
      A host that dies mid-run leaves the store as it was, so the message is retried and the run
      re-runs from the stored history: tools that ran before the crash run again (at least once,
      as a LangGraph task that dies before its checkpoint is written). `unfinished` is always False.

    Example:
        >>> adapter = PydanticAiAdapter(agent, history=InMemoryHistoryStore())  # doctest: +SKIP
        >>> adapter.start("order-4471", "refund order 4471")  # doctest: +SKIP

    Args:
        agent: the agent; its `output_type` must admit `DeferredToolRequests`.
        history: where threads are kept (`DynamoDbHistoryStore` in the router).
        deps: builds the run's dependencies from the thread id (`@wait(mode="async")` reads
            `deps.thread_id`); None runs without dependencies.
        prompt: turns a start message's `input` into the user prompt; by default a string is the
            prompt as is and anything else its compact JSON.
        version: your own name for this deploy, stamped on each question beside the hash of the agent's tools; a
            resume under another version is guarded: the tool a call waits on must exist with the same parameters
            (docs/versions.md).
    """

    framework = "pydantic_ai"

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        history: HistoryStore,
        deps: Callable[[str], Any] | None = None,
        prompt: Callable[[Any], Any] | None = None,
        version: str | None = None,
    ) -> None:
        self.agent = agent
        self.history = history
        self.deps = deps
        self.prompt = prompt or _default_prompt
        self.version = version

    # -- AgentAdapter --------------------------------------------------------------------------------

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        stored = self.history.load(thread_id)
        results = None
        requests = _requests(stored)
        if requests is not None:
            unanswered = {qid: MOVED_ON for qid in _ids(requests) if qid not in stored.answers}
            results = deferred_tool_results({**stored.answers, **unanswered}, requests=requests)
        return self._run(thread_id, stored, self.prompt(value), results)

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        stored = self.history.load(thread_id)
        requests = _requests(stored)
        if requests is None or question_id not in _open_ids(requests, stored.answers):
            # Answered already, or never deferred: a resume would re-run a tool or raise UserError.
            return RunOutcome(None, tuple(self._questions(thread_id, stored)))
        answers = {**stored.answers, question_id: EXPIRED_WITHOUT_DEFAULT if answer is None else answer}
        if _open_ids(requests, answers):
            saved = self.history.save(thread_id, replace(stored, answers=answers), expected_version=stored.version)
            return RunOutcome(None, tuple(self._questions(thread_id, saved)))
        return self._run(thread_id, stored, None, deferred_tool_results(answers, requests=requests))

    def pending(self, thread_id: str) -> list[Question]:
        return self._questions(thread_id, self.history.load(thread_id))

    def progress(self, thread_id: str) -> str | None:
        version = self.history.load(thread_id).version
        return str(version) if version else None

    def unfinished(self, thread_id: str) -> bool:
        # The store is written once, after a run returns: there is never a run stopped between steps.
        return False

    def continue_run(self, thread_id: str) -> RunOutcome:
        return RunOutcome(None, tuple(self.pending(thread_id)))

    # -- helpers ---------------------------------------------------------------------------------------

    def _run(
        self, thread_id: str, stored: StoredHistory, prompt: Any, results: DeferredToolResults | None
    ) -> RunOutcome:
        options: dict[str, Any] = {}
        if self.deps is not None:
            options["deps"] = self.deps(thread_id)
        result = _outside_any_event_loop(
            lambda: self.agent.run_sync(
                prompt,
                message_history=_messages(stored) or None,
                deferred_tool_results=results,
                **options,
            )
        )
        requests = deferred_requests_of(result)
        after = StoredHistory(
            messages=ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json"),
            deferred=_REQUESTS.dump_python(requests, mode="json") if requests is not None else None,
        )
        # Written before returning, so the host acknowledges the message only once the run is stored.
        saved = self.history.save(thread_id, after, expected_version=stored.version)
        return RunOutcome(result, tuple(self._questions(thread_id, saved)))

    def _questions(self, thread_id: str, stored: StoredHistory) -> list[Question]:
        requests = _requests(stored)
        if requests is None:
            return []
        open_ids = _open_ids(requests, stored.answers)
        return [
            self.stamp(question_from_call(call, requests.metadata.get(call.tool_call_id), thread_id))
            for call in (*requests.approvals, *requests.calls)
            if call.tool_call_id in open_ids
        ]

    def tool_schemas(self) -> dict[str, Any]:
        """The agent's function tools, by name, with their parameters JSON Schema (docs/versions.md)."""
        schemas: dict[str, Any] = {}
        for toolset in self.agent.toolsets:
            tools = getattr(toolset, "tools", None)
            for name, tool in tools.items() if isinstance(tools, Mapping) else ():
                definition = getattr(tool, "tool_def", None)
                schemas[str(name)] = getattr(definition, "parameters_json_schema", None)
        return schemas


def _outside_any_event_loop(run: Callable[[], Any]) -> Any:
    """`run()` here, or on a worker thread when this one runs an event loop (an async host, a notebook):
    `run_sync` cannot run inside a running loop ("This event loop is already running")."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-wait-run") as worker:
        return worker.submit(run).result()


def _messages(stored: StoredHistory) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_python(list(stored.messages)) if stored.messages else []


def _requests(stored: StoredHistory) -> DeferredToolRequests | None:
    return _REQUESTS.validate_python(dict(stored.deferred)) if stored.deferred else None


def _ids(requests: DeferredToolRequests) -> list[str]:
    return [call.tool_call_id for call in (*requests.approvals, *requests.calls)]


def _open_ids(requests: DeferredToolRequests, answers: Mapping[str, Any]) -> list[str]:
    return [qid for qid in _ids(requests) if qid not in answers]


@dataclass(frozen=True)
class HostedAgent:
    """A Pydantic AI agent as the bundled router hosts it; `AGENT_WAIT_GRAPH` may name one (see `hosted`)."""

    agent: AbstractAgent[Any, Any]
    deps: Callable[[str], Any] | None = None
    """Builds the run's dependencies from the thread id."""
    prompt: Callable[[Any], Any] | None = None
    """Turns a start message's `input` into the user prompt."""
    version: str | None = None
    """Your own name for this deploy, stamped on each question (docs/versions.md)."""

    framework = "pydantic_ai"

    def agent_wait_adapter(self, *, checkpoint_table: str, client: Any) -> PydanticAiAdapter:
        """The adapter the router uses: histories in the checkpoint table (`DynamoDbHistoryStore`)."""
        return PydanticAiAdapter(
            self.agent,
            history=DynamoDbHistoryStore(checkpoint_table, client=client),
            deps=self.deps,
            prompt=self.prompt,
            version=self.version,
        )


def hosted(
    agent: AbstractAgent[Any, Any],
    *,
    deps: Callable[[str], Any] | None = None,
    prompt: Callable[[Any], Any] | None = None,
    version: str | None = None,
) -> HostedAgent:
    """Wrap an agent for the bundled router, with the options a bare agent cannot carry.

    `AGENT_WAIT_GRAPH` may name a Pydantic AI `Agent` directly (no dependencies, the default prompt);
    name a `hosted(...)` value to give the runs dependencies or another prompt:

        agent = Agent(model, output_type=[str, DeferredToolRequests], deps_type=Deps)
        hosted_agent = hosted(agent, deps=lambda thread_id: Deps(thread_id=thread_id))
        # AGENT_WAIT_GRAPH=my_app.agents:hosted_agent

    Args:
        agent: the agent; its `output_type` must admit `DeferredToolRequests`.
        deps: builds the run's dependencies from the thread id.
        prompt: turns a start message's `input` into the user prompt.
        version: your own name for this deploy, stamped on each question (docs/versions.md).
    """
    return HostedAgent(agent, deps=deps, prompt=prompt, version=version)
