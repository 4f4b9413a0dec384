"""Votes, escalation and who may answer on the answer API (`GET /questions`, `GET /questions/{id}`,
`POST /questions/{id}/answer`), through `create_app` with HTTP API v2 events carrying two people's JWT claims.

Each test runs on the in-memory ledger and on `DynamoDbLedger` over the embedded emulator (moto), since a vote
is a compare-and-set on the row and the API must show the same votes on both.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.api_events import Response, call

from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import InMemoryLedger, Ledger
from agent_wait.policy import WaitPolicy
from agent_wait.policy.followup import Escalation, Quorum

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ISSUER = "https://issuer.example.com"
ALICE = {
    "iss": ISSUER,
    "sub": "u-alice",
    "email": "alice@example.com",
    "email_verified": "true",
    "cognito:groups": "[finance]",
}
BOB = {
    "iss": ISSUER,
    "sub": "u-bob",
    "email": "bob@example.com",
    "email_verified": "true",
    "cognito:groups": "[finance]",
}
CAROL = {
    "iss": ISSUER,
    "sub": "u-carol",
    "email": "carol@example.com",
    "email_verified": "true",
    "cognito:groups": "[finance-managers]",
}
SECRET = "Zoë's card 4111-1111-1111-1111"
"""A voter's free text; no other person may read it back from the API."""
REFUND = {"function": "refund", "args": {"order": "A-1", "amount": 900}}
QUORUM = {"timeout": "P3D", "allowed_actions": ("approve", "reject"), "quorum": 2}
ESCALATING = {
    "timeout": "P3D",
    "allowed_actions": ("approve", "reject"),
    "tags": {"approver_group": "finance"},
    "answerer_groups": ("finance",),
    "escalation": [
        Escalation(after="P2D", tags={"approver_group": "finance-managers"}, answerer_groups=["finance-managers"])
    ],
}


@dataclass
class Api:
    """The answer API over a ledger and an in-memory entry queue, with a clock the test moves."""

    ledger: Ledger
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)
    now: datetime = T0

    def __post_init__(self) -> None:
        service = AnswerService(self.ledger, self.queue, clock=lambda: self.now)
        context = ApiContext(ledger=self.ledger, service=service, clock=lambda: self.now)
        self.app = create_app(lambda: context)

    def ask(self, **policy: Any) -> str:
        question_id = f"q-{uuid.uuid4().hex[:12]}"
        question = Question(
            f"order-{question_id}",
            question_id,
            REFUND,
            policy=WaitPolicy(**policy),
            source={"function": "refund"},
            asked_at=T0,
        )
        self.ledger.open(WaitEnvelope.create(question), now=T0)
        return question_id

    def get(self, question_id: str, claims: dict[str, Any] = ALICE) -> Response:
        return call(self.app, "GET", f"/questions/{question_id}", claims=claims)

    def answer(
        self, question_id: str, action: str, claims: dict[str, Any], *, key: str | None = None, **extra: Any
    ) -> Response:
        headers = {"Idempotency-Key": key} if key else {}
        body = {"answer": {"action": action, **extra}}
        return call(self.app, "POST", f"/questions/{question_id}/answer", body, headers=headers, claims=claims)

    def record(self, question_id: str) -> Any:
        record = self.ledger.find(question_id)
        assert record is not None
        return record


@pytest.fixture(params=["memory", "emulator"])
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    if request.param == "memory":
        yield Api(InMemoryLedger())
        return
    name, client = request.getfixturevalue("question_table")
    yield Api(DynamoDbLedger(name, client=client))


def votes(body: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    return [(vote["by"], vote["action"]) for vote in body["votes"]]


# -- reading a quorum question ---------------------------------------------------------------------------------


def test_a_quorum_question_shows_no_votes_yet_and_how_many_approvals_it_needs(api: Api) -> None:
    question_id = api.ask(**QUORUM)

    reply = api.get(question_id)

    assert reply.status == 200
    body = reply.json()
    assert (body["votes"], body["approvals"], body["needed"], body["remaining"]) == ([], 0, 2, 2)
    assert body["veto"] == ["reject"]
    assert body["your_vote"] is None
    assert body["answerers"] is None, "no answerer_groups: anyone signed in may vote"
    assert body["policy"]["rules"]["quorum"] == {"approvals": 2, "approve": ["approve"], "veto": ["reject"]}


def test_a_question_without_a_quorum_has_no_vote_fields_but_says_who_may_answer(api: Api) -> None:
    question_id = api.ask(timeout="PT4H", answerer_groups=("finance",))

    body = api.get(question_id).json()

    assert not {"votes", "approvals", "needed", "remaining", "veto", "your_vote", "escalation"} & set(body)
    assert body["answerers"] == {"groups": ["finance"], "principals": []}


# -- voting ----------------------------------------------------------------------------------------------------


def test_a_first_approval_is_202_with_the_vote_so_far_and_one_more_needed(api: Api) -> None:
    question_id = api.ask(**QUORUM)

    # WHEN alice approves a question that needs two approvals
    reply = api.answer(question_id, "approve", ALICE)

    # THEN her vote is recorded (202: accepted, not yet decided) and the body says one more is needed
    assert reply.status == 202
    body = reply.json()
    assert (body["result"], body["status"], body["handed_over"]) == ("voted", "open", True)
    assert body["votes"] == [{"by": "alice@example.com", "action": "approve", "at": "2030-01-01T09:00:00Z"}]
    assert (body["approvals"], body["needed"], body["remaining"]) == (1, 2, 1)
    assert body["your_vote"] == {"action": "approve", "at": "2030-01-01T09:00:00Z"}
    assert body["outcome"] is None
    assert api.record(question_id).status is QuestionStatus.OPEN
    # AND the router is told of the vote (it announces wait.voted), not asked to resume
    ((message, _, _),) = api.queue.messages
    assert (message["question_id"], message["answered_by"]) == (question_id, "alice@example.com")


def test_a_second_person_approving_decides_with_200_and_the_agent_gets_every_vote(api: Api) -> None:
    question_id = api.ask(**QUORUM)
    api.answer(question_id, "approve", ALICE)

    reply = api.answer(question_id, "approve", BOB)

    assert reply.status == 200
    body = reply.json()
    assert (body["result"], body["status"]) == ("won", "answered")
    assert votes(body) == [("alice@example.com", "approve"), ("bob@example.com", "approve")]
    assert (body["approvals"], body["remaining"]) == (2, 0)
    assert body["outcome"]["answered_by"] == "bob@example.com"
    assert [v["by"] for v in body["outcome"]["answer"]["votes"]] == ["alice@example.com", "bob@example.com"]


def test_a_second_vote_by_the_same_person_is_409_already_voted_and_changes_nothing(api: Api) -> None:
    question_id = api.ask(**QUORUM)
    api.answer(question_id, "approve", ALICE, key="first")
    before = api.record(question_id)
    queued = len(api.queue.messages)

    # WHEN alice votes again, another way, under another key
    reply = api.answer(question_id, "reject", ALICE, key="second")

    # THEN it is refused as her second vote, and neither the row nor the queue changes
    assert reply.status == 409
    assert reply.headers["content-type"] == "application/problem+json"
    problem = reply.json()
    assert (problem["reason"], problem["title"]) == ("already_voted", "Already voted")
    assert problem["type"] == "urn:agent-wait:problem:already_voted"
    assert "alice@example.com voted already (approve)" in problem["detail"]
    assert problem["question"]["status"] == "open"
    assert votes(problem["question"]) == [("alice@example.com", "approve")]
    assert problem["question"]["your_vote"]["action"] == "approve"
    after = api.record(question_id)
    assert (after.status, after.progress) == (before.status, before.progress)
    assert len(api.queue.messages) == queued


def test_an_unverified_email_never_takes_someone_elses_vote_or_name(api: Api) -> None:
    # GIVEN Mallory, whose issuer lets her set her own email, sets it to Bob's without verifying it
    mallory = {"iss": ISSUER, "sub": "u-mallory", "email": "bob@example.com", "email_verified": "false"}
    mallory["cognito:username"] = "mallory"
    question_id = api.ask(**QUORUM)

    # WHEN she votes, then the real Bob (verified) votes
    hers = api.answer(question_id, "approve", mallory)
    bobs = api.answer(question_id, "approve", BOB)

    # THEN she is recorded by her issuer and subject (never a username), and Bob's vote counts: two people, decided
    assert hers.status == 202, hers.body
    assert bobs.status == 200, bobs.body
    recorded = api.record(question_id).answer["votes"]
    assert [(v["by"], v["action"]) for v in recorded] == [
        (f"{ISSUER}#u-mallory", "approve"),
        ("bob@example.com", "approve"),
    ]


def test_the_same_vote_resent_with_its_key_repeats_and_counts_once(api: Api) -> None:
    question_id = api.ask(**QUORUM)
    api.answer(question_id, "approve", ALICE, key="k-1")

    reply = api.answer(question_id, "approve", ALICE, key="k-1")

    assert reply.status == 200
    body = reply.json()
    assert (body["result"], body["status"], body["remaining"]) == ("repeated", "open", 1)
    assert len(body["votes"]) == 1


def test_a_veto_decides_at_once(api: Api) -> None:
    question_id = api.ask(**QUORUM)

    reply = api.answer(question_id, "reject", ALICE)

    assert reply.status == 200
    body = reply.json()
    assert (body["result"], body["status"], body["outcome"]["answer"]["action"]) == ("won", "answered", "reject")
    assert body["remaining"] == 0


def test_a_vote_after_the_decision_is_409_already_decided(api: Api) -> None:
    question_id = api.ask(**QUORUM)
    api.answer(question_id, "reject", ALICE)

    reply = api.answer(question_id, "approve", BOB)

    assert (reply.status, reply.json()["reason"]) == (409, "already_decided")


def test_other_voters_see_who_voted_what_and_when_but_never_a_note(api: Api) -> None:
    question_id = api.ask(**QUORUM)
    api.answer(question_id, "approve", ALICE, note=SECRET)

    # WHEN bob reads the question, alone and in the listing
    alone = api.get(question_id, BOB)
    listed = call(api.app, "GET", "/questions", query={"status": "open", "limit": "100"}, claims=BOB)

    # THEN he sees alice's vote (who, what, when) and not her note, and that he has not voted
    body = alone.json()
    assert body["votes"] == [{"by": "alice@example.com", "action": "approve", "at": "2030-01-01T09:00:00Z"}]
    assert body["your_vote"] is None
    assert "Zoë" not in alone.body
    (row,) = [q for q in listed.json()["questions"] if q["question_id"] == question_id]
    assert (row["votes"], row["remaining"], row["your_vote"]) == (body["votes"], 1, None)
    assert "Zoë" not in listed.body
    # AND alice sees her own vote as hers
    assert api.get(question_id, ALICE).json()["your_vote"]["action"] == "approve"


def test_once_decided_the_outcome_still_shows_no_voters_note(api: Api) -> None:
    # Issue 25: hidden while open, alice's note showed to everyone in outcome.answer.votes once decided
    question_id = api.ask(**QUORUM)
    api.answer(question_id, "approve", ALICE, note=SECRET)
    decided = api.answer(question_id, "approve", BOB)
    assert decided.status == 200
    for reader in (BOB, CAROL):
        reply = api.get(question_id, reader)
        assert "Zoë" not in reply.body
        votes = reply.json()["outcome"]["answer"]["votes"]
        assert [(v["by"], v["action"]) for v in votes] == [
            ("alice@example.com", "approve"),
            ("bob@example.com", "approve"),
        ]
        assert all(set(vote) == {"by", "action", "at"} for vote in votes)
    # AND the agent got every vote in full: the note is in the decision the router hands over
    assert SECRET in str(api.record(question_id).answer)


def test_a_custom_quorum_counts_its_own_approving_and_vetoing_actions(api: Api) -> None:
    question_id = api.ask(
        timeout="P3D", allowed_actions=("ok", "block", "abstain"), quorum=Quorum(2, approve=["ok"], veto=["block"])
    )

    reply = api.answer(question_id, "abstain", ALICE)

    body = reply.json()
    assert reply.status == 202
    assert (body["approvals"], body["remaining"], body["veto"]) == (0, 2, ["block"])
    assert votes(body) == [("alice@example.com", "abstain")]


# -- escalation: who may answer now -----------------------------------------------------------------------------


def test_before_its_step_an_escalating_question_names_its_first_audience_and_refuses_the_next(api: Api) -> None:
    question_id = api.ask(**ESCALATING)

    body = api.get(question_id).json()
    refused = api.answer(question_id, "approve", CAROL)

    assert body["answerers"] == {"groups": ["finance"], "principals": []}
    assert body["escalation"] == {
        "level": 0,
        "steps": 1,
        "next_at": "2030-01-03T09:00:00Z",
        "tags": {"approver_group": "finance"},
    }
    assert body["policy"]["tags"] == {"approver_group": "finance"}, "policy.tags stays as asked"
    assert (refused.status, refused.json()["reason"]) == (403, "answerer_not_allowed")
    assert refused.json()["question"]["answerers"] == {"groups": ["finance"], "principals": []}


def test_after_its_step_the_api_reports_the_wider_audience_and_accepts_its_answer(api: Api) -> None:
    question_id = api.ask(**ESCALATING)

    # WHEN the escalation step's time has come (whether or not the sweep has announced it yet)
    api.now = T0 + timedelta(days=2, minutes=1)
    body = api.get(question_id).json()
    reply = api.answer(question_id, "approve", CAROL)

    # THEN finance-managers may answer too, and their answer is accepted
    assert body["answerers"] == {"groups": ["finance", "finance-managers"], "principals": []}
    assert body["escalation"] == {
        "level": 1,
        "steps": 1,
        "next_at": None,
        "tags": {"approver_group": "finance-managers"},
    }
    assert (reply.status, reply.json()["result"]) == (200, "won")


def test_a_decided_question_reports_who_could_answer_when_it_was_decided(api: Api) -> None:
    question_id = api.ask(**ESCALATING)
    api.answer(question_id, "approve", ALICE)

    api.now = T0 + timedelta(days=2, minutes=1)
    body = api.get(question_id).json()

    assert body["status"] == "answered"
    assert body["answerers"] == {"groups": ["finance"], "principals": []}
    assert (body["escalation"]["level"], body["escalation"]["next_at"]) == (0, None)


def test_a_vote_given_by_a_link_made_for_you_shows_as_yours_when_signed_in(api: Api) -> None:
    # The API refuses alice's second vote either way; the view must agree that she has voted.
    from agent_wait.engine.checks import Answerer

    question_id = api.ask(**QUORUM)
    link = Answerer(answered_by="alice@example.com", via="link", sender="link:k1")
    AnswerService(api.ledger, api.queue, clock=lambda: api.now).answer(
        question_id, {"action": "approve"}, link, answer_id="link:alice"
    )
    own = api.get(question_id, ALICE).json()["your_vote"]
    assert own is not None
    assert own["action"] == "approve"
    assert api.get(question_id, BOB).json()["your_vote"] is None
