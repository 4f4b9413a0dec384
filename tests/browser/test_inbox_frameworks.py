"""Every framework's question, answered in the inbox in Chromium and over the API with the CLI.

One stack on the emulator, each framework's agent deployed on it in turn:
a LangGraph `@wait` call, an Agent Inbox request, LangChain's `HumanInTheLoopMiddleware` per call and batched,
a Strands tool and a Pydantic AI tool. For each: the question page shows the call and its arguments, with its
answer buttons above the fold of a 1280x800 screen; an approval with an edited amount pays the edited amount
once; and `agent-wait answer` over the answer API approves another. Each question page is saved as a
screenshot (`AGENT_WAIT_SCREENSHOTS=dir` keeps them) for a person to look at.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import GRAPH, Inbox, running_inbox

pytestmark = pytest.mark.timeout(240)

FOLD = {"width": 1280, "height": 800}
"""A laptop's screen: a question's answer buttons must be visible on it without scrolling."""


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def _hitl_paid(order_id: str) -> list[int]:
    from tests.agents.hitl_graphs import runs

    return [args["amount"] for name, args in runs(order_id) if name == "issue_refund"]


def _hitl_closed(order_id: str) -> int:
    from tests.agents.hitl_graphs import runs

    return sum(1 for name, _ in runs(order_id) if name == "close_case")


def _framework_paid(order_id: str) -> list[int]:
    from tests.browser.framework_agents import paid

    return paid(order_id)


def _hitl_start(kind: str) -> Callable[[str, int], Any]:
    def start(order_id: str, amount: int) -> Any:
        from tests.agents.hitl_graphs import start_input

        return start_input(kind, order_id, amount)

    return start


@dataclass(frozen=True)
class Framework:
    """How to ask a refund of one framework's agent, and how to see what it paid."""

    name: str
    graph: str
    start: Callable[[str, int], Any]
    """(order id, amount) → the start message's input."""
    approve: str = "approve"
    """The action that runs the call (Agent Inbox: accept)."""
    paid: Callable[[str], list[int]] | None = None
    """The amounts the refund paid for an order; None: the refunds table of the refund example."""


FRAMEWORKS = {
    framework.name: framework
    for framework in (
        Framework(
            "langgraph_wait", GRAPH, lambda order, amount: {"order_id": order, "amount": amount, "kind": "editable"}
        ),
        Framework(
            "agent_inbox",
            GRAPH,
            lambda order, amount: {"order_id": order, "amount": amount, "kind": "agent_inbox"},
            approve="accept",
        ),
        Framework(
            "middleware_per_call",
            "tests.agents.hitl_graphs:build_hitl_per_call_graph",
            _hitl_start("refund"),
            paid=_hitl_paid,
        ),
        Framework(
            "middleware_batched", "tests.agents.hitl_graphs:build_hitl_graph", _hitl_start("refund"), paid=_hitl_paid
        ),
        Framework(
            "strands",
            "tests.browser.framework_agents:strands_refund",
            lambda order, amount: f"refund:{order}:{amount}",
            paid=_framework_paid,
        ),
        Framework(
            "pydantic_ai",
            "tests.browser.framework_agents:pydantic_ai_refund",
            lambda order, amount: f"refund:{order}:{amount}",
            paid=_framework_paid,
        ),
    )
}


@dataclass
class Running:
    framework: Framework
    inbox: Inbox

    def ask(self, amount: int, *, start: Any = None) -> tuple[str, str]:
        """Start a refund of `amount` on a new thread (the order id is the thread id); (order, question id)."""
        order = f"order-{uuid.uuid4().hex[:6]}"
        return order, self.inbox.start(order, start if start is not None else self.framework.start(order, amount))

    def paid(self, order: str) -> list[int]:
        if self.framework.paid is not None:
            return self.framework.paid(order)
        return self.inbox.refunds(order)


@pytest.fixture(scope="module")
def stack(refund_template: dict[str, Any], browser: Any) -> Iterator[Inbox]:
    """One emulated stack for the module; each framework's agent is deployed on it in turn (`use_agent`)."""
    with running_inbox(refund_template, browser, GRAPH) as inbox:
        yield inbox


@pytest.fixture(params=sorted(FRAMEWORKS))
def running(request: Any, stack: Inbox) -> Running:
    framework = FRAMEWORKS[request.param]
    if stack.local.environment["AGENT_WAIT_GRAPH"] != framework.graph:
        stack.local.use_agent(framework.graph)
    return Running(framework, stack)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


def _above_the_fold(page: Any, locator: Any) -> None:
    box = locator.bounding_box()
    assert box is not None, "not shown"
    assert box["y"] + box["height"] <= FOLD["height"], f"below the fold of a {FOLD} screen: {box}"


def _cli(running: Running, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any) -> str:
    """The CLI in another folder as `agent-wait dev` leaves it (its state file); a token for a finance person."""
    from agent_wait.cli import main
    from agent_wait.cli._target import Target

    local = running.inbox.local
    monkeypatch.chdir(tmp_path)
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE", "AGENT_WAIT_TOKEN"):  # another terminal's environment
        monkeypatch.delenv(name, raising=False)
    Target.of_local_stack(local).save()  # as `agent-wait dev` saves it
    capsys.readouterr()
    assert main(["token", "--user", "carol@example.com", "--groups", "finance"]) == 0
    return capsys.readouterr().out.strip()


@pytest.mark.parametrize("running", sorted(set(FRAMEWORKS) - {"middleware_batched"}), indirect=True)
def test_a_call_is_approved_with_an_edit_in_the_inbox_and_pays_the_edited_amount(running: Running, shots: Path) -> None:
    # (a batched review has a decision per call: its own test below)
    # GIVEN a refund of 1250 waiting for an answer
    order, question = running.ask(1250)
    page = running.inbox.page(width=FOLD["width"])
    page.set_viewport_size(FOLD)
    running.inbox.open(page, question)
    # THEN the page shows the call, its arguments, and its answer buttons on the first screen
    expect(page.locator("#call-function")).to_have_text("issue_refund")
    approve = page.locator(f'#actions button[data-action="{running.framework.approve}"]')
    # WHEN the approver lowers the amount and approves
    page.get_by_label("amount", exact=True).fill("650")
    expect(approve).to_have_text(re.compile(r"with edits$"))
    page.screenshot(path=str(shots / f"inbox-{running.framework.name}.png"))
    _above_the_fold(page, approve)
    approve.click()
    expect(page.get_by_role("status")).to_have_text(re.compile(r"^Done: your answer .* is recorded"))
    # THEN the agent resumes once and pays the edited amount
    assert [o.kind.value for o in running.inbox.local.pump().outcomes] == ["applied"]
    assert running.paid(order) == [650]
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_a_call_is_approved_over_the_api_with_the_cli(
    running: Running, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    from agent_wait.cli import main

    # GIVEN a refund of 1250 waiting, and a finance person's token
    order, question = running.ask(1250)
    token = _cli(running, monkeypatch, tmp_path, capsys)
    # WHEN they approve it over the API with an edited amount (a batched review: one decision per call)
    if running.framework.name == "middleware_batched":
        edit = {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"order_id": order, "amount": 700}}}
        argv = ["answer", question, "--answer", f'{{"decisions": [{_json(edit)}]}}', "--token", token]
    else:
        argv = ["answer", question, running.framework.approve, "--args", '{"amount": 700}', "--token", token]
    assert main(argv) == 0, capsys.readouterr().err
    # THEN the CLI says the answer won, and the agent pays the edited amount once
    assert f"won question {question}" in capsys.readouterr().out
    assert [o.kind.value for o in running.inbox.local.pump().outcomes] == ["applied"]
    assert running.paid(order) == [700]


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


@pytest.mark.parametrize("running", ["middleware_batched"], indirect=True)
def test_a_batched_review_gets_a_decision_per_call_and_the_middleware_receives_each(
    running: Running, shots: Path
) -> None:
    # GIVEN one model turn that calls two gated tools: the middleware asks about both in one interrupt
    from tests.agents.hitl_graphs import start_input

    order = f"order-{uuid.uuid4().hex[:6]}"
    question = running.inbox.start(order, start_input("both", order, 1250))
    page = running.inbox.page(width=FOLD["width"])
    page.set_viewport_size(FOLD)
    running.inbox.open(page, question)
    # THEN the heading names both calls, and each call has its own card with its arguments and decision
    expect(page.locator("#detail-heading")).to_have_text("Review 2 tool calls: issue_refund, close_case")
    reviews = page.locator(".review")
    expect(reviews).to_have_count(2)
    refund, close = reviews.nth(0), reviews.nth(1)
    expect(refund.locator("legend")).to_have_text("1. issue_refund")
    expect(refund.get_by_role("radio")).to_have_count(3)  # approve (with edits), reject, respond
    expect(close.get_by_role("radio")).to_have_count(2)  # approve, reject: no edit form
    expect(close.get_by_label("order_id")).to_have_count(0)
    send = page.get_by_role("button", name="Send 2 decisions")
    # WHEN the approver lowers the refund, and rejects closing the case with a message
    refund.get_by_label("amount", exact=True).fill("650")
    expect(refund.get_by_role("radio", name="Approve with edits")).to_be_checked()
    close.get_by_role("radio", name="Reject").check()
    close.get_by_label("Message to the agent").fill("Keep the case open until the refund lands.")
    page.screenshot(path=str(shots / "inbox-middleware-batched.png"))
    _above_the_fold(page, refund.get_by_role("radio", name="Approve with edits"))
    send.click()
    expect(page.get_by_role("status")).to_have_text(re.compile(r"^Done: your 2 decisions are recorded"))
    # THEN the middleware received one decision per call: the edited refund ran, the case stayed open
    answer = running.inbox.status(question)["outcome"]["answer"]
    assert answer == {
        "decisions": [
            {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"order_id": order, "amount": 650}}},
            {"type": "reject", "message": "Keep the case open until the refund lands."},
        ]
    }
    assert [o.kind.value for o in running.inbox.local.pump().outcomes] == ["applied"]
    assert running.paid(order) == [650]
    assert _hitl_closed(order) == 0
    # AND the decided page lists each call's decision, not JSON
    running.inbox.open(page, question)
    expect(page.locator("#history")).to_contain_text("issue_refund: approved with amount = 650 (edited)")
    rejected = "close_case: rejected: “Keep the case open until the refund lands.”"
    expect(page.locator("#history")).to_contain_text(rejected)
    page.screenshot(path=str(shots / "inbox-middleware-batched-decided.png"))
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
