"""Facts about Strands 1.62 that the binding and its hosts rely on; each fails if the framework changes.

Where Strands differs from LangGraph, docs/frameworks.md says so and points here.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from strands.session.file_session_manager import FileSessionManager
from strands.types.tools import ToolContext
from strands_script import scripted_agent

from agent_wait.strands import interrupt_responses, questions_from_result, wait
from strands import tool

APPROVE = {"action": "approve"}


def refund_tool(runs: list[int]) -> Any:
    @tool(context=True)
    @wait()
    def issue_refund(amount: int) -> str:
        runs.append(amount)
        return "refunded"

    return issue_refund


def parked_refund(**agent_kwargs: Any) -> tuple[Any, str, list[int]]:
    """An agent parked on one `@wait` refund; returns (agent, question id, the tool's runs)."""
    runs: list[int] = []
    agent, _ = scripted_agent([refund_tool(runs)], ("issue_refund", {"amount": 41000}, "tu-1"), **agent_kwargs)
    result = agent("refund")
    assert result.stop_reason == "interrupt"
    return agent, result.interrupts[0].id, runs


def test_a_duplicate_answer_raises_value_error_and_runs_nothing():
    agent, qid, runs = parked_refund()
    agent(interrupt_responses({qid: APPROVE}))
    with pytest.raises(ValueError, match=re.escape("Received interrupt responses but agent is not in interrupt state")):
        agent(interrupt_responses({qid: APPROVE}))
    assert runs == [41000]


def test_a_duplicate_answer_to_an_agent_restored_from_its_session_raises_value_error_too(tmp_path):
    # GIVEN a host that builds a fresh agent per message over one session (as a Lambda would)
    def fresh() -> tuple[Any, list[int]]:
        runs: list[int] = []
        session = FileSessionManager(session_id="order-4471", storage_dir=str(tmp_path))
        agent, _ = scripted_agent(
            [refund_tool(runs)], ("issue_refund", {"amount": 41000}, "tu-1"), session_manager=session
        )
        return agent, runs

    first, first_runs = fresh()
    qid = first("refund").interrupts[0].id
    # WHEN the answer is applied by one instance and the duplicate by another
    answering, answering_runs = fresh()
    assert answering(interrupt_responses({qid: APPROVE})).stop_reason == "end_turn"
    duplicate, duplicate_runs = fresh()
    with pytest.raises(ValueError, match="not in interrupt state"):
        duplicate(interrupt_responses({qid: APPROVE}))
    # THEN the interrupt state travelled through the session and the tool ran exactly once
    assert (first_runs, answering_runs, duplicate_runs) == ([], [41000], [])


def test_an_unknown_id_raises_key_error_and_runs_nothing():
    agent, _, runs = parked_refund()
    with pytest.raises(KeyError, match=re.escape("interrupt_id=<q-unknown> | no interrupt found")):
        agent(interrupt_responses({"q-unknown": APPROVE}))
    assert runs == []


def test_a_plain_prompt_to_a_parked_agent_raises_type_error_and_runs_nothing():
    agent, qid, runs = parked_refund()
    with pytest.raises(TypeError, match=re.escape("must resume from interrupt with list of interruptResponse's")):
        agent("hello again")
    assert runs == []
    # AND the agent is still parked: the right answer still resumes it
    agent(interrupt_responses({qid: APPROVE}))
    assert runs == [41000]


def test_a_null_response_parks_the_tool_again_under_the_same_id():
    # Strands reads `response is None` as "no answer yet"; interrupt_responses refuses None for that reason
    agent, qid, runs = parked_refund()
    again = agent([{"interruptResponse": {"interruptId": qid, "response": None}}])
    assert again.stop_reason == "interrupt"
    assert [item.id for item in again.interrupts] == [qid]
    assert runs == []


def test_parallel_questions_are_answered_by_id_one_at_a_time():
    # GIVEN two @wait calls in one model message
    runs: list[int] = []
    agent, _ = scripted_agent(
        [refund_tool(runs)], ("issue_refund", {"amount": 1}, "tu-a"), ("issue_refund", {"amount": 2}, "tu-b")
    )
    parked = agent("refund both")
    first, second = (q.question_id for q in questions_from_result(parked, "t"))
    # WHEN only the second is answered
    partial = agent(interrupt_responses({second: APPROVE}))
    # THEN that call runs and the run parks again on the first, under the same id
    assert runs == [2]
    assert partial.stop_reason == "interrupt"
    assert [item.id for item in partial.interrupts] == [first]
    # AND answering the first finishes the run without re-running the second
    assert agent(interrupt_responses({first: APPROVE})).stop_reason == "end_turn"
    assert runs == [2, 1]


def test_a_question_parked_again_after_a_partial_answer_keeps_its_asked_at():
    # The unanswered interrupt keeps its first reason, so a republish after a partial answer keeps expires_at.
    runs: list[int] = []
    agent, _ = scripted_agent(
        [refund_tool(runs)], ("issue_refund", {"amount": 1}, "tu-a"), ("issue_refund", {"amount": 2}, "tu-b")
    )
    parked = agent("refund both")
    first, second = questions_from_result(parked, "t")
    again = questions_from_result(agent(interrupt_responses({second.question_id: APPROVE})), "t")
    assert [q.question_id for q in again] == [first.question_id]
    assert again[0].asked_at is not None
    assert first.asked_at is not None
    assert again[0].asked_at == first.asked_at


def test_the_interrupt_id_is_derived_from_the_tool_use_id_and_the_interrupt_name():
    _, qid, _ = parked_refund()
    assert qid.startswith("v1:tool_call:tu-1:")


def test_a_tool_interrupting_twice_in_one_call_parks_on_the_second_after_the_first_is_answered():
    # One @wait per tool call: a tool that asks twice needs two rounds, each with its own id
    @tool(context=True)
    def two_steps(tool_context: ToolContext) -> str:
        a = tool_context.interrupt("first", reason="one")
        b = tool_context.interrupt("second", reason="two")
        return f"{a}+{b}"

    agent, model = scripted_agent([two_steps], ("two_steps", {}, "tu-2"))
    first = agent("go").interrupts[0]
    second = agent(interrupt_responses({first.id: "A"})).interrupts[0]
    assert (first.reason, second.reason) == ("one", "two")
    assert second.id != first.id
    agent(interrupt_responses({second.id: "B"}))
    assert model.last_seen == {"tu-2": "A+B"}
