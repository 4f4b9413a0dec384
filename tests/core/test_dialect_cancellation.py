"""A cancellation (`{"action": "cancelled", "reason", "by"}`) in each dialect: the dialect's own refusal, never an
approval, or, where the dialect has none, a stated problem so the cancel is refused before it decides (issue 40).

Core only: the dialects are recognised from their shapes, so no framework is imported here. The same through the
router, on real graphs: tests/engine/test_cancel_never_approves.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.dialects import (
    CANCELLED,
    cancellation,
    cancellation_problem,
    is_cancellation,
    recognize,
    resume_value,
)

CANCEL = cancellation("the customer withdrew", "fin@example.com")
MESSAGE = "Cancelled: the customer withdrew"


def _envelope(value: Any, response_schema: Any = None) -> WaitEnvelope:
    found = recognize(value, response_schema)
    policy = (
        WaitPolicy(
            allowed_actions=found.allowed_actions, allow_edits=found.allow_edits, response_schema=found.response_schema
        )
        if found is not None
        else WaitPolicy()
    )
    return WaitEnvelope.create(Question("t-1", "q-1", value, policy, source=found.source if found else None))


def _hitl(**allowed: list[str]) -> dict[str, Any]:
    return {
        "action_requests": [{"name": name, "args": {"order_id": "o-1"}, "description": name} for name in allowed],
        "review_configs": [{"action_name": name, "allowed_decisions": kinds} for name, kinds in allowed.items()],
    }


def _inbox(listed: bool = True, **config: bool) -> Any:
    request = {
        "action_request": {"action": "issue_refund", "args": {"order_id": "o-1", "amount": 900}},
        "config": {"allow_accept": True, "allow_edit": False, "allow_respond": False, "allow_ignore": False, **config},
        "description": "Refund 900?",
    }
    return [request] if listed else request


def test_the_cancellation_says_why_and_who_and_is_no_approval() -> None:
    # GIVEN a person's cancel WHEN it is made THEN it carries its own action, the reason and who
    assert CANCEL == {"action": CANCELLED, "reason": "the customer withdrew", "by": "fin@example.com"}
    assert CANCELLED == "cancelled"
    assert is_cancellation(CANCEL)
    assert not is_cancellation({"action": "approve"})
    assert not is_cancellation(None)


@pytest.mark.parametrize(
    ("allowed", "decisions"),
    [
        (
            {"issue_refund": ["approve", "edit", "reject", "respond"], "close_case": ["approve", "reject"]},
            [{"type": "reject", "message": MESSAGE}, {"type": "reject", "message": MESSAGE}],
        ),
        (
            {"issue_refund": ["approve", "respond"], "close_case": ["approve", "reject"]},
            [{"type": "respond", "message": MESSAGE}, {"type": "reject", "message": MESSAGE}],
        ),
    ],
    ids=["reject-everywhere", "respond-where-no-reject"],
)
def test_a_hitl_middleware_question_receives_one_refusing_decision_per_call_with_the_reason(
    allowed: dict[str, list[str]], decisions: list[dict[str, str]]
) -> None:
    # GIVEN a batched HumanInTheLoopMiddleware question
    envelope = _envelope(_hitl(**allowed))

    # WHEN it is cancelled
    # THEN it can be, and the middleware receives a reject (or respond) per call, never an approve
    assert cancellation_problem(envelope) is None
    assert resume_value(envelope, CANCEL) == {"decisions": decisions}


def test_a_hitl_middleware_call_that_allows_neither_reject_nor_respond_cannot_be_cancelled() -> None:
    # GIVEN a batched question one of whose calls allows approve and edit only
    envelope = _envelope(_hitl(issue_refund=["approve", "edit"], close_case=["approve", "reject"]))

    # WHEN a cancel is considered
    # THEN the problem names the call, so the cancel is refused before it decides
    assert cancellation_problem(envelope) == (
        "a cancel reaches HumanInTheLoopMiddleware as a reject (or respond) decision, and ['issue_refund'] allows "
        "neither; answer the question instead"
    )


@pytest.mark.parametrize(
    ("listed", "config", "response"),
    [
        (True, {"allow_ignore": True}, [{"type": "ignore", "args": None}]),
        (False, {"allow_ignore": True, "allow_respond": True}, {"type": "ignore", "args": None}),
        (True, {"allow_respond": True}, [{"type": "response", "args": MESSAGE}]),
    ],
    ids=["ignore-listed", "ignore-bare", "response-where-no-ignore"],
)
def test_an_agent_inbox_question_receives_an_ignore_or_else_a_response_with_the_reason(
    listed: bool, config: dict[str, bool], response: Any
) -> None:
    # GIVEN an Agent Inbox HumanInterrupt
    envelope = _envelope(_inbox(listed, **config))

    # WHEN it is cancelled
    # THEN it receives an ignore (or a response carrying the reason), never an accept
    assert cancellation_problem(envelope) is None
    assert resume_value(envelope, CANCEL) == response


def test_an_agent_inbox_request_that_allows_only_accept_or_edit_cannot_be_cancelled() -> None:
    envelope = _envelope(_inbox(True, allow_edit=True))
    assert cancellation_problem(envelope) == (
        "a cancel reaches Agent Inbox as an ignore (or a response), and this request allows only ['accept', 'edit']"
    )


@pytest.mark.parametrize(
    "value",
    [
        {"function": "issue_refund", "args": {"amount": 900}},
        {"refund": 900},
    ],
    ids=["ours", "bare"],
)
def test_our_questions_and_response_schema_questions_receive_the_cancellation_as_it_is(value: Any) -> None:
    # GIVEN a question of ours, and a bare one that carries only a response schema
    schema = {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}
    for envelope in (_envelope(value), _envelope(value, schema)):
        # WHEN it is cancelled THEN the agent receives the cancellation itself
        assert cancellation_problem(envelope) is None
        assert resume_value(envelope, CANCEL) == CANCEL
