"""Person-bound signed links: a link made for a recipient answers as that person, in the groups the host vouched for.

A question whose policy names who may answer gets links only for its answerers (an `email:` principal, or a member
of a named group as `RecipientRouting` maps it); the confirmation page's answer uses that principal and those groups,
so the answerer rules hold and a quorum counts people. Through `create_app`, as the Lambda handler serves it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.api_events import Response, call

from agent_wait.channels.recipients import Recipient, RecipientRouting
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.errors import ArgumentError
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkError, LinkKeys, answer_links, mint_token, verify_token
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
API_URL = "https://api.example.com"
KEY = "k1-secret-" + "a" * 40
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": KEY}))
ROUTING = RecipientRouting(groups={"finance": ["ana@example.com", "dana@example.com"]})
ANA, DANA = ROUTING.groups["finance"]


@dataclass
class Api:
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)

    def __post_init__(self) -> None:
        service = AnswerService(self.ledger, self.queue, clock=lambda: T0)
        context = ApiContext(ledger=self.ledger, service=service, link_keys=KEYS, clock=lambda: T0)
        self.app = create_app(lambda: context)

    def ask(self, question_id: str, **policy: Any) -> WaitEnvelope:
        question = Question(
            "order-1",
            question_id,
            {"function": "refund", "args": {"order": "A-1"}},
            policy=WaitPolicy(**{"timeout": "PT4H", "allowed_actions": ("approve", "reject"), **policy}),
            asked_at=T0,
        )
        envelope = WaitEnvelope.create(question)
        self.ledger.open(envelope, now=T0)
        return envelope

    def follow(self, url: str, **extra: Any) -> Response:
        """Open a link's page and answer on it, as the page's script does: POST the fragment's token."""
        parts = urllib.parse.urlsplit(url)
        return call(
            self.app, "POST", parts.path.removesuffix("/confirm") + "/link/answer", {"token": parts.fragment, **extra}
        )

    def read(self, url: str) -> Response:
        parts = urllib.parse.urlsplit(url)
        return call(self.app, "POST", parts.path.removesuffix("/confirm") + "/link", {"token": parts.fragment})

    def record(self, question_id: str) -> Any:
        record = self.ledger.find(question_id)
        assert record is not None
        return record


def links_for(envelope: WaitEnvelope, recipient: Recipient, **extra: Any) -> dict[str, str]:
    return answer_links(KEYS, API_URL, envelope, now=T0, approver=recipient.principal, groups=recipient.groups, **extra)


@pytest.fixture
def api() -> Api:
    return Api()


def test_a_link_bound_to_a_named_principal_answers_as_that_principal(api: Api):
    # GIVEN a question only Ana (by address) may answer
    envelope = api.ask("q-1", answerer_principals=["email:ana@example.com"])
    ana = ROUTING.recipients_for(envelope)[0]

    # WHEN Ana follows her approve link
    reply = api.follow(links_for(envelope, ana)["approve"])

    # THEN it decides, as her
    assert (reply.status, reply.json()["result"]) == (200, "won")
    record = api.record("q-1")
    assert record.status is QuestionStatus.ANSWERED
    assert (record.answered_by, record.via) == ("ana@example.com", "link")


def test_no_link_is_made_for_a_principal_the_policy_does_not_name_and_a_forged_one_is_refused(api: Api):
    # GIVEN a question only Ana may answer
    envelope = api.ask("q-1", answerer_principals=["email:ana@example.com"])
    eve = Recipient.of("eve@example.com")

    # THEN no link is made for Eve
    assert links_for(envelope, eve) == {}

    # AND a token made for her anyway (by hand, with the keys) is refused at the page, leaving the question open
    token = mint_token(
        KEYS,
        question_id="q-1",
        thread_id="order-1",
        action="approve",
        expires_at=T0 + timedelta(hours=4),
        approver=eve.principal,
        now=T0,
    )
    reply = call(api.app, "POST", "/questions/q-1/link/answer", {"token": token})
    assert (reply.status, reply.json()["reason"]) == (403, "answerer_not_allowed")
    assert api.record("q-1").status is QuestionStatus.OPEN


def test_a_group_member_by_the_mapping_gets_links_that_answer_for_the_group(api: Api):
    # GIVEN a question only the finance group may answer, and the routing maps Dana to finance
    envelope = api.ask("q-1", answerer_groups=["finance"])
    dana = next(r for r in ROUTING.recipients_for(envelope) if r.address == DANA)
    links = links_for(envelope, dana)

    # THEN her links carry the group the host vouched for
    token = urllib.parse.urlsplit(links["reject"]).fragment
    assert verify_token(KEYS, token, question_id="q-1", now=T0).groups == ("finance",)

    # AND the same address without the group gets none (a link proves only what the host vouched for)
    assert links_for(envelope, Recipient.of(DANA)) == {}

    # WHEN she rejects from her link, THEN it decides as her
    assert api.follow(links["reject"]).status == 200
    record = api.record("q-1")
    assert (record.answered_by, record.answer["action"]) == ("dana@example.com", "reject")


def test_a_forwarded_link_answers_as_the_person_it_was_made_for(api: Api):
    # GIVEN Ana's email, forwarded to Bob, who opens her link (nothing about the opener reaches the API)
    envelope = api.ask("q-1", answerer_groups=["finance"])
    ana = ROUTING.recipients_for(envelope)[0]
    forwarded = links_for(envelope, ana)["approve"]

    # WHEN Bob reads and follows it
    seen = api.read(forwarded).json()
    reply = api.follow(forwarded)

    # THEN the page names Ana as the one answering, and the decision is recorded as hers
    assert seen["link"]["approver"] == "email:ana@example.com"
    assert reply.status == 200
    assert api.record("q-1").answered_by == "ana@example.com"


def test_a_two_person_quorum_needs_two_distinct_recipients_links(api: Api):
    # GIVEN a finance question that needs two approvals (no deadline: a later email's links are new tokens)
    envelope = api.ask("q-1", answerer_groups=["finance"], quorum=2, timeout=None)
    ana, dana = ROUTING.recipients_for(envelope)
    anas, danas = links_for(envelope, ana), links_for(envelope, dana)

    # WHEN Ana approves, twice (her link again, and her link from a reminder with fresh links)
    first = api.follow(anas["approve"])
    again = api.follow(links_for(envelope, ana, issued_at=T0 - timedelta(minutes=5))["approve"])

    # THEN one vote counts, and the question still waits
    assert (first.status, first.json()["remaining"]) == (202, 1)
    assert (again.status, again.json()["reason"]) == (409, "already_voted")
    assert api.record("q-1").status is QuestionStatus.OPEN

    # WHEN Dana approves, THEN the quorum is met by two people
    last = api.follow(danas["approve"])
    assert (last.status, last.json()["result"]) == (200, "won")
    record = api.record("q-1")
    assert record.status is QuestionStatus.ANSWERED
    assert sorted(vote.voter for vote in record.progress.votes) == ["ana@example.com", "dana@example.com"]


def test_links_are_the_same_for_the_same_issue_time_and_fresh_for_a_later_one():
    envelope = WaitEnvelope.create(
        Question("order-1", "q-9", {"function": "refund"}, policy=WaitPolicy(timeout=None, answerer_groups=["finance"]))
    )
    ana = ROUTING.recipients_for(envelope)[0]
    issued = T0 - timedelta(hours=1)

    same = [links_for(envelope, ana, issued_at=issued) for _ in range(2)]
    later = links_for(envelope, ana, issued_at=T0)

    assert same[0] == same[1], "a message sent again must carry the links it carried before"
    assert later["approve"] != same[0]["approve"], "a reminder sent later carries fresh links"
    token = urllib.parse.urlsplit(same[0]["approve"]).fragment
    assert verify_token(KEYS, token, question_id="q-9", now=T0).expires_at == issued + timedelta(days=7)


def test_groups_vouch_for_a_person_only():
    with pytest.raises(ArgumentError, match=re.escape("make a link with groups only for a named approver")):
        mint_token(
            KEYS,
            question_id="q-1",
            thread_id="order-1",
            action="approve",
            expires_at=T0 + timedelta(hours=1),
            groups=["finance"],
            now=T0,
        )
    with pytest.raises(ArgumentError, match=re.escape("groups must be a list of non-empty strings")):
        mint_token(
            KEYS,
            question_id="q-1",
            thread_id="order-1",
            action="approve",
            expires_at=T0 + timedelta(hours=1),
            approver="email:ana@example.com",
            groups="finance",
            now=T0,
        )


@pytest.mark.parametrize(
    "payload",
    [
        {"g": ["finance"]},  # groups without a person
        {"g": "finance", "sub": "email:ana@example.com"},
        {"g": [], "sub": "email:ana@example.com"},
        {"g": [""], "sub": "email:ana@example.com"},
    ],
)
def test_a_signed_payload_with_a_bad_group_claim_is_malformed(payload: dict[str, Any]):
    # Signed with the real key, so only the claim's shape can refuse it
    body = {"a": "approve", "exp": int((T0 + timedelta(hours=1)).timestamp()), "q": "q-1", "t": "order-1", **payload}
    encoded = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    signed = f"v1.k1.{encoded}"
    mac = base64.urlsafe_b64encode(hmac.new(KEY.encode(), signed.encode(), hashlib.sha256).digest()).rstrip(b"=")
    with pytest.raises(LinkError) as caught:
        verify_token(KEYS, f"{signed}.{mac.decode()}", question_id="q-1", now=T0)
    assert caught.value.reason.value == "malformed"
