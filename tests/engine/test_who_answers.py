"""Every decision says who made it, proven: the router records the identity SQS authenticated (`SenderId`)
beside any claim, and only the senders the deployment trusts (the answer API, the sweep) may claim an
answerer, a way in or a deadline. Driven through the router Lambda with real-shaped events on moto."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    reset_handlers,
    run_router,
    sqs_record,
    start_message,
)

from agent_wait.common.times import utc_now
from agent_wait.contract.messages import deadline_answer_id
from agent_wait.contract.schema import QuestionStatus
from agent_wait.host import router

SWEEP, API, FINANCE, STARTER, STRANGER = "AROASWEEP", "AROAANSWERAPI", "AROAFINANCE", "AROASTARTER", "AROASTRANGER"


@pytest.fixture
def deployment(host: HostStack, monkeypatch: pytest.MonkeyPatch) -> HostStack:
    """The router as AgentWait configures it: the API and the sweep trusted; finance answers, the starter starts."""
    monkeypatch.setenv("AGENT_WAIT_TRUSTED_SENDERS", f"{SWEEP},{API}")
    monkeypatch.setenv("AGENT_WAIT_START_SENDERS", STARTER)
    monkeypatch.setenv("AGENT_WAIT_ANSWER_SENDERS", FINANCE)
    reset_handlers()
    return host


def _parked(host: HostStack, context: FakeLambdaContext, thread_id: str, order_id: str) -> str:
    start = sqs_record(start_message(thread_id, order_id), group_id=thread_id, sender_id=f"{STARTER}:orders-service")
    assert run_router(start, context=context) == {"batchItemFailures": []}
    (question,) = host.ledger().questions(thread_id)
    return question.question_id


def test_a_forged_answer_cannot_claim_another_identity_or_rewrite_the_call(
    deployment: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN a parked refund, and a finance queue sender (allowed to answer, not trusted to speak for others)
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    question_id = _parked(deployment, lambda_context, thread_id, order_id)

    # WHEN it sends an approval that rewrites the amount and claims to be the CFO
    forged = answer_message(thread_id, question_id, answered_by="cfo@example.com", answer_id="forged")
    forged["answer"]["args"] = {"order_id": "someone-elses-order", "amount": 1_000_000_000}
    run_router(sqs_record(forged, group_id=thread_id, sender_id=f"{FINANCE}:bob"), context=lambda_context)

    # THEN the edit is refused (the policy allows none) and nothing ran
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("refused", "edit_not_allowed")
    assert graphs.body_runs(order_id) == 0

    # WHEN it sends a plain approval, still claiming to be the CFO
    plain = answer_message(thread_id, question_id, answered_by="cfo@example.com", answer_id="plain")
    run_router(sqs_record(plain, group_id=thread_id, sender_id=f"{FINANCE}:bob"), context=lambda_context)

    # THEN it applies, recorded as the sender SQS proved, the claim kept apart for audit
    assert outcomes[-1].kind.value == "applied"
    row = deployment.ledger().get(thread_id, question_id)
    assert row is not None
    assert (row.answered_by, row.claimed_by, row.sender, row.via) == (
        f"sqs:{FINANCE}",
        "cfo@example.com",
        f"{FINANCE}:bob",
        "queue",
    )
    assert graphs.refunds_paid(order_id) == 1


def test_only_a_trusted_sender_may_claim_an_answerer_or_a_deadline(
    deployment: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN two parked refunds, both past their deadline by the router's clock
    first, second = f"order-{unique}-1", f"order-{unique}-2"
    q1 = _parked(deployment, lambda_context, first, f"o-{unique}-1")
    q2 = _parked(deployment, lambda_context, second, f"o-{unique}-2")
    router._router().clock = lambda: utc_now() + timedelta(days=4)

    def deadline(thread_id: str, question_id: str) -> dict[str, Any]:
        return {
            "thread_id": thread_id,
            "question_id": question_id,
            "answer": {"action": "approve"},
            "origin": "deadline",
            "answer_id": deadline_answer_id(question_id),
            "answered_by": "agent-wait:deadline",
        }

    # WHEN finance's sender claims a deadline, and the sweep's role sends the real one
    run_router(sqs_record(deadline(first, q1), group_id=first, sender_id=f"{FINANCE}:bob"), context=lambda_context)
    refused = outcomes[-1]
    run_router(sqs_record(deadline(second, q2), group_id=second, sender_id=f"{SWEEP}:sweep"), context=lambda_context)

    # THEN the forged deadline is refused and the question stays open; the sweep's applies the default
    assert (refused.kind.value, refused.reason) == ("refused", "not_trusted")
    row1 = deployment.ledger().get(first, q1)
    assert row1 is not None
    assert row1.status is QuestionStatus.OPEN
    row2 = deployment.ledger().get(second, q2)
    assert row2 is not None
    assert (row2.outcome, row2.answer, row2.via) == (
        QuestionStatus.EXPIRED,
        {"action": "reject", "reason": "timeout"},  # the policy's default, whatever the message said
        "deadline",
    )


def test_senders_may_send_only_what_they_were_granted(
    deployment: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN a parked refund
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    question_id = _parked(deployment, lambda_context, thread_id, order_id)

    # WHEN a sender granted nothing sends a start and an answer, and the starter sends an answer
    stranger_start = sqs_record(
        start_message(f"{thread_id}-x", f"{order_id}-x"), group_id=f"{thread_id}-x", sender_id=f"{STRANGER}:x"
    )
    run_router(stranger_start, context=lambda_context)
    start_outcome = outcomes[-1]
    for sender in (STRANGER, STARTER):
        answer = answer_message(thread_id, question_id, answer_id=f"from-{sender}")
        run_router(sqs_record(answer, group_id=thread_id, sender_id=f"{sender}:x"), context=lambda_context)

    # THEN the start is dead-lettered with its reason and both answers are refused; nothing ran
    assert (start_outcome.kind.value, start_outcome.reason) == ("dead_lettered", "sender_not_allowed")
    assert [(o.kind.value, o.reason) for o in outcomes[-2:]] == [("refused", "answerer_not_allowed")] * 2
    assert graphs.node_runs("prepare", f"{order_id}-x") == 0
    assert graphs.body_runs(order_id) == 0
