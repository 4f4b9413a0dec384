"""publish_interrupts, questions_from_result and deferred_tool_results for Pydantic AI runs."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import pytest
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.messages import ToolCallPart
from pydantic_ai_script import scripted_agent

from agent_wait import EnvelopeError, InMemoryAnnounce, MissingExtraError, WaitPolicy
from agent_wait.pydantic_ai import (
    deferred_tool_results,
    publish_interrupts,
    questions_from_result,
    wait,
)
from pydantic_ai import CallDeferred, DeferredToolRequests, RunContext, ToolApproved, ToolDenied


def test_a_requires_approval_tool_is_published_with_the_default_policy():
    # GIVEN a tool the framework itself holds for approval
    agent, _ = scripted_agent(("delete_user", {"user_id": "u-1"}, "call-del"))

    @agent.tool_plain(requires_approval=True)
    def delete_user(user_id: str) -> str:
        return "deleted"

    # WHEN the run ends on it
    memory = InMemoryAnnounce()
    publish_interrupts(agent.run_sync("delete"), "t-1", memory)
    # THEN the question is the call, under the default policy, with no source
    envelope = memory.of("created")[0].to_dict()
    assert envelope["question_id"] == "call-del"
    assert envelope["question"] == {"function": "delete_user", "args": {"user_id": "u-1"}}
    assert envelope["source"] is None
    assert envelope["allowed_actions"] == ["approve", "reject"]
    assert (envelope["expires_at"], envelope["default"], envelope["tags"]) == (None, None, {})


def test_a_hand_raised_approval_and_a_call_deferred_carry_their_metadata_in_the_question():
    # GIVEN one tool that raises ApprovalRequired and one that raises CallDeferred, both with metadata
    agent, _ = scripted_agent(
        ("transfer", {"amount": 5}, "call-transfer"),
        ("run_job", {"job": "nightly"}, "call-job"),
    )

    @agent.tool
    def transfer(ctx: RunContext[Any], amount: int) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={"risk": "high"})
        return "moved"

    @agent.tool_plain
    def run_job(job: str) -> str:
        raise CallDeferred(metadata={"batch_id": "b-7"})

    # WHEN the run ends on both
    questions = questions_from_result(agent.run_sync("go"), "t-1")
    # THEN approvals come first, then external calls; each adds its metadata under "metadata"
    assert [(q.question_id, q.value) for q in questions] == [
        ("call-transfer", {"function": "transfer", "args": {"amount": 5}, "metadata": {"risk": "high"}}),
        ("call-job", {"function": "run_job", "args": {"job": "nightly"}, "metadata": {"batch_id": "b-7"}}),
    ]
    assert all(q.policy == WaitPolicy() and q.source is None for q in questions)


def test_a_call_deferred_question_is_answered_with_the_calls_result():
    # GIVEN a run that ended on a CallDeferred call
    agent, script = scripted_agent(("run_job", {"job": "nightly"}, "call-job"))

    @agent.tool_plain
    def run_job(job: str) -> str:
        raise CallDeferred()

    parked = agent.run_sync("go")
    requests = parked.output
    assert isinstance(requests, DeferredToolRequests)
    # WHEN the host builds the results knowing the requests
    results = deferred_tool_results({"call-job": {"rows": 12}}, requests=requests)
    # THEN the answer is the call's result (calls=), not an approval, and the model receives it
    assert (results.calls, results.approvals) == ({"call-job": {"rows": 12}}, {})
    agent.run_sync(None, message_history=parked.all_messages(), deferred_tool_results=results)
    assert script.last_seen == {"call-job": {"rows": 12}}


def test_an_approval_edit_for_a_plain_requires_approval_tool_becomes_override_args():
    # GIVEN a requires_approval tool (no @wait to read the answer's metadata)
    agent, _ = scripted_agent(("refund", {"order_id": "o-1", "amount": 900}, "call-r"))
    runs: list[tuple[str, int]] = []

    @agent.tool_plain(requires_approval=True)
    def refund(order_id: str, amount: int) -> str:
        runs.append((order_id, amount))
        return "refunded"

    parked = agent.run_sync("refund")
    results = deferred_tool_results({"call-r": {"action": "approve", "args": {"amount": 500}}}, requests=parked.output)
    # THEN the edit travels as the framework's override_args, merged over the model's arguments
    assert results.approvals == {"call-r": ToolApproved(override_args={"order_id": "o-1", "amount": 500})}
    agent.run_sync(None, message_history=parked.all_messages(), deferred_tool_results=results)
    assert runs == [("o-1", 500)]


def test_an_approval_edit_for_a_wait_tool_stays_in_metadata_so_wait_applies_its_rules():
    agent, _ = scripted_agent(("refund", {"amount": 900}, "call-r"))

    @agent.tool
    @wait()
    def refund(amount: int) -> str:
        return "refunded"

    parked = agent.run_sync("refund")
    answer = {"action": "approve", "args": {"amount": 500}}
    results = deferred_tool_results({"call-r": answer}, requests=parked.output)
    assert results.approvals == {"call-r": ToolApproved()}
    assert results.metadata == {"call-r": answer}


def test_deferred_tool_results_maps_approve_to_tool_approved_and_anything_else_to_tool_denied():
    results = deferred_tool_results(
        {"a": {"action": "approve", "note": "ok"}, "b": {"action": "reject"}, "c": "no", "d": None, "e": 3}
    )
    assert results.approvals == {
        "a": ToolApproved(),
        "b": ToolDenied('{"action":"reject"}'),
        "c": ToolDenied("no"),
        "d": ToolDenied("null"),
        "e": ToolDenied("3"),
    }
    assert results.metadata == {"a": {"action": "approve", "note": "ok"}}
    assert results.calls == {}


def test_deferred_tool_results_refuses_an_id_the_run_did_not_defer():
    agent, _ = scripted_agent(("refund", {"amount": 1}, "call-r"))

    @agent.tool
    @wait()
    def refund(amount: int) -> str:
        return "refunded"

    requests = agent.run_sync("go").output
    with pytest.raises(
        EnvelopeError, match=re.escape("question 'call-x' is not one this run deferred; pending: ['call-r']")
    ):
        deferred_tool_results({"call-x": {"action": "approve"}}, requests=requests)


def test_deferred_tool_results_refuses_an_empty_question_id():
    with pytest.raises(EnvelopeError, match=re.escape("a question id must be a non-empty string; got ''")):
        deferred_tool_results({"": {"action": "approve"}})


# --- publish_interrupts: nothing, garbage --------------------------------------------------------


def test_a_run_that_finished_publishes_nothing():
    agent, _ = scripted_agent(("lookup", {"order_id": "o-1"}, "call-l"))

    @agent.tool_plain
    def lookup(order_id: str) -> str:
        return "shipped"

    memory = InMemoryAnnounce()
    assert publish_interrupts(agent.run_sync("where is o-1"), "t-1", memory) == []
    assert publish_interrupts(None, "t-1", memory) == []
    assert memory.events == []


def test_a_deferred_tool_requests_object_is_accepted_directly():
    requests = DeferredToolRequests(approvals=[ToolCallPart("refund", {"amount": 1}, tool_call_id="c-1")])
    assert [q.question_id for q in questions_from_result(requests, "t-1")] == ["c-1"]


@pytest.mark.parametrize("garbage", [{"__interrupt__": []}, "parked", 42, ["c-1"]])
def test_publish_interrupts_refuses_what_is_not_a_run_result(garbage):
    with pytest.raises(EnvelopeError, match=re.escape("publish_interrupts expects what agent.run_sync(...) returns")):
        publish_interrupts(garbage, "t-1", InMemoryAnnounce())


def test_publish_interrupts_refuses_an_empty_thread_id():
    requests = DeferredToolRequests(approvals=[ToolCallPart("refund", {}, tool_call_id="c-1")])
    with pytest.raises(EnvelopeError, match=re.escape("thread_id must be a non-empty string; got ''")):
        publish_interrupts(requests, "", InMemoryAnnounce())


def test_a_broken_announcer_is_reported_not_raised():
    class Broken(InMemoryAnnounce):
        name = "broken"

        def deliver(self, envelope, transition):
            raise RuntimeError("down")

    requests = DeferredToolRequests(approvals=[ToolCallPart("refund", {}, tool_call_id="c-1")])
    (report,) = publish_interrupts(requests, "t-1", [Broken(), memory := InMemoryAnnounce()])
    assert report.delivered == ("memory",)
    assert [d.announcer for d in report.failed] == ["broken"]
    assert len(memory.events) == 1


# --- the extra -----------------------------------------------------------------------------------


def test_importing_the_binding_without_pydantic_ai_names_the_extra(monkeypatch):
    # GIVEN pydantic_ai cannot be imported
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    for name in [m for m in sys.modules if m == "agent_wait.pydantic_ai" or m.startswith("agent_wait.pydantic_ai.")]:
        monkeypatch.delitem(sys.modules, name)
    # WHEN the binding is imported, THEN the error names the extra to install
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[pydantic-ai]'")) as caught:
        importlib.import_module("agent_wait.pydantic_ai")
    assert caught.value.extra == "pydantic-ai"
    assert isinstance(caught.value, ImportError)
