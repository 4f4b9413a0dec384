"""Reminders, escalation and quorum, end to end through the router and the sweep with an injected clock.

Each test runs twice: on the in-memory ledger and on `DynamoDbLedger` over the embedded emulator (moto),
so the due index, the compare-and-set claims and the votes behave the same on both. The agent is a real
LangGraph graph (`tests.agents.followup_graphs`); the sweep's deadline answers go through an in-memory entry
queue and are delivered to the router as SQS would.
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
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import InMemoryDeadLetter, InMemoryEntryQueue, OutcomeKind, RefusalReason, Router, Sweep
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger, Ledger

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
_threads = itertools.count()


@dataclass
class World:
    """One agent, its router and its sweep, sharing a ledger, announcers and a clock the test moves."""

    ledger: Ledger
    router: Router
    sweep: Sweep
    queue: InMemoryEntryQueue
    announce: InMemoryAnnounce
    now: list[datetime] = field(default_factory=lambda: [T0])

    def at(self, offset: timedelta) -> None:
        self.now[0] = T0 + offset

    def ask(self, order_id: str, amount: int = 900) -> tuple[str, str]:
        thread_id = f"followups-{next(_threads)}-{order_id}"
        outcome = self.router.handle(
            json.dumps({"thread_id": thread_id, "input": {"order_id": order_id, "amount": amount}})
        )
        (question_id,) = outcome.asked
        return thread_id, question_id

    def answer(
        self,
        thread_id: str,
        question_id: str,
        action: str,
        by: str,
        *,
        groups: tuple[str, ...] = (),
        answer_id: str | None = None,
    ) -> Any:
        message = {
            "thread_id": thread_id,
            "question_id": question_id,
            "answer": {"action": action},
            "answered_by": by,
            "groups": list(groups),
            "answer_id": answer_id or f"{by}:{action}:{question_id}",
        }
        return self.router.handle(json.dumps(message))

    def deliver_queue(self) -> list[Any]:
        """Hand what the sweep queued (deadline answers) to the router, as SQS would."""
        outcomes = [self.router.handle(json.dumps(m), deduplication_id=d) for m, _, d in self.queue.messages]
        self.queue.messages.clear()
        return outcomes

    def types(self, question_id: str) -> list[str]:
        return [e.type for _, e in self.announce.events if e.question_id == question_id]

    def envelopes(self, question_id: str, kind: str) -> list[Any]:
        return [e for _, e in self.announce.events if e.question_id == question_id and e.type == kind]


@pytest.fixture(params=["memory", "emulator"])
def ledger(request: pytest.FixtureRequest) -> Iterator[Ledger]:
    if request.param == "memory":
        yield InMemoryLedger()
        return
    import boto3

    # A table of its own: the sweep reads every due question in the table, and the test owns what it reads.
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=request.getfixturevalue("moto_server"))
    name = f"followups-{request.getfixturevalue('unique')}"
    create_question_table(client, name)
    yield DynamoDbLedger(name, client=client)
    client.delete_table(TableName=name)


def _world(ledger: Ledger, build: Any) -> World:
    graphs.PAID.clear()  # order ids repeat across the ledger parameters
    announce, queue = InMemoryAnnounce(), InMemoryEntryQueue()
    now = [T0]
    clock = lambda: now[0]  # noqa: E731
    router = Router(
        LangGraphAdapter(build(InMemorySaver())),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=announce,
        clock=clock,
    )
    sweep = Sweep(ledger, queue, announce=announce, clock=clock, limit=1000)
    return World(ledger, router, sweep, queue, announce, now)


@pytest.fixture
def escalating(ledger: Ledger) -> World:
    return _world(ledger, graphs.build_escalating_graph)


@pytest.fixture
def quorum(ledger: Ledger) -> World:
    return _world(ledger, graphs.build_quorum_graph)


def _sweep_at(world: World, offset: timedelta) -> Any:
    world.at(offset)
    return world.sweep.run()


# -- reminders ---------------------------------------------------------------------------------------------


def test_reminders_go_out_at_their_times_and_once_each(escalating: World) -> None:
    # GIVEN a question asked at T0 with reminders after PT4H and P1D before its P3D deadline
    thread_id, question_id = escalating.ask("r-1")

    # WHEN the sweep runs before, at, and after each reminder's time
    runs = {hours: _sweep_at(escalating, timedelta(hours=hours)) for hours in (1, 3.9, 4, 5, 47.9, 48, 49, 50)}

    # THEN a reminder went out at 4 h and at 48 h (P3D - P1D), each once, counted 1 of 2 and 2 of 2
    assert [h for h, report in runs.items() if question_id in report.reminded] == [4, 48]
    reminders = escalating.envelopes(question_id, "wait.reminder")
    assert [dict(e.progress) for e in reminders] == [{"reminder": 1, "of": 2}, {"reminder": 2, "of": 2}]
    assert [e.dedupe_key for e in reminders] == [f"wait.reminder:{question_id}:1", f"wait.reminder:{question_id}:2"]
    record = escalating.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.progress.reminders == 2
    assert record.progress.notice is None


def test_reminders_stop_once_the_question_is_decided(escalating: World) -> None:
    # GIVEN a question reminded once, then approved by finance
    thread_id, question_id = escalating.ask("r-2")
    _sweep_at(escalating, timedelta(hours=4))
    outcome = escalating.answer(thread_id, question_id, "approve", "fin@example.com", groups=("finance",))
    assert outcome.kind is OutcomeKind.APPLIED

    # WHEN the sweep runs past the second reminder's time and the deadline
    reports = [_sweep_at(escalating, timedelta(hours=h)) for h in (48, 49, 80)]

    # THEN no further reminder, escalation or default: the decided question left the due index
    assert escalating.types(question_id).count("wait.reminder") == 1
    assert "wait.escalated" not in escalating.types(question_id)
    assert all(question_id not in r.reminded + r.escalated + r.expired_sent for r in reports)
    due = escalating.ledger.due(T0 + timedelta(days=30), limit=10_000)
    assert question_id not in {r.question_id for r in due}


def test_reminders_missed_while_the_sweep_was_down_are_sent_once_as_the_latest(escalating: World) -> None:
    # GIVEN a question whose sweep did not run until both reminder times had passed
    _, question_id = escalating.ask("r-3")

    # WHEN it runs at 49 h
    report = _sweep_at(escalating, timedelta(hours=49))

    # THEN one reminder goes out, numbered 2 of 2, after the escalation step that was due too
    assert question_id in report.escalated
    assert question_id in report.reminded
    reminders = escalating.envelopes(question_id, "wait.reminder")
    assert [dict(e.progress) for e in reminders] == [{"reminder": 2, "of": 2}]


# -- escalation --------------------------------------------------------------------------------------------


def test_a_manager_is_refused_before_the_escalation_step_and_accepted_after_it(escalating: World) -> None:
    # GIVEN a question only finance may answer, escalating to finance-managers after P2D
    thread_id, question_id = escalating.ask("e-1")

    # WHEN a finance manager answers after one day
    escalating.at(timedelta(days=1))
    early = escalating.answer(
        thread_id, question_id, "approve", "boss@example.com", groups=("finance-managers",), answer_id="early"
    )

    # THEN it is refused and the question stays open
    assert (early.kind, early.reason) == (OutcomeKind.REFUSED, RefusalReason.ANSWERER_NOT_ALLOWED)
    assert escalating.ledger.get(thread_id, question_id).status is QuestionStatus.OPEN  # type: ignore[union-attr]

    # WHEN the sweep applies the step after two days, and the manager answers again
    report = _sweep_at(escalating, timedelta(days=2, minutes=1))
    late = escalating.answer(
        thread_id, question_id, "approve", "boss@example.com", groups=("finance-managers",), answer_id="late"
    )

    # THEN the step was announced to the new audience, and the manager's answer decided the question
    assert question_id in report.escalated
    (escalated,) = escalating.envelopes(question_id, "wait.escalated")
    assert escalated.tags["approver_group"] == "finance-managers"
    assert escalated.rules["answerers"] == {"groups": ["finance", "finance-managers"], "principals": []}
    assert dict(escalated.progress) == {"escalation": 1, "of": 1, "after": "P2D"}
    assert late.kind is OutcomeKind.APPLIED
    record = escalating.ledger.get(thread_id, question_id)
    assert record is not None
    assert (record.status, record.answered_by) == (QuestionStatus.RESUMED, "boss@example.com")
    assert graphs.PAID.count("e-1") == 1


def test_the_earlier_audience_keeps_its_right_to_answer_after_an_escalation(escalating: World) -> None:
    thread_id, question_id = escalating.ask("e-2")
    _sweep_at(escalating, timedelta(days=2, minutes=1))
    outcome = escalating.answer(thread_id, question_id, "reject", "fin@example.com", groups=("finance",))
    assert outcome.kind is OutcomeKind.APPLIED


def test_an_escalation_that_races_an_answer_never_reopens_nor_announces_the_question(escalating: World) -> None:
    # GIVEN a question the sweep read as due for its escalation step
    thread_id, question_id = escalating.ask("e-3")
    escalating.at(timedelta(days=2, minutes=1))
    (due,) = [r for r in escalating.ledger.due(escalating.now[0], limit=10_000) if r.question_id == question_id]

    # WHEN finance answers before the sweep acts on what it read
    escalating.answer(thread_id, question_id, "approve", "fin@example.com", groups=("finance",))
    original_due = escalating.ledger.due
    escalating.ledger.due = lambda now, *, limit: [due]  # type: ignore[method-assign]
    try:
        report = escalating.sweep.run()
    finally:
        escalating.ledger.due = original_due  # type: ignore[method-assign]

    # THEN its claim lost: nothing announced, the question stays resumed with the person's answer
    assert question_id not in report.escalated
    assert question_id not in report.failed_questions
    assert "wait.escalated" not in escalating.types(question_id)
    record = escalating.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.status is QuestionStatus.RESUMED
    assert record.progress.escalations == 0


def test_the_deadline_still_applies_the_default_recorded_expired(escalating: World) -> None:
    # GIVEN a reminded and escalated question nobody answers
    thread_id, question_id = escalating.ask("d-1")
    for hours in (4, 48, 49):
        _sweep_at(escalating, timedelta(hours=hours))

    # WHEN the deadline passes and the sweep's default reaches the router
    report = _sweep_at(escalating, timedelta(days=3, seconds=1))
    outcomes = escalating.deliver_queue()

    # THEN the default was applied once, recorded as expired, and the refund never ran
    assert report.expired_sent == (question_id,)
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    record = escalating.ledger.get(thread_id, question_id)
    assert record is not None
    assert (record.outcome, record.answer) == (QuestionStatus.EXPIRED, graphs.DEFAULT)
    assert "d-1" not in graphs.PAID
    later = _sweep_at(escalating, timedelta(days=4))
    assert question_id not in later.expired_sent + later.reminded


# -- quorum ------------------------------------------------------------------------------------------------


def test_a_two_person_quorum_needs_two_distinct_people(quorum: World) -> None:
    # GIVEN a refund two distinct approvers must approve
    thread_id, question_id = quorum.ask("q-1")

    # WHEN alice approves, alice approves again (a new message), then bob approves
    first = quorum.answer(thread_id, question_id, "approve", "alice@example.com", answer_id="alice-1")
    again = quorum.answer(thread_id, question_id, "approve", "alice@example.com", answer_id="alice-2")
    row_after_alice = quorum.ledger.get(thread_id, question_id)
    second = quorum.answer(thread_id, question_id, "approve", "bob@example.com", answer_id="bob-1")

    # THEN alice's vote was recorded and announced, her repeat changed nothing, and bob's decided it
    assert first.kind is OutcomeKind.VOTED
    assert (again.kind, again.reason) == (OutcomeKind.REFUSED, RefusalReason.ALREADY_VOTED)
    assert row_after_alice is not None
    assert row_after_alice.status is QuestionStatus.OPEN
    assert [v.by for v in row_after_alice.progress.votes] == ["alice@example.com"]
    assert second.kind is OutcomeKind.APPLIED
    record = quorum.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.status is QuestionStatus.RESUMED
    voted = quorum.envelopes(question_id, "wait.voted")
    assert [(e.progress["approvals"], e.progress["needed"]) for e in voted] == [(1, 2), (2, 2)]
    assert [e.dedupe_key for e in voted] == [f"wait.voted:{question_id}:1", f"wait.voted:{question_id}:2"]

    # AND the agent received one answer that lists both votes
    assert graphs.PAID.count("q-1") == 1
    votes = record.answer["votes"]
    assert [(v["by"], v["action"]) for v in votes] == [("alice@example.com", "approve"), ("bob@example.com", "approve")]
    assert quorum.types(question_id).count("wait.answered") == 1


def test_a_redelivered_vote_changes_nothing_and_is_told_again(quorum: World) -> None:
    thread_id, question_id = quorum.ask("q-2")
    quorum.answer(thread_id, question_id, "approve", "alice@example.com", answer_id="alice-1")
    redelivered = quorum.answer(thread_id, question_id, "approve", "alice@example.com", answer_id="alice-1")
    assert redelivered.kind is OutcomeKind.VOTED
    record = quorum.ledger.get(thread_id, question_id)
    assert record is not None
    assert len(record.progress.votes) == 1
    assert record.status is QuestionStatus.OPEN
    assert {e.dedupe_key for e in quorum.envelopes(question_id, "wait.voted")} == {f"wait.voted:{question_id}:1"}


def test_a_veto_decides_at_once(quorum: World) -> None:
    # GIVEN one approval so far
    thread_id, question_id = quorum.ask("q-3")
    quorum.answer(thread_id, question_id, "approve", "alice@example.com")

    # WHEN carol rejects
    veto = quorum.answer(thread_id, question_id, "reject", "carol@example.com")

    # THEN the question is decided by the veto at once, the refund never ran, and a later vote is refused
    assert veto.kind is OutcomeKind.APPLIED
    record = quorum.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.answer["action"] == "reject"
    assert [v["by"] for v in record.answer["votes"]] == [
        "alice@example.com",
        "carol@example.com",
    ]
    assert "q-3" not in graphs.PAID
    late = quorum.answer(thread_id, question_id, "approve", "bob@example.com")
    assert (late.kind, late.reason) == (OutcomeKind.REFUSED, RefusalReason.ALREADY_DECIDED)


def test_a_quorum_question_reaches_its_deadline_with_too_few_votes(quorum: World) -> None:
    thread_id, question_id = quorum.ask("q-4")
    quorum.at(timedelta(hours=1))
    quorum.answer(thread_id, question_id, "approve", "alice@example.com")
    reminded = _sweep_at(quorum, timedelta(days=1, minutes=1))
    report = _sweep_at(quorum, timedelta(days=3, seconds=1))
    quorum.deliver_queue()
    assert question_id in reminded.reminded
    assert report.expired_sent == (question_id,)
    record = quorum.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.outcome is QuestionStatus.EXPIRED
    assert "q-4" not in graphs.PAID


# -- votes through the answer API ---------------------------------------------------------------------------


def _api_user(name: str) -> Any:
    from agent_wait.engine.checks import Answerer

    return Answerer(answered_by=f"{name}@example.com", via="api", sender=f"https://issuer#{name}")


def test_votes_through_the_answer_api_are_counted_told_and_decide_once(quorum: World) -> None:
    from agent_wait.engine import AnswerService, VerdictKind

    # GIVEN a quorum question and the answer API's service
    _, question_id = quorum.ask("api-1")
    service = AnswerService(quorum.ledger, quorum.queue, clock=lambda: quorum.now[0])

    # WHEN alice votes, votes again, and bob votes, through the API
    first = service.answer(question_id, {"action": "approve"}, _api_user("alice"), answer_id="api:alice")
    again = service.answer(question_id, {"action": "approve"}, _api_user("alice"), answer_id="api:alice-2")
    second = service.answer(question_id, {"action": "approve"}, _api_user("bob"), answer_id="api:bob")

    # THEN alice's vote was recorded, her second refused, and bob's decided the question at once
    assert (first.verdict.kind, first.handed_over) == (VerdictKind.VOTED, True)
    assert (again.verdict.kind, again.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.ALREADY_VOTED)
    assert second.verdict.kind is VerdictKind.DECIDED
    assert second.verdict.record is not None
    assert [v["by"] for v in second.verdict.record.answer["votes"]] == ["alice@example.com", "bob@example.com"]

    # WHEN the router gets what the API queued (alice's vote to tell, bob's decision to resume)
    outcomes = quorum.deliver_queue()

    # THEN the decision reached the agent first; alice's vote was then told as it stood when she cast it (one
    # approval, one to go), and bob's own hand-over found his decision applied. Each vote was counted and told
    # once, the decision applied once, and the refund paid once
    assert [(o.kind, o.reason) for o in outcomes] == [
        (OutcomeKind.VOTED, None),
        (OutcomeKind.REFUSED, RefusalReason.DUPLICATE),
    ]
    assert quorum.router.metrics.total("VotesRecorded") == 2  # type: ignore[attr-defined]
    told = quorum.envelopes(question_id, "wait.voted")
    assert sorted((e.progress["approvals"], e.progress["remaining"]) for e in told) == [(1, 1), (2, 0)]
    assert quorum.types(question_id).count("wait.answered") == 1
    assert graphs.PAID.count("api-1") == 1


def test_an_api_vote_is_told_by_the_router_while_the_question_is_still_open(quorum: World) -> None:
    from agent_wait.engine import AnswerService, VerdictKind

    thread_id, question_id = quorum.ask("api-2")
    service = AnswerService(quorum.ledger, quorum.queue, clock=lambda: quorum.now[0])
    assert service.answer(question_id, {"action": "approve"}, _api_user("alice"), answer_id="api:a").verdict.kind is (
        VerdictKind.VOTED
    )
    (outcome,) = quorum.deliver_queue()
    assert outcome.kind is OutcomeKind.VOTED
    assert quorum.router.metrics.total("VotesRecorded") == 1  # type: ignore[attr-defined]
    (told,) = quorum.envelopes(question_id, "wait.voted")
    assert (told.progress["approvals"], told.progress["remaining"]) == (1, 1)
    record = quorum.ledger.get(thread_id, question_id)
    assert record is not None
    assert len(record.progress.votes) == 1


def test_racing_votes_decide_the_question_once_with_exactly_the_votes_that_made_the_quorum(quorum: World) -> None:
    import threading

    from agent_wait.engine.votes import VoteStatus, cast_vote

    # GIVEN a two-person quorum question, and four approvers voting at the same moment
    thread_id, question_id = quorum.ask("race-1")
    opened = quorum.ledger.get(thread_id, question_id)
    assert opened is not None
    results: list[Any] = []
    barrier = threading.Barrier(4)

    def vote(name: str) -> None:
        barrier.wait()
        result = cast_vote(
            quorum.ledger, opened, {"action": "approve"}, _api_user(name), answer_id=f"api:{name}", now=T0
        )
        results.append(result)

    voters = [threading.Thread(target=vote, args=(name,)) for name in ("ann", "ben", "cat", "dan")]
    for voter in voters:
        voter.start()
    for voter in voters:
        voter.join()

    # THEN one vote decided it; the decision lists exactly two votes, and the row holds no vote after it
    statuses = sorted(r.status.value for r in results)
    assert statuses.count(VoteStatus.DECIDED.value) == 1
    assert statuses.count(VoteStatus.RECORDED.value) == 1
    assert statuses.count(VoteStatus.CLOSED.value) == 2
    record = quorum.ledger.get(thread_id, question_id)
    assert record is not None
    assert record.status is QuestionStatus.ANSWERED
    assert len(record.answer["votes"]) == 2
    assert [v.by for v in record.progress.votes] == [v["by"] for v in record.answer["votes"]]


def test_a_reminder_whose_announcement_failed_is_announced_by_the_next_run_and_only_once(escalating: World) -> None:
    from agent_wait.contract.announcer import BaseAnnounce
    from agent_wait.contract.envelope import Transition, WaitEnvelope

    class DownOnce(BaseAnnounce):
        name = "down-once"

        def __init__(self) -> None:
            super().__init__()
            self.down = True
            self.delivered: list[str] = []

        def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
            if self.down:
                self.down = False
                raise ConnectionError("topic unreachable")
            self.delivered.append(envelope.dedupe_key)

    # GIVEN a question whose reminder falls due while the announcer is down
    thread_id, question_id = escalating.ask("f-1")
    flaky = DownOnce()
    escalating.sweep.announcers = (flaky,)

    # WHEN the sweep runs at the reminder's time, and again a minute later
    first = _sweep_at(escalating, timedelta(hours=4))
    claimed = escalating.ledger.get(thread_id, question_id)
    second = _sweep_at(escalating, timedelta(hours=4, minutes=1))
    third = _sweep_at(escalating, timedelta(hours=4, minutes=2))

    # THEN the first run took the reminder and owed its envelope on the row, the second told it, the third had
    # nothing to do
    assert first.failed_questions == (question_id,)
    assert claimed is not None
    assert (claimed.progress.reminders, claimed.progress.notice, claimed.notices) == (1, None, ("reminder:1",))
    assert second.told == (question_id,)
    assert flaky.delivered == [f"wait.reminder:{question_id}:1"]
    assert question_id not in third.reminded + third.failed_questions
    record = escalating.ledger.get(thread_id, question_id)
    assert record is not None
    assert (record.progress.notice, record.notices) == (None, ())


def test_a_reminder_owed_keeps_the_row_due_where_it_was_until_told(escalating: World) -> None:
    from agent_wait.contract.announcer import BaseAnnounce
    from agent_wait.contract.envelope import Transition, WaitEnvelope

    class Down(BaseAnnounce):
        name = "down"

        def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
            raise ConnectionError("topic unreachable")

    # GIVEN a question due at its first reminder (PT4H), and an announcer that is down
    thread_id, question_id = escalating.ask("k-1")
    reminder_at = "2026-09-11T13:00:00Z"
    asked = escalating.ledger.get(thread_id, question_id)
    assert asked is not None
    assert asked.due_at == reminder_at
    escalating.sweep.announcers = (Down(),)

    # WHEN the sweep claims the reminder at its time and cannot announce it
    run = _sweep_at(escalating, timedelta(hours=4, minutes=5))

    # THEN the reminder is owed and the row stays due at the reminder's time, so the next run finds it
    claimed = escalating.ledger.get(thread_id, question_id)
    assert run.failed_questions == (question_id,)
    assert claimed is not None
    assert (claimed.notices, claimed.due_at) == (("reminder:1",), reminder_at)
    assert question_id in [r.question_id for r in escalating.ledger.due(T0 + timedelta(hours=4, minutes=6), limit=100)]


def test_one_person_is_one_vote_whether_they_answer_signed_in_or_by_a_link_made_for_them(quorum: World) -> None:
    from agent_wait.engine import AnswerService, VerdictKind
    from agent_wait.engine.checks import Answerer

    # GIVEN alice voted through the API, signed in
    _, question_id = quorum.ask("who-1")
    service = AnswerService(quorum.ledger, quorum.queue, clock=lambda: quorum.now[0])
    assert service.answer(question_id, {"action": "approve"}, _api_user("alice"), answer_id="api:a").verdict.kind is (
        VerdictKind.VOTED
    )

    # WHEN she votes again with a signed link made for her
    by_link = Answerer(answered_by="alice@example.com", via="link", sender="link:k1")
    again = service.answer(question_id, {"action": "approve"}, by_link, answer_id="link:a")

    # THEN it is her second vote, refused; the question still needs another person
    assert (again.verdict.kind, again.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.ALREADY_VOTED)
    assert again.verdict.record is not None
    assert len(again.verdict.record.progress.votes) == 1
    assert again.verdict.record.status is QuestionStatus.OPEN


def test_the_sweep_reads_only_what_is_due_however_many_questions_are_open(moto_server: str, unique: str) -> None:
    import boto3

    from agent_wait import WaitPolicy
    from agent_wait.contract.envelope import Question, WaitEnvelope

    # GIVEN 60 open, announced questions with follow-ups on the emulator, 3 of them due
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"reads-{unique}"
    create_question_table(client, name)
    ledger = DynamoDbLedger(name, client=client)
    policy = WaitPolicy(timeout="P3D", reminders=["P1D"])
    for n in range(60):
        asked = T0 - (timedelta(days=1, minutes=n + 1) if n < 3 else timedelta(minutes=n))
        question = Question(f"t-{n}", f"q-{n}", {"function": "refund", "args": {"n": n}}, policy, asked_at=asked)
        opened = ledger.open(WaitEnvelope.create(question), now=asked).record
        ledger.mark_announced(f"t-{n}", f"q-{n}", due_at=opened.next_due(announced=True))
    queried: list[tuple[str, int]] = []
    client.meta.events.register(
        "provide-client-params.dynamodb.Query",
        lambda params, context, **_: context.__setitem__("index", params.get("IndexName", "")),
    )
    client.meta.events.register(
        "after-call.dynamodb.Query",
        lambda parsed, context, **_: queried.append((context.get("index", ""), len(parsed.get("Items", [])))),
    )
    read_by_key: list[int] = []
    client.meta.events.register(
        "after-call.dynamodb.BatchGetItem",
        lambda parsed, **_: read_by_key.append(sum(len(rows) for rows in parsed.get("Responses", {}).values())),
    )

    # WHEN the sweep runs at T0
    report = Sweep(ledger, InMemoryEntryQueue(), announce=[InMemoryAnnounce()], clock=lambda: T0).run()

    # THEN it read the 3 due keys and rows, never the 57 that are not due; and for the oldest open question at
    # most the oldest key of each shard and the one row it names
    assert sorted(report.reminded) == ["q-0", "q-1", "q-2"]
    assert report.due_read == 3
    assert sum(n for index, n in queried if index == "by_due_shard") == 3
    assert sum(n for index, n in queried if index == "open_by_age_shard") <= ledger.index_shards
    assert sum(n for index, n in queried if index == "by_status") == 0
    assert read_by_key == [3, 1]
    client.delete_table(TableName=name)
