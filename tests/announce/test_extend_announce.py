"""What each people channel does with `wait.extended`, announcer by announcer: the Slack message redrawn once with
the new deadline, a Teams channel card once per extension, and what an extension that no longer holds sends
(nothing). The deadline moves through `ExtendService` on an in-memory ledger and the real `Sweep` announces it.

The host-level proofs (links that answer until the new deadline, through the answer API, on moto's SES and a Teams
webhook) are in `tests/host/test_extend_rearms.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.announce import test_teams_cards
from tests.support.fake_slack import FakeSlack
from tests.support.fake_teams import FakeTeams

from agent_wait import Question, WaitEnvelope, WaitPolicy, publish
from agent_wait.channels.email import EmailAnnounce, InMemoryEmailSends
from agent_wait.channels.recipients import RecipientRouting
from agent_wait.channels.sends import InMemorySends
from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackRouting
from agent_wait.channels.teams import TeamsAnnounce
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import InMemoryEntryQueue, Sweep
from agent_wait.engine.checks import answerer_for
from agent_wait.engine.extend import ExtendService, extended_envelope
from agent_wait.ledger import Decision, InMemoryLedger, QuestionRecord
from agent_wait.policy.extension import Extension
from agent_wait.policy.followup import Escalation

validator = test_teams_cards.validator  # Microsoft's Adaptive Cards 1.5 schema, as a fixture

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
MANAGER = answerer_for("api", person="maria@example.com", subject="iss#maria", groups=("finance-managers",))
EXTENDABLE = Extension(groups=["finance-managers"], max_total="P2D")
ANYONE = WaitPolicy(timeout="PT4H", allowed_actions=("approve", "reject"), extend=EXTENDABLE)


@dataclass
class Desk:
    """A ledger, the extension service and the sweep that announces what it owes, on one clock."""

    announcers: list[BaseAnnounce]
    now: datetime = T0
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)

    def __post_init__(self) -> None:
        self.service = ExtendService(self.ledger, clock=lambda: self.now)
        self.sweep = Sweep(self.ledger, InMemoryEntryQueue(), announce=self.announcers, clock=lambda: self.now)

    def ask(self, question_id: str, policy: WaitPolicy = ANYONE) -> WaitEnvelope:
        question = Question(f"t-{question_id}", question_id, {"function": "refund", "args": {"amount": 5}}, policy)
        envelope = WaitEnvelope.create(question, now=T0)
        self.ledger.open(envelope, now=T0, unannounced=False)
        assert publish(envelope, self.announcers).ok
        return envelope

    def extend(self, question_id: str, hours: int) -> None:
        assert self.service.extend(question_id, MANAGER, by=timedelta(hours=hours)).extended
        report = self.sweep.run()
        assert question_id in report.told, report

    def row(self, question_id: str) -> QuestionRecord:
        record = self.ledger.find(question_id)
        assert record is not None
        return record


# -- Slack: the message says the new deadline, redrawn once -----------------------------------------------------


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _slack(slack: FakeSlack, desk_ledger: InMemoryLedger) -> SlackAnnounce:
    from slack_sdk import WebClient

    client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
    routing = SlackRouting(channels={"*": "C0ALL"})
    return SlackAnnounce(client, routing, InMemorySlackMessages(), records=desk_ledger.find)


def _answer_by(message: Any) -> str:
    """The `Answer by <deadline>` the message's facts say (the RFC 3339 fallback text of Slack's date)."""
    facts = json.dumps(message.blocks)
    return facts.split("Answer by ", 1)[1].split("|", 1)[1].split(">", 1)[0]


def test_an_extension_redraws_the_slack_message_once_with_the_new_deadline(slack: FakeSlack) -> None:
    # GIVEN a question posted to Slack, due at 13:00
    ledger = InMemoryLedger()
    desk = Desk([_slack(slack, ledger)], ledger=ledger)
    desk.ask("q-slack")
    [posted] = slack.messages("C0ALL")
    assert _answer_by(posted) == "2030-01-01T13:00:00Z"
    # WHEN it is extended by four hours and the sweep tells it, then the same wait.extended is delivered again
    desk.now = T0 + timedelta(hours=1)
    desk.extend("q-slack", 4)
    assert publish(extended_envelope(desk.row("q-slack")), desk.announcers).ok
    # THEN the message was updated once, its buttons kept, and says the new deadline
    message = slack.message("C0ALL", posted.ts)
    assert message.updated == 1
    assert _answer_by(message) == "2030-01-01T17:00:00Z"
    assert "Approve" in json.dumps(message.blocks)
    assert slack.calls_to("chat.postMessage") == [slack.calls_to("chat.postMessage")[0]], "no new post"
    # WHEN it is extended again
    desk.extend("q-slack", 2)
    # THEN it is redrawn again, with the newest deadline
    message = slack.message("C0ALL", posted.ts)
    assert (message.updated, _answer_by(message)) == (2, "2030-01-01T19:00:00Z")


def test_an_extension_told_after_the_decision_leaves_the_slack_message_as_decided(slack: FakeSlack) -> None:
    ledger = InMemoryLedger()
    desk = Desk([_slack(slack, ledger)], ledger=ledger)
    desk.ask("q-late")
    [posted] = slack.messages("C0ALL")
    desk.now = T0 + timedelta(hours=1)
    assert desk.service.extend("q-late", MANAGER, by=timedelta(hours=4)).extended
    told_late = extended_envelope(desk.row("q-late"))
    ledger.decide("t-q-late", "q-late", Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1"), now=desk.now)
    # WHEN the extension's envelope arrives after the question was decided
    assert publish(told_late, desk.announcers).ok
    # THEN the message is not redrawn with buttons and a deadline that no longer hold
    assert slack.message("C0ALL", posted.ts).updated == 0


# -- email: an extension that no longer holds sends nothing; an open audience is told whole ------------------------


class Ses:
    """Records each SendEmail (the recipient and the raw MIME)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    def send_email(self, **request: Any) -> dict[str, str]:
        self.sent.append((request["Destination"]["ToAddresses"][0], request["Content"]["Raw"]["Data"]))
        return {"MessageId": f"m-{len(self.sent)}"}

    def extended(self) -> list[str]:
        return [to for to, raw in self.sent if b"Subject: Deadline extended" in raw]


def _email(ses: Ses, ledger: InMemoryLedger, routing: RecipientRouting) -> EmailAnnounce:
    return EmailAnnounce(ses, routing, InMemoryEmailSends(), sender="approvals@example.com", records=ledger.find)


def test_an_extension_superseded_by_a_later_one_or_by_the_decision_emails_nobody() -> None:
    ses, ledger = Ses(), InMemoryLedger()
    desk = Desk([_email(ses, ledger, RecipientRouting(tags={"*": ["ana@example.com"]}))], ledger=ledger)
    desk.ask("q-old")
    desk.ask("q-decided")
    desk.now = T0 + timedelta(hours=1)
    assert desk.service.extend("q-old", MANAGER, by=timedelta(hours=1)).extended
    first = extended_envelope(desk.row("q-old"))
    assert desk.service.extend("q-old", MANAGER, by=timedelta(hours=1)).extended
    assert desk.service.extend("q-decided", MANAGER, by=timedelta(hours=1)).extended
    before_the_decision = extended_envelope(desk.row("q-decided"))
    decision = Decision(QuestionStatus.ANSWERED, {"action": "reject"}, "a-1")
    ledger.decide("t-q-decided", "q-decided", decision, now=desk.now)
    # WHEN the first extension's envelope arrives after the second moved the deadline again, and an extension's
    # envelope arrives after its question was decided
    assert publish(first, desk.announcers).ok
    assert publish(before_the_decision, desk.announcers).ok
    # THEN neither emails anyone: the deadline they tell no longer holds
    assert ses.extended() == []
    # AND the second extension's own envelope tells the newest deadline
    publish(extended_envelope(desk.row("q-old")), desk.announcers)
    assert ses.extended() == ["ana@example.com"]


def test_an_extension_of_a_question_open_to_anyone_tells_the_tag_readers_of_every_step() -> None:
    # GIVEN a question anyone may answer, emailed by its tag to ana, then escalated by tag to max
    routing = RecipientRouting(
        tags={"approver_group:finance": ["ana@example.com"], "approver_group:managers": ["max@example.com"]}
    )
    policy = WaitPolicy(
        timeout="PT4H",
        allowed_actions=("approve", "reject"),
        tags={"approver_group": "finance"},
        escalation=[Escalation(after="PT1H", tags={"approver_group": "managers"})],
        extend=EXTENDABLE,
    )
    ses, ledger = Ses(), InMemoryLedger()
    desk = Desk([_email(ses, ledger, routing)], ledger=ledger)
    desk.ask("q-open", policy)
    desk.now = T0 + timedelta(hours=1, minutes=1)
    assert desk.sweep.run().escalated == ("q-open",)
    # WHEN the deadline is extended
    desk.extend("q-open", 2)
    # THEN both are told: ana's first links still answer (anyone may), and expire at the old deadline
    assert sorted(ses.extended()) == ["ana@example.com", "max@example.com"]


# -- Teams: a channel card per extension, once ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def teams() -> Iterator[FakeTeams]:
    with FakeTeams() as fake:
        yield fake


def test_a_teams_channel_gets_one_card_per_extension_with_unbound_links(teams: FakeTeams, validator: Any) -> None:
    def links(envelope: WaitEnvelope, recipient: Any) -> dict[str, str]:
        assert recipient is None, "a channel card's links are made for nobody"
        until = envelope.expires_at
        return {
            a: f"https://api.example.com/questions/{envelope.question_id}/confirm#{a}.{until}"
            for a in envelope.allowed_actions
        }

    ledger = InMemoryLedger()
    channel = TeamsAnnounce(teams.url, mode="channel", links=links, records=ledger.find, sends=InMemorySends())
    desk = Desk([channel], ledger=ledger)
    desk.ask("q-teams-channel")
    desk.now = T0 + timedelta(hours=1)
    desk.extend("q-teams-channel", 4)
    assert publish(extended_envelope(desk.row("q-teams-channel")), desk.announcers).ok  # delivered again
    desk.extend("q-teams-channel", 1)

    bodies = [
        b
        for b in teams.accepted()
        if b["agent_wait"]["question_id"] == "q-teams-channel" and b["agent_wait"]["event"] == "wait.extended"
    ]
    assert [b["agent_wait"]["dedupe_key"] for b in bodies] == [
        "wait.extended:q-teams-channel:1",
        "wait.extended:q-teams-channel:2",
    ]
    first = bodies[0]["attachments"][0]["content"]
    assert first["actions"][0]["url"].endswith("#approve.2030-01-01T17:00:00Z")
    assert first["body"][0]["text"].startswith("Deadline extended to ")
    assert [error.message for error in validator.iter_errors(first)] == [], "an Adaptive Card 1.5 Teams renders"
