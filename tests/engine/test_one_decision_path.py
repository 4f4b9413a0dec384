"""Every door decides through one path, and a person is told the truth: only `resumed` means the agent got it.

Each test drives the real router (a LangGraph refund graph on an in-memory checkpointer), the answer API's
routes (`create_app`, with a signed-in person's JWT claims) and the sweep over one in-memory ledger and entry
queue, the way the deployed functions share a table and a queue. Each checks the promise from the person's
side: an answer the API reported as won is one the agent received (the refund ran, the row says `resumed`),
and the ledger never says `resumed` for an answer the agent did not receive.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.followup_graphs as followup_graphs
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.api_events import Response, call

from agent_wait import InMemoryAnnounce
from agent_wait.contract.messages import group_id_for
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import (
    AnswerService,
    InMemoryDeadLetter,
    InMemoryEntryQueue,
    OutcomeKind,
    RecordingMetrics,
    Router,
    Sweep,
)
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.engine.senders import SenderPolicy
from agent_wait.host.api import ApiContext, create_app
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
ALICE = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com", "email_verified": "true"}
BOB = {"iss": "https://issuer.example.com", "sub": "u-bob", "email": "bob@example.com", "email_verified": "true"}
API_ROLE, ALICE_ROLE = "AROAAPIFUNCTION", "AROAALICE"


@dataclass
class World:
    """One ledger and entry queue shared by the router, the answer API and the sweep, as deployed."""

    graph: Any = graphs.build_graph
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)
    dead_letter: InMemoryDeadLetter = field(default_factory=InMemoryDeadLetter)
    now: datetime = T0

    def __post_init__(self) -> None:
        self.router = Router(
            LangGraphAdapter(self.graph(InMemorySaver())),
            self.ledger,
            dead_letter=self.dead_letter,
            clock=lambda: self.now,
            lease_wait=5.0,
            senders=SenderPolicy(trusted=frozenset({API_ROLE})),
        )
        service = AnswerService(self.ledger, self.queue, clock=lambda: self.now)
        self.app = create_app(lambda: ApiContext(ledger=self.ledger, service=service, clock=lambda: self.now))

    def start(self, thread_id: str, order_id: str, amount: int = 900, *, start_id: str | None = None) -> Any:
        body = {"thread_id": thread_id, "input": {"order_id": order_id, "amount": amount}}
        return self.router.handle(json.dumps({**body, "start_id": start_id or f"s-{order_id}"}))

    def api_answer(self, question_id: str, action: str, claims: dict[str, Any] = ALICE) -> Response:
        body = {"answer": {"action": action}}
        return call(self.app, "POST", f"/questions/{question_id}/answer", body, claims=claims)

    def queue_message(self, message: dict[str, Any], dedup: str) -> None:
        self.queue.send(message, group_id=group_id_for(message["thread_id"]), deduplication_id=dedup)

    def deliver(self) -> list[Any]:
        """Hand every queued message to the router, in order, as the trusted API and sweep sent them."""
        outcomes = []
        while self.queue.messages:
            message, _, dedup = self.queue.messages.pop(0)
            outcomes.append(self.router.handle(json.dumps(message), deduplication_id=dedup, sender=API_ROLE))
        return outcomes

    def sweep(self, minutes: int = 2) -> Any:
        return Sweep(self.ledger, self.queue, clock=lambda: self.now + timedelta(minutes=minutes)).run()

    def row(self, thread_id: str, question_id: str) -> Any:
        record = self.ledger.get(thread_id, question_id)
        assert record is not None
        return record


def assert_told_the_truth(world: World, reply: Response, thread_id: str, question_id: str, order_id: str) -> None:
    """An approval the API reported as won reached the agent; a `resumed` row is one the agent received."""
    row = world.row(thread_id, question_id)
    told_won = reply.status == 200 and reply.json()["result"] == "won"
    received = graphs.body_runs(order_id) == 1
    if told_won:
        assert received, f"the person was told their approval won, but the refund ran {graphs.body_runs(order_id)}x"
        assert row.status is QuestionStatus.RESUMED, f"told won, yet the row says {row.status}"
    if row.status is QuestionStatus.RESUMED:
        assert received, f"the row says resumed (answered_by={row.answered_by}) but the agent never received it"


def test_an_approval_through_the_api_on_a_failed_thread_is_refused_and_never_recorded_resumed() -> None:
    # GIVEN a refund parked on finance's question, then a new turn on its thread that fails
    world, thread_id = World(), "t-failed"
    (question_id,) = world.start(thread_id, "o-failed-1").asked
    graphs.FAIL_ORDERS.add("o-failed-2")
    try:
        failed = world.start(thread_id, "o-failed-2")
        assert (failed.kind, failed.reason) == (OutcomeKind.DEAD_LETTERED, "agent_failed")

        # WHEN a person approves the open question through the API
        reply = world.api_answer(question_id, "approve")

        # THEN they are told the thread is failed, and nothing was decided or handed over
        assert reply.status == 409, reply.body
        assert reply.json()["type"].endswith("thread_failed")
        assert world.row(thread_id, question_id).status is QuestionStatus.OPEN
        assert world.queue.messages == []
    finally:
        graphs.FAIL_ORDERS.discard("o-failed-2")

    # AND after the operator's retry and the sweep, the ledger still never says resumed for it
    world.queue_message({"thread_id": thread_id, "retry_id": "r-1"}, "retry-1")
    world.deliver()
    world.sweep()
    world.deliver()
    assert_told_the_truth(world, reply, thread_id, question_id, "o-failed-1")


def test_an_approval_decided_while_a_new_turn_waits_in_the_queue_reaches_the_agent_before_that_turn() -> None:
    # GIVEN a refund parked on its question, and a new turn of the thread already queued
    world, thread_id = World(), "t-race"
    (question_id,) = world.start(thread_id, "o-race-1").asked
    turn = {"thread_id": thread_id, "input": {"order_id": "o-race-2", "amount": 100}, "start_id": "s-o-race-2"}
    world.queue_message(turn, "s-o-race-2")

    # WHEN a person approves through the API, and the router then takes the queue in order
    reply = world.api_answer(question_id, "approve")
    world.deliver()
    world.sweep()
    world.deliver()

    # THEN what they were told is what happened
    assert reply.status in (200, 409), reply.body
    assert_told_the_truth(world, reply, thread_id, question_id, "o-race-1")


@pytest.mark.parametrize("round_", range(10))
def test_a_new_turn_racing_an_api_approval_never_leaves_a_person_told_a_lie(round_: int) -> None:
    # GIVEN a refund parked on its question
    world, thread_id = World(), f"t-racing-{round_}"
    order_id = f"o-racing-{round_}"
    (question_id,) = world.start(thread_id, order_id).asked
    replies: list[Response] = []

    # WHEN a new turn runs on the thread while a person approves the question through the API
    turn = threading.Thread(target=world.start, args=(thread_id, f"{order_id}-next", 100))
    approve = threading.Thread(target=lambda: replies.append(world.api_answer(question_id, "approve")))
    for worker in (turn, approve) if round_ % 2 else (approve, turn):
        worker.start()
    turn.join()
    approve.join()
    world.deliver()
    world.sweep()
    world.deliver()

    # THEN what they were told is what happened
    assert_told_the_truth(world, replies[0], thread_id, question_id, order_id)


def test_one_person_cannot_meet_a_two_person_quorum_through_the_api_and_their_own_role_on_the_queue() -> None:
    # GIVEN a refund that needs two approvers
    world, thread_id = World(graph=followup_graphs.build_quorum_graph), "t-quorum"
    (question_id,) = world.start(thread_id, "o-quorum").asked

    # WHEN alice approves through the API, and again through her own IAM role on the entry queue
    assert world.api_answer(question_id, "approve").status == 202
    world.deliver()
    by_role = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}
    outcome = world.router.handle(
        json.dumps({**by_role, "answered_by": "alice@example.com", "answer_id": "alice-role"}),
        sender=f"{ALICE_ROLE}:alice",
    )

    # THEN her second vote does not count: the question still waits for a second person, and nothing was paid
    assert outcome.kind is OutcomeKind.REFUSED, outcome
    row = world.row(thread_id, question_id)
    assert row.status is QuestionStatus.OPEN
    assert len(row.progress.votes) == 1
    assert "o-quorum" not in followup_graphs.PAID
    # AND bob's vote through the API completes it
    assert world.api_answer(question_id, "approve", BOB).status == 200
    world.deliver()
    assert world.row(thread_id, question_id).status is QuestionStatus.RESUMED
    assert followup_graphs.PAID.count("o-quorum") == 1


def test_a_vote_handed_over_after_a_later_vote_decided_is_still_announced_and_counted() -> None:
    # GIVEN a refund that needs two approvers, and a router that announces and counts
    world, thread_id = World(graph=followup_graphs.build_quorum_graph), "t-quorum-late"
    announce, metrics = InMemoryAnnounce(), RecordingMetrics()
    world.router.announcers, world.router.metrics = (announce,), metrics
    (question_id,) = world.start(thread_id, "o-quorum-late").asked

    # WHEN alice and then bob approve through the API before the router has handed over alice's vote
    assert world.api_answer(question_id, "approve").status == 202
    assert world.api_answer(question_id, "approve", BOB).status == 200
    outcomes = world.deliver()

    # THEN alice's delivery first carries bob's decision over to the agent (the thread's hand-over), then tells her
    # vote as it stood (one vote so far), and bob's own message finds his decision applied
    assert [(o.kind, o.reason) for o in outcomes] == [(OutcomeKind.VOTED, None), (OutcomeKind.REFUSED, "duplicate")]
    voted = [e for e in announce.of("voted") if e.question_id == question_id]
    assert sorted([v["by"] for v in (e.progress or {})["votes"]] for e in voted) == [
        ["alice@example.com"],
        ["alice@example.com", "bob@example.com"],
    ]
    assert sorted(e.dedupe_key for e in voted) == [f"wait.voted:{question_id}:1", f"wait.voted:{question_id}:2"]
    assert metrics.total(METRIC_NAMES["votes"]) == 2
    assert world.row(thread_id, question_id).status is QuestionStatus.RESUMED
    assert followup_graphs.PAID.count("o-quorum-late") == 1


def test_the_sweep_never_hands_a_decision_over_into_a_failed_thread() -> None:
    # GIVEN a question decided through the API whose hand-over never reached the queue, on a thread since failed
    world, thread_id = World(), "t-handover"
    (question_id,) = world.start(thread_id, "o-handover-1").asked
    reply = world.api_answer(question_id, "approve")
    world.queue.messages.clear()  # the hand-over was lost
    graphs.FAIL_ORDERS.add("o-handover-2")
    try:
        world.start(thread_id, "o-handover-2")
    finally:
        graphs.FAIL_ORDERS.discard("o-handover-2")
    dead_before = len(world.dead_letter.records)

    # WHEN the sweep runs, twice
    handed = [world.sweep(minutes).handed_over for minutes in (2, 3)]
    outcomes = world.deliver()

    # THEN nothing was sent into the failed thread, and what the person was told is what happened
    failed = world.ledger.thread_failure(thread_id) is not None
    if failed:
        assert handed == [(), ()], f"the sweep re-sent {handed} into a failed thread"
    assert [o for o in outcomes if o.reason == "thread_failed"] == []
    assert len(world.dead_letter.records) == dead_before
    assert_told_the_truth(world, reply, thread_id, question_id, "o-handover-1")


def test_an_answer_through_the_api_while_the_agent_runs_on_the_thread_is_refused_busy_and_decides_nothing() -> None:
    # GIVEN a refund parked on its question, and a delivery of the router holding the thread (a run in progress)
    world, thread_id = World(), "t-busy"
    (question_id,) = world.start(thread_id, "o-busy").asked
    holding = world.ledger.acquire_lease(thread_id, "a-run", now=world.now, seconds=60)
    assert holding is not None
    metrics = RecordingMetrics()
    service = AnswerService(world.ledger, world.queue, clock=lambda: world.now, lease_wait=0.1, metrics=metrics)
    world.app = create_app(lambda: ApiContext(ledger=world.ledger, service=service, clock=lambda: world.now))

    # WHEN a person approves through the API
    reply = world.api_answer(question_id, "approve")

    # THEN they are told to try again shortly, and nothing was decided or handed over
    assert reply.status == 409, reply.body
    assert reply.json()["reason"] == "thread_busy"
    assert reply.headers["retry-after"] == "5"
    assert world.row(thread_id, question_id).status is QuestionStatus.OPEN
    assert world.queue.messages == []
    # AND the refusal is counted by its reason, as the router's are, for the operator's dashboard
    assert metrics.counts[("AnswersRefused", "thread_busy")] == 1
    assert metrics.total("ThreadBusy") == 1

    # AND once the run let go, the same approval wins and reaches the agent
    world.ledger.release_lease(thread_id, "a-run")
    again = world.api_answer(question_id, "approve")
    world.deliver()
    assert again.status == 200
    assert_told_the_truth(world, again, thread_id, question_id, "o-busy")


class _SlackDirectory:
    """The two Slack Web API reads the Slack door makes, answered as Slack would for one user."""

    def users_info(self, user: str) -> dict[str, Any]:
        return {"ok": True, "user": {"id": user, "profile": {"email": "eve@example.com"}}}

    def usergroups_users_list(self, usergroup: str) -> dict[str, Any]:
        return {"ok": True, "users": []}


def _slack_click(question_id: str, *, secret: str, now: datetime) -> tuple[str, dict[str, str]]:
    """A signed `block_actions` body for the Approve button of `question_id`, as Slack sends it."""
    import hashlib
    import hmac
    import urllib.parse

    action = {"action_id": "agent_wait:answer:approve", "value": question_id, "action_ts": "1.0", "type": "button"}
    payload = {"type": "block_actions", "user": {"id": "U0EVE", "team_id": "T0TEAM"}, "actions": [action]}
    body = "payload=" + urllib.parse.quote(json.dumps(payload))
    timestamp = str(int(now.timestamp()))
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return body, {"x-slack-request-timestamp": timestamp, "x-slack-signature": f"v0={digest}"}


def test_every_door_decides_through_the_one_desk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The queue, the answer API, AG-UI, a signed link, Slack and the sweep's deadline all reach `AnswerDesk.decide`."""
    from agent_wait.engine import AnswerDesk
    from agent_wait.host.links import LinkKeys, mint_token

    reached: list[tuple[str, bool]] = []
    decide = AnswerDesk.decide

    def spied(self: AnswerDesk, attempt: Any, thread: Any) -> Any:
        reached.append((attempt.answerer.via, attempt.deadline))
        return decide(self, attempt, thread)

    monkeypatch.setattr(AnswerDesk, "decide", spied)
    keys = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k1-secret-" + "a" * 40}))
    world = World()
    service = AnswerService(world.ledger, world.queue, clock=lambda: world.now)
    world.app = create_app(
        lambda: ApiContext(ledger=world.ledger, service=service, link_keys=keys, clock=lambda: world.now)
    )
    doors = ("q", "api", "ag", "ln", "sl", "dl")
    asked = {door: world.start(f"t-door-{door}", f"o-door-{door}").asked[0] for door in doors}

    # the entry queue
    by_queue = {"thread_id": "t-door-q", "question_id": asked["q"], "answer": {"action": "approve"}}
    world.router.handle(json.dumps(by_queue), sender=API_ROLE)
    # the answer API, and AG-UI
    world.api_answer(asked["api"], "approve")
    resume = {"resume": [{"interruptId": asked["ag"], "status": "resolved", "payload": {"action": "approve"}}]}
    call(world.app, "POST", "/agui/resume", resume, claims=ALICE)
    # a signed link
    token = mint_token(
        keys,
        question_id=asked["ln"],
        thread_id="t-door-ln",
        action="approve",
        expires_at=T0 + timedelta(days=1),
        now=T0,
    )
    call(world.app, "POST", f"/questions/{asked['ln']}/link/answer", {"token": token})
    # Slack
    from agent_wait.channels.slack import SlackInteractions, SlackRouting

    slack = SlackInteractions(
        signing_secret="slack-signing-secret",
        service=service,
        find=world.ledger.find,
        client=_SlackDirectory(),
        routing=SlackRouting(),
        clock=lambda: world.now,
    )
    assert slack.handle(*_slack_click(asked["sl"], secret="slack-signing-secret", now=world.now)).status == 200
    # the sweep's deadline, past the policy's three days
    world.now = T0 + timedelta(days=4)
    world.queue.messages.clear()
    world.sweep()
    world.deliver()

    assert reached == [
        ("queue", False),
        ("api", False),
        ("api", False),
        ("link", False),
        ("slack", False),
        ("deadline", True),
    ]
