"""Pin the Agent Inbox shapes `agent_wait.dialects.agent_inbox` reads, and its mapping both ways.

The shapes are LangGraph's (`langgraph.prebuilt.interrupt`; the request classes are deprecated there and
the shapes still what Agent Inbox reads and writes). The core recognises them structurally, so these
tests fail if a release changes a key.
"""

from __future__ import annotations

import typing
import warnings
from typing import Any

import pytest
import tests.agents.agent_inbox_graphs as inbox
from langgraph.checkpoint.memory import InMemorySaver

from agent_wait import InMemoryAnnounce
from agent_wait.dialects import agent_inbox, recognize, resume_value
from agent_wait.langgraph import publish_interrupts

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import interrupt as prebuilt

REQUEST = {
    "action_request": {"action": "issue_refund", "args": {"order_id": "o-1", "amount": 900}},
    "config": {"allow_accept": True, "allow_edit": False, "allow_respond": True, "allow_ignore": False},
    "description": "Refund?",
}


def test_the_request_and_response_have_these_keys() -> None:
    assert set(typing.get_type_hints(prebuilt.HumanInterrupt)) == {"action_request", "config", "description"}
    assert set(typing.get_type_hints(prebuilt.ActionRequest)) == {"action", "args"}
    assert set(typing.get_type_hints(prebuilt.HumanInterruptConfig)) == set(agent_inbox.RESPONSES.values())
    assert set(typing.get_type_hints(prebuilt.HumanResponse)) == {"type", "args"}
    response_types = typing.get_args(typing.get_type_hints(prebuilt.HumanResponse)["type"])
    assert set(response_types) == set(agent_inbox.RESPONSES)


def test_a_graph_in_the_agent_inbox_style_is_published_as_an_agent_inbox_question() -> None:
    graph = inbox.build_agent_inbox_graph(InMemorySaver())
    result = graph.invoke({"order_id": "pin-ai", "amount": 900}, {"configurable": {"thread_id": "pin-ai"}})
    announce = InMemoryAnnounce()
    publish_interrupts(result, "pin-ai", announce)
    (envelope,) = announce.of("created")
    assert envelope.allowed_actions == ("accept", "edit", "response", "ignore")
    assert dict(envelope.source or {}) == {"dialect": "agent_inbox", "tools": ["issue_refund"]}
    assert resume_value(envelope, {"action": "accept"}) == [{"type": "accept", "args": None}]


@pytest.mark.parametrize("listed", [True, False], ids=["list-of-one", "bare"])
@pytest.mark.parametrize(
    ("ours", "native"),
    [
        ({"action": "accept"}, {"type": "accept", "args": None}),
        ({"action": "ignore"}, {"type": "ignore", "args": None}),
        ({"action": "response", "note": "call first"}, {"type": "response", "args": "call first"}),
        (
            {"action": "accept", "args": {"amount": 5}},
            {"type": "edit", "args": {"action": "issue_refund", "args": {"order_id": "o-1", "amount": 5}}},
        ),
    ],
    ids=["accept", "ignore", "response", "edit"],
)
def test_our_answers_become_the_human_response_in_the_requests_own_form(listed: bool, ours: Any, native: Any) -> None:
    question = [REQUEST] if listed else REQUEST
    assert agent_inbox.to_resume(question, ours) == ([native] if listed else native)
    assert agent_inbox.to_resume(question, [native] if listed else native) == ([native] if listed else native)


def test_the_config_decides_the_allowed_actions_and_edits() -> None:
    found = recognize([REQUEST])
    assert found is not None
    assert found.allowed_actions == ("accept", "response")
    assert found.allow_edits is False
    assert agent_inbox.answer_problem([REQUEST], {"action": "accept", "args": {"amount": 5}}) == (
        "this request does not allow edits; its config allows ['accept', 'response']"
    )


@pytest.mark.parametrize(
    "value",
    [
        [REQUEST, REQUEST],  # Agent Inbox reads one request per interrupt
        {**REQUEST, "config": {"allow_accept": False}},  # nothing allowed
        {**REQUEST, "config": {"allow_accept": "yes"}},
        {**REQUEST, "action_request": {"action": "x"}},
        {**REQUEST, "extra": 1},
        {**REQUEST, "description": 3},
    ],
    ids=["two-requests", "nothing-allowed", "flag-not-bool", "no-args", "extra-key", "description-not-text"],
)
def test_a_value_that_is_not_exactly_a_request_is_not_read_as_one(value: Any) -> None:
    assert recognize(value) is None


EDITABLE = {**REQUEST, "config": {**REQUEST["config"], "allow_edit": True}}


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {"type": "edit", "args": {"action": "issue_refund", "args": {}}},
            "an edit response carries every argument of the action, ['amount', 'order_id'], and no other",
        ),
        (
            {"type": "edit", "args": {"action": "issue_refund", "args": {"order_id": "o-1", "amount": 1, "x": 2}}},
            "an edit response carries every argument of the action, ['amount', 'order_id'], and no other",
        ),
        (
            {"type": "edit", "args": {"action": "delete_order", "args": {"order_id": "o-1", "amount": 1}}},
            "an edit keeps the action 'issue_refund'; an edit may not switch actions",
        ),
        (
            {"action": "edit", "args": {"amount": 1, "currency": "EUR"}},
            "an edit changes the action's arguments ['amount', 'order_id']; it has no argument ['currency']",
        ),
        (
            {"type": "edit", "args": {"action": "issue_refund", "args": {"order_id": [], "amount": None}}},
            "an edit changes values, not their kinds: 'amount' was a number, the edit makes it null",
        ),
        (
            {"action": "edit", "args": {"order_id": 7}},
            "an edit changes values, not their kinds: 'order_id' was a string, the edit makes it a number",
        ),
        (
            {"action": "edit", "args": {"amount": True}},
            "an edit changes values, not their kinds: 'amount' was a number, the edit makes it a boolean",
        ),
    ],
)
def test_an_edit_the_action_could_not_be_called_with_is_refused_before_the_decision(answer: Any, problem: str) -> None:
    # Agent Inbox's edit replaces the arguments whole; ours changes some of them. Either way the action is then
    # called with them, so a missing or unknown argument, or one of another kind (a list where the action asked a
    # string), would burn the question: the agent fails on it (found by the router's fuzz). The request carries no
    # schema, so the kind each argument was asked with is the one the action takes.
    assert agent_inbox.answer_problem(EDITABLE, answer) == problem


def test_an_edit_with_every_argument_of_the_action_is_accepted() -> None:
    native = {"type": "edit", "args": {"action": "issue_refund", "args": {"order_id": "o-1", "amount": 1}}}
    assert agent_inbox.answer_problem(EDITABLE, native) is None
    assert agent_inbox.answer_problem(EDITABLE, {"action": "edit", "args": {"amount": 1}}) is None
