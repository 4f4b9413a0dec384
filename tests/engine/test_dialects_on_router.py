"""LangChain per-call approvals, Agent Inbox and `interrupt(response_schema=...)` through the router on the emulator.

Each test parks a real LangGraph graph (moto DynamoDB ledger and checkpoints) and answers it as a
person or a system would: every decision type of the dialect reaches the graph in the shape it expects,
our own `{"action": ...}` answers are translated, and every answer the graph could not apply is refused
`invalid_answer` before the decision, leaving the question open for a correct answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import tests.agents.agent_inbox_graphs as inbox
import tests.agents.hitl_graphs as hitl
from tests.agents.schema_graphs import RefundLimit
from tests.support.aws_stack import HostStack
from tests.support.parked import Parked, parking_router, router_for

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, RefusalReason

Park = Callable[[dict[str, Any]], Parked]


def _refused_then_right(parked: Parked, wrong: Any, right: Any, reason: RefusalReason) -> Any:
    """Send `wrong` (refused, question open), then `right` (applied, question resumed); the applied outcome."""
    refused = parked.answer(wrong, answer_id="wrong")
    assert refused.kind is OutcomeKind.REFUSED, refused
    assert refused.reason is reason, refused
    assert parked.status() is QuestionStatus.OPEN
    applied = parked.answer(right, answer_id="right")
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert parked.status() is QuestionStatus.RESUMED
    return applied


# -- LangChain HumanInTheLoopMiddleware, per-call mode ---------------------------------------------------


@pytest.fixture
def per_call(host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch) -> Park:
    return parking_router("tests.agents.hitl_graphs:build_hitl_per_call_graph", monkeypatch, f"pc-{unique}")


def _refund(park: Park, unique: str, kind: str = "refund") -> tuple[Parked, str]:
    order_id = f"o-{unique}-{kind}-{len(hitl.RUNS)}"
    return park(hitl.start_input(kind, order_id)), order_id


def test_a_per_call_approval_is_one_question_with_its_tools_decisions_and_schema(per_call: Park, unique: str) -> None:
    parked, order_id = _refund(per_call, unique)
    envelope = parked.record().envelope
    assert envelope.allowed_actions == ("approve", "edit", "reject", "respond")
    # (the graph's version stamp rides beside the dialect: docs/versions.md)
    assert {k: v for k, v in envelope.source.items() if k != "version"} == {
        "dialect": "langchain_hitl",
        "tools": ["issue_refund"],
        "mode": "per_call",
    }
    assert envelope.question["type"] == "tool_approval"
    assert envelope.question["args"] == {"order_id": order_id, "amount": 900}
    assert envelope.rules["edits"] is True
    schema = envelope.rules["response_schema"]
    assert set(schema["discriminator"]["mapping"]) == {"approve", "edit", "reject", "respond"}


@pytest.mark.parametrize(
    ("answer", "ran", "tool_says"),
    [
        ({"type": "approve"}, [900], "refunded 900"),
        ("native-edit", [5], "refunded 5"),
        ({"type": "reject", "message": "over budget"}, [], "over budget"),
        ({"type": "respond", "message": "sent by hand"}, [], "sent by hand"),
        ({"action": "approve"}, [900], "refunded 900"),
        ({"action": "approve", "args": {"amount": 7}}, [7], "refunded 7"),
        ({"action": "edit", "args": {"amount": 8}}, [8], "refunded 8"),
        ({"action": "reject", "note": "no"}, [], "no"),
        ({"action": "respond", "note": "done by phone"}, [], "done by phone"),
    ],
    ids=[
        "approve",
        "edit",
        "reject",
        "respond",
        "our-approve",
        "our-edit",
        "our-edit-action",
        "our-reject",
        "our-respond",
    ],
)
def test_each_per_call_decision_reaches_the_middleware(
    per_call: Park, unique: str, answer: Any, ran: list[int], tool_says: str
) -> None:
    parked, order_id = _refund(per_call, unique)
    if answer == "native-edit":
        answer = {
            "type": "edit",
            "edited_action": {"name": "issue_refund", "args": {"order_id": order_id, "amount": 5}},
        }
    outcome = parked.answer(answer)
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    # An edit of ours names only what changes: the order id the model asked for is kept.
    assert hitl.runs(order_id) == [("issue_refund", {"order_id": order_id, "amount": n}) for n in ran]
    tool_messages = [m for m in parked.values()["messages"] if m.type == "tool"]
    assert tool_says in tool_messages[-1].content
    assert parked.status() is QuestionStatus.RESUMED


PER_CALL_WRONG = {
    "batched-shape": ("refund", {"decisions": [{"type": "approve"}]}),
    "edit-arg-of-the-wrong-type": (
        "refund",
        {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"order_id": "o", "amount": "lots"}}},
    ),
    "edit-missing-a-required-arg": (
        "refund",
        {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"order_id": "o"}}},
    ),
    "our-edit-of-the-wrong-type": ("refund", {"action": "approve", "args": {"amount": "lots"}}),
    "edit-switches-tool": (
        "refund",
        {"type": "edit", "edited_action": {"name": "close_case", "args": {"order_id": "o"}}},
    ),
    "decision-the-tool-does-not-allow": ("close", {"type": "respond", "message": "x"}),
    "respond-without-message": ("refund", {"type": "respond"}),
    "agent-inbox-shape": ("refund", [{"type": "accept", "args": None}]),
}


@pytest.mark.parametrize("case", list(PER_CALL_WRONG))
def test_a_per_call_answer_the_middleware_cannot_apply_is_refused_and_a_correct_one_still_wins(
    per_call: Park, unique: str, case: str
) -> None:
    kind, wrong = PER_CALL_WRONG[case]
    parked, order_id = _refund(per_call, unique, kind)
    _refused_then_right(parked, wrong, {"type": "approve"}, RefusalReason.INVALID_ANSWER)
    assert len(hitl.runs(order_id)) == 1, "the tool ran once, after the correct answer"


def test_a_wrong_edit_used_to_be_decided_and_then_fail_the_agent(per_call: Park, unique: str) -> None:
    # The middleware validates a per-call answer inside the agent (pydantic, after the decision): an edit
    # whose amount is not an integer would win the question and then raise. It is refused before.
    parked, _ = _refund(per_call, unique)
    refused = parked.answer({"action": "approve", "args": {"amount": "lots"}})
    assert refused.kind is OutcomeKind.REFUSED, refused
    assert "at $.edited_action.args.amount, expected type integer" in refused.detail
    assert "lots" not in refused.detail, "a refusal never echoes the answer's values"
    assert parked.record().failure is None


def test_two_gated_calls_in_one_turn_are_two_questions_each_reaching_its_own_tool(
    host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    router = router_for("tests.agents.hitl_graphs:build_hitl_per_call_graph", monkeypatch)
    thread_id, order_id = f"pc2-{unique}", f"o2-{unique}"
    started = router.handle(json.dumps({"thread_id": thread_id, "input": hitl.start_input("both", order_id)}))
    questions = {router.ledger.get(thread_id, q).envelope.question["name"]: q for q in started.asked}  # type: ignore[union-attr]
    assert sorted(questions) == ["close_case", "issue_refund"]

    # Answered in the other order from the calls: each answer still reaches its own tool.
    first = Parked(router, thread_id, questions["close_case"]).answer({"action": "reject", "note": "keep open"}, "a")
    assert first.kind is OutcomeKind.APPLIED, first
    second = Parked(router, thread_id, questions["issue_refund"]).answer({"action": "approve"}, "b")
    assert second.kind is OutcomeKind.APPLIED, second
    assert hitl.runs(order_id) == [("issue_refund", {"order_id": order_id, "amount": 900})]


# -- Agent Inbox ---------------------------------------------------------------------------------------


@pytest.fixture
def agent_inbox(host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch) -> Park:
    return parking_router("tests.agents.agent_inbox_graphs:build_agent_inbox_graph", monkeypatch, f"ai-{unique}")


def _review(park: Park, unique: str) -> tuple[Parked, str]:
    order_id = f"o-{unique}-{len(inbox.ACTIONS)}"
    return park({"order_id": order_id, "amount": 900}), order_id


def test_an_agent_inbox_interrupt_is_one_question_whose_actions_come_from_its_config(
    agent_inbox: Park, unique: str
) -> None:
    parked, _ = _review(agent_inbox, unique)
    envelope = parked.record().envelope
    assert envelope.allowed_actions == ("accept", "edit", "response", "ignore")
    assert {k: v for k, v in envelope.source.items() if k != "version"} == {
        "dialect": "agent_inbox",
        "tools": ["issue_refund"],
    }
    assert envelope.rules["edits"] is True
    assert envelope.question[0]["action_request"]["action"] == "issue_refund"


@pytest.mark.parametrize(
    ("answer", "refunds", "outcome"),
    [
        ([{"type": "accept", "args": None}], [900], "refunded 900"),
        ("native-edit", [5], "refunded 5"),
        ([{"type": "response", "args": "call the customer first"}], [], "reviewer said: call the customer first"),
        ([{"type": "ignore", "args": None}], [], "ignored"),
        ({"action": "accept"}, [900], "refunded 900"),
        ({"action": "accept", "args": {"amount": 7}}, [7], "refunded 7"),
        ({"action": "edit", "args": {"amount": 8}}, [8], "refunded 8"),
        ({"action": "response", "note": "call first"}, [], "reviewer said: call first"),
        ({"action": "ignore"}, [], "ignored"),
    ],
    ids=[
        "accept",
        "edit",
        "response",
        "ignore",
        "our-accept",
        "our-edit",
        "our-edit-action",
        "our-response",
        "our-ignore",
    ],
)
def test_each_agent_inbox_response_reaches_the_graph(
    agent_inbox: Park, unique: str, answer: Any, refunds: list[int], outcome: str
) -> None:
    parked, order_id = _review(agent_inbox, unique)
    if answer == "native-edit":
        answer = [{"type": "edit", "args": {"action": "issue_refund", "args": {"order_id": order_id, "amount": 5}}}]
    applied = parked.answer(answer)
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert inbox.actions(order_id) == [{"order_id": order_id, "amount": n} for n in refunds]
    assert parked.values()["outcome"] == outcome


AGENT_INBOX_WRONG = {
    "not-in-a-list": ({"type": "accept", "args": None}, RefusalReason.INVALID_ANSWER),
    "two-responses": (
        [{"type": "accept", "args": None}, {"type": "ignore", "args": None}],
        RefusalReason.INVALID_ANSWER,
    ),
    "unknown-type": ([{"type": "approve"}], RefusalReason.INVALID_ANSWER),
    "response-without-text": ([{"type": "response", "args": None}], RefusalReason.INVALID_ANSWER),
    "edit-without-action-request": ([{"type": "edit", "args": {"amount": 5}}], RefusalReason.INVALID_ANSWER),
    "accept-with-args": ([{"type": "accept", "args": "yes"}], RefusalReason.INVALID_ANSWER),
    "extra-key": ([{"type": "accept", "args": None, "note": "x"}], RefusalReason.INVALID_ANSWER),
    "middleware-shape": ({"decisions": [{"type": "approve"}]}, RefusalReason.INVALID_ANSWER),
    "our-response-without-note": ({"action": "response"}, RefusalReason.INVALID_ANSWER),
    "our-ignore-with-args": ({"action": "ignore", "args": {"amount": 1}}, RefusalReason.INVALID_ANSWER),
    "our-approve": ({"action": "approve"}, RefusalReason.ACTION_NOT_ALLOWED),
}


@pytest.mark.parametrize("case", list(AGENT_INBOX_WRONG))
def test_an_agent_inbox_answer_the_graph_cannot_apply_is_refused_and_a_correct_one_still_wins(
    agent_inbox: Park, unique: str, case: str
) -> None:
    wrong, reason = AGENT_INBOX_WRONG[case]
    parked, order_id = _review(agent_inbox, unique)
    _refused_then_right(parked, wrong, [{"type": "accept", "args": None}], reason)
    assert inbox.actions(order_id) == [{"order_id": order_id, "amount": 900}]


# -- interrupt(value, response_schema=...) -----------------------------------------------------------------


@pytest.fixture
def schema_question(host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch) -> Park:
    return parking_router("tests.agents.schema_graphs:build_schema_graph", monkeypatch, f"rs-{unique}")


def test_the_schema_travels_with_the_question(schema_question: Park, unique: str) -> None:
    parked = schema_question({"order_id": f"o-{unique}", "kind": "model"})
    envelope = parked.record().envelope
    assert envelope.rules["response_schema"] == RefundLimit.model_json_schema()
    assert envelope.allowed_actions == ("submit",)
    assert list(envelope.source or {}) == ["version"]  # no dialect: only the graph's version stamp (docs/versions.md)


@pytest.mark.parametrize(
    ("kind", "answer", "received"),
    [
        ("model", {"limit": 500}, {"limit": 500, "channel": "email"}),
        ("model", {"limit": 0, "channel": "phone"}, {"limit": 0, "channel": "phone"}),
        ("json", {"limit": 5, "reason": "goodwill"}, {"limit": 5, "reason": "goodwill"}),
        ("choice", {"action": "ship", "note": "today"}, {"action": "ship", "note": "today"}),
    ],
    ids=["model", "model-all-fields", "json-schema", "action-enum"],
)
def test_an_answer_that_fits_the_schema_is_what_interrupt_returns(
    schema_question: Park, unique: str, kind: str, answer: Any, received: Any
) -> None:
    parked = schema_question({"order_id": f"o-{unique}", "kind": kind})
    applied = parked.answer(answer)
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert parked.values()["received"] == received


SCHEMA_WRONG = {
    "model-wrong-type": ("model", {"limit": "lots"}, "expected type integer"),
    "model-missing-field": ("model", {"channel": "email"}, "a required property is missing"),
    "model-below-minimum": ("model", {"limit": -1}, "'minimum' rule"),
    "model-not-an-object": ("model", "500", "expected type object"),
    "model-our-approve": ("model", {"action": "approve"}, "a required property is missing"),
    "json-extra-property": ("json", {"limit": 5, "tip": 1}, "a property the schema does not list is not allowed"),
    "choice-not-in-enum": ("choice", {"action": "approve"}, 'expected one of ["ship", "hold"]'),
}
SCHEMA_RIGHT = {"model": {"limit": 1}, "json": {"limit": 1}, "choice": {"action": "hold"}}


@pytest.mark.parametrize("case", list(SCHEMA_WRONG))
def test_an_answer_that_does_not_fit_the_schema_is_refused_and_a_correct_one_still_wins(
    schema_question: Park, unique: str, case: str
) -> None:
    kind, wrong, detail = SCHEMA_WRONG[case]
    parked = schema_question({"order_id": f"o-{unique}", "kind": kind})
    refused = parked.answer(wrong, answer_id="wrong")
    assert refused.reason is RefusalReason.INVALID_ANSWER, refused
    assert detail in refused.detail
    _refused_then_right(parked, wrong, SCHEMA_RIGHT[kind], RefusalReason.INVALID_ANSWER)
