"""Precise deadlines and extensions through the real router, sweep and answer API handlers on the emulator.

moto implements EventBridge Scheduler's API but never delivers a schedule, so its delivery is EMULATED here:
`agent_wait.local.schedules.ScheduleDelivery` reads the schedules the handlers put into moto back, waits until
each one's `at()` time and invokes its target (the sweep handler) with the schedule's input, as Scheduler would,
then deletes it (`ActionAfterCompletion=DELETE`). Everything else is the deployed code: the router handler records
the question and puts its schedules, the sweep handler does the woken question's work and sends its deadline
answer to the entry queue, the router applies it, and the answer API handler extends a deadline.

The handlers share the session's moto server (`tests/conftest.py::moto_server`, via the `host` fixture).
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import boto3
import pytest
from tests.support.api_events import call
from tests.support.aws_stack import (
    REGION,
    FakeLambdaContext,
    HostStack,
    records_from_queue,
    reset_handlers,
    run_router,
    sqs_record,
)

from agent_wait.common.times import format_rfc3339, parse_rfc3339, utc_now
from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine.schedules import schedule_name
from agent_wait.local.schedules import ScheduleDelivery, due_time

SWEEP_ARN = "arn:aws:lambda:us-east-1:123456789012:function:agent-wait-sweep"
ROLE_ARN = "arn:aws:iam::123456789012:role/agent-wait-scheduler"
OPS = {"iss": "https://issuer.example.com", "sub": "u-o", "cognito:username": "olga", "cognito:groups": "[ops]"}


@pytest.fixture
def stack(host: HostStack, monkeypatch: pytest.MonkeyPatch) -> tuple[HostStack, ScheduleDelivery]:
    group = f"aw-{uuid.uuid4().hex[:10]}"
    scheduler = boto3.client("scheduler", region_name=REGION, endpoint_url=host.endpoint)
    for name, value in (
        (Settings.SCHEDULE_GROUP, group),
        (Settings.SCHEDULE_TARGET_ARN, SWEEP_ARN),
        (Settings.SCHEDULE_ROLE_ARN, ROLE_ARN),
    ):
        monkeypatch.setenv(name.value, value)
    from agent_wait.host import sweep

    def invoke(arn: str, payload: dict[str, Any]) -> Any:
        assert arn == SWEEP_ARN, f"a schedule targets the sweep, got {arn}"
        return sweep.handler(payload, FakeLambdaContext(function_name="agent-wait-sweep"))

    # on_time: the sweep sees each schedule's own time, however late this machine runs it: a reminder delivered after
    # a stall of two seconds would otherwise find its deadline come too, and rightly send nothing (a flaky test).
    delivery = ScheduleDelivery(scheduler, group, invoke, on_time=True)
    delivery.ensure_group()
    return host, delivery


def _ask(host: HostStack, graph: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.setenv(Settings.GRAPH.value, graph)
    reset_handlers()
    thread_id = f"precise-{uuid.uuid4().hex[:8]}"
    body = json.dumps({"thread_id": thread_id, "input": {"order_id": "A-1", "amount": 900}})
    run_router(sqs_record(body, group_id=thread_id, queue_arn=host.queue_arn), context=FakeLambdaContext())
    (record,) = host.ledger().questions(thread_id)
    return thread_id, record.question_id


def _apply_entry_queue(host: HostStack) -> None:
    """Hand what the sweep queued to the router handler, as the SQS event source would."""
    messages = host.entry_messages()
    if messages:
        run_router(*records_from_queue(messages, host.queue_arn), context=FakeLambdaContext())


def test_a_scheduled_reminder_and_deadline_fire_within_seconds_and_the_router_expires_the_question(
    stack: tuple[HostStack, ScheduleDelivery], monkeypatch: pytest.MonkeyPatch
) -> None:
    host, delivery = stack
    # GIVEN a question with a PT5S deadline and a reminder two seconds before it, recorded by the router handler
    thread_id, question_id = _ask(host, "tests.agents.deadline_graphs:build_quick_graph", monkeypatch)
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert row.expires_at is not None
    names = {name for _, name in delivery.pending()}
    assert names == {schedule_name(question_id, "deadline"), schedule_name(question_id, "r1")}, names
    # WHEN the emulated Scheduler fires the reminder, then the deadline, at their times
    (reminded,) = delivery.wait_and_deliver(timeout=5)
    assert reminded.name == schedule_name(question_id, "r1")
    assert "wait.reminder" in host.types_for(question_id)
    (deadline,) = delivery.wait_and_deliver(timeout=5)
    assert deadline.name == schedule_name(question_id, "deadline")
    assert deadline.due == parse_rfc3339(row.expires_at)
    _apply_entry_queue(host)
    # THEN the deadline's own schedule expired the question through the router (no sweep ran), each schedule firing
    # at its time and never before it (how late on a busy machine is the bench's figure:
    # bench/bench_deadline_lateness.py, not a timed assertion here)
    decided = host.ledger().get(thread_id, question_id)
    assert decided is not None
    assert (decided.status, decided.outcome) == (QuestionStatus.RESUMED, QuestionStatus.EXPIRED)
    assert all(d.late_seconds >= 0 for d in delivery.delivered), delivery.delivered
    assert host.types_for(question_id)[-2:] == ["wait.expired", "wait.resumed"]
    assert delivery.pending() == [], "a fired schedule deletes itself; the decision deletes the rest"


def test_extending_through_the_api_moves_the_deadline_schedule_and_the_reminder_schedule(
    stack: tuple[HostStack, ScheduleDelivery], monkeypatch: pytest.MonkeyPatch
) -> None:
    host, delivery = stack
    thread_id, question_id = _ask(host, "tests.agents.deadline_graphs:build_extendable_graph", monkeypatch)
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    before = {name: at for at, name in delivery.pending()}
    assert before[schedule_name(question_id, "deadline")] == parse_rfc3339(str(row.expires_at))
    # WHEN a member of ops extends it by two hours through the answer API handler
    from agent_wait.host import api
    from agent_wait.host.api import create_app

    api.reset()
    response = call(create_app(api._context), "POST", f"/questions/{question_id}/extend", {"by": "PT2H"}, claims=OPS)
    assert response.status == 200, response.body
    # THEN the row, its deadline schedule and its reminder schedule all moved by two hours
    moved = host.ledger().get(thread_id, question_id)
    assert moved is not None
    assert moved.expires_at == format_rfc3339(parse_rfc3339(str(row.expires_at)) + timedelta(hours=2))
    after = {name: at for at, name in delivery.pending()}
    assert {name: at - before[name] for name, at in after.items()} == {
        schedule_name(question_id, "deadline"): timedelta(hours=2),
        schedule_name(question_id, "r1"): timedelta(hours=2),
    }
    # AND the sweep announces wait.extended (the API owes it: it has no announcers of its own)
    from agent_wait.host import sweep

    sweep.handler({"source": "aws.scheduler"}, FakeLambdaContext(function_name="agent-wait-sweep"))
    (extended,) = [e for e in host.announcements() if e["type"] == "wait.extended" and e["question_id"] == question_id]
    assert extended["progress"]["by"] == "https://issuer.example.com#u-o"  # no verified address: the subject
    assert extended["expires_at"] == moved.expires_at


def test_due_time_reads_only_one_time_schedules() -> None:
    assert due_time("at(2030-01-01T09:00:00)") == parse_rfc3339("2030-01-01T09:00:00Z")
    assert due_time("rate(1 minute)") is None


def test_agent_wait_devs_delivery_fires_a_due_schedule_into_the_sweep_handler_and_deletes_it(
    stack: tuple[HostStack, ScheduleDelivery], monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from agent_wait.aws.scheduler import EventBridgeSchedules
    from agent_wait.engine.schedules import Wake
    from agent_wait.local.schedules import stack_delivery

    host, delivery = stack
    thread_id, question_id = _ask(host, "tests.agents.deadline_graphs:build_extendable_graph", monkeypatch)
    scheduler = boto3.client("scheduler", region_name=REGION, endpoint_url=host.endpoint)
    local = SimpleNamespace(
        environment={Settings.SCHEDULE_GROUP.value: delivery.group},
        client=lambda service: boto3.client(service, region_name=REGION, endpoint_url=host.endpoint),
        clock=utc_now,
    )
    dev = stack_delivery(local)
    assert dev is not None
    assert stack_delivery(SimpleNamespace(environment={})) is None, "off without AGENT_WAIT_SCHEDULE_GROUP"
    past = Wake("a-stale-wake", utc_now() - timedelta(seconds=5), thread_id, question_id)
    EventBridgeSchedules(delivery.group, SWEEP_ARN, ROLE_ARN, client=scheduler).put(past)
    (fired,) = [d for d in dev.deliver_due() if d.name == "a-stale-wake"]
    assert fired.input["question"] == {"thread_id": thread_id, "question_id": question_id}
    assert "a-stale-wake" not in {name for _, name in dev.pending()}, "deleted once fired, as DELETE after completion"
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.status is QuestionStatus.OPEN, "not due yet: the woken sweep did nothing"
