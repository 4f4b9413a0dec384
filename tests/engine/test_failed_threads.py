"""A failing agent never sticks a thread: the failure is recorded once, visibly, and an operator's retry
applies the recorded start or decision again, exactly once.

Every test drives `agent_wait.host.router.handler` with real-shaped SQS FIFO events on the moto stack
(DynamoDB ledger and checkpoints, FIFO DLQ, SNS announcements), and redelivers records the way SQS does:
the same message id and deduplication id, a higher `ApproximateReceiveCount`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    records_from_queue,
    reset_handlers,
    run_router,
    sqs_record,
    start_message,
)

from agent_wait.cli import main
from agent_wait.common.times import utc_now
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import SqsEntryQueue, failed_threads, retry_thread
from agent_wait.engine.dead_letter import DETAIL_ATTRIBUTE, REASON_ATTRIBUTE, THREAD_ATTRIBUTE
from agent_wait.host import HostSettings, build_sweep
from agent_wait.ledger import FailureKind


def _dead_letters(host: HostStack) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(reason, thread, detail, body) of every dead letter so far."""
    return [
        (
            message["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"],
            message["MessageAttributes"].get(THREAD_ATTRIBUTE, {}).get("StringValue", ""),
            message["MessageAttributes"][DETAIL_ATTRIBUTE]["StringValue"],
            json.loads(message["Body"]),
        )
        for message in host.dead_letters()
    ]


def _pump(host: HostStack, context: FakeLambdaContext) -> list[dict[str, Any]]:
    """Hand what is on the entry queue to the router, as Lambda's poller would; returns the records."""
    records = records_from_queue(host.entry_messages(), host.queue_arn)
    if records:
        assert run_router(*records, context=context) == {"batchItemFailures": []}
    return records


@pytest.fixture
def parked(host: HostStack, lambda_context: FakeLambdaContext, unique: str) -> tuple[str, str, str]:
    """(thread, order, question): a refund over the limit, parked on finance's question."""
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    record = sqs_record(start_message(thread_id, order_id, start_id=f"s-{unique}"), group_id=thread_id)
    assert run_router(record, context=lambda_context) == {"batchItemFailures": []}
    (question,) = host.ledger().questions(thread_id)
    return thread_id, order_id, question.question_id


@pytest.fixture
def failing_resume(parked: tuple[str, str, str]) -> Iterator[tuple[str, str, str]]:
    """The parked refund's `review` node raises after paying, until the test fixes it."""
    graphs.FAIL_AFTER_REFUND.add(parked[1])
    try:
        yield parked
    finally:
        graphs.FAIL_AFTER_REFUND.discard(parked[1])


def test_a_resume_that_raises_is_dead_lettered_once_recorded_and_never_run_again(
    host: HostStack, lambda_context: FakeLambdaContext, failing_resume: tuple[str, str, str], outcomes: list[Any]
) -> None:
    # GIVEN a parked refund whose node raises after the refund when it resumes
    thread_id, order_id, question_id = failing_resume
    answer = sqs_record(answer_message(thread_id, question_id, answer_id="approve-1"), group_id=thread_id)

    # WHEN finance approves, and SQS delivers the record four more times (as it would if it kept failing)
    for receive in range(1, 6):
        again = dict(answer, attributes={**answer["attributes"], "ApproximateReceiveCount": str(receive)})
        assert run_router(again, context=lambda_context) == {"batchItemFailures": []}

    # THEN the node's side effect ran once, not five times
    assert graphs.body_runs(order_id) == 1
    assert graphs.node_runs("review", order_id) == 2  # parked once, resumed once
    # AND one dead letter says why and what to do, by type and ids only
    [(reason, dead_thread, detail, body)] = _dead_letters(host)
    assert (reason, dead_thread, body["answer_id"]) == ("agent_failed", thread_id, "approve-1")
    assert "RuntimeError" in detail
    assert f"agent-wait retry {thread_id}" in detail
    assert "cannot record the refund" not in detail
    # AND the row and the thread say failed; the decision is kept
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert (row.status, row.outcome, row.answer) == (
        QuestionStatus.FAILED,
        QuestionStatus.ANSWERED,
        {"action": "approve"},
    )
    assert row.failure is not None
    assert (row.failure.error, row.failure.message_id) == ("RuntimeError", "approve-1")
    assert host.ledger().thread_failure(thread_id) == row.failure
    assert [f.thread_id for f in failed_threads(host.ledger(), limit=1000)].count(thread_id) == 1
    # AND UIs were told with a lifecycle envelope
    assert host.types_for(question_id) == ["wait.created", "wait.answered", "wait.failed"]
    assert [o.reason for o in outcomes] == ["agent_failed"] + ["thread_failed"] * 4


def test_a_failed_question_is_refused_to_later_answers_and_never_swept(
    host: HostStack, lambda_context: FakeLambdaContext, failing_resume: tuple[str, str, str], outcomes: list[Any]
) -> None:
    # GIVEN a question whose approval failed to apply
    thread_id, order_id, question_id = failing_resume
    first = sqs_record(answer_message(thread_id, question_id, answer_id="approve-1"), group_id=thread_id)
    run_router(first, context=lambda_context)
    outcomes.clear()

    # WHEN a correct, different answer arrives, and a sweep runs long after the deadline
    later = sqs_record(answer_message(thread_id, question_id, "reject", answer_id="reject-2"), group_id=thread_id)
    assert run_router(later, context=lambda_context) == {"batchItemFailures": []}
    sweep = build_sweep(HostSettings.from_env("sweep"))
    sweep.clock = lambda: utc_now() + timedelta(days=30)
    report = sweep.run()

    # THEN the later answer is refused with its reason, and the sweep sends no default for it
    [refused] = outcomes
    assert (refused.kind.value, refused.reason) == ("refused", "thread_failed")
    assert question_id not in report.expired_sent
    assert host.entry_messages() == []
    assert graphs.body_runs(order_id) == 1


def test_retry_applies_the_recorded_decision_exactly_once(
    host: HostStack,
    lambda_context: FakeLambdaContext,
    failing_resume: tuple[str, str, str],
    outcomes: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a thread failed applying finance's approval
    thread_id, order_id, question_id = failing_resume
    run_router(
        sqs_record(answer_message(thread_id, question_id, answer_id="approve-1"), group_id=thread_id),
        context=lambda_context,
    )
    assert main(["failures"]) == 0
    listed = capsys.readouterr().out
    assert f"thread={thread_id}  answer={question_id}  error=RuntimeError" in listed

    # WHEN the graph is fixed and the operator runs `agent-wait retry THREAD`
    graphs.FAIL_AFTER_REFUND.discard(order_id)
    assert main(["retry", thread_id, "--retry-id", "fix-1"]) == 0
    assert f"retry fix-1 sent for thread {thread_id}" in capsys.readouterr().out
    records = _pump(host, lambda_context)

    # THEN the recorded approval was applied: the graph finished, the refund paid once, the row resumed
    assert [(o.kind.value, o.thread_id) for o in outcomes[-1:]] == [("retried", thread_id)]
    assert graphs.node_runs("finish", order_id) == 1
    assert graphs.refunds_paid(order_id) == 1
    assert graphs.body_runs(order_id) == 2  # the failed resume, then the retry
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert (row.status, row.outcome, row.retry_id) == (QuestionStatus.RESUMED, QuestionStatus.ANSWERED, "fix-1")
    assert host.ledger().thread_failure(thread_id) is None
    assert host.types_for(question_id)[-1] == "wait.resumed"
    # AND a redelivered retry runs nothing more
    (retry,) = records
    again = dict(retry, attributes={**retry["attributes"], "ApproximateReceiveCount": "2"})
    assert run_router(again, context=lambda_context) == {"batchItemFailures": []}
    assert outcomes[-1].reason == "nothing_to_retry"
    assert graphs.body_runs(order_id) == 2
    # AND the CLI says so, and refuses a retry of a thread that is not failed
    assert main(["failures"]) == 0
    assert thread_id not in capsys.readouterr().out
    assert main(["retry", thread_id]) == 1
    assert f"thread {thread_id} is not failed" in capsys.readouterr().err


def test_a_retry_that_fails_again_keeps_the_thread_failed(
    host: HostStack, lambda_context: FakeLambdaContext, failing_resume: tuple[str, str, str], outcomes: list[Any]
) -> None:
    # GIVEN a failed thread whose agent is not fixed yet
    thread_id, order_id, question_id = failing_resume
    run_router(
        sqs_record(answer_message(thread_id, question_id, answer_id="approve-1"), group_id=thread_id),
        context=lambda_context,
    )

    # WHEN it is retried (as a library call), and that retry is delivered twice
    failure, _ = retry_thread(
        host.ledger(), SqsEntryQueue(host.queue_url, client=host.sqs), thread_id, retry_id="too-soon"
    )
    assert (failure.kind, failure.target_id) == (FailureKind.ANSWER, question_id)
    (record,) = _pump(host, lambda_context)
    again = dict(record, attributes={**record["attributes"], "ApproximateReceiveCount": "2"})
    run_router(again, context=lambda_context)

    # THEN the retry ran the node once, failed, was dead-lettered too, and the thread is still failed
    assert graphs.body_runs(order_id) == 2
    reasons = [(reason, body.get("retry_id") or body.get("answer_id")) for reason, _, _, body in _dead_letters(host)]
    assert reasons == [("agent_failed", "approve-1"), ("agent_failed", "too-soon")]
    now_failed = host.ledger().thread_failure(thread_id)
    assert now_failed is not None
    assert (now_failed.message_id, now_failed.retries) == ("too-soon", 1)
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert row.status is QuestionStatus.FAILED


def test_a_failed_start_holds_the_thread_and_its_retry_finishes_the_run(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, outcomes: list[Any]
) -> None:
    # GIVEN a start whose agent raises
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    graphs.FAIL_ORDERS.add(order_id)
    try:
        start = sqs_record(start_message(thread_id, order_id, start_id="s-1"), group_id=thread_id)
        assert run_router(start, context=lambda_context) == {"batchItemFailures": []}

        # WHEN another start and an answer for the thread arrive while it is failed
        other = sqs_record(start_message(thread_id, f"{order_id}-b", start_id="s-2"), group_id=thread_id)
        stray = sqs_record(answer_message(thread_id, "0" * 32, answer_id="stray-1"), group_id=thread_id)
        assert run_router(other, stray, context=lambda_context) == {"batchItemFailures": []}
    finally:
        graphs.FAIL_ORDERS.discard(order_id)

    # THEN the failure is listed, and both held messages wait in the dead-letter queue with their reason
    [failure] = [f for f in failed_threads(host.ledger(), limit=1000) if f.thread_id == thread_id]
    assert (failure.kind, failure.target_id, failure.error) == (FailureKind.START, "s-1", "RuntimeError")
    held = [(reason, body.get("start_id") or body.get("answer_id")) for reason, _, _, body in _dead_letters(host)]
    assert held == [("agent_failed", "s-1"), ("thread_failed", "s-2"), ("thread_failed", "stray-1")]
    assert graphs.node_runs("prepare", order_id) == 1

    # WHEN the agent is fixed and the thread retried
    retry_thread(host.ledger(), SqsEntryQueue(host.queue_url, client=host.sqs), thread_id, retry_id="r-1")
    _pump(host, lambda_context)

    # THEN the start's run finishes from its checkpoint and parks on its question, once
    assert outcomes[-1].kind.value == "retried"
    assert graphs.node_runs("prepare", order_id) == 2
    (question,) = host.ledger().questions(thread_id)
    assert question.status is QuestionStatus.OPEN
    assert host.ledger().thread_failure(thread_id) is None
    # AND a held message, redriven, now applies (a new turn on the thread)
    redriven = sqs_record(start_message(thread_id, f"{order_id}-b", start_id="s-2"), group_id=thread_id)
    assert run_router(redriven, context=lambda_context) == {"batchItemFailures": []}
    assert outcomes[-1].kind.value == "started"


def test_a_deadline_answer_for_another_question_of_a_failed_thread_is_refused_not_dead_lettered(
    host: HostStack,
    lambda_context: FakeLambdaContext,
    unique: str,
    outcomes: list[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a thread with two questions open at once, one of whose approvals fails to apply
    from agent_wait.host import router

    monkeypatch.setenv("AGENT_WAIT_GRAPH", "tests.agents.graphs:build_parallel_graph")
    reset_handlers()
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    run_router(
        sqs_record(start_message(thread_id, order_id, start_id="s-1"), group_id=thread_id), context=lambda_context
    )
    by_function = {r.envelope.question["function"]: r for r in host.ledger().questions(thread_id)}
    graphs.FAIL_AFTER_REFUND.add(order_id)
    try:
        approve = answer_message(thread_id, by_function["issue_refund"].question_id)
        run_router(sqs_record(approve, group_id=thread_id), context=lambda_context)
    finally:
        graphs.FAIL_AFTER_REFUND.discard(order_id)
    assert [reason for reason, *_ in _dead_letters(host)] == ["agent_failed"]

    # WHEN the other question's deadline passes and the sweep's answer reaches the router
    later = utc_now() + timedelta(days=4)
    sweep = build_sweep(HostSettings.from_env("sweep"))
    sweep.clock = lambda: later
    assert sweep.run().expired_sent == (by_function["notify_customer"].question_id,)
    router._router().clock = lambda: later
    _pump(host, lambda_context)

    # THEN it is refused (the sweep sends it again once the thread is retried), nothing waits in the DLQ,
    # and the other question stays open
    assert (outcomes[-1].kind.value, outcomes[-1].reason) == ("refused", "thread_failed")
    assert _dead_letters(host) == []
    other = host.ledger().get(thread_id, by_function["notify_customer"].question_id)
    assert other is not None
    assert other.status is QuestionStatus.OPEN
