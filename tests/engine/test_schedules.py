"""Precise-deadline schedules kept in step with the ledger, in process: a real LangGraph graph, the real `Router` and
`Sweep` on an `InMemoryLedger`, and a schedule backend that records what it is asked (or fails, for the bad path).
`EventBridgeSchedules` itself runs against moto's Scheduler API (`mock_aws`)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.stub import Stubber
from langgraph.checkpoint.memory import InMemorySaver
from moto import mock_aws
from tests.agents import deadline_graphs

from agent_wait.aws.scheduler import EventBridgeSchedules, at_expression
from agent_wait.engine import InMemoryDeadLetter, InMemoryEntryQueue, Metric, RecordingMetrics, Router, Sweep
from agent_wait.engine.schedules import DeadlineSchedules, Wake, schedule_name, wakes_for
from agent_wait.errors import ScheduleUnavailableError
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2030, 1, 1, 9, 0, 0, tzinfo=UTC)
SWEEP = "arn:aws:lambda:us-east-1:123456789012:function:sweep"
ROLE = "arn:aws:iam::123456789012:role/scheduler"
_threads = itertools.count()


@dataclass
class Recorded:
    """A schedule backend that keeps what it was asked; `fail` makes every call raise, as a throttled API would."""

    puts: dict[str, Wake] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    fail: bool = False

    def put(self, wake: Wake) -> None:
        if self.fail:
            raise ScheduleUnavailableError(
                "Scheduler CreateSchedule failed with ThrottlingException", code="Throttling"
            )
        self.puts[wake.name] = wake

    def delete(self, name: str) -> None:
        if self.fail:
            raise ScheduleUnavailableError(
                "Scheduler DeleteSchedule failed with ThrottlingException", code="Throttling"
            )
        self.deleted.append(name)
        self.puts.pop(name, None)


@dataclass
class World:
    backend: Recorded
    ledger: InMemoryLedger
    router: Router
    sweep: Sweep
    metrics: RecordingMetrics
    now: list[datetime]

    def ask(self) -> tuple[str, str]:
        thread_id = f"sched-{next(_threads)}"
        outcome = self.router.handle(json.dumps({"thread_id": thread_id, "input": {"order_id": "A", "amount": 1}}))
        (question_id,) = outcome.asked
        return thread_id, question_id


@pytest.fixture
def world() -> World:
    now = [T0]
    backend, ledger, metrics = Recorded(), InMemoryLedger(), RecordingMetrics()
    schedules = DeadlineSchedules(backend, metrics=metrics, clock=lambda: now[0])
    graph = deadline_graphs.build_extendable_graph(InMemorySaver())  # PT1H deadline, a reminder after PT30M
    router = Router(
        LangGraphAdapter(graph), ledger, dead_letter=InMemoryDeadLetter(), metrics=metrics, clock=lambda: now[0]
    )
    router.questions.schedules = schedules
    sweep = Sweep(ledger, InMemoryEntryQueue(), clock=lambda: now[0], schedules=schedules, metrics=metrics)
    return World(backend, ledger, router, sweep, metrics, now)


def test_a_recorded_question_gets_its_deadline_and_next_reminder_and_a_redelivery_the_same_ones(world: World) -> None:
    thread_id, question_id = world.ask()
    assert world.backend.puts == {
        schedule_name(question_id, "deadline"): Wake(
            schedule_name(question_id, "deadline"), T0 + timedelta(hours=1), thread_id, question_id
        ),
        schedule_name(question_id, "r1"): Wake(
            schedule_name(question_id, "r1"), T0 + timedelta(minutes=30), thread_id, question_id
        ),
    }
    record = world.ledger.get(thread_id, question_id)
    assert record is not None
    schedules = world.router.questions.schedules
    assert schedules is not None
    assert schedules.arrange(record) == 2, "a republished question puts the same two names again"
    assert len(world.backend.puts) == 2, "never a second schedule"


def test_a_sent_reminder_has_no_schedule_left_and_a_decision_deletes_every_one(world: World) -> None:
    thread_id, question_id = world.ask()
    world.now[0] = T0 + timedelta(minutes=30)
    report = world.sweep.run_question(thread_id, question_id)  # the r1 schedule's wake-up
    assert report.reminded == (question_id,)
    answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}, "answer_id": "a1"}
    world.router.handle(json.dumps(answer))
    assert set(world.backend.deleted) == {schedule_name(question_id, "deadline"), schedule_name(question_id, "r1")}
    assert world.backend.puts == {}


def test_a_wake_up_for_a_question_not_due_does_nothing(world: World) -> None:
    thread_id, question_id = world.ask()
    world.now[0] = T0 + timedelta(minutes=29)  # a wake-up a minute early (Scheduler's precision), never waited out
    report = world.sweep.run_question(thread_id, question_id)
    assert (report.reminded, report.expired_sent, report.due_read) == ((), (), 0)
    assert world.sweep.run_question(thread_id, "q-unknown").due_read == 0


def test_a_schedule_that_cannot_be_put_never_fails_the_question_and_the_sweep_still_expires_it(world: World) -> None:
    world.backend.fail = True
    thread_id, question_id = world.ask()
    record = world.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.status.value == "open", "the question is recorded and announced all the same"
    assert world.metrics.counts[(Metric.SCHEDULE_FAILURES, "put")] == 2
    world.now[0] = T0 + timedelta(hours=1, minutes=1)
    assert world.sweep.run().expired_sent == (question_id,), "the minute sweep is the safety net"


def test_the_wakes_of_a_decided_question_are_none_and_an_odd_id_is_hashed_into_a_valid_name(world: World) -> None:
    name = schedule_name("v1:tool_call:abc/def", "deadline")
    assert name.endswith("-deadline")
    assert len(name) <= 64
    assert all(c.isalnum() or c in "-_." for c in name)
    assert schedule_name("q-1", "r2") == "q-1-r2"
    thread_id, question_id = world.ask()
    answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "reject"}, "answer_id": "a2"}
    world.router.handle(json.dumps(answer))
    decided = world.ledger.get(thread_id, question_id)
    assert decided is not None
    assert wakes_for(decided) == ()


def test_event_bridge_schedules_put_twice_is_one_schedule_moved_and_a_missing_one_deletes_quietly() -> None:
    with mock_aws():
        client = boto3.client("scheduler", region_name="us-east-1")
        client.create_schedule_group(Name="g")
        schedules = EventBridgeSchedules("g", SWEEP, ROLE, client=client)
        wake = Wake("q-1-deadline", T0, "t-1", "q-1")
        schedules.put(wake)
        schedules.put(Wake("q-1-deadline", T0 + timedelta(hours=2), "t-1", "q-1"))  # an extension: moved
        (listed,) = client.list_schedules(GroupName="g")["Schedules"]
        found = client.get_schedule(Name=listed["Name"], GroupName="g")
        assert found["ScheduleExpression"] == "at(2030-01-01T11:00:00)"
        assert found["ActionAfterCompletion"] == "DELETE"
        assert found["FlexibleTimeWindow"] == {"Mode": "OFF"}
        assert json.loads(found["Target"]["Input"]) == {
            "question": {"thread_id": "t-1", "question_id": "q-1"},
            "at": "2030-01-01T11:00:00Z",
        }
        schedules.delete("q-1-deadline")
        schedules.delete("q-1-deadline")  # gone already: fine
        assert client.list_schedules(GroupName="g")["Schedules"] == []
    assert at_expression(wake) == "at(2030-01-01T09:00:00)"


@pytest.mark.parametrize(
    ("operation", "call"),
    [("create_schedule", "CreateSchedule"), ("delete_schedule", "DeleteSchedule")],
)
def test_any_other_scheduler_failure_is_a_typed_error_naming_the_call_and_code(operation: str, call: str) -> None:
    client = boto3.client("scheduler", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stubber:
        stubber.add_client_error(operation, service_error_code="ThrottlingException", http_status_code=400)
        schedules = EventBridgeSchedules("g", SWEEP, ROLE, client=client)
        act = (
            (lambda: schedules.put(Wake("q-1-deadline", T0, "t-1", "q-1")))
            if operation == "create_schedule"
            else (lambda: schedules.delete("q-1-deadline"))
        )
        with pytest.raises(
            ScheduleUnavailableError, match=rf"^Scheduler {call} of q-1-deadline failed with Thr"
        ) as raised:
            act()
    assert raised.value.code == "ThrottlingException"
