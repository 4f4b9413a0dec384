"""Every transition's envelope is delivered at least once, in lifecycle order, even when the question was decided
while the announcer was down (docs/guarantees.md "Envelopes owed during an outage").

Each test runs on the in-memory ledger and on `DynamoDbLedger` over the embedded emulator (moto). The agent is a
real LangGraph graph whose question has a reminder, an escalation step and a two-person quorum
(`tests.agents.followup_graphs.build_busy_graph`); the announcer is an in-memory one the test takes down and
brings back, and it records only what it delivered.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.followup_graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.aws_stack import create_question_table

from agent_wait import InMemoryAnnounce
from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryDeadLetter, InMemoryEntryQueue, OutcomeKind, Router, Sweep
from agent_wait.engine.checks import answerer_for
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import FollowUpLedger, InMemoryLedger, Ledger

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
_threads = itertools.count()


class FlakyAnnounce(InMemoryAnnounce):
    """An in-memory announcer whose backend the test takes down (`down = True`) and brings back."""

    name = "flaky"

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if self.down:
            raise ConnectionError("announcer unreachable")
        super().deliver(envelope, transition)


@dataclass
class World:
    """One agent, its router and its sweep, sharing a ledger, the flaky announcer and a clock the test moves."""

    ledger: Ledger
    router: Router
    sweep: Sweep
    queue: InMemoryEntryQueue
    announce: FlakyAnnounce
    now: list[datetime] = field(default_factory=lambda: [T0])

    def at(self, offset: timedelta) -> None:
        self.now[0] = T0 + offset

    def sweep_at(self, offset: timedelta) -> Any:
        self.at(offset)
        return self.sweep.run()

    def ask(self, order_id: str) -> tuple[str, str]:
        thread_id = f"owed-{next(_threads)}-{order_id}"
        outcome = self.router.handle(json.dumps({"thread_id": thread_id, "input": {"order_id": order_id, "amount": 9}}))
        (question_id,) = outcome.asked
        return thread_id, question_id

    def vote(self, thread_id: str, question_id: str, by: str, action: str = "approve") -> Any:
        message = {
            "thread_id": thread_id,
            "question_id": question_id,
            "answer": {"action": action},
            "answered_by": by,
            "answer_id": f"{by}:{question_id}",
        }
        return self.router.handle(json.dumps(message))

    def deliver_queue(self) -> list[Any]:
        """Hand what the sweep queued (deadline answers) to the router, as SQS would."""
        outcomes = [self.router.handle(json.dumps(m), deduplication_id=d) for m, _, d in self.queue.messages]
        self.queue.messages.clear()
        return outcomes

    def delivered(self, question_id: str, announcer: InMemoryAnnounce | None = None) -> list[str]:
        """The dedupe keys the announcer delivered for the question, in the order it received them."""
        events = (announcer or self.announce).events
        return [e.dedupe_key for _, e in events if e.question_id == question_id]


@pytest.fixture(params=["memory", "emulator"])
def ledger(request: pytest.FixtureRequest) -> Iterator[Ledger]:
    if request.param == "memory":
        yield InMemoryLedger()
        return
    import boto3

    # A table of its own: the sweep reads every due question in the table, and the test owns what it reads.
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=request.getfixturevalue("moto_server"))
    name = f"owed-{request.getfixturevalue('unique')}"
    create_question_table(client, name)
    yield DynamoDbLedger(name, client=client)
    client.delete_table(TableName=name)


@pytest.fixture
def world(ledger: Ledger) -> World:
    graphs.PAID.clear()  # order ids repeat across the ledger parameters
    announce, queue = FlakyAnnounce(), InMemoryEntryQueue()
    now = [T0]
    clock = lambda: now[0]  # noqa: E731
    router = Router(
        LangGraphAdapter(graphs.build_busy_graph(InMemorySaver())),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=announce,
        clock=clock,
    )
    sweep = Sweep(ledger, queue, announce=announce, clock=clock, limit=1000)
    return World(ledger, router, sweep, queue, announce, now)


def _keys(question_id: str, *steps: str) -> list[str]:
    """The dedupe keys of `steps` (`"created"`, `"voted:2"`, ...): `wait.<type>:<question_id>[:<n>]`."""
    keys = []
    for step in steps:
        kind, _, count = step.partition(":")
        keys.append(f"wait.{kind}:{question_id}" + (f":{count}" if count else ""))
    return keys


def _owes_nothing(world: World, thread_id: str, question_id: str) -> None:
    row = world.ledger.get(thread_id, question_id)
    assert row is not None
    assert (row.notices, row.due_at) == ((), None), f"told everything, the row owes nothing and is not due: {row!r}"


def test_a_question_lived_through_while_the_announcer_was_down_is_told_whole_and_in_order(world: World) -> None:
    # GIVEN the announcer down before the question is asked
    world.announce.down = True
    thread_id, question_id = world.ask("outage-1")

    # WHEN its reminder and its escalation step fall due, two people vote and the second vote decides it, all while
    # the announcer is down
    world.sweep_at(timedelta(hours=1, minutes=1))
    world.sweep_at(timedelta(hours=2, minutes=1))
    world.at(timedelta(hours=3))
    assert world.vote(thread_id, question_id, "alice@example.com").kind is OutcomeKind.VOTED
    assert world.vote(thread_id, question_id, "bob@example.com").kind is OutcomeKind.APPLIED
    assert world.delivered(question_id) == []
    assert world.sweep_at(timedelta(hours=3, minutes=1)).told == ()  # still down: nothing told, nothing lost

    # ... and the announcer then recovers
    world.announce.down = False
    report = world.sweep_at(timedelta(hours=3, minutes=2))

    # THEN every transition's envelope went out once, in the order the question lived it, each vote under its key
    assert report.told == (question_id,)
    assert world.delivered(question_id) == _keys(
        question_id, "created", "reminder:1", "escalated:1", "voted:1", "voted:2", "answered", "resumed"
    )
    _owes_nothing(world, thread_id, question_id)
    assert world.sweep_at(timedelta(hours=3, minutes=3)).told == ()
    assert graphs.PAID == ["outage-1"]


def test_a_decision_made_after_the_announcer_recovered_waits_for_the_question_s_wait_created(world: World) -> None:
    # GIVEN a question whose wait.created failed, and the announcer back before anyone answers
    world.announce.down = True
    thread_id, question_id = world.ask("outage-2")
    world.announce.down = False

    # WHEN two people vote and decide it before the sweep re-announces the question
    world.at(timedelta(seconds=30))
    world.vote(thread_id, question_id, "alice@example.com")
    assert world.vote(thread_id, question_id, "bob@example.com").kind is OutcomeKind.APPLIED

    # THEN nothing of the question went out before its wait.created (a channel would post live buttons last) ...
    assert world.delivered(question_id) == []

    # ... and the sweep's next run tells all of it, wait.created first
    report = world.sweep_at(timedelta(minutes=2))
    assert report.told == (question_id,)
    assert world.delivered(question_id) == _keys(question_id, "created", "voted:1", "voted:2", "answered", "resumed")
    _owes_nothing(world, thread_id, question_id)


def test_each_vote_owed_while_the_announcer_was_down_is_told_under_its_own_key(world: World) -> None:
    # GIVEN an announced question, and the announcer down while both votes are cast (the second decides)
    thread_id, question_id = world.ask("outage-3")
    world.announce.down = True
    world.at(timedelta(minutes=5))
    world.vote(thread_id, question_id, "alice@example.com")
    world.at(timedelta(minutes=6))
    world.vote(thread_id, question_id, "bob@example.com")

    # WHEN the announcer recovers and the sweep runs
    world.announce.down = False
    world.sweep_at(timedelta(minutes=7))

    # THEN both votes were told, each as it stood: one approval of two, then two of two
    assert world.delivered(question_id) == _keys(question_id, "created", "voted:1", "voted:2", "answered", "resumed")
    voted = [e for _, e in world.announce.events if e.type == "wait.voted"]
    assert [(v.progress or {})["approvals"] for v in voted] == [1, 2]
    assert [len((v.progress or {})["votes"]) for v in voted] == [1, 2]
    assert [(v.progress or {})["remaining"] for v in voted] == [1, 0]
    _owes_nothing(world, thread_id, question_id)


def test_a_reminder_that_failed_before_the_question_was_decided_is_told_before_the_decision(world: World) -> None:
    # GIVEN an announced question whose reminder fell due while the announcer was down
    thread_id, question_id = world.ask("outage-4")
    world.announce.down = True
    assert world.sweep_at(timedelta(hours=1, minutes=1)).failed_questions == (question_id,)

    # WHEN it is decided before the announcer recovers, and the sweep runs once it has
    world.at(timedelta(hours=1, minutes=30))
    world.vote(thread_id, question_id, "alice@example.com")
    world.vote(thread_id, question_id, "bob@example.com")
    world.announce.down = False
    world.sweep_at(timedelta(hours=1, minutes=31))

    # THEN the reminder went out, after wait.created and before the votes and the decision
    assert world.delivered(question_id) == _keys(
        question_id, "created", "reminder:1", "voted:1", "voted:2", "answered", "resumed"
    )
    _owes_nothing(world, thread_id, question_id)


def test_a_question_that_owes_envelopes_still_expires_at_its_deadline(world: World) -> None:
    # GIVEN a question that owes a vote's envelope because the announcer is down
    thread_id, question_id = world.ask("outage-5")
    world.announce.down = True
    world.at(timedelta(minutes=5))
    world.vote(thread_id, question_id, "alice@example.com")

    # WHEN its deadline passes with the announcer still down
    report = world.sweep_at(timedelta(days=1, seconds=1))
    world.deliver_queue()

    # THEN the sweep sent its default all the same, and the question expired (the agent was told)
    assert report.expired_sent == (question_id,)
    row = world.ledger.get(thread_id, question_id)
    assert row is not None
    assert (row.status, row.outcome) == (QuestionStatus.RESUMED, QuestionStatus.EXPIRED)

    # ... and once the announcer is back, what it owes goes out in order
    world.announce.down = False
    world.sweep_at(timedelta(days=1, minutes=2))
    assert world.delivered(question_id) == _keys(question_id, "created", "voted:1", "expired", "resumed")


def test_a_door_s_decision_of_a_question_owing_its_wait_created_is_told_after_it(world: World) -> None:
    # GIVEN a question whose wait.created failed, and the announcer back
    world.announce.down = True
    _, question_id = world.ask("outage-6")
    world.announce.down = False

    # WHEN two people vote through the answer API (the second decides) and the router carries the decision on
    world.at(timedelta(seconds=30))
    service = AnswerService(world.ledger, world.queue, clock=lambda: world.now[0])
    for name in ("alice", "bob"):
        person = answerer_for("api", person=f"{name}@example.com", subject=f"https://issuer#{name}")
        service.answer(question_id, {"action": "approve"}, person, answer_id=f"api:{name}")
    world.deliver_queue()

    # THEN nothing went out before the wait.created, and the sweep tells it all in order: the first vote before
    # the second, although the router applied the deciding vote first
    assert world.delivered(question_id) == []
    world.sweep_at(timedelta(minutes=2))
    assert world.delivered(question_id) == _keys(question_id, "created", "voted:1", "voted:2", "answered", "resumed")
    assert graphs.PAID == ["outage-6"]


def test_an_announcer_back_from_an_outage_gets_what_it_missed_in_order_and_never_holds_up_the_others(
    world: World,
) -> None:
    # GIVEN two announcers, one of them down when the question is asked and decided
    steady = InMemoryAnnounce()
    world.router.announcers = (world.announce, steady)
    world.sweep.announcers = (world.announce, steady)
    world.announce.down = True
    thread_id, question_id = world.ask("outage-7")
    world.at(timedelta(minutes=10))
    world.vote(thread_id, question_id, "alice@example.com")
    world.vote(thread_id, question_id, "bob@example.com")

    # WHEN the sweep runs while it is still down
    world.sweep_at(timedelta(minutes=11))

    # THEN the working announcer has every envelope, in order (its wait.created twice: a repeat it drops by key)
    everything = _keys(question_id, "created", "voted:1", "voted:2", "answered", "resumed")
    assert world.delivered(question_id, steady) == [everything[0], *everything]
    assert world.delivered(question_id) == []

    # WHEN it is back and the sweep runs again
    world.announce.down = False
    world.sweep_at(timedelta(minutes=12))

    # THEN it got what it missed, in order, and the row owes nothing more
    assert world.delivered(question_id) == everything
    _owes_nothing(world, thread_id, question_id)


def test_a_name_owed_from_before_counts_were_kept_or_unknown_is_told_without_holding_up_the_rest(world: World) -> None:
    # GIVEN a decided question whose row owes a bare `voted` (owed before each vote had its own name), a name no
    # transition has (written by a newer version), and its decision
    thread_id, question_id = world.ask("legacy-1")
    world.announce.down = True
    world.at(timedelta(minutes=5))
    world.vote(thread_id, question_id, "alice@example.com")
    world.vote(thread_id, question_id, "bob@example.com")
    world.announce.down = False
    ledger, row = world.ledger, world.ledger.get(thread_id, question_id)
    assert isinstance(ledger, FollowUpLedger)
    assert row is not None
    ledger.told(thread_id, question_id, ["voted:1", "voted:2"], due_at=row.due_at)
    ledger.owe_notices(thread_id, question_id, ["voted", "someday"], now=world.now[0])

    # WHEN the sweep runs
    report = world.sweep_at(timedelta(minutes=6))

    # THEN the bare `voted` went out as the last vote (under its count), before the decision; the unknown name told
    # nothing, and the row owes nothing
    assert report.told == (question_id,)
    assert world.delivered(question_id) == _keys(question_id, "created", "voted:2", "answered", "resumed")
    _owes_nothing(world, thread_id, question_id)
