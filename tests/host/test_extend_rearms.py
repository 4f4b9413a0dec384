"""Extending a deadline re-arms the people: each emailed person, each Teams card's person and the Slack message
learn the new deadline once per extension, with links that answer until it; and an escalated audience answers by
email.

The sweep's announcers as the host builds them (`announcers_for` from `HostSettings`) email through moto's SES and
post to a local Teams Workflows webhook over real HTTP; the question table is DynamoDB on moto; the deadline moves
through the answer API's `POST /questions/{id}/extend`, which owes `wait.extended` on the row, and the real `Sweep`
announces it; each link is followed through the answer API's link routes (`POST /questions/{id}/link/answer`), as
the confirmation page's script does. The host signs links at the time it sends them, so each question is asked
now; from there the clock is the test's, moved by hand.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.host import test_webhook_secret as signing
from tests.host.test_webhook_secret import create_secret
from tests.support.api_events import Response, call
from tests.support.aws_stack import create_question_table
from tests.support.fake_teams import FakeTeams

from agent_wait import Question, WaitEnvelope, WaitPolicy, publish
from agent_wait.aws import DynamoDbLedger
from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import AnswerService, InMemoryEntryQueue, Sweep
from agent_wait.engine.extend import extended_envelope
from agent_wait.host import HostSettings, announcers_for
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys
from agent_wait.ledger import QuestionRecord
from agent_wait.local.email_preview import sent_emails
from agent_wait.local.tables import question_keyed_table
from agent_wait.policy.extension import Extension
from agent_wait.policy.followup import Escalation

session = signing.session  # a boto3 Session whose clients reach the embedded moto server

ANA, DANA, MAX = "ana@example.com", "dana@example.com", "max@example.com"
ROUTING = {"groups": {"finance": [ANA, DANA], "finance-managers": [MAX]}}
KEYS = '{"active": "k1", "k1": "' + "k" * 40 + '"}'
API_URL = "https://api.example.com"
MANAGER = {
    "iss": "https://issuer.example.com",
    "sub": "u-m",
    "email": "maria@example.com",
    "email_verified": "true",
    "cognito:groups": "[finance-managers]",
}
EXTENDABLE = Extension(groups=["finance-managers"], max_total="P2D")
FINANCE = WaitPolicy(
    timeout="PT4H", allowed_actions=("approve", "reject"), answerer_groups=["finance"], extend=EXTENDABLE
)


@dataclass
class Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def teams() -> Iterator[FakeTeams]:
    with FakeTeams() as fake:
        yield fake


@dataclass
class World:
    """The sweep's announcers, the answer API, and the question ledger they share."""

    teams: FakeTeams
    asked_at: datetime
    clock: Clock
    ledger: DynamoDbLedger
    announcers: list[Any]

    def __post_init__(self) -> None:
        queue = InMemoryEntryQueue()
        service = AnswerService(self.ledger, queue, clock=self.clock)
        context = ApiContext(ledger=self.ledger, service=service, link_keys=LinkKeys.parse(KEYS), clock=self.clock)
        self.app = create_app(lambda: context)
        self.sweep = Sweep(self.ledger, queue, announce=self.announcers, clock=self.clock)

    def ask(self, policy: WaitPolicy = FINANCE) -> str:
        """A question asked at `asked_at` and announced as the router announces it."""
        question_id = f"q-{uuid.uuid4().hex[:12]}"
        question = Question(
            f"order-{question_id}",
            question_id,
            {"function": "refund", "args": {"amount": 900}},
            policy,
            asked_at=self.asked_at,
        )
        envelope = WaitEnvelope.create(question, now=self.asked_at)
        self.ledger.open(envelope, now=self.asked_at, unannounced=False)
        assert publish(envelope, self.announcers).ok
        return question_id

    def at(self, moment: datetime) -> None:
        """Move the clock to `moment` and run the sweep, as its schedule does."""
        self.clock.now = moment
        report = self.sweep.run()
        assert (report.failed_questions, report.failed_steps) == ((), ()), report

    def extend(self, question_id: str, by: str) -> Response:
        return call(self.app, "POST", f"/questions/{question_id}/extend", {"by": by}, claims=MANAGER)

    def follow(self, url: str, path: str = "/link/answer") -> Response:
        """Post a link's token as the confirmation page's script does (`/link` reads, `/link/answer` answers)."""
        parts = urllib.parse.urlsplit(url)
        return call(self.app, "POST", parts.path.removesuffix("/confirm") + path, {"token": parts.fragment})

    def row(self, question_id: str) -> QuestionRecord:
        record = self.ledger.find(question_id)
        assert record is not None
        return record

    def sent(self, question_id: str, subject: str = "") -> list[Any]:
        """The emails moto's SES accepted for the question whose subject starts with `subject`, oldest first."""
        return [e for e in sent_emails() if e.question_id == question_id and e.subject.startswith(subject)]

    def emails(self, question_id: str, subject: str = "") -> dict[str, Any]:
        """`sent`, by recipient: a second email to the same person fails the test."""
        found = self.sent(question_id, subject)
        by_to = {e.to: e for e in found}
        assert len(by_to) == len(found), f"someone got two {subject!r} emails: {sorted(e.to for e in found)}"
        return by_to

    def cards(self, question_id: str, event: str) -> dict[str, Any]:
        """The Teams bodies the webhook accepted for the question's `event`, by recipient (one each)."""
        found = [
            b
            for b in self.teams.accepted()
            if b["agent_wait"]["question_id"] == question_id and b["agent_wait"]["event"] == event
        ]
        by_to = {b["agent_wait"]["recipient"]: b for b in found}
        assert len(by_to) == len(found), f"someone got two {event} cards"
        return by_to


def email_links(sent: Any) -> dict[str, str]:
    """An email's buttons, by action, read from its plain text (`Approve: <url>`)."""
    return {m[1].lower(): m[2] for m in re.finditer(r"^(\w+): (https?://\S+)$", sent.text, re.MULTILINE)}


def card_links(body: Any) -> dict[str, str]:
    """A card's answer buttons, by action (not `Open in the inbox`)."""
    actions = body["attachments"][0]["content"].get("actions") or []
    return {a["title"].lower(): a["url"] for a in actions if "/confirm#" in a["url"]}


@pytest.fixture
def world(session: Any, teams: FakeTeams, unique: str) -> World:
    dynamodb = session.client("dynamodb")
    ses = session.client("sesv2")
    if "example.com" not in {i["IdentityName"] for i in ses.list_email_identities().get("EmailIdentities", [])}:
        ses.create_email_identity(EmailIdentity="example.com")  # moto's SES refuses an unverified From
    table = f"questions-{unique}"
    create_question_table(dynamodb, table)
    environ = {
        Settings.TABLE.value: table,
        Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
        Settings.EMAIL_FROM.value: "Approvals <approvals@example.com>",
        Settings.EMAIL_SENDS_TABLE.value: question_keyed_table(dynamodb, f"email-sends-{unique}"),
        Settings.EMAIL_RECIPIENTS.value: json.dumps(ROUTING),
        Settings.TEAMS_WEBHOOK_URL_ARN.value: create_secret(session, teams.url),
        Settings.TEAMS_RECIPIENTS.value: json.dumps(ROUTING),
        Settings.TEAMS_SENDS_TABLE.value: question_keyed_table(dynamodb, f"teams-sends-{unique}"),
        Settings.LINK_KEYS_ARN.value: create_secret(session, KEYS),
        Settings.API_URL.value: API_URL,
    }
    announcers = announcers_for(HostSettings.from_env("sweep", environ=environ), session=session)
    assert {a.name for a in announcers} >= {"email", "teams"}
    asked_at = datetime.now(UTC).replace(microsecond=0)
    clock, ledger = Clock(asked_at), DynamoDbLedger(table, client=dynamodb)
    return World(teams, asked_at, clock, ledger, announcers)


# -- after an extension, new links that answer until the new deadline ---------------------------------------------


def test_after_an_extension_each_emailed_person_gets_a_link_that_answers_past_the_old_deadline(world: World) -> None:
    # GIVEN a finance question due in four hours, emailed to ana and dana
    question_id = world.ask()
    asked = world.emails(question_id, "Your answer is needed")
    assert set(asked) == {ANA, DANA}
    # WHEN a manager extends it by four hours, an hour in, and the sweep runs
    world.clock.now = world.asked_at + timedelta(hours=1)
    assert world.extend(question_id, "PT4H").status == 200
    world.at(world.clock.now)
    # THEN each of them got one email saying the deadline moved, with their own new links
    new_deadline = world.asked_at + timedelta(hours=8)
    extended = world.emails(question_id, "Deadline extended")
    assert set(extended) == {ANA, DANA}
    assert "DEADLINE EXTENDED" in extended[ANA].text
    links = {person: email_links(sent) for person, sent in extended.items()}
    assert set(links[ANA]) == {"approve", "reject"}
    assert links[ANA]["approve"] != links[DANA]["approve"], "each person has their own links"
    # AND past the old deadline, the first email's link is dead and the new one lives until the new deadline
    world.clock.now = world.asked_at + timedelta(hours=5)
    old = world.follow(email_links(asked[ANA])["approve"])
    assert (old.status, old.json()["reason"]) == (403, "expired")
    seen = world.follow(links[ANA]["approve"], "/link")
    assert seen.json()["link"]["expires_at"] == new_deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
    answered = world.follow(links[ANA]["approve"])
    assert (answered.status, answered.json()["result"]) == (200, "won"), answered.body
    record = world.row(question_id)
    assert (record.status, record.answered_by, record.via) == (QuestionStatus.ANSWERED, ANA, "link")


def test_after_an_extension_each_teams_person_gets_a_card_whose_links_answer_past_the_old_deadline(
    world: World,
) -> None:
    # GIVEN a finance question whose cards went to ana and dana
    question_id = world.ask()
    asked = world.cards(question_id, "wait.created")
    assert set(asked) == {ANA, DANA}
    # WHEN it is extended by four hours and the sweep runs
    world.clock.now = world.asked_at + timedelta(hours=1)
    assert world.extend(question_id, "PT4H").status == 200
    world.at(world.clock.now)
    # THEN each got one card saying so, with links bound to them
    extended = world.cards(question_id, "wait.extended")
    assert set(extended) == {ANA, DANA}
    headline = extended[DANA]["attachments"][0]["content"]["body"][0]["text"]
    assert headline.startswith("Deadline extended to ")
    # AND past the old deadline, dana's card from the extension answers, as dana; the first card's link is dead
    world.clock.now = world.asked_at + timedelta(hours=5)
    old = world.follow(card_links(asked[DANA])["reject"])
    assert (old.status, old.json()["reason"]) == (403, "expired")
    answered = world.follow(card_links(extended[DANA])["reject"])
    assert (answered.status, answered.json()["result"]) == (200, "won"), answered.body
    assert world.row(question_id).answered_by == DANA


def test_a_new_link_stops_at_the_new_deadline(world: World) -> None:
    question_id = world.ask()
    world.clock.now = world.asked_at + timedelta(hours=1)
    world.extend(question_id, "PT4H")
    world.at(world.clock.now)
    link = email_links(world.emails(question_id, "Deadline extended")[ANA])["approve"]
    # WHEN it is used at the new deadline
    world.clock.now = world.asked_at + timedelta(hours=8)
    refused = world.follow(link)
    # THEN it is refused as expired, and nothing is decided
    assert (refused.status, refused.json()["reason"]) == (403, "expired")
    assert world.row(question_id).status is QuestionStatus.OPEN


# -- once per extension ----------------------------------------------------------------------------------------------


def test_a_redelivered_extension_sends_nothing_more_and_a_second_extension_sends_again(world: World) -> None:
    # GIVEN a question extended once, told by the sweep
    question_id = world.ask()
    world.clock.now = world.asked_at + timedelta(hours=1)
    world.extend(question_id, "PT4H")
    world.at(world.clock.now)
    first = world.emails(question_id, "Deadline extended")
    cards = len(world.cards(question_id, "wait.extended"))
    # WHEN the same wait.extended is delivered twice more (a redelivery, a re-announcement) and the sweep runs again
    again = extended_envelope(world.row(question_id))
    assert publish(again, world.announcers).ok
    assert publish(again, world.announcers).ok
    world.at(world.clock.now + timedelta(minutes=1))
    # THEN nobody got another email or card (`emails` and `cards` fail on a second one to the same person)
    assert world.emails(question_id, "Deadline extended").keys() == first.keys()
    assert len(world.cards(question_id, "wait.extended")) == cards == 2
    # WHEN it is extended a second time
    world.extend(question_id, "PT2H")
    world.at(world.clock.now)
    # THEN each person is told again, with links to the newest deadline
    told = world.sent(question_id, "Deadline extended")
    assert sorted(e.to for e in told) == [ANA, ANA, DANA, DANA]
    newest = world.follow(email_links(told[-1])["approve"], "/link").json()["link"]["expires_at"]
    assert newest == (world.asked_at + timedelta(hours=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    teams_told = [
        b
        for b in world.teams.accepted()
        if b["agent_wait"]["question_id"] == question_id and b["agent_wait"]["event"] == "wait.extended"
    ]
    assert sorted(b["agent_wait"]["dedupe_key"].rsplit(":", 1)[1] for b in teams_told) == ["1", "1", "2", "2"]


# -- an escalated audience answers by email ------------------------------------------------------------------------


def _escalating(*, replace_answerers: bool) -> WaitPolicy:
    step = Escalation(after="PT2H", answerer_groups=["finance-managers"], replace_answerers=replace_answerers)
    return WaitPolicy(
        timeout="PT4H",
        allowed_actions=("approve", "reject"),
        answerer_groups=["finance"],
        escalation=[step],
        extend=EXTENDABLE,
    )


def test_an_escalation_emails_its_new_audience_a_link_that_answers_and_the_kept_audience_still_may(
    world: World,
) -> None:
    # GIVEN two finance questions that escalate to the managers after two hours, keeping finance
    first, second = world.ask(_escalating(replace_answerers=False)), world.ask(_escalating(replace_answerers=False))
    ana_asked = email_links(world.emails(second, "Your answer is needed")[ANA])
    # WHEN the step falls due and the sweep runs
    world.at(world.asked_at + timedelta(hours=2, minutes=1))
    # THEN max, the new audience, got an email whose link answers as him
    escalated = world.emails(first, "Escalated")
    assert MAX in escalated
    answered = world.follow(email_links(escalated[MAX])["approve"])
    assert (answered.status, answered.json()["result"]) == (200, "won"), answered.body
    assert world.row(first).answered_by == MAX
    # AND ana, whom the policy keeps, still answers with her first email's link
    kept = world.follow(ana_asked["reject"])
    assert (kept.status, kept.json()["result"]) == (200, "won"), kept.body
    assert world.row(second).answered_by == ANA


def test_an_escalation_that_replaces_the_audience_emails_only_the_new_one_and_refuses_the_old_links(
    world: World,
) -> None:
    question_id = world.ask(_escalating(replace_answerers=True))
    ana_asked = email_links(world.emails(question_id, "Your answer is needed")[ANA])
    world.at(world.asked_at + timedelta(hours=2, minutes=1))
    # THEN only max got the escalation email
    assert set(world.emails(question_id, "Escalated")) == {MAX}
    # AND ana's link, still signed and unexpired, no longer answers: the policy handed the question over
    refused = world.follow(ana_asked["approve"])
    assert (refused.status, refused.json()["reason"]) == (403, "answerer_not_allowed"), refused.body
    assert world.row(question_id).status is QuestionStatus.OPEN


@pytest.mark.parametrize(
    ("replace_answerers", "told"),
    [(False, {ANA, DANA, MAX}), (True, {MAX})],
    ids=["keeps-finance", "replaces-finance"],
)
def test_an_extension_after_an_escalation_tells_the_audience_the_question_has_now(
    world: World, replace_answerers: bool, told: set[str]
) -> None:
    # GIVEN a question escalated to the managers
    question_id = world.ask(_escalating(replace_answerers=replace_answerers))
    world.at(world.asked_at + timedelta(hours=2, minutes=1))
    # WHEN a manager extends it by four hours and the sweep runs
    assert world.extend(question_id, "PT4H").status == 200
    world.at(world.clock.now)
    # THEN whoever may answer now is told, by email and in Teams; an audience the step replaced is not
    assert set(world.emails(question_id, "Deadline extended")) == told
    assert set(world.cards(question_id, "wait.extended")) == told
    # AND max's new link answers past the old deadline
    world.clock.now = world.asked_at + timedelta(hours=5)
    link = email_links(world.emails(question_id, "Deadline extended")[MAX])["approve"]
    answered = world.follow(link)
    assert (answered.status, answered.json()["result"]) == (200, "won"), answered.body
