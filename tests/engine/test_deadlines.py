"""The deadline does not drift, and an overdue question gets its default through the same code path.

The router and sweep Lambdas run against moto with injected clocks (no sleeping): the router's clock
also times the question asked inside its run (`clock_scope`), so `expires_at` is pinned.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    load_event,
    records_from_queue,
    reset_handlers,
    sqs_event,
    sqs_record,
    start_message,
)

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.messages import deadline_answer_id
from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import DEADLINE_ANSWERED_BY, OutcomeKind, RefusalReason

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(days=3)
LATE = DEADLINE + timedelta(seconds=1)
DEFAULT = {"action": "reject", "reason": "timeout"}


def _at(moment: datetime) -> None:
    """Set both handlers' clocks (their cold-start objects are cached, as in a warm Lambda)."""
    from agent_wait.host import router, sweep

    router._router().clock = lambda: moment
    sweep._sweep().clock = lambda: moment


def _router() -> Any:
    from agent_wait.host import router

    return router._router()


def _route(record: dict[str, Any], context: FakeLambdaContext) -> dict[str, Any]:
    from agent_wait.host import router

    return router.handler(sqs_event(record), context)


def _sweep(context: FakeLambdaContext) -> dict[str, Any]:
    from agent_wait.host import sweep

    return sweep.handler(load_event("scheduled_event.json"), context)


def _parked_at_t0(host: HostStack, unique: str, context: FakeLambdaContext) -> tuple[str, str, str]:
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    _at(T0)
    start = sqs_record(
        start_message(thread_id, order_id), group_id=thread_id, deduplication_id=f"s-{unique}", message_id=f"m-{unique}"
    )
    assert _route(start, context) == {"batchItemFailures": []}
    (record,) = host.ledger().questions(thread_id)
    return thread_id, order_id, record.question_id


def test_a_republish_keeps_the_deadline_fixed_when_the_question_was_first_asked(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a question asked at T0 with a P3D timeout
    thread_id, order_id, question_id = _parked_at_t0(host, unique, lambda_context)

    # WHEN the start is redelivered a day later (the router republishes the open question)
    _at(T0 + timedelta(days=1))
    redelivered = sqs_record(
        start_message(thread_id, order_id),
        group_id=thread_id,
        deduplication_id=f"s-{unique}",
        message_id=f"m-{unique}",
        receive_count=2,
    )
    assert _route(redelivered, lambda_context) == {"batchItemFailures": []}

    # THEN both announcements and the ledger carry the deadline fixed at T0 + 3 days
    created = [e for e in host.announcements() if e["type"] == "wait.created"]
    assert [e["expires_at"] for e in created] == [format_rfc3339(DEADLINE)] * 2
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.expires_at == format_rfc3339(DEADLINE)


def test_an_overdue_question_gets_its_default_through_the_entry_queue_and_a_late_answer_is_refused(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a question asked at T0, still open one second past its deadline
    thread_id, order_id, question_id = _parked_at_t0(host, unique, lambda_context)
    _at(LATE)

    # WHEN a person answers after the deadline, before the sweep ran
    early_late = _router().handle(json.dumps(answer_message(thread_id, question_id, answer_id="too-late-1")))

    # THEN it is refused as expired and the question stays open for its default
    assert early_late.reason is RefusalReason.EXPIRED
    assert host.ledger().get(thread_id, question_id).status is QuestionStatus.OPEN  # type: ignore[union-attr]

    # WHEN the sweep runs past the deadline
    report = _sweep(lambda_context)

    # THEN it sent the default through the entry queue as a deadline answer, grouped by thread
    assert report["expired_sent"] == [question_id]
    (message,) = host.entry_messages()
    body = json.loads(message["Body"])
    assert body == {
        "thread_id": thread_id,
        "question_id": question_id,
        "answer": DEFAULT,
        "origin": "deadline",
        "answer_id": deadline_answer_id(question_id),
        "answered_by": DEADLINE_ANSWERED_BY,
    }
    assert message["Attributes"]["MessageGroupId"] == thread_id

    # WHEN the router receives that message from the queue
    (record,) = records_from_queue([message], host.queue_arn)
    assert _route(record, lambda_context) == {"batchItemFailures": []}

    # THEN the question expired with its default, the graph received the default, nothing was refunded
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert row.status is QuestionStatus.RESUMED
    assert row.outcome is QuestionStatus.EXPIRED
    assert row.answer == DEFAULT
    assert row.answered_by == DEADLINE_ANSWERED_BY
    values = _router().adapter.graph.get_state({"configurable": {"thread_id": thread_id}}).values
    assert values["refund"] == DEFAULT
    assert values["done"] is True
    assert graphs.body_runs(order_id) == 0
    assert host.types_for(question_id) == ["wait.created", "wait.expired", "wait.resumed"]

    # WHEN finance's approve finally arrives
    late = _router().handle(json.dumps(answer_message(thread_id, question_id, answer_id="too-late-2")))

    # THEN it is refused as expired and runs nothing
    assert late.kind is OutcomeKind.REFUSED
    assert late.reason is RefusalReason.EXPIRED
    assert graphs.body_runs(order_id) == 0


def test_a_deadline_answer_always_applies_the_policy_default_whatever_it_carries(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN an overdue question
    thread_id, order_id, question_id = _parked_at_t0(host, unique, lambda_context)
    _at(LATE)

    # WHEN a message marked as coming from the deadline carries an approve
    forged = answer_message(thread_id, question_id, origin="deadline", answer_id=deadline_answer_id(question_id))
    outcome = _router().handle(json.dumps(forged))

    # THEN the question expired with the policy default, and the refund did not run
    assert outcome.kind is OutcomeKind.APPLIED
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert row.outcome is QuestionStatus.EXPIRED
    assert row.answer == DEFAULT
    assert graphs.body_runs(order_id) == 0


def test_the_sweep_leaves_questions_before_their_deadline_alone(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a question one second before its deadline
    thread_id, _, question_id = _parked_at_t0(host, unique, lambda_context)
    _at(DEADLINE - timedelta(seconds=1))

    # WHEN the sweep runs
    report = _sweep(lambda_context)

    # THEN nothing was sent and the question is still open
    assert report["expired_sent"] == []
    assert host.entry_messages() == []
    assert host.ledger().get(thread_id, question_id).status is QuestionStatus.OPEN  # type: ignore[union-attr]


def test_a_question_with_no_default_expires_with_a_null_answer(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a graph whose question has a PT1H timeout and no default
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_no_default_graph")
    reset_handlers()
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    _at(T0)
    assert _route(sqs_record(start_message(thread_id, order_id), group_id=thread_id), lambda_context) == {
        "batchItemFailures": []
    }
    (record,) = host.ledger().questions(thread_id)

    # WHEN the sweep runs past the hour and the router applies what it sent
    _at(T0 + timedelta(hours=1, seconds=1))
    assert _sweep(lambda_context)["expired_sent"] == [record.question_id]
    (queued,) = records_from_queue(host.entry_messages(), host.queue_arn)
    assert json.loads(queued["body"])["answer"] is None
    assert _route(queued, lambda_context) == {"batchItemFailures": []}

    # THEN the question expired with a null answer (documented), and the graph received null
    row = host.ledger().get(thread_id, record.question_id)
    assert row is not None
    assert row.outcome is QuestionStatus.EXPIRED
    assert row.answer is None
    values = _router().adapter.graph.get_state({"configurable": {"thread_id": thread_id}}).values
    assert values["hold"] is None
    assert values["done"] is True
