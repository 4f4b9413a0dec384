"""Refund agents for the Pydantic AI host tests: scripted models, a counted `@wait` tool, nothing on the network.

`refund_agent(...)` builds a fresh agent per test. The module-level `hosted_refund` and `bare_refund`
are what `AGENT_WAIT_GRAPH=pydantic_ai_host_agents:hosted_refund` (or `:bare_refund`) names in the
tests that build the router from its settings. (No `__init__.py` in this directory on purpose: it
would shadow the real `pydantic_ai`.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_script import Script

from agent_wait import WaitPolicy
from agent_wait.pydantic_ai import hosted, wait
from pydantic_ai import Agent, DeferredToolRequests, RunContext

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject", "reason": "no answer in time"})
NO_DEFAULT = WaitPolicy(timeout="PT1H")


@dataclass
class CountingScript(Script):
    """A `Script` that also counts the model requests it served (a run that did not happen made none).

    With no calls it answers in text at once (a run that finishes without asking).
    """

    requests: int = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests += 1
        if not self.calls:
            return ModelResponse(parts=[TextPart("nothing to refund")])
        return super().__call__(messages, info)


@dataclass
class RefundAgent:
    """An agent with one `@wait` refund tool, the script driving it, and every run of the tool's body."""

    agent: Agent[Any, Any]
    script: CountingScript
    runs: list[tuple[str, int]] = field(default_factory=list)


def refund_agent(*calls: tuple[str, dict[str, Any], str], policy: WaitPolicy = FINANCE) -> RefundAgent:
    """`calls` are (tool, args, tool_call_id) the model makes on its first request; `issue_refund` waits."""
    script = CountingScript(calls)
    agent: Agent[Any, Any] = Agent(FunctionModel(script), output_type=[str, DeferredToolRequests])
    built = RefundAgent(agent, script)

    @agent.tool
    @wait(policy)
    def issue_refund(ctx: RunContext[Any], order_id: str, amount: int) -> str:
        built.runs.append((order_id, amount))
        return f"refunded {amount} on {order_id}"

    return built


def refund_call(call_id: str = "call-1", amount: int = 900, order_id: str = "o-1") -> tuple[str, dict[str, Any], str]:
    return ("issue_refund", {"order_id": order_id, "amount": amount}, call_id)


@dataclass
class Deps:
    thread_id: str


HOSTED = refund_agent(refund_call())
hosted_refund = hosted(HOSTED.agent, deps=Deps)
"""What `AGENT_WAIT_GRAPH=pydantic_ai_host_agents:hosted_refund` names: the agent, with dependencies per thread."""

BARE = refund_agent(refund_call())
bare_refund = BARE.agent
"""What `AGENT_WAIT_GRAPH=pydantic_ai_host_agents:bare_refund` names: a Pydantic AI agent, as is."""
