"""The version guard on a hosted Pydantic AI agent (docs/versions.md): each deferred call's question carries the
agent's tools and the tool's parameters; a redeploy that keeps the tool resumes, one that changed or removed it
fails the thread visibly (`version_changed`) and runs nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic_ai.models.function import FunctionModel
from pydantic_ai_host_agents import FINANCE, CountingScript, refund_agent, refund_call

from agent_wait.asking.versions import stamped_version
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind
from agent_wait.pydantic_ai import InMemoryHistoryStore, PydanticAiAdapter, hosted, wait
from hosted_router import APPROVE, RouterRig
from pydantic_ai import Agent, DeferredToolRequests, RunContext

THREAD = "order-4471"


def _parked(history: InMemoryHistoryStore) -> RouterRig:
    rig = RouterRig(PydanticAiAdapter(refund_agent(refund_call("call-1")).agent, history=history, version="1"))
    assert rig.start(THREAD).asked == ("call-1",)
    return rig


def _changed_tool_agent(runs: list[Any]) -> Agent[Any, Any]:
    """Version 2: `issue_refund` takes a currency too."""
    agent: Agent[Any, Any] = Agent(FunctionModel(CountingScript([])), output_type=[str, DeferredToolRequests])

    @agent.tool
    @wait(FINANCE)
    def issue_refund(ctx: RunContext[Any], order_id: str, amount: int, currency: str) -> str:
        runs.append(order_id)
        return "refunded"

    return agent


def test_a_deferred_call_is_stamped_with_its_tool_and_a_redeploy_that_keeps_it_resumes() -> None:
    history = InMemoryHistoryStore()
    rig = _parked(history)
    stamp = stamped_version(rig.record(THREAD, "call-1").envelope.source)
    assert stamp is not None
    assert (stamp.user, stamp.function) == ("1", "issue_refund")
    assert re.fullmatch(r"[A-Za-z0-9_-]{6}", stamp.signature or "")
    # WHEN version 2 keeps the tool as it was
    again = refund_agent(refund_call("call-2"))
    rig.adapter = PydanticAiAdapter(again.agent, history=history, version="2")
    applied = rig.answer(THREAD, "call-1", APPROVE)
    # THEN the answer resumes it
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert again.runs == [("o-1", 900)]
    assert rig.metrics.counts[("VersionChanges", "resumed")] == 1


@pytest.mark.parametrize("change", ["parameters", "removed"])
def test_a_redeploy_that_changed_or_removed_the_tool_fails_the_thread_visibly(change: str) -> None:
    history = InMemoryHistoryStore()
    rig = _parked(history)
    runs: list[Any] = []
    if change == "parameters":
        agent = _changed_tool_agent(runs)
    else:
        agent = Agent(FunctionModel(CountingScript([])), output_type=[str, DeferredToolRequests])
    rig.adapter = PydanticAiAdapter(agent, history=history, version="2")
    failed = rig.answer(THREAD, "call-1", APPROVE)
    assert (failed.kind, failed.reason) == (OutcomeKind.DEAD_LETTERED, "version_changed"), failed
    said = "takes other parameters than when it asked" if change == "parameters" else "is not in the code running now"
    assert f"the tool issue_refund() {said}" in failed.detail
    assert runs == []
    assert rig.record(THREAD, "call-1").status is QuestionStatus.FAILED
    assert rig.transitions("call-1")[-1] == "failed"


def test_hosted_passes_its_version_to_the_routers_adapter() -> None:
    agent = refund_agent(refund_call()).agent
    assert hosted(agent, version="7").agent_wait_adapter(checkpoint_table="t", client=object()).version == "7"
