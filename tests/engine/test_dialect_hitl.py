"""LangChain's `HumanInTheLoopMiddleware` through the router on the emulator (moto DynamoDB ledger and checkpoints).

A real `create_agent` graph (tests/agents/hitl_graphs.py) parks on the middleware's own interrupt. Every
decision type reaches the middleware as it expects, our `{"action": ...}` answers are translated, and
every answer the middleware could not apply is refused `invalid_answer` before the decision, leaving
the question open for a correct answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import tests.agents.hitl_graphs as hitl
from tests.support.aws_stack import HostStack
from tests.support.parked import Parked, parking_router

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, RefusalReason

EDIT = {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"order_id": "", "amount": 5}}}


@dataclass
class ParkedOrder:
    parked: Parked
    order_id: str

    @property
    def router(self) -> Any:
        return self.parked.router

    @property
    def thread_id(self) -> str:
        return self.parked.thread_id

    @property
    def question_id(self) -> str:
        return self.parked.question_id

    def answer(self, answer: Any, answer_id: str = "a-1") -> Any:
        return self.parked.answer(answer, answer_id)

    def status(self) -> QuestionStatus:
        return self.parked.status()

    def tool_messages(self) -> list[Any]:
        return [m for m in self.parked.values()["messages"] if m.type == "tool"]


@pytest.fixture
def ask(host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    park = parking_router("tests.agents.hitl_graphs:build_hitl_graph", monkeypatch, f"hitl-{unique}")
    count = iter(range(100))

    def start(kind: str) -> ParkedOrder:
        order_id = f"o-{unique}-{next(count)}"
        return ParkedOrder(park(hitl.start_input(kind, order_id)), order_id)

    return start


def edit(order_id: str, amount: int) -> dict[str, Any]:
    return {**EDIT, "edited_action": {"name": "issue_refund", "args": {"order_id": order_id, "amount": amount}}}


def test_the_middleware_interrupt_is_one_question_whose_actions_and_source_come_from_its_configs(ask: Any) -> None:
    parked = ask("both")
    record = parked.router.ledger.get(parked.thread_id, parked.question_id)
    assert record is not None
    assert record.envelope.allowed_actions == ("approve", "edit", "reject", "respond")
    source = {k: v for k, v in (record.envelope.source or {}).items() if k != "version"}  # docs/versions.md
    assert source == {"dialect": "langchain_hitl", "tools": ["issue_refund", "close_case"]}
    assert [r["name"] for r in record.envelope.question["action_requests"]] == ["issue_refund", "close_case"]


@pytest.mark.parametrize(
    ("decision", "ran", "tool_says"),
    [
        ({"type": "approve"}, [900], "refunded 900"),
        ("edit", [5], "refunded 5"),
        ({"type": "reject", "message": "over budget"}, [], "over budget"),
        ({"type": "reject"}, [], "was not executed"),
        ({"type": "respond", "message": "refund sent by hand"}, [], "refund sent by hand"),
    ],
    ids=["approve", "edit", "reject", "reject-without-message", "respond"],
)
def test_each_native_decision_reaches_the_middleware_as_it_expects(
    ask: Any, decision: Any, ran: list[int], tool_says: str
) -> None:
    parked = ask("refund")
    decision = edit(parked.order_id, 5) if decision == "edit" else decision
    outcome = parked.answer({"decisions": [decision]})
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    assert [args["amount"] for _, args in hitl.runs(parked.order_id)] == ran
    assert tool_says in parked.tool_messages()[-1].content
    assert parked.status() is QuestionStatus.RESUMED


@pytest.mark.parametrize(
    ("answer", "ran", "tool_says"),
    [
        ({"action": "approve"}, ["issue_refund", "close_case"], "closed"),
        ({"action": "reject", "note": "over budget"}, [], "over budget"),
    ],
    ids=["approve", "reject"],
)
def test_our_answers_are_translated_to_one_decision_per_action_request(
    ask: Any, answer: Any, ran: list[str], tool_says: str
) -> None:
    parked = ask("both")
    outcome = parked.answer(answer)
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    assert sorted(name for name, _ in hitl.runs(parked.order_id)) == sorted(ran)
    assert any(tool_says in m.content for m in parked.tool_messages())


def test_our_edit_of_a_single_call_becomes_an_edit_decision(ask: Any) -> None:
    parked = ask("refund")
    outcome = parked.answer({"action": "approve", "args": {"order_id": parked.order_id, "amount": 7}})
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    assert hitl.runs(parked.order_id) == [("issue_refund", {"order_id": parked.order_id, "amount": 7})]


WRONG = {
    "no-decisions": ("refund", {"decisions": []}),
    "too-many": ("refund", {"decisions": [{"type": "approve"}, {"type": "approve"}]}),
    "too-few": ("both", {"decisions": [{"type": "approve"}]}),
    "not-allowed-for-the-tool": (
        "close",
        {"decisions": [{"type": "edit", "edited_action": {"name": "close_case", "args": {}}}]},
    ),
    "edit-switches-tool": (
        "refund",
        {"decisions": [{"type": "edit", "edited_action": {"name": "close_case", "args": {"order_id": "x"}}}]},
    ),
    "edit-without-args": ("refund", {"decisions": [{"type": "edit", "edited_action": {"name": "issue_refund"}}]}),
    "respond-without-message": ("refund", {"decisions": [{"type": "respond"}]}),
    "unknown-type": ("refund", {"decisions": [{"type": "accept"}]}),
    "misspelt-key": ("refund", {"decisions": [{"type": "reject", "messsage": "no"}]}),
    "agent-inbox-shape": ("refund", [{"type": "accept", "args": None}]),
    "decisions-and-more": ("refund", {"decisions": [{"type": "approve"}], "note": "x"}),
    "our-respond-where-no-call-allows-it": ("close", {"action": "respond", "note": "hi"}),
    "our-edit-of-two-calls": ("both", {"action": "approve", "args": {"amount": 1}}),
    "our-respond-without-note": ("refund", {"action": "respond"}),
}
OTHER_REASONS = {
    "our-respond-where-no-call-allows-it": RefusalReason.ACTION_NOT_ALLOWED,
}


@pytest.mark.parametrize("case", list(WRONG))
def test_an_answer_the_middleware_cannot_apply_is_refused_and_a_correct_one_still_wins(ask: Any, case: str) -> None:
    kind, answer = WRONG[case]
    parked = ask(kind)
    refused = parked.answer(answer, answer_id="wrong")
    assert refused.kind is OutcomeKind.REFUSED, refused
    assert refused.reason is OTHER_REASONS.get(case, RefusalReason.INVALID_ANSWER), refused
    assert parked.status() is QuestionStatus.OPEN
    assert hitl.runs(parked.order_id) == []
    applied = parked.answer({"action": "approve"}, answer_id="right")
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert hitl.runs(parked.order_id), "the tool ran after the correct answer"
