"""One person is one person in every door: one key, one vote, named the same way by every policy.

A person reaches a question through seven doors: the inbox and the answer API (a JWT), AG-UI (the same JWT), a
signed link from their approval email, a Teams card's link, a Slack button, the Slack form, and a trusted sender
on the entry queue (the answer API's role naming them). Each door proves something different and writes it its own
way; the key (`agent_wait.people.person_key`) makes them agree. Every test here drives the real doors: the router
on a LangGraph quorum graph, the answer API's routes (`create_app`), the Slack door over HTTP with the fake Slack
(`slack_sdk` talking to it), over one in-memory ledger and entry queue.

A two-person quorum must never be met by one person, however they write their address (letter case, surrounding
whitespace, an `email:` prefix) and whichever two doors they use; and a policy that names a person accepts them in
every door. A username shaped like an address is never taken for the address (it proves nothing); the same token
subject is still the same person.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.followup_graphs as followup_graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.api_events import call
from tests.support.fake_slack import FakeSlack
from tests.support.slack_endpoint import SlackEndpoint

from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackInteractions, SlackRouting
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryDeadLetter, InMemoryEntryQueue, Router
from agent_wait.engine.senders import SenderPolicy
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys, mint_token
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime.now(UTC).replace(microsecond=0)
"""Now: the Slack door checks a request's timestamp against its clock, as Slack's signature scheme requires."""
ISSUER = "https://issuer.example.com"
API_ROLE = "AROAAPIFUNCTION"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k1-secret-" + "a" * 40}))
ALICE = "alice@example.com"
VARIANTS = {"case": "Alice@Example.COM", "whitespace": "  alice@example.com\t", "prefix": "email:alice@example.com"}
"""Ways one person's address is written by the places that prove it (an IdP, Slack's profile, a link's maker)."""
DOORS = ("api", "agui", "email_link", "teams_link", "slack_button", "slack_form", "queue")
USERS = {"U0ALICE": "alice", "U0BOB": "bob"}


def claims(address: str, *, subject: str = "u-alice", verified: bool = True, **extra: Any) -> dict[str, Any]:
    """A JWT's claims as API Gateway passes them (strings)."""
    return {"iss": ISSUER, "sub": subject, "email": address, "email_verified": str(verified).lower(), **extra}


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(team_id="T0TEAM") as fake:
        yield fake


@pytest.fixture(scope="module")
def endpoint() -> Iterator[SlackEndpoint]:
    with SlackEndpoint(None) as served:
        yield served


@dataclass
class World:
    """The router, the answer API and the Slack door over one ledger and entry queue, as deployed."""

    slack: FakeSlack
    endpoint: SlackEndpoint
    graph: Callable[[Any], Any] = followup_graphs.build_quorum_graph
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)
    now: datetime = T0

    def __post_init__(self) -> None:
        from slack_sdk import WebClient

        client = WebClient(token=self.slack.token, base_url=f"{self.slack.url}/api/")
        announce = SlackAnnounce(client, SlackRouting(channels={"*": "C0ALL"}), InMemorySlackMessages())
        self.router = Router(
            LangGraphAdapter(self.graph(InMemorySaver())),
            self.ledger,
            dead_letter=InMemoryDeadLetter(),
            announce=announce,
            clock=lambda: self.now,
            lease_wait=5.0,
            senders=SenderPolicy(trusted=frozenset({API_ROLE})),
        )
        self.service = AnswerService(self.ledger, self.queue, clock=lambda: self.now)
        context = ApiContext(ledger=self.ledger, service=self.service, link_keys=KEYS, clock=lambda: self.now)
        self.app = create_app(lambda: context)
        self.interactions = SlackInteractions(
            signing_secret=SIGNING_SECRET,
            service=self.service,
            find=self.ledger.find,
            client=client,
            routing=SlackRouting(),
            clock=lambda: self.now,
        )
        self.endpoint.interactions = self.interactions

    # -- asking ------------------------------------------------------------------------------------------------

    def ask(self) -> tuple[str, str]:
        """A refund over the limit, parked on its question; (thread, question id)."""
        thread = f"t-{uuid.uuid4().hex[:10]}"
        body = {"thread_id": thread, "input": {"order_id": thread, "amount": 900}, "start_id": thread}
        (question_id,) = self.router.handle(json.dumps(body)).asked
        return thread, question_id

    # -- the doors -----------------------------------------------------------------------------------------------

    def answer(self, door: str, thread: str, question_id: str, written: str, *, subject: str = "u-alice") -> None:
        """`written`'s person approves `question_id` through `door`, then the router takes what was handed over."""
        getattr(self, f"_by_{door}")(thread, question_id, written, subject)
        self.deliver()

    def _by_api(self, thread: str, question_id: str, written: str, subject: str) -> None:
        body = {"answer": {"action": "approve"}}
        call(self.app, "POST", f"/questions/{question_id}/answer", body, claims=claims(written, subject=subject))

    def _by_agui(self, thread: str, question_id: str, written: str, subject: str) -> None:
        entry = {"interruptId": question_id, "status": "resolved", "payload": {"action": "approve"}}
        call(self.app, "POST", "/agui/resume", {"resume": [entry]}, claims=claims(written, subject=subject))

    def _by_email_link(self, thread: str, question_id: str, written: str, subject: str) -> None:
        self._follow(question_id, approver=f"email:{written}" if not written.startswith("email:") else written)

    def _by_teams_link(self, thread: str, question_id: str, written: str, subject: str) -> None:
        self._follow(question_id, approver=written)

    def _follow(self, question_id: str, *, approver: str) -> None:
        """Answer by a link made for `approver` (as the email and Teams doors make them; minted directly, so a link
        for someone the policy does not name can be tried too)."""
        record = self.ledger.find(question_id)
        assert record is not None
        token = mint_token(
            KEYS,
            question_id=question_id,
            thread_id=record.thread_id,
            action="approve",
            expires_at=self.now + timedelta(days=1),
            now=self.now,
            approver=approver,
        )
        call(self.app, "POST", f"/questions/{question_id}/link/answer", {"token": token})

    def _by_slack_button(self, thread: str, question_id: str, written: str, subject: str) -> None:
        user = self._slack_user(written)
        reply = self.slack.click(
            self.endpoint.url,
            self._message(question_id),
            "agent_wait:answer:approve",
            user_id=user,
            signing_secret=SIGNING_SECRET,
            timestamp=int(self.now.timestamp()),
        )
        assert reply.status == 200, reply.body

    def _by_slack_form(self, thread: str, question_id: str, written: str, subject: str) -> None:
        user = self._slack_user(written)
        stamp = int(self.now.timestamp())
        opened = self.slack.click(
            self.endpoint.url,
            self._message(question_id),
            "agent_wait:modal",
            user_id=user,
            signing_secret=SIGNING_SECRET,
            timestamp=stamp,
        )
        assert opened.status == 200, opened.body
        *_, view = [v for v in self.slack.views.values() if v.get("private_metadata") == question_id]
        reply = self.slack.submit_view(
            self.endpoint.url,
            view,
            {"action": {"value": "approve"}},
            user_id=user,
            signing_secret=SIGNING_SECRET,
            timestamp=stamp,
        )
        assert reply.status == 200, reply.body

    def _by_queue(self, thread: str, question_id: str, written: str, subject: str) -> None:
        message = {"thread_id": thread, "question_id": question_id, "answer": {"action": "approve"}}
        body = json.dumps({**message, "answered_by": written, "answer_id": f"queue-{uuid.uuid4().hex}"})
        self.router.handle(body, sender=f"{API_ROLE}:answer-api")

    def _slack_user(self, written: str) -> str:
        """A Slack user whose profile holds `written` as their address (a fresh id: Slack reads it each time)."""
        user = f"U{uuid.uuid4().hex[:8].upper()}"
        self.slack.add_user(user, email=written, name="alice")
        return user

    def _message(self, question_id: str) -> Any:
        [message] = [
            m
            for m in self.slack.messages()
            if (m.metadata or {}).get("event_payload", {}).get("question_id") == question_id
        ]
        return message

    # -- what happened -------------------------------------------------------------------------------------------

    def deliver(self) -> None:
        """Hand every queued message (the doors' hand-overs) to the router, as the trusted API sent them."""
        while self.queue.messages:
            message, _, dedup = self.queue.messages.pop(0)
            self.router.handle(json.dumps(message), deduplication_id=dedup, sender=API_ROLE)

    def row(self, question_id: str) -> Any:
        record = self.ledger.find(question_id)
        assert record is not None
        return record


@pytest.fixture
def world(slack: FakeSlack, endpoint: SlackEndpoint) -> World:
    return World(slack, endpoint)


PAIRS = [
    (first, second, variant)
    for first, second in itertools.combinations_with_replacement(DOORS, 2)
    for variant in VARIANTS
]


@pytest.mark.parametrize(("first", "second", "variant"), PAIRS, ids=[f"{a}+{b}-{v}" for a, b, v in PAIRS])
def test_one_person_casts_one_vote_on_a_quorum_whatever_two_doors_and_spelling(
    world: World, first: str, second: str, variant: str
) -> None:
    # GIVEN a refund that needs two distinct approvers
    thread, question_id = world.ask()

    # WHEN alice approves through one door, then again through another, her address written another way
    world.answer(first, thread, question_id, ALICE)
    world.answer(second, thread, question_id, VARIANTS[variant])

    # THEN exactly one vote counts, under her one key: the question still waits, and nothing was paid
    row = world.row(question_id)
    assert row.status is QuestionStatus.OPEN, f"one person decided a two-person quorum ({row.answered_by})"
    assert [vote.by for vote in row.progress.votes] == [ALICE]
    assert thread not in followup_graphs.PAID


@pytest.fixture
def named(slack: FakeSlack, endpoint: SlackEndpoint) -> World:
    return World(slack, endpoint, graph=followup_graphs.build_named_graph)


NAMED_CASES = [(door, variant) for door in DOORS for variant in ("exact", *VARIANTS)]


@pytest.mark.parametrize(("door", "variant"), NAMED_CASES, ids=[f"{d}-{v}" for d, v in NAMED_CASES])
def test_a_person_the_policy_names_is_accepted_in_every_door(named: World, door: str, variant: str) -> None:
    # GIVEN a refund only alice may approve, named in the policy as `email:Alice@Example.com`
    thread, question_id = named.ask()

    # WHEN alice approves through the door, her address written as that door's source writes it
    named.answer(door, thread, question_id, VARIANTS.get(variant, ALICE))

    # THEN she is accepted: the agent ran the refund once, recorded as her one key
    row = named.row(question_id)
    assert row.status is QuestionStatus.RESUMED, (row.status, row.answered_by)
    assert row.answered_by == ALICE
    assert followup_graphs.PAID.count(thread) == 1


def test_someone_else_is_refused_on_a_question_that_names_alice(named: World) -> None:
    thread, question_id = named.ask()
    for door in DOORS:
        named.answer(door, thread, question_id, "bob@example.com", subject="u-bob")
    assert named.row(question_id).status is QuestionStatus.OPEN
    assert thread not in followup_graphs.PAID


def test_a_username_shaped_like_an_address_is_never_taken_for_it(world: World) -> None:
    # GIVEN a quorum question, and mallory, whose pool let her pick `alice@example.com` as her username
    thread, question_id = world.ask()
    mallory = claims("mallory@example.com", subject="u-mallory", verified=False, **{"cognito:username": ALICE})

    # WHEN mallory votes in the inbox, then alice votes with a link made for her address
    call(world.app, "POST", f"/questions/{question_id}/answer", {"answer": {"action": "approve"}}, claims=mallory)
    world.deliver()
    world.answer("email_link", thread, question_id, ALICE)

    # THEN mallory is recorded by her issuer and subject, and alice's vote is her own: two people decided it
    row = world.row(question_id)
    assert row.status is QuestionStatus.RESUMED
    assert sorted(vote["by"] for vote in row.answer["votes"]) == sorted([f"{ISSUER}#u-mallory", ALICE])


@pytest.mark.parametrize("door", ["api", "agui"])
def test_the_same_token_subject_is_one_person_with_or_without_its_address(world: World, door: str) -> None:
    # GIVEN a quorum question alice approved with a token that carries her verified address
    thread, question_id = world.ask()
    world.answer("api", thread, question_id, ALICE)

    # WHEN she votes again with a token of the same subject whose address is not verified (only a username)
    unverified = claims(ALICE, verified=False, **{"cognito:username": ALICE})
    if door == "api":
        call(
            world.app, "POST", f"/questions/{question_id}/answer", {"answer": {"action": "approve"}}, claims=unverified
        )
    else:
        entry = {"interruptId": question_id, "status": "resolved", "payload": {"action": "approve"}}
        call(world.app, "POST", "/agui/resume", {"resume": [entry]}, claims=unverified)
    world.deliver()

    # THEN it is still her one vote
    row = world.row(question_id)
    assert row.status is QuestionStatus.OPEN
    assert len(row.progress.votes) == 1
