"""`is_answer`, `question_id_of` and `resume_command`: the host's whole job (message-formats sections 2-4)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langgraph.types import Command

from agent_wait import EnvelopeError, WaitPolicy
from agent_wait.langgraph import is_answer, publish_interrupts, question_id_of, resume_command, wait

QID = "a1b2c3d4e5f60718a1b2c3d4e5f60718"
"""Shaped like LangGraph's Interrupt.id: 32 lowercase hex characters."""

START = {"thread_id": "order-4471", "input": {"order_id": "order-4471", "amount": 41000}}
ANSWER = {
    "thread_id": "order-4471",
    "question_id": QID,
    "answer": {"action": "approve", "note": "within budget"},
    "valid_until": "2026-09-12T09:00:00Z",
}


# --- is_answer / question_id_of -------------------------------------------------------------------


def test_a_message_with_question_id_is_an_answer():
    assert is_answer(ANSWER)
    assert question_id_of(ANSWER) == QID


def test_the_older_interrupt_id_is_accepted_as_an_answer():
    older = {"thread_id": "order-4471", "interrupt_id": QID, "answer": {"action": "approve"}}
    assert is_answer(older)
    assert question_id_of(older) == QID


def test_question_id_wins_over_interrupt_id_when_both_are_present():
    both = {"thread_id": "t", "question_id": QID, "interrupt_id": "0" * 32, "answer": None}
    assert question_id_of(both) == QID


def test_a_start_is_not_an_answer():
    assert not is_answer(START)
    assert question_id_of(START) is None


@pytest.mark.parametrize("message", [None, "question_id", ["question_id"], 42], ids=["none", "str", "list", "int"])
def test_something_that_is_not_an_object_is_not_an_answer(message: Any):
    assert not is_answer(message)
    assert question_id_of(message) is None


def test_it_is_the_presence_of_question_id_that_makes_an_answer():
    # the section 2 rule: presence decides; the id's shape is checked when it is used
    assert is_answer({"thread_id": "t", "question_id": None})
    assert question_id_of({"thread_id": "t", "question_id": None}) is None


# --- resume_command -------------------------------------------------------------------------------


def test_resume_command_resumes_the_question_with_the_answer_verbatim():
    command = resume_command(ANSWER)
    assert isinstance(command, Command)
    assert command.resume == {QID: {"action": "approve", "note": "within budget"}}


def test_resume_command_accepts_the_older_interrupt_id():
    command = resume_command({"thread_id": "t", "interrupt_id": QID, "answer": "yes"})
    assert command.resume == {QID: "yes"}


@pytest.mark.parametrize("answer", [None, False, 0, "", [], {}], ids=repr)
def test_resume_command_keeps_falsy_answers(answer: Any):
    assert resume_command({"thread_id": "t", "question_id": QID, "answer": answer}).resume == {QID: answer}


def test_resume_command_on_a_start_is_refused():
    with pytest.raises(
        EnvelopeError,
        match=re.escape("an answer needs a non-empty string 'question_id'; this message looks like a start"),
    ):
        resume_command(START)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {"thread_id": "t", "question_id": None, "answer": 1},
            "an answer needs a non-empty string 'question_id'; got None",
        ),
        (
            {"thread_id": "t", "question_id": "", "answer": 1},
            "an answer needs a non-empty string 'question_id'; got ''",
        ),
        (
            {"thread_id": "t", "interrupt_id": 7, "answer": 1},
            "an answer needs a non-empty string 'interrupt_id'; got 7",
        ),
    ],
    ids=["none", "empty", "older-int"],
)
def test_resume_command_on_an_answer_without_a_usable_id_says_which_field(message: dict[str, Any], expected: str):
    with pytest.raises(EnvelopeError, match=re.escape(expected)):
        resume_command(message)


@pytest.mark.parametrize(
    "question_id",
    [
        "q-1",
        "A1B2C3D4E5F60718A1B2C3D4E5F60718",
        "a1b2c3d4e5f60718",
        "7f3e" * 16,
    ],
    ids=["made-up", "upper-case", "short", "async-mode-sha256"],
)
def test_resume_command_refuses_an_id_langgraph_would_not_read_as_an_interrupt_id(question_id: str):
    # GIVEN an answer whose id LangGraph would not recognise (see test_fact_a_resume_map_whose_keys_are_not...)
    # WHEN / THEN it is refused instead of answering whatever question the thread is parked on
    with pytest.raises(
        EnvelopeError,
        match=re.escape(
            f"question_id {question_id!r} is not a LangGraph interrupt id (32 lowercase hex characters), so LangGraph "
            "would hand the whole {question_id: answer} map to whichever question the thread is parked on."
        ),
    ):
        resume_command({"thread_id": "t", "question_id": question_id, "answer": {"action": "approve"}})


# --- the whole host, as message-formats section 4 writes it ---------------------------------------


def test_the_section_4_host_loop_runs_a_question_from_start_to_answer(graph_of, memory, calls):
    # GIVEN a graph with a @wait step, and the host of message-formats section 4
    @wait(WaitPolicy(timeout="P3D", allow_edits=True))
    def issue_refund(order_id: str, amount: int) -> str:
        calls(order_id=order_id, amount=amount)
        return "refunded"

    def refund(state):
        return {"result": issue_refund(state["order_id"], state["amount"])}

    graph = graph_of(refund)

    def host(message: dict[str, Any]) -> dict[str, Any]:
        value = resume_command(message) if is_answer(message) else message["input"]
        result = graph.invoke(value, {"configurable": {"thread_id": message["thread_id"]}})
        publish_interrupts(result, message["thread_id"], memory)
        return result

    # WHEN a start arrives, and then the consumer copies reply_with, sets answer and sends it back
    host(START)
    reply = {**memory.last().reply_with, "answer": {"action": "approve", "args": {"amount": 40000}}}
    done = host(reply)
    # THEN the edited call ran once and nothing more is pending
    assert calls.args == [{"order_id": "order-4471", "amount": 40000}]
    assert done["result"] == "refunded"
    assert len(memory.of("created")) == 1
