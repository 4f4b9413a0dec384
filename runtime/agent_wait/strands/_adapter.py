"""`StrandsAdapter`: drive a Strands agent for a host (the router, `WaitPublisher`), a fresh agent per thread.

A Strands `Agent` holds one conversation, and its session manager is its persistence: the adapter
builds a fresh agent for every call, over a session manager for the thread, so the interrupt state a
parked run left in the session is what it reads and resumes.

Facts about Strands 1.62 it is built on (pinned in tests/strands/test_strands_facts.py): a duplicate
answer raises ValueError, an unknown id KeyError, a plain prompt to a parked agent TypeError, and a
None response parks the tool again under the same id. The adapter checks the session's interrupt
state before it invokes, so none of them reaches the host.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strands.interrupt import Interrupt
from strands.session.repository_session_manager import RepositorySessionManager
from strands.session.session_manager import SessionManager

from agent_wait.asking.adapter import RunOutcome
from agent_wait.asking.versions import ToolVersioning
from agent_wait.asking.wait import EXPIRED_WITHOUT_DEFAULT
from agent_wait.contract.envelope import Question
from agent_wait.errors import ConfigurationError
from agent_wait.strands._interrupts import question_from_interrupt, questions_from_result
from agent_wait.strands._sessions import DynamoDbSessionRepository, InMemorySessionRepository
from strands import Agent, Snapshot

__all__ = ("HostedAgentFactory", "StrandsAdapter", "hosted")

AgentFactory = Callable[[SessionManager], Agent]
"""Builds the agent for one thread; it must pass the session manager it is given to `Agent(session_manager=...)`."""


def _default_prompt(value: Any) -> Any:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class StrandsAdapter(ToolVersioning):
    """Run, resume and inspect a Strands agent by thread id; the thread id is the session id.

    - `start` runs a new turn. On an agent still parked on interrupts the new turn moves on, as a
      LangGraph thread does: the interrupt state is cleared, Strands closes each parked tool call
      with its own "Tool was interrupted." error result, and the prompt runs.
    - `resume` answers one interrupt by id, after checking that the session is parked on it
      (an answered or unknown id runs nothing). A null answer — a question with no default that
      expired — is sent as `EXPIRED_WITHOUT_DEFAULT`, because Strands would park the tool again.
    - `pending` reads the interrupt state the session holds; it never runs the agent.
    - Strands writes the session as the run goes (each message, then the agent's state). A run that
      stopped part-way (the host died) is `unfinished`; `continue_run` goes on from the last stored
      message without a new prompt: after a prompt or tool results it calls the model; after tool
      calls whose results were never stored it runs those calls again (not the model), so a `@wait`
      call asks again under the same id and a plain tool may run a second time (at least once, as a
      LangGraph task that dies before its checkpoint). A tool whose result was stored never runs again.

    Example:
        >>> def build(session_manager):  # doctest: +SKIP
        ...     return Agent(model=model, tools=[issue_refund], session_manager=session_manager)
        >>> adapter = StrandsAdapter(  # doctest: +SKIP
        ...     build, session_manager_factory=lambda thread_id: FileSessionManager(session_id=thread_id)
        ... )

    Args:
        agent_factory: builds the thread's agent from the session manager it is given.
        session_manager_factory: the session manager for a thread id (the session id).
        prompt: turns a start message's `input` into the prompt; by default a string is the prompt
            as is and anything else its compact JSON.
        version: your own name for this deploy, stamped on each question beside the hash of the agent's tools; a
            resume under another version is guarded: the tool an interrupt waits in must exist with the same
            parameters (docs/versions.md).
    """

    framework = "strands"

    def __init__(
        self,
        agent_factory: AgentFactory,
        *,
        session_manager_factory: Callable[[str], SessionManager],
        prompt: Callable[[Any], Any] | None = None,
        version: str | None = None,
    ) -> None:
        self.agent_factory = agent_factory
        self.session_manager_factory = session_manager_factory
        self.prompt = prompt or _default_prompt
        self.version = version

    # -- AgentAdapter --------------------------------------------------------------------------------

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        agent = self.agent(thread_id)
        if _interrupt_state(agent).get("activated"):
            # Strands refuses a prompt to a parked agent (TypeError): clear the interrupt state; the prompt
            # then closes the dangling tool calls with Strands' own "Tool was interrupted." results.
            _load_interrupt_state(agent, {"interrupts": {}, "context": {}, "activated": False})
        return self._outcome(agent(self.prompt(value)), thread_id)

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        agent = self.agent(thread_id)
        parked = _open_interrupts(agent)
        if question_id not in {item.id for item in parked}:
            # Answered already (Strands: ValueError), or unknown (KeyError): run nothing.
            return RunOutcome(None, tuple(question_from_interrupt(item, thread_id) for item in parked))
        response = EXPIRED_WITHOUT_DEFAULT if answer is None else answer
        result = agent([{"interruptResponse": {"interruptId": question_id, "response": response}}])
        return self._outcome(result, thread_id)

    def pending(self, thread_id: str) -> list[Question]:
        return [self.stamp(question_from_interrupt(i, thread_id)) for i in _open_interrupts(self.agent(thread_id))]

    def progress(self, thread_id: str) -> str | None:
        data = self.agent(thread_id).take_snapshot(preset="session").data
        if not data.get("messages") and not data.get("interrupt_state", {}).get("activated"):
            return None
        text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

    def unfinished(self, thread_id: str) -> bool:
        return _unfinished(self.agent(thread_id))

    def continue_run(self, thread_id: str) -> RunOutcome:
        agent = self.agent(thread_id)
        if not _unfinished(agent):
            return RunOutcome(None, tuple(question_from_interrupt(item, thread_id) for item in _open_interrupts(agent)))
        last = agent.messages[-1]
        if _stale_tool_execution(agent):
            # The tools ran and their results were stored; only the interrupt state was not: clear it.
            _load_interrupt_state(agent, {"interrupts": {}, "context": {}, "activated": False})
        elif last.get("role") == "assistant":
            # The model's tool calls were stored, their results never were: run the calls again, not the
            # model (as LangGraph re-runs the task in flight). A @wait call asks again under the same id
            # (Strands derives it from the tool-use id); a plain tool that ran before the crash runs again.
            pending = {"assistant_message": last, "completed_tool_results": []}
            _load_interrupt_state(
                agent, {"interrupts": {}, "context": {}, "activated": True, "pending_tool_execution": pending}
            )
        # An empty prompt runs the loop on what is stored: the pending tool calls, or the model on the last message.
        return self._outcome(agent([]), thread_id)

    # -- helpers ---------------------------------------------------------------------------------------

    def agent(self, thread_id: str) -> Agent:
        """A fresh agent for the thread, restored from its session.

        Raises:
            ConfigurationError: the factory did not give the agent the session manager it was handed.
        """
        manager = self.session_manager_factory(thread_id)
        agent = self.agent_factory(manager)
        if getattr(agent, "_session_manager", None) is not manager:
            raise ConfigurationError(
                [
                    "the Strands agent factory must build its Agent with the session manager it is given "
                    "(Agent(..., session_manager=session_manager)); without it nothing a parked run needs is kept"
                ]
            )
        return agent

    def _outcome(self, result: Any, thread_id: str) -> RunOutcome:
        return RunOutcome(result, tuple(self.stamp(q) for q in questions_from_result(result, thread_id)))

    def tool_schemas(self) -> dict[str, Any]:
        """The tools the factory's agent offers, by name, with their input JSON Schema (docs/versions.md); read from
        one agent built over a throwaway in-memory session."""
        manager = RepositorySessionManager(
            session_id="agent-wait-tools", session_repository=InMemorySessionRepository()
        )
        registry = self.agent_factory(manager).tool_registry.registry
        return {str(name): (tool.tool_spec.get("inputSchema") or {}).get("json") for name, tool in registry.items()}


def _interrupt_state(agent: Agent) -> dict[str, Any]:
    return agent.take_snapshot(include=["interrupt_state"]).data.get("interrupt_state") or {}


def _load_interrupt_state(agent: Agent, state: dict[str, Any]) -> None:
    version = agent.take_snapshot(include=["interrupt_state"]).schema_version
    agent.load_snapshot(Snapshot(scope="agent", schema_version=version, data={"interrupt_state": state}, app_data={}))


def _stale_tool_execution(agent: Agent) -> bool:
    """True when the session says parked, but the parked tool calls' results are already stored after them.

    Strands stores the tool results as a message, then the agent's state; a host that dies between the
    two leaves a session whose interrupt state still waits on calls that have run. Resuming it would
    run them again.
    """
    state = _interrupt_state(agent)
    pending = state.get("pending_tool_execution")
    if not state.get("activated") or not pending or not agent.messages:
        return False
    last = agent.messages[-1]
    if last.get("role") != "user":
        return False
    uses = {b["toolUse"]["toolUseId"] for b in pending["assistant_message"].get("content", []) if "toolUse" in b}
    results = {b["toolResult"]["toolUseId"] for b in last.get("content", []) if "toolResult" in b}
    return bool(uses) and uses <= results


def _open_interrupts(agent: Agent) -> list[Interrupt]:
    """The interrupts the agent is parked on and that have no response yet, in the order they were raised."""
    state = _interrupt_state(agent)
    if not state.get("activated") or _stale_tool_execution(agent):
        return []
    return [
        Interrupt(id=item["id"], name=item["name"], reason=item.get("reason"))
        for item in state.get("interrupts", {}).values()
        if item.get("response") is None
    ]


def _unfinished(agent: Agent) -> bool:
    if _stale_tool_execution(agent):
        return True
    if _interrupt_state(agent).get("activated") or not agent.messages:
        return False
    return _stopped_part_way(agent.messages[-1])


def _stopped_part_way(message: Any) -> bool:
    """True for a last message the model has not answered: a prompt, tool results, or tool calls never closed."""
    if message.get("role") == "user":
        return True
    return any("toolUse" in block for block in message.get("content", []))


@dataclass(frozen=True)
class HostedAgentFactory:
    """A Strands agent factory as the bundled router hosts it; `AGENT_WAIT_GRAPH` names one (see `hosted`)."""

    factory: AgentFactory
    prompt: Callable[[Any], Any] | None = None
    """Turns a start message's `input` into the prompt."""
    version: str | None = None
    """Your own name for this deploy, stamped on each question (docs/versions.md)."""

    framework = "strands"

    def agent_wait_adapter(self, *, checkpoint_table: str, client: Any) -> StrandsAdapter:
        """The adapter the router uses: sessions in the checkpoint table (`DynamoDbSessionRepository`)."""
        repository = DynamoDbSessionRepository(checkpoint_table, client=client)
        return StrandsAdapter(
            self.factory,
            session_manager_factory=lambda thread_id: RepositorySessionManager(
                session_id=thread_id, session_repository=repository
            ),
            prompt=self.prompt,
            version=self.version,
        )


def hosted(
    factory: AgentFactory, *, prompt: Callable[[Any], Any] | None = None, version: str | None = None
) -> HostedAgentFactory:
    """Mark a Strands agent factory for the bundled router; `AGENT_WAIT_GRAPH` names the value this returns.

    The router builds a fresh agent per message, over the thread's session in the checkpoint table,
    by calling `factory(session_manager)`; the factory must pass that manager to `Agent`:

        def build_agent(session_manager):
            return Agent(model=BedrockModel(...), tools=[issue_refund], session_manager=session_manager)

        refund_agent = hosted(build_agent)
        # AGENT_WAIT_GRAPH=my_app.agents:refund_agent

    A Strands `Agent` instance cannot be named instead: one instance holds one conversation.

    Args:
        factory: builds the agent from the session manager it is given.
        prompt: turns a start message's `input` into the prompt (default: a string as is, else its JSON).
        version: your own name for this deploy, stamped on each question (docs/versions.md).
    """
    if not callable(factory):
        raise ConfigurationError([f"hosted() takes a factory (session_manager) -> Agent; got {type(factory).__name__}"])
    return HostedAgentFactory(factory, prompt=prompt, version=version)
