"""The answer a host resumes a `@wait` question with is bound to the call it asked (`agent_wait.asking.wait`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from agent_wait.asking.adapter import resume_value_for
from agent_wait.asking.wait import BOUND_CALL, approved_args, bind_answer, check_same_call, unbind_answer
from agent_wait.errors import ArgumentsChangedError, WaitError

QUESTION = {"function": "refund", "args": {"order_id": "o-1", "amount": 0.1, "express": True}}
SOURCE = {"function": "refund"}


def test_an_approval_runs_with_the_arguments_as_asked_or_as_edited() -> None:
    assert approved_args(QUESTION, SOURCE, {"action": "approve"}) == QUESTION["args"]
    edited = approved_args(QUESTION, SOURCE, {"action": "approve", "args": {"amount": 0.05}})
    assert edited == {"order_id": "o-1", "amount": 0.05, "express": True}


@pytest.mark.parametrize(
    ("question", "source", "answer"),
    [
        (QUESTION, SOURCE, {"action": "reject"}),  # nothing runs
        (QUESTION, SOURCE, "yes"),
        ({"order_id": "o-1"}, None, {"action": "approve"}),  # ask(): no call
        (QUESTION, {"function": "other"}, {"action": "approve"}),  # not this function's @wait
        ({"function": "refund", "args": ["o-1"]}, SOURCE, {"action": "approve"}),
    ],
)
def test_nothing_is_approved_to_run_for_other_answers_and_questions(question: Any, source: Any, answer: Any) -> None:
    assert approved_args(question, source, answer) is None


def test_a_bound_answer_unbinds_to_the_answer_and_the_call() -> None:
    bound = bind_answer(QUESTION, SOURCE, {"action": "approve"})
    assert bound == {BOUND_CALL: QUESTION, "answer": {"action": "approve"}}
    assert unbind_answer(bound) == ({"action": "approve"}, QUESTION)
    # A bare answer (resumed in-process) is not bound, and an ask() question is never bound.
    assert unbind_answer({"action": "approve"}) == ({"action": "approve"}, None)
    assert bind_answer({"order_id": "o-1"}, None, "yes") == "yes"


def test_the_same_call_passes_even_through_a_store_round_trip() -> None:
    stored = {"function": "refund", "args": {"express": True, "amount": 0.1, "order_id": "o-1"}}  # keys reordered
    check_same_call(stored, QUESTION)


@pytest.mark.parametrize(
    ("rerun_args", "changed"),
    [
        ({"order_id": "o-1", "amount": 0.2, "express": True}, ("amount",)),
        ({"order_id": "o-1", "amount": 0.1, "express": 1}, ("express",)),  # 1 is not True
        ({"order_id": "o-1", "amount": 0.1}, ("express",)),  # a parameter gone
        ({"order_id": "o-2", "amount": 0.1, "express": True, "note": "x"}, ("note", "order_id")),
    ],
)
def test_other_arguments_are_refused_naming_the_parameters_never_the_values(
    rerun_args: dict[str, Any], changed: tuple[str, ...]
) -> None:
    with pytest.raises(ArgumentsChangedError) as raised:
        check_same_call(QUESTION, {"function": "refund", "args": rerun_args})
    assert isinstance(raised.value, WaitError)
    assert raised.value.changed == changed
    assert f"changed: {', '.join(changed)}" in raised.value.message
    assert "o-2" not in raised.value.message
    assert "0.2" not in raised.value.message


def test_another_function_is_refused() -> None:
    with pytest.raises(ArgumentsChangedError, match="changed: the function itself"):
        check_same_call(QUESTION, {"function": "refund_all", "args": QUESTION["args"]})


def test_only_a_framework_that_reruns_the_waiting_code_gets_the_call() -> None:
    rerunning, replaying = SimpleNamespace(reruns_on_resume=True), SimpleNamespace(framework="strands")
    answer = {"action": "approve"}
    assert resume_value_for(rerunning, QUESTION, SOURCE, answer) == {BOUND_CALL: QUESTION, "answer": answer}  # type: ignore[arg-type]
    assert resume_value_for(replaying, QUESTION, SOURCE, answer) is answer  # type: ignore[arg-type]
