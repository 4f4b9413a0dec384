"""Facts about Pydantic AI 2.68 that the binding and its hosts rely on; each fails if the framework changes.

Where Pydantic AI differs from LangGraph, docs/frameworks.md says so and points here.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic_ai.exceptions import UserError
from pydantic_ai.models.test import TestModel
from pydantic_ai_script import scripted_agent

from agent_wait.pydantic_ai import deferred_tool_results, questions_from_result, wait
from pydantic_ai import DeferredToolRequests, RunContext


def parked_refund() -> tuple[Any, Any, list[int]]:
    """A run parked on one `@wait` refund; returns (agent, parked result, the tool's runs)."""
    agent, _ = scripted_agent(("issue_refund", {"amount": 41000}, "call-1"))
    runs: list[int] = []

    @agent.tool
    @wait()
    def issue_refund(ctx: RunContext[Any], amount: int) -> str:
        runs.append(amount)
        return "refunded"

    return agent, agent.run_sync("refund"), runs


APPROVE = {"call-1": {"action": "approve"}}


def test_a_duplicate_answer_resumed_from_the_pre_resume_history_runs_the_tool_again():
    # GIVEN a parked run whose history the host stored before the first answer
    agent, parked, runs = parked_refund()
    history = parked.all_messages()
    # WHEN the same answer is applied twice to that same stored history (the host did not store in between)
    agent.run_sync(None, message_history=history, deferred_tool_results=deferred_tool_results(APPROVE))
    agent.run_sync(None, message_history=history, deferred_tool_results=deferred_tool_results(APPROVE))
    # THEN the side effect happened twice: Pydantic AI keeps no record of the answer outside the history
    assert runs == [41000, 41000]


def test_a_duplicate_answer_resumed_from_the_post_resume_history_raises_user_error_and_runs_nothing():
    # GIVEN the host stored the history after the first answer (store, then acknowledge)
    agent, parked, runs = parked_refund()
    done = agent.run_sync(
        None, message_history=parked.all_messages(), deferred_tool_results=deferred_tool_results(APPROVE)
    )
    # WHEN the duplicate arrives
    with pytest.raises(
        UserError,
        match=re.escape(
            "Tool call results were provided, but the message history does not contain any unprocessed tool calls."
        ),
    ):
        agent.run_sync(None, message_history=done.all_messages(), deferred_tool_results=deferred_tool_results(APPROVE))
    # THEN the tool ran once
    assert runs == [41000]


def test_an_answer_for_an_unknown_id_raises_user_error_and_runs_nothing():
    agent, parked, runs = parked_refund()
    with pytest.raises(
        UserError, match=re.escape("Tool call results need to be provided for all deferred tool calls.")
    ):
        agent.run_sync(
            None,
            message_history=parked.all_messages(),
            deferred_tool_results=deferred_tool_results({"call-x": {"action": "approve"}}),
        )
    assert runs == []


def test_a_prompt_to_a_parked_run_raises_user_error_and_runs_nothing():
    agent, parked, runs = parked_refund()
    with pytest.raises(
        UserError, match=re.escape("Cannot provide a new user prompt when the message history contains unprocessed")
    ):
        agent.run_sync("hello again", message_history=parked.all_messages())
    assert runs == []


def test_a_resume_must_answer_every_deferred_call_of_the_run_at_once():
    # GIVEN a run parked on two questions from one model response
    agent, _ = scripted_agent(("refund", {"amount": 1}, "call-a"), ("refund", {"amount": 2}, "call-b"))
    runs: list[int] = []

    @agent.tool
    @wait()
    def refund(amount: int) -> str:
        runs.append(amount)
        return "refunded"

    parked = agent.run_sync("refund both")
    assert [q.question_id for q in questions_from_result(parked, "t")] == ["call-a", "call-b"]
    # WHEN only one is answered, THEN Pydantic AI refuses the resume and nothing runs
    with pytest.raises(
        UserError,
        match=r"need to be provided for all deferred tool calls\. Expected: \{.*\}, got: \{'call-a'\}",
    ):
        agent.run_sync(
            None,
            message_history=parked.all_messages(),
            deferred_tool_results=deferred_tool_results({"call-a": {"action": "approve"}}),
        )
    assert runs == []
    # AND answering both at once runs each approved call, matched by id
    agent.run_sync(
        None,
        message_history=parked.all_messages(),
        deferred_tool_results=deferred_tool_results({"call-b": {"action": "approve"}, "call-a": {"action": "no"}}),
    )
    assert runs == [2]


def test_the_approval_metadata_is_not_in_the_message_history():
    # The policy rides in DeferredToolRequests.metadata, which is the run's output, not part of
    # all_messages(): a host that wants to republish later keeps the envelope (or the ledger row).
    _, parked, _ = parked_refund()
    assert "__agent_wait__" in parked.output.metadata["call-1"]
    assert "__agent_wait__" not in repr(parked.all_messages())


def test_an_agent_without_deferred_output_refuses_a_deferred_call():
    # GIVEN an agent whose output_type cannot hold DeferredToolRequests
    agent: Any = __import__("pydantic_ai").Agent(TestModel(), output_type=str)
    runs: list[int] = []

    @agent.tool
    @wait()
    def refund(amount: int) -> str:
        runs.append(amount)
        return "refunded"

    # WHEN the tool defers, THEN the run fails with UserError naming DeferredToolRequests
    with pytest.raises(UserError, match="DeferredToolRequests"):
        agent.run_sync("refund")
    assert runs == []


def test_test_model_tool_call_ids_repeat_across_runs():
    # TestModel names its calls after the tool, so two questions on one thread would share an id. Real
    # providers mint unique ids; scripted tests give explicit ones.
    agent: Any = __import__("pydantic_ai").Agent(TestModel(), output_type=[str, DeferredToolRequests])

    @agent.tool
    @wait()
    def refund(amount: int) -> str:
        return "refunded"

    first = agent.run_sync("one").output.approvals[0].tool_call_id
    second = agent.run_sync("two").output.approvals[0].tool_call_id
    assert first == second == "pyd_ai_tool_call_id__refund"
