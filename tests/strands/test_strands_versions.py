"""The version guard on a hosted Strands agent (docs/versions.md): each interrupt's question carries the agent's
tools and the tool's parameters; a redeploy that keeps the tool resumes, one that changed or removed it fails the
thread visibly (`version_changed`) and runs nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from strands.session.repository_session_manager import RepositorySessionManager
from strands.session.session_manager import SessionManager
from strands_host_agents import FINANCE, RefundAgents, TurnModel, refund_agents, refund_call

from agent_wait.asking.versions import stamped_version
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind
from agent_wait.strands import InMemorySessionRepository, StrandsAdapter, hosted, wait
from hosted_router import APPROVE, RouterRig
from strands import Agent, tool

THREAD = "order-4471"


def _adapter(factory: Any, repository: InMemorySessionRepository, version: str) -> StrandsAdapter:
    return StrandsAdapter(
        factory,
        session_manager_factory=lambda thread_id: RepositorySessionManager(
            session_id=thread_id, session_repository=repository
        ),
        version=version,
    )


def _parked(repository: InMemorySessionRepository) -> tuple[RouterRig, str]:
    rig = RouterRig(_adapter(refund_agents([refund_call("tu-1")]), repository, "1"))
    (question_id,) = rig.start(THREAD).asked  # Strands derives the interrupt id from the tool-use id
    return rig, question_id


def test_an_interrupt_is_stamped_with_its_tool_and_a_redeploy_that_keeps_it_resumes() -> None:
    repository = InMemorySessionRepository()
    rig, question_id = _parked(repository)
    stamp = stamped_version(rig.record(THREAD, question_id).envelope.source)
    assert stamp is not None
    assert (stamp.user, stamp.function) == ("1", "issue_refund")
    assert re.fullmatch(r"[A-Za-z0-9_-]{6}", stamp.signature or "")
    # WHEN version 2 keeps the tool as it was
    again = refund_agents([])
    rig.adapter = _adapter(again, repository, "2")
    applied = rig.answer(THREAD, question_id, APPROVE)
    # THEN the answer resumes it
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert again.runs == [("o-1", 900)]
    assert rig.metrics.counts[("VersionChanges", "resumed")] == 1


@pytest.mark.parametrize("change", ["parameters", "removed"])
def test_a_redeploy_that_changed_or_removed_the_tool_fails_the_thread_visibly(change: str) -> None:
    repository = InMemorySessionRepository()
    rig, question_id = _parked(repository)
    runs: list[Any] = []

    @tool(context=True)
    @wait(FINANCE)
    def issue_refund(order_id: str, amount: int, currency: str) -> str:
        runs.append(order_id)
        return "refunded"

    tools = [issue_refund] if change == "parameters" else []

    def factory(session_manager: SessionManager) -> Agent:
        return Agent(model=TurnModel([]), tools=tools, callback_handler=None, session_manager=session_manager)

    rig.adapter = _adapter(factory, repository, "2")
    failed = rig.answer(THREAD, question_id, APPROVE)
    assert (failed.kind, failed.reason) == (OutcomeKind.DEAD_LETTERED, "version_changed"), failed
    said = "takes other parameters than when it asked" if change == "parameters" else "is not in the code running now"
    assert f"the tool issue_refund() {said}" in failed.detail
    assert runs == []
    assert rig.record(THREAD, question_id).status is QuestionStatus.FAILED


def test_hosted_passes_its_version_to_the_routers_adapter() -> None:
    agents: RefundAgents = refund_agents([])
    assert hosted(agents, version="7").agent_wait_adapter(checkpoint_table="t", client=object()).version == "7"
