"""Identity of messages: agent-wait's own ids cannot be claimed, dead letters never collapse across
threads, and an answer is judged by when SQS received it, not when the router got to it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import tests.agents.graphs as graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    run_router,
    sqs_record,
    start_message,
)

from agent_wait.common.times import parse_rfc3339, utc_now
from agent_wait.contract.messages import deadline_answer_id
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, SqsDeadLetter
from agent_wait.engine.dead_letter import THREAD_ATTRIBUTE
from agent_wait.host import HostSettings, build_router


def test_an_answer_claiming_the_routers_cancellation_id_never_reruns_anything(host: HostStack, unique: str) -> None:
    # GIVEN a question the agent moved past (cancelled by the router), and a new turn whose start failed
    router = build_router(HostSettings.from_env("router"))
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    (question_id,) = router.handle(json.dumps(start_message(thread_id, order_id, start_id="s-1"))).asked
    assert router.handle(json.dumps(start_message(thread_id, order_id, start_id="s-2"))).kind is OutcomeKind.STARTED
    cancelled = host.ledger().get(thread_id, question_id)
    assert cancelled is not None
    assert cancelled.status is QuestionStatus.CANCELLED
    graphs.FAIL_ORDERS.add(f"{order_id}-3")
    try:
        failed = router.handle(json.dumps(start_message(thread_id, f"{order_id}-3", start_id="s-3")))
    finally:
        graphs.FAIL_ORDERS.discard(f"{order_id}-3")
    assert failed.reason == "agent_failed"
    runs_before = graphs.node_runs("prepare", f"{order_id}-3")

    # WHEN outside answers claim the id the router recorded for the cancellation, old and new spelling
    claims = [cancelled.answer_id, f"cancelled:{question_id}"]
    results = [router.handle(json.dumps(answer_message(thread_id, question_id, answer_id=c))) for c in claims]

    # THEN the reserved id is refused as malformed, the other is held with the failed thread; nothing ran
    assert cancelled.answer_id == f"agent-wait:cancelled:{question_id}"
    assert [(r.kind.value, r.reason) for r in results] == [
        ("dead_lettered", "bad_answer_id"),
        ("dead_lettered", "thread_failed"),
    ]
    assert graphs.node_runs("prepare", f"{order_id}-3") == runs_before


def test_dead_letters_of_two_threads_with_the_same_start_id_are_both_kept(host: HostStack, unique: str) -> None:
    # GIVEN two threads whose failing starts use the same start id
    dead_letter = SqsDeadLetter(host.dlq_url, client=host.sqs)

    # WHEN both are dead-lettered (within SQS's five-minute deduplication window)
    for thread_id in (f"order-{unique}-a", f"order-{unique}-b"):
        body = json.dumps(start_message(thread_id, "o-1", start_id="nightly-1"))
        dead_letter.send(body, reason="agent_failed", detail="d", message_id="nightly-1", thread_id=thread_id)

    # THEN the queue holds both, each in its thread's group, with its thread named
    held = host.dead_letters()
    assert sorted(m["MessageAttributes"][THREAD_ATTRIBUTE]["StringValue"] for m in held) == [
        f"order-{unique}-a",
        f"order-{unique}-b",
    ]
    assert sorted(m["Attributes"]["MessageGroupId"] for m in held) == [f"order-{unique}-a", f"order-{unique}-b"]


def test_an_answer_sent_before_the_deadline_but_handled_after_it_is_accepted(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN a parked question, and finance's approval that reached SQS a second before the deadline
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    run_router(
        sqs_record(start_message(thread_id, order_id, start_id="s-1"), group_id=thread_id), context=lambda_context
    )
    (question,) = host.ledger().questions(thread_id)
    assert question.expires_at is not None
    deadline = parse_rfc3339(question.expires_at)
    approve = sqs_record(
        answer_message(thread_id, question.question_id), group_id=thread_id, sent_at=deadline - timedelta(seconds=1)
    )

    # WHEN the router gets to it a minute after the deadline (a backlog, a retry)
    from agent_wait.host import router

    router._router().clock = lambda: deadline + timedelta(minutes=1)
    assert run_router(approve, context=lambda_context) == {"batchItemFailures": []}

    # THEN it is judged by when it was sent: applied, and the refund ran once
    assert outcomes[-1].kind is OutcomeKind.APPLIED
    assert graphs.refunds_paid(order_id) == 1
    # AND one sent after the deadline is refused as expired
    late_thread = f"{thread_id}-late"
    run_router(sqs_record(start_message(late_thread, f"{order_id}-late"), group_id=late_thread), context=lambda_context)
    (late_question,) = host.ledger().questions(late_thread)
    assert late_question.expires_at is not None
    late_deadline = parse_rfc3339(late_question.expires_at)
    router._router().clock = lambda: late_deadline + timedelta(minutes=1)
    late = sqs_record(
        answer_message(late_thread, late_question.question_id),
        group_id=late_thread,
        sent_at=late_deadline + timedelta(seconds=1),
    )
    run_router(late, context=lambda_context)
    assert (outcomes[-1].kind, outcomes[-1].reason) == (OutcomeKind.REFUSED, "expired")


def test_the_sweeps_deadline_answer_applies_when_the_routers_clock_is_a_little_behind(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN an overdue question whose deadline answer the sweep sent just after the deadline
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    run_router(sqs_record(start_message(thread_id, order_id), group_id=thread_id), context=lambda_context)
    (question,) = host.ledger().questions(thread_id)
    assert question.expires_at is not None
    deadline = parse_rfc3339(question.expires_at)
    expiry = {
        "thread_id": thread_id,
        "question_id": question.question_id,
        "answer": None,
        "origin": "deadline",
        "answer_id": deadline_answer_id(question.question_id),
        "answered_by": "agent-wait:deadline",
    }
    record = sqs_record(expiry, group_id=thread_id, sent_at=deadline + timedelta(seconds=2))

    # WHEN the router's clock runs five seconds behind SQS's
    from agent_wait.host import router

    router._router().clock = lambda: deadline - timedelta(seconds=3)
    run_router(record, context=lambda_context)

    # THEN the default applies: the question expired, not refused as not yet due
    assert outcomes[-1].kind is OutcomeKind.APPLIED, outcomes[-1]
    row = host.ledger().get(thread_id, question.question_id)
    assert row is not None
    assert (row.status, row.outcome) == (QuestionStatus.RESUMED, QuestionStatus.EXPIRED)
    assert utc_now() < deadline  # the real clock never reached the deadline: only SQS's said it passed
    assert host.dead_letters() == []


def test_an_identical_start_without_a_start_id_sent_again_later_is_a_new_turn(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN a start without start_id on a queue with content-based deduplication, applied and answered
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    body = start_message(thread_id, order_id)
    first = sqs_record(body, group_id=thread_id)
    run_router(first, context=lambda_context)
    (question,) = host.ledger().questions(thread_id)
    run_router(sqs_record(answer_message(thread_id, question.question_id), group_id=thread_id), context=lambda_context)
    assert graphs.refunds_paid(order_id) == 1

    # WHEN the first delivery comes back (SQS redelivers it), and then the same body is sent again an hour
    # later: a new SQS message, whose content-based deduplication id is the same hash of the same body
    redelivered = {**first, "attributes": {**first["attributes"], "ApproximateReceiveCount": "2"}}
    run_router(redelivered, context=lambda_context)
    replay = outcomes[-1]
    run_router(sqs_record(body, group_id=thread_id), context=lambda_context)

    # THEN the redelivery ran nothing, and the later start is a new turn that asks again
    assert replay.kind is OutcomeKind.START_REPLAYED
    assert outcomes[-1].kind is OutcomeKind.STARTED
    assert len(outcomes[-1].asked) == 1
    assert outcomes[-1].asked != (question.question_id,)


def test_a_start_resent_after_later_starts_finished_on_its_thread_is_replayed_and_pays_once(
    host: HostStack, unique: str
) -> None:
    """A start is finished by the write that releases the thread's lease (it names the last start finished);
    the start before is marked done when the next one begins, so a start sent again after later ones (outside
    SQS's deduplication window) still never runs the agent again."""
    # GIVEN three auto-approved starts applied one after another on one thread (each pays its refund)
    router = build_router(HostSettings.from_env("router"))
    thread_id = f"order-{unique}"
    orders = [f"o-{unique}-{n}" for n in range(3)]
    bodies = [
        json.dumps(start_message(thread_id, order, amount=100, start_id=f"s-{n}")) for n, order in enumerate(orders)
    ]
    for body in bodies:
        assert router.handle(body).kind is OutcomeKind.STARTED

    # WHEN each of them is sent again, the first and the last included
    again = [router.handle(body).kind for body in bodies]

    # THEN each is replayed, and every refund was paid once
    assert again == [OutcomeKind.START_REPLAYED] * 3
    assert [graphs.refunds_paid(order) for order in orders] == [1, 1, 1]
    assert [graphs.body_runs(order) for order in orders] == [1, 1, 1]
