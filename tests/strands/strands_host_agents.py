"""Refund agents for the Strands host tests: a scripted model per turn, a counted `@wait` tool, no network.

`refund_agents(...)` gives a factory the adapter calls once per message (a fresh `Agent` over the
thread's session, as the Lambda does), sharing one model and one count of tool runs. The module-level
`hosted_refund` is what `AGENT_WAIT_GRAPH=strands_host_agents:hosted_refund` names. (No `__init__.py`
in this directory on purpose: it would shadow the real `strands`.)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

from strands.session.repository_session_manager import RepositorySessionManager
from strands.session.session_manager import SessionManager
from strands.types.streaming import StreamEvent
from strands_script import ScriptedModel

from agent_wait import WaitPolicy
from agent_wait.strands import InMemorySessionRepository, StrandsAdapter, hosted, wait
from strands import Agent, tool

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject", "reason": "no answer in time"})
NO_DEFAULT = WaitPolicy(timeout="PT1H")

Call = tuple[str, dict[str, Any], str]


class TurnModel(ScriptedModel):
    """A `ScriptedModel` that makes each turn's calls once, then answers in text; it counts its requests.

    A request that carries tool results is answered with their JSON (as `ScriptedModel` does); any
    other request starts the next turn: the next list of calls, or plain text when none are left.
    """

    def __init__(self, turns: Sequence[Sequence[Call]]) -> None:
        super().__init__([])
        self.turns = [list(turn) for turn in turns]
        self.requests = 0

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        self.requests += 1
        if not any("toolResult" in block for block in messages[-1]["content"]):
            self.calls = self.turns.pop(0) if self.turns else []
            if not self.calls:
                yield {"messageStart": {"role": "assistant"}}
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": "nothing to refund"}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
                return
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event


@dataclass
class RefundAgents:
    """A factory of agents with one `@wait` refund tool, their shared model, and every run of the tool's body."""

    model: TurnModel
    policy: WaitPolicy
    runs: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        @tool(context=True)
        @wait(self.policy)
        def issue_refund(order_id: str, amount: int) -> str:
            self.runs.append((order_id, amount))
            return f"refunded {amount} on {order_id}"

        self.tool = issue_refund

    def __call__(self, session_manager: SessionManager) -> Agent:
        return Agent(model=self.model, tools=[self.tool], callback_handler=None, session_manager=session_manager)

    def adapter(self, repository: Any = None) -> StrandsAdapter:
        """An adapter whose sessions live in `repository` (a fresh in-memory one by default)."""
        repository = repository if repository is not None else InMemorySessionRepository()
        return StrandsAdapter(
            self,
            session_manager_factory=lambda thread_id: RepositorySessionManager(
                session_id=thread_id, session_repository=repository
            ),
        )


def refund_agents(*turns: Sequence[Call], policy: WaitPolicy = FINANCE) -> RefundAgents:
    """Each turn is the calls the model makes when a new prompt arrives; `issue_refund` waits."""
    return RefundAgents(TurnModel(turns), policy)


def refund_call(tool_use_id: str = "tu-1", amount: int = 900, order_id: str = "o-1") -> Call:
    return ("issue_refund", {"order_id": order_id, "amount": amount}, tool_use_id)


HOSTED = refund_agents(*([refund_call()],) * 10)
hosted_refund = hosted(HOSTED)
"""What `AGENT_WAIT_GRAPH=strands_host_agents:hosted_refund` names: a factory of agents over the thread's session."""
