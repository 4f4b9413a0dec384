"""A fourth framework is one hook object: the toy binding in toy_framework.py gets every `@wait` rule from the core.

The toy framework runs a step with a `run` context; a step pauses by raising and runs again from its
top with the answer. Its binding is a `WaitBinding` plus two thin functions, and `@wait` on it parks,
publishes and applies answers exactly as the real bindings do (the last test runs the same answers
through LangGraph and compares).
"""

from __future__ import annotations

import ast
import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_wait import InMemoryAnnounce, WaitPolicy, question_id_for
from agent_wait.common.times import clock_scope

from . import toy_framework as toy
from .toy_framework import PausedError, Run, invoke, publish_interrupts, wait

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"}, allow_edits=True)
REFUND_ARGS_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "integer"}},
    "additionalProperties": False,
}
ASKED_AT = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
THREAD = "thread-toy-1"


@pytest.fixture
def calls() -> list[dict[str, Any]]:
    """What a body was run with, one entry per run."""
    return []


@pytest.fixture
def issue_refund(calls: list[dict[str, Any]]) -> Any:
    @wait(FINANCE)
    def issue_refund(order_id: str, amount: int, run: Run) -> dict[str, Any]:
        calls.append({"order_id": order_id, "amount": amount})
        return {"refunded": order_id, "amount": amount}

    return issue_refund


def resumed(step: Any, answer: Any, *args: Any, **kwargs: Any) -> Any:
    """Run `step` fresh (it parks), then again with `answer`; what the resumed run returned."""
    parked = invoke(step, *args, thread_id=THREAD, **kwargs)
    assert parked.paused_on is not None, "the step should have parked first"
    return invoke(step, *args, thread_id=THREAD, answer=answer, **kwargs).output


# --- the binding is small and sits on the core only ----------------------------------------------


def test_the_toy_binding_with_its_framework_is_under_80_lines():
    source = Path(toy.__file__).read_text(encoding="utf-8")
    assert len(source.splitlines()) < 80


def test_the_toy_binding_imports_only_the_standard_library_and_the_core():
    tree = ast.parse(Path(toy.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    outside = {m for m in imported if m.split(".")[0] not in sys.stdlib_module_names}
    assert outside <= {"agent_wait.asking.flow", "agent_wait.asking.wait", "agent_wait.contract.publish"}


# --- park and publish ---------------------------------------------------------------------------


def test_wait_parks_and_publishes_the_envelope(issue_refund, calls):
    # GIVEN a toy step decorated with @wait(FINANCE)
    memory = InMemoryAnnounce()
    # WHEN it runs, and the host publishes what it paused on
    with clock_scope(lambda: ASKED_AT):
        parked = invoke(issue_refund, "order-4471", amount=41000, thread_id=THREAD)
    reports = publish_interrupts(parked, THREAD, memory)
    # THEN the body has not run, and one envelope carries the question (no injected `run`) and its policy
    assert calls == []
    assert len(reports) == 1
    assert [e.type for e in memory.of("created")] == ["wait.created"]
    envelope = memory.last()
    assert envelope is not None
    assert envelope.question == {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}}
    # the policy allows edits: the source carries the schema an edit must fit, read from the annotations
    assert dict(envelope.source or {}) == {"function": "issue_refund", "args_schema": REFUND_ARGS_SCHEMA}
    assert (envelope.thread_id, envelope.question_id) == (THREAD, f"{THREAD}.issue_refund")
    assert envelope.expires_at == "2026-09-14T09:00:00Z"
    assert envelope.default == {"action": "reject"}
    assert dict(envelope.tags) == {"approver_group": "finance"}


def test_a_finished_run_publishes_nothing():
    memory = InMemoryAnnounce()
    assert publish_interrupts(invoke(lambda run: "done", thread_id=THREAD), THREAD, memory) == []
    assert memory.events == []


# --- what each answer does -----------------------------------------------------------------------


def test_approve_runs_the_body_with_the_asked_arguments(issue_refund, calls):
    output = resumed(issue_refund, {"action": "approve"}, "o-1", amount=100)
    assert output == {"refunded": "o-1", "amount": 100}
    assert calls == [{"order_id": "o-1", "amount": 100}]


def test_approve_with_edits_runs_the_body_with_the_edited_arguments(issue_refund, calls):
    output = resumed(issue_refund, {"action": "approve", "args": {"amount": 50}}, "o-1", amount=100)
    assert output == {"refunded": "o-1", "amount": 50}
    assert calls == [{"order_id": "o-1", "amount": 50}]


def test_reject_is_returned_in_place_and_runs_nothing(issue_refund, calls):
    answer = {"action": "reject", "reason": "over the limit"}
    assert resumed(issue_refund, answer, "o-1", amount=100) == answer
    assert calls == []


@pytest.mark.parametrize(
    ("edits", "refused", "reason"),
    [
        ({"run": None}, ["run"], "the answer tried to edit injected value(s) ['run']"),
        ({"amount": 1, "nope": 2}, ["nope"], "the answer edits unknown parameter(s) ['nope']"),
    ],
)
def test_an_edit_of_an_injected_or_unknown_parameter_is_refused_and_runs_nothing(
    issue_refund, calls, edits, refused, reason
):
    output = resumed(issue_refund, {"action": "approve", "args": edits}, "o-1", amount=100)
    assert output["error"] == "edit_refused"
    assert output["refused"] == refused
    assert output["editable"] == ["order_id", "amount"]
    assert output["message"].startswith(reason)
    assert calls == []


def test_a_decision_parameter_receives_any_answer_verbatim():
    @wait()
    def ship(order_id: str, run: Run, decision: Any = None) -> Any:
        return {"order_id": order_id, "decision": decision}

    answer = {"action": "reject", "reason": "no"}
    assert resumed(ship, answer, "o-1") == {"order_id": "o-1", "decision": answer}


def test_when_false_runs_the_body_without_asking(calls):
    @wait(when=lambda amount, run: amount > 1000)
    def refund(amount: int, run: Run) -> str:
        calls.append({"amount": amount})
        return "ran"

    assert invoke(refund, 10, thread_id=THREAD).output == "ran"
    assert invoke(refund, 5000, thread_id=THREAD).paused_on is not None
    assert calls == [{"amount": 10}]


def test_async_mode_publishes_from_the_call_and_returns_pending(calls):
    memory = InMemoryAnnounce()

    @wait(mode="async", announce=[memory])
    def refund(order_id: str, run: Run) -> str:
        calls.append({"order_id": order_id})
        return "ran"

    output = invoke(refund, "o-9", thread_id=THREAD).output
    question_id = question_id_for(THREAD, "refund", {"order_id": "o-9"})
    assert output == {"status": "pending_approval", "question_id": question_id, "function": "refund"}
    envelope = memory.last()
    assert envelope is not None
    assert (envelope.thread_id, envelope.question_id) == (THREAD, question_id)
    assert calls == []


def test_an_async_step_parks_and_applies_the_answer_too(calls):
    @wait(FINANCE)
    async def refund(order_id: str, amount: int, run: Run) -> int:
        calls.append({"order_id": order_id, "amount": amount})
        return amount

    with pytest.raises(PausedError):
        asyncio.run(refund("o-1", 100, run=Run(THREAD)))
    answer = {"action": "approve", "args": {"amount": 7}}
    assert asyncio.run(refund("o-1", 100, run=Run(THREAD, answer))) == 7
    assert calls == [{"order_id": "o-1", "amount": 7}]


# --- exactly like a real binding -----------------------------------------------------------------

ANSWERS = [
    {"action": "approve"},
    {"action": "approve", "args": {"amount": 50}},
    {"action": "approve", "args": {"amount": 1, "nope": 2}},
    {"action": "reject", "reason": "over the limit"},
    "a plain string answer",
]


@pytest.mark.parametrize("answer", ANSWERS, ids=["approve", "edit", "bad-edit", "reject", "string"])
def test_answers_apply_exactly_as_on_langgraph(answer):
    # GIVEN the same function under the toy binding and under the LangGraph binding
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command
    from typing_extensions import TypedDict

    from agent_wait.langgraph import publish_interrupts as lg_publish
    from agent_wait.langgraph import wait as lg_wait

    ran: dict[str, list[Any]] = {"toy": [], "langgraph": []}

    def body(where: str, order_id: str, amount: int) -> dict[str, Any]:
        ran[where].append((order_id, amount))
        return {"refunded": order_id, "amount": amount}

    def on_toy() -> Any:
        @wait(FINANCE)
        def issue_refund(order_id: str, amount: int, run: Run) -> dict[str, Any]:
            return body("toy", order_id, amount)

        return issue_refund

    def on_langgraph() -> Any:
        @lg_wait(FINANCE)
        def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
            return body("langgraph", order_id, amount)

        return issue_refund

    toy_refund, lg_refund = on_toy(), on_langgraph()

    class State(TypedDict, total=False):
        result: Any

    builder = StateGraph(State)
    builder.add_node("refund", lambda state: {"result": lg_refund("o-1", amount=100)})
    builder.add_edge(START, "refund")
    builder.add_edge("refund", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": THREAD}}
    # WHEN each parks, is published, and is resumed with the same answer
    toy_memory, lg_memory = InMemoryAnnounce(), InMemoryAnnounce()
    with clock_scope(lambda: ASKED_AT):
        publish_interrupts(invoke(toy_refund, "o-1", amount=100, thread_id=THREAD), THREAD, toy_memory)
        parked = graph.invoke({}, config)
    lg_publish(parked, THREAD, lg_memory)
    toy_output = invoke(toy_refund, "o-1", amount=100, thread_id=THREAD, answer=answer).output
    question_id = parked["__interrupt__"][0].id
    lg_output = graph.invoke(Command(resume={question_id: answer}), config)["result"]
    # THEN both published the same question under the same policy, and the answer did the same thing
    toy_envelope, lg_envelope = toy_memory.last(), lg_memory.last()
    assert toy_envelope is not None
    assert lg_envelope is not None
    fields = ("question", "source", "allowed_actions", "expires_at", "default", "tags")
    assert {f: getattr(toy_envelope, f) for f in fields} == {f: getattr(lg_envelope, f) for f in fields}
    assert toy_output == lg_output
    assert ran["toy"] == ran["langgraph"]
