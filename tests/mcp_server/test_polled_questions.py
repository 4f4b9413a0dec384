"""A question an MCP client asks (`agent_wait.mcp.asking.PersonAsker`) on the engine, in memory: it is recorded like
every other and owed its announcement; every door decides it through the one desk; the router marks it resumed and
runs no agent (the `polled` resume kind); the deadline applies the default; the asker may withdraw it, nobody else
who may not answer it can."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait import InMemoryAnnounce
from agent_wait.asking.adapter import RunOutcome
from agent_wait.asking.polled import asked_by_of, is_polled
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryDeadLetter, InMemoryEntryQueue, OutcomeKind, Router, Sweep
from agent_wait.engine.answering import VerdictKind
from agent_wait.engine.checks import answerer_for
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.errors import ArgumentError
from agent_wait.ledger import InMemoryLedger
from agent_wait.mcp.asking import Caller, PersonAsker
from agent_wait.mcp.policies import McpPolicies
from agent_wait.mcp.task_state import TaskState
from agent_wait.policy import WaitPolicy

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)
ANA = Caller("ana@example.com", "jwt")
FINANCE = answerer_for("api", person="finn@example.com", subject="iss#finn", groups=("finance",))
OUTSIDER = answerer_for("api", person="oscar@example.com", subject="iss#oscar", groups=("sales",))
POLICIES = McpPolicies(
    {
        "refunds": WaitPolicy(
            timeout="P1D", default={"action": "reject"}, answerer_groups=("finance",), tags={"team": "finance"}
        ),
        "ops": WaitPolicy(timeout="PT1H", default={"action": "approve"}, tags={"team": "ops"}),
    },
    default="refunds",
)


class NoAgent:
    """An adapter that records any call: a polled question must never run an agent."""

    framework = "none"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        self.calls.append("start")
        return RunOutcome(None)

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        self.calls.append("resume")
        return RunOutcome(None)

    def pending(self, thread_id: str) -> list[Any]:
        return []

    def progress(self, thread_id: str) -> str | None:
        return None

    def unfinished(self, thread_id: str) -> bool:
        return False

    def continue_run(self, thread_id: str) -> RunOutcome:
        self.calls.append("continue_run")
        return RunOutcome(None)


class World:
    def __init__(self) -> None:
        self.now = T0
        self.ledger = InMemoryLedger()
        self.queue = InMemoryEntryQueue()
        self.announce = InMemoryAnnounce()
        self.agent = NoAgent()
        clock = lambda: self.now  # noqa: E731
        self.service = AnswerService(self.ledger, self.queue, clock=clock, lease_wait=0)
        self.asker = PersonAsker(self.ledger, POLICIES, service=self.service, clock=clock)
        self.router = Router(
            self.agent, self.ledger, dead_letter=InMemoryDeadLetter(), announce=self.announce, clock=clock
        )
        self.sweep = Sweep(self.ledger, self.queue, announce=self.announce, clock=clock)

    def deliver(self) -> list[Any]:
        outcomes = [self.router.handle(json.dumps(m), deduplication_id=d) for m, _, d in self.queue.messages]
        self.queue.messages.clear()
        return outcomes

    def announced(self) -> list[str]:
        return [step.value for step, _ in self.announce.events]


@pytest.fixture
def world() -> World:
    return World()


def test_an_asked_question_is_recorded_polled_owed_its_announcement_and_working(world: World) -> None:
    task = world.asker.ask(ANA, {"question": "Refund order 7?"}, request_id=1)
    row = world.ledger.find(task.task_id)
    assert row is not None
    assert (task.state, row.status, row.thread_id) == (TaskState.WORKING, QuestionStatus.OPEN, f"mcp:{task.task_id}")
    assert is_polled(row.envelope.source)
    assert asked_by_of(row.envelope.source) == "ana@example.com"
    assert row.envelope.rules["answerers"] == {"groups": ["finance"], "principals": []}, "the policy's, not the call's"
    # Not announced yet, and due at once: the sweep announces it past its minute of grace
    assert not row.announced
    assert world.announced() == []
    world.now += timedelta(minutes=2)
    world.sweep.run()
    assert world.announced() == ["created"]


def test_an_answer_completes_the_task_and_the_router_runs_no_agent(world: World) -> None:
    task = world.asker.ask(ANA, {"question": "Refund order 7?"}, request_id=1)
    world.now += timedelta(minutes=2)
    world.sweep.run()  # announced first: later transitions wait for wait.created
    result = world.service.answer(task.task_id, {"action": "approve"}, FINANCE, answer_id="api:1")
    assert result.verdict.kind is VerdictKind.DECIDED
    done = world.asker.get(ANA, task.task_id)
    assert done is not None
    assert (done.state, done.answer) == (TaskState.COMPLETED, {"action": "approve"})
    assert done.answered_by == "finn@example.com"
    (outcome,) = world.deliver()
    assert outcome.kind is OutcomeKind.APPLIED
    row = world.ledger.find(task.task_id)
    assert row is not None
    assert row.status is QuestionStatus.RESUMED
    assert world.agent.calls == [], "nothing waits on a polled question but its poller"
    assert world.announced() == ["created", "answered", "resumed"]


def test_the_deadline_completes_the_task_with_the_default(world: World) -> None:
    task = world.asker.ask(ANA, {"question": "Refund order 7?"}, request_id=1)
    world.now += timedelta(days=1, minutes=1)
    world.sweep.run()
    world.deliver()
    done = world.asker.get(ANA, task.task_id)
    assert done is not None
    assert (done.state, done.answer, done.expired) == (TaskState.COMPLETED, {"action": "reject"}, True)
    assert world.agent.calls == []


def test_the_asker_may_cancel_a_question_only_finance_may_answer_and_nobody_else_may(world: World) -> None:
    task = world.asker.ask(ANA, {"question": "Refund order 7?"}, request_id=1)
    # An outsider, neither the asker nor in finance, may not cancel it
    refused = world.service.cancel(task.task_id, "not mine", OUTSIDER, answer_id="api:c1")
    assert refused.verdict.reason is RefusalReason.ANSWERER_NOT_ALLOWED
    # The asker may: it is their question to withdraw
    cancelled = world.asker.cancel(ANA, task.task_id)
    assert cancelled is not None
    assert cancelled.state is TaskState.CANCELLED
    row = world.ledger.find(task.task_id)
    assert row is not None
    assert (row.status, row.answered_by, row.via) == (QuestionStatus.CANCELLED, "ana@example.com", "mcp")
    world.deliver()
    assert world.agent.calls == []
    # A second cancel changes nothing; an answer after it is refused
    assert world.asker.cancel(ANA, task.task_id) == cancelled
    late = world.service.answer(task.task_id, {"action": "approve"}, FINANCE, answer_id="api:late")
    assert late.verdict.reason is RefusalReason.CANCELLED


def test_a_task_is_its_callers_alone(world: World) -> None:
    task = world.asker.ask(ANA, {"question": "Refund order 7?"}, request_id=1)
    bob = Caller("bob@example.com", "jwt")
    assert world.asker.get(bob, task.task_id) is None
    assert world.asker.cancel(bob, task.task_id) is None
    assert world.asker.get(ANA, "not-a-task") is None
    assert world.asker.get(ANA, task.task_id) is not None


def test_a_retry_gets_the_same_task_and_a_reused_key_is_refused(world: World) -> None:
    first = world.asker.ask(ANA, {"question": "Refund 7?"}, request_id=4)
    assert world.asker.ask(ANA, {"question": "Refund 7?"}, request_id=4).task_id == first.task_id
    assert world.asker.ask(ANA, {"question": "Refund 8?"}, request_id=4).task_id != first.task_id
    keyed = world.asker.ask(ANA, {"question": "Refund 9?", "idempotency_key": "k"}, request_id=1)
    assert world.asker.ask(ANA, {"question": "Refund 9?", "idempotency_key": "k"}, request_id=2) == keyed
    with pytest.raises(ArgumentError, match="this idempotency_key was used for another question"):
        world.asker.ask(ANA, {"question": "Refund 10?", "idempotency_key": "k"}, request_id=3)


def test_tags_select_a_policy_and_a_schema_shapes_the_answer(world: World) -> None:
    task = world.asker.ask(
        ANA,
        {
            "question": {"server": "prod-1", "change": "restart"},
            "tags": {"team": "ops"},
            "response_schema": {
                "type": "object",
                "properties": {"action": {"enum": ["go", "wait"]}, "note": {"type": "string"}},
                "required": ["action"],
            },
        },
        request_id=1,
    )
    row = world.ledger.find(task.task_id)
    assert row is not None
    assert row.envelope.source is not None
    assert row.envelope.source["policy"] == "ops"
    assert row.envelope.allowed_actions == ("go", "wait")
    assert world.service.answer(task.task_id, {"action": "maybe"}, FINANCE, answer_id="a").verdict.reason in (
        RefusalReason.ACTION_NOT_ALLOWED,
        RefusalReason.INVALID_ANSWER,
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "question must be a non-empty text or object"),
        ({"question": "  "}, "question must be a non-empty text or object"),
        ({"question": "Q", "answerers": ["eve"]}, "ask_person does not take ['answerers']"),
        ({"question": "Q", "approvers": ["eve"]}, "ask_person does not take ['approvers']"),
        ({"question": "Q", "default": {"action": "approve"}}, "ask_person does not take ['default']"),
        ({"question": "Q", "policy": "root"}, "unknown policy 'root'; this server asks under ['ops', 'refunds']"),
        ({"question": "Q", "tags": {"team": "nobody"}}, "select no policy"),
        ({"question": "Q", "tags": "team=ops"}, "tags must be an object of strings"),
        ({"question": "Q", "response_schema": "a string"}, "response_schema must be a JSON Schema object"),
        ({"question": "Q", "idempotency_key": ""}, "idempotency_key must be 1 to 255 characters"),
        ({"question": "Q", "extra": 1}, "unknown argument(s) ['extra']; ask_person takes"),
    ],
)
def test_refused_arguments_say_what_was_wrong(world: World, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError, match=re.escape(message)):
        world.asker.ask(ANA, arguments, request_id=1)
    assert world.ledger.find("anything") is None
