"""publish_interrupts, questions_from_result and interrupt_responses for Strands runs."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import pytest
from strands.interrupt import Interrupt
from strands.types.tools import ToolContext
from strands_script import scripted_agent

from agent_wait import EnvelopeError, InMemoryAnnounce, MissingExtraError, WaitPolicy
from agent_wait.strands import interrupt_responses, publish_interrupts, questions_from_result
from strands import tool


@tool(context=True)
def confirm_delete(key: str, tool_context: ToolContext) -> str:
    """Delete an object after a bare interrupt."""
    answer = tool_context.interrupt("confirm-delete", reason={"key": key, "ask": "delete?"})
    return f"deleted {key}" if answer == "yes" else f"kept {key}"


def test_a_bare_interrupt_is_published_with_its_reason_and_the_default_policy():
    # GIVEN a tool that interrupts by hand
    agent, _ = scripted_agent([confirm_delete], ("confirm_delete", {"key": "X"}, "tu-del"))
    memory = InMemoryAnnounce()
    # WHEN the run stops on it
    result = agent("delete X")
    publish_interrupts(result, "t-1", memory)
    # THEN the question is the reason as is, under the default policy, with no source
    envelope = memory.of("created")[0].to_dict()
    assert envelope["question_id"] == result.interrupts[0].id
    assert envelope["question"] == {"key": "X", "ask": "delete?"}
    assert envelope["source"] is None
    assert envelope["allowed_actions"] == ["approve", "reject"]
    assert (envelope["expires_at"], envelope["default"], envelope["tags"]) == (None, None, {})


def test_a_bare_interrupt_gets_its_answer_verbatim():
    agent, model = scripted_agent([confirm_delete], ("confirm_delete", {"key": "X"}, "tu-del"))
    parked = agent("delete X")
    agent(interrupt_responses({parked.interrupts[0].id: "yes"}))
    assert model.last_seen == {"tu-del": "deleted X"}


def test_interrupt_responses_builds_one_block_per_answer():
    assert interrupt_responses({"q-1": {"action": "approve"}, "q-2": "no"}) == [
        {"interruptResponse": {"interruptId": "q-1", "response": {"action": "approve"}}},
        {"interruptResponse": {"interruptId": "q-2", "response": "no"}},
    ]


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ({}, "interrupt_responses needs at least one answer"),
        ({"": "yes"}, "a question id must be a non-empty string; got ''"),
        ({"q-1": None}, "the answer to 'q-1' is null; Strands takes a null response as no response"),
    ],
)
def test_interrupt_responses_refuses_what_would_not_resume_the_run(answers, message):
    with pytest.raises(EnvelopeError, match=re.escape(message)):
        interrupt_responses(answers)


# --- publish_interrupts: nothing, garbage --------------------------------------------------------


def test_a_run_that_finished_publishes_nothing():
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return "shipped"

    agent, _ = scripted_agent([lookup], ("lookup", {"order_id": "o-1"}, "tu-l"))
    memory = InMemoryAnnounce()
    result = agent("where is o-1")
    assert result.stop_reason == "end_turn"
    assert publish_interrupts(result, "t-1", memory) == []
    assert publish_interrupts(None, "t-1", memory) == []
    assert memory.events == []


@pytest.mark.parametrize("garbage", [{"__interrupt__": []}, "parked", 42, [Interrupt("i", "n")]])
def test_publish_interrupts_refuses_what_is_not_an_agent_result(garbage):
    with pytest.raises(EnvelopeError, match=re.escape("publish_interrupts expects the AgentResult that agent(...)")):
        publish_interrupts(garbage, "t-1", InMemoryAnnounce())


class FakeResult:
    def __init__(self, interrupts: Any, stop_reason: str = "interrupt") -> None:
        self.stop_reason = stop_reason
        self.interrupts = interrupts


def test_publish_interrupts_refuses_interrupts_that_are_not_strands_interrupts():
    with pytest.raises(EnvelopeError, match=re.escape("result.interrupts must be the list of strands.interrupt")):
        publish_interrupts(FakeResult([{"id": "x"}]), "t-1", InMemoryAnnounce())


def test_publish_interrupts_refuses_an_empty_thread_id_and_a_non_json_reason():
    with pytest.raises(EnvelopeError, match=re.escape("thread_id must be a non-empty string; got ''")):
        publish_interrupts(FakeResult([Interrupt("i-1", "n", reason="r")]), "", InMemoryAnnounce())
    with pytest.raises(EnvelopeError, match=re.escape("question is a object, which is not JSON")):
        publish_interrupts(FakeResult([Interrupt("i-1", "n", reason=object())]), "t", InMemoryAnnounce())


def test_a_stop_reason_other_than_interrupt_publishes_nothing():
    assert publish_interrupts(FakeResult([Interrupt("i-1", "n")], "end_turn"), "t", InMemoryAnnounce()) == []


def test_questions_keep_the_order_strands_reports():
    items = [Interrupt(f"i-{n}", "n", reason=n) for n in range(3)]
    assert [(q.question_id, q.value, q.policy) for q in questions_from_result(FakeResult(items), "t")] == [
        ("i-0", 0, WaitPolicy()),
        ("i-1", 1, WaitPolicy()),
        ("i-2", 2, WaitPolicy()),
    ]


# --- the extra -----------------------------------------------------------------------------------


def test_importing_the_binding_without_strands_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "strands", None)
    for name in [m for m in sys.modules if m == "agent_wait.strands" or m.startswith("agent_wait.strands.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[strands]'")) as caught:
        importlib.import_module("agent_wait.strands")
    assert caught.value.extra == "strands"
    assert "agent_wait.strands needs strands-agents" in caught.value.message
