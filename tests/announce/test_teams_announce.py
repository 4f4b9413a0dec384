"""`TeamsAnnounce` against a local Workflows webhook over real HTTP: the question card, its reminder and escalation
cards and its outcome card arrive; one card per person with that person's links, or one card for a channel; a
throttled or failing flow is retried as far as it is safe, and everything else is a named, counted failure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.fake_teams import FakeTeams

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.sends import DynamoDbSends, InMemorySends, Send
from agent_wait.channels.teams import TeamsAnnounce
from agent_wait.channels.teams.announce import ACCEPTED, CHANNEL, send_key
from agent_wait.contract.announcer import DeliveryStatus
from agent_wait.contract.envelope import Transition
from agent_wait.errors import ArgumentError, TeamsDeliveryError
from agent_wait.local.tables import question_keyed_table


@dataclass(frozen=True)
class Person:
    address: str
    principal: str
    groups: tuple[str, ...] = ()


ALICE = Person("alice@example.com", "alice@example.com", ("finance",))
BOB = Person("bob@example.com", "bob@example.com", ("finance",))


def _envelope(transition: Transition = Transition.CREATED, **policy: Any) -> WaitEnvelope:
    settings: dict[str, Any] = {
        "timeout": "P3D",
        "default": {"action": "reject"},
        "allowed_actions": ["approve", "reject"],
    }
    settings.update(policy)
    asked = {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}}
    return WaitEnvelope.create(Question("t-1", "q-1", asked, policy=WaitPolicy(**settings)), transition=transition)


def _links(envelope: WaitEnvelope, person: Person | None) -> dict[str, str]:
    who = person.principal if person else "anyone"
    return {
        a: f"https://api.example.com/questions/{envelope.question_id}/confirm#{who}.{a}"
        for a in envelope.allowed_actions
    }


@pytest.fixture(scope="module")
def teams() -> Any:
    with FakeTeams() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _fresh(teams: FakeTeams) -> None:
    teams.received.clear()


def _channel(teams: FakeTeams, **kwargs: Any) -> TeamsAnnounce:
    return TeamsAnnounce(teams.url, mode="channel", links=_links, sleep=kwargs.pop("sleep", lambda s: None), **kwargs)


def test_the_question_its_reminder_its_escalation_and_its_outcome_arrive_as_cards(teams: FakeTeams) -> None:
    announcer = _channel(teams, inbox_url="https://api.example.com/inbox")
    envelope = _envelope()
    steps = [
        envelope,
        envelope.for_transition(Transition.REMINDER, progress={"reminder": 1, "of": 2}),
        envelope.for_transition(Transition.ESCALATED, progress={"escalation": 1, "of": 1}),
        envelope.for_transition(Transition.EXPIRED),
    ]
    assert [announcer.announce(step).status for step in steps] == [DeliveryStatus.DELIVERED] * 4
    question, reminder, escalation, outcome = teams.cards()
    assert question["body"][0]["text"] == "Waiting for an answer"
    assert [a["title"] for a in question["actions"]] == ["Approve", "Reject", "Open in the inbox"]
    assert question["actions"][0]["url"].endswith("#anyone.approve")
    assert question["actions"][2]["url"] == "https://api.example.com/inbox#/questions/q-1"
    assert reminder["body"][0]["text"] == "Reminder 1 of 2: this still waits for an answer"
    assert escalation["body"][0]["text"].startswith("Escalated (step 1 of 1)")
    assert outcome["body"][0]["text"] == "Expired"
    assert [a["title"] for a in outcome["actions"]] == ["Open in the inbox"]
    events = [body["agent_wait"]["event"] for body in teams.accepted()]
    assert events == ["wait.created", "wait.reminder", "wait.escalated", "wait.expired"]
    assert {body["agent_wait"]["recipient"] for body in teams.accepted()} == {None}


def test_votes_and_resumes_are_not_posted_unless_asked_for(teams: FakeTeams) -> None:
    announcer = _channel(teams)
    voted = _envelope().for_transition(Transition.VOTED, progress={"votes": [], "approvals": 0, "needed": 2})
    for step in (voted, _envelope().for_transition(Transition.RESUMED)):
        assert announcer.announce(step).status is DeliveryStatus.SKIPPED
    assert teams.received == []


def test_each_person_gets_their_own_card_with_links_bound_to_them(teams: FakeTeams) -> None:
    announcer = TeamsAnnounce(teams.url, recipients=lambda envelope: [ALICE, BOB], links=_links)
    assert announcer.announce(_envelope()).ok
    bodies = teams.accepted()
    assert [b["agent_wait"]["recipient"] for b in bodies] == ["alice@example.com", "bob@example.com"]
    for body, person in zip(bodies, (ALICE, BOB), strict=True):
        urls = [a["url"] for a in body["attachments"][0]["content"]["actions"]]
        assert urls == [
            f"https://api.example.com/questions/q-1/confirm#{person.principal}.{a}" for a in ("approve", "reject")
        ]
        assert body["agent_wait"]["question_id"] == "q-1"
        assert body["agent_wait"]["dedupe_key"] == "wait.created:q-1"


def test_the_outcome_card_says_who_answered_from_the_questions_row(teams: FakeTeams) -> None:
    @dataclass
    class Row:
        status: Any
        outcome: Any = None
        answer: Any = None
        answered_by: str | None = None
        via: str | None = None
        decided_at: str | None = None
        resumed_at: str | None = None
        failure: Any = None
        reason: str | None = None

    from agent_wait.contract.schema import QuestionStatus

    row = Row(QuestionStatus.ANSWERED, None, {"action": "approve"}, "alice@example.com", "link", "2030-01-01T10:00:00Z")
    announcer = TeamsAnnounce(teams.url, mode="channel", records=lambda question_id: row)
    announcer.announce(_envelope().for_transition(Transition.ANSWERED))
    [card] = teams.cards()
    assert card["body"][-1]["text"].startswith("alice@example.com answered **approve** with a signed link at {{DATE(")


def test_a_question_nobody_is_mapped_for_fails_its_delivery_by_name(teams: FakeTeams) -> None:
    announcer = TeamsAnnounce(teams.url, recipients=lambda envelope: [], links=_links)
    delivery = announcer.announce(_envelope())
    assert delivery.status is DeliveryStatus.FAILED
    assert "TeamsDeliveryError: no Teams recipient for question q-1" in (delivery.error or "")
    assert teams.received == []


def test_a_throttled_webhook_is_sent_again_after_retry_after(teams: FakeTeams) -> None:
    waited: list[float] = []
    announcer = _channel(teams, sleep=waited.append)
    teams.fail_next(429, retry_after="2")
    teams.fail_next(503)
    assert announcer.announce(_envelope()).ok
    assert [r.status for r in teams.received] == [429, 503, 202]
    assert waited == [2.0, 1.0]  # Retry-After, then the backoff of a second attempt
    assert len(teams.cards()) == 1


def test_a_webhook_that_keeps_failing_is_a_counted_failure_after_the_last_attempt(teams: FakeTeams) -> None:
    announcer = _channel(teams, attempts=3)
    teams.fail_next(500, times=3)
    with pytest.raises(TeamsDeliveryError, match=re.escape("answered HTTP 500 after 3 attempts")) as raised:
        announcer.deliver(_envelope(), Transition.CREATED)
    assert (raised.value.status, raised.value.attempts) == (500, 3)
    teams.fail_next(429, times=3, retry_after="600")
    waited: list[float] = []
    throttled = _channel(teams, sleep=waited.append)
    delivery = throttled.announce(_envelope())
    assert delivery.status is DeliveryStatus.FAILED
    assert "gave up after 3 attempts" in (delivery.error or "")
    assert waited == [10.0, 10.0]  # never longer than MAX_RETRY_WAIT, whatever Retry-After asks
    assert throttled.stats.failed == 1


@pytest.mark.parametrize(
    ("make_url", "status", "hint"),
    [
        (lambda url: url.replace("sig=", "sig=x"), 401, "the URL's signature is not accepted"),
        (lambda url: url.replace("/invoke", "/gone"), 404, "no such flow"),
    ],
    ids=["bad-signature", "no-flow"],
)
def test_a_refusal_is_not_retried_and_says_what_to_fix(teams: FakeTeams, make_url: Any, status: int, hint: str) -> None:
    announcer = TeamsAnnounce(make_url(teams.url), mode="channel")
    with pytest.raises(TeamsDeliveryError, match=re.escape(hint)) as raised:
        announcer.deliver(_envelope(), Transition.CREATED)
    assert raised.value.status == status
    assert raised.value.attempts == 1
    assert len(teams.received) == 1
    assert "sig=" not in raised.value.message
    assert "/workflows/" not in raised.value.message


def test_one_persons_card_failing_leaves_the_others_delivered_and_is_named(teams: FakeTeams) -> None:
    announcer = TeamsAnnounce(teams.url, recipients=lambda e: [ALICE, BOB, ALICE], links=_links, attempts=1)
    teams.fail_next(500)
    delivery = announcer.announce(_envelope())
    assert delivery.status is DeliveryStatus.FAILED
    assert "1 of 3 Teams cards not delivered" in (delivery.error or "")
    assert "alice@example.com" not in (delivery.error or "")
    assert len(teams.cards()) == 2


def test_an_unreachable_webhook_and_an_oversized_card_fail_without_showing_the_url() -> None:
    unreachable = TeamsAnnounce("http://127.0.0.1:9/workflows/x?sig=secret", mode="channel")
    with pytest.raises(TeamsDeliveryError, match=re.escape("http://127.0.0.1:9 unreachable")):
        unreachable.deliver(_envelope(), Transition.CREATED)
    many = {f"action_{i}": "https://api.example.com/" + "x" * 400 for i in range(80)}
    oversized = TeamsAnnounce("http://127.0.0.1:9/x?sig=secret", mode="channel", links=lambda e, p: many)
    with pytest.raises(TeamsDeliveryError, match="over Teams' limit of about 28000"):
        oversized.deliver(_envelope(), Transition.CREATED)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"url": "http://teams.example.com/x?sig=s"}, "TeamsAnnounce url must be the flow's https:// trigger URL"),
        ({"url": "ftp://x"}, "TeamsAnnounce url must be the flow's https:// trigger URL"),
        ({"mode": "group"}, "TeamsAnnounce mode must be 'people' or 'channel'; got 'group'"),
        ({"mode": "people"}, "TeamsAnnounce in 'people' mode needs recipients"),
        ({"attempts": 0}, "TeamsAnnounce attempts must be a whole number from 1 to 5; got 0"),
        ({"timeout": 0}, "TeamsAnnounce timeout must be more than 0 and at most 60 seconds; got 0"),
    ],
)
def test_a_bad_argument_is_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"url": "https://x.example.com/workflows/1?sig=s", "mode": "channel", **kwargs}
    with pytest.raises(ArgumentError, match=re.escape(message)) as raised:
        TeamsAnnounce(arguments.pop("url"), **arguments)
    assert "sig=s" not in raised.value.message


def test_its_repr_names_the_origin_only() -> None:
    announcer = TeamsAnnounce("https://x.example.com/workflows/1?sig=secret", mode="channel")
    assert repr(announcer) == "TeamsAnnounce(name='teams', origin='https://x.example.com', mode='channel')"


# -- once: the cards a delivery already got out are not posted again ------------------------------------------


def test_a_redelivered_event_posts_no_card_twice(teams: FakeTeams) -> None:
    """The router and the sweep announce at least once: the same created event again posts nothing new."""
    sends = InMemorySends()
    announcer = TeamsAnnounce(teams.url, recipients=lambda e: [ALICE, BOB], links=_links, sends=sends)
    envelope = _envelope()
    assert announcer.announce(envelope).ok
    assert announcer.announce(envelope.for_transition(Transition.CREATED)).ok  # a redelivery: a fresh event id
    assert [b["agent_wait"]["recipient"] for b in teams.accepted()] == ["alice@example.com", "bob@example.com"]
    recorded = sends.sends("q-1")
    assert {s.key: s.message_id for s in recorded.values()} == {
        "wait.created:q-1|alice@example.com": ACCEPTED,
        "wait.created:q-1|bob@example.com": ACCEPTED,
    }
    # A later step is a card of its own, under its own key: the second reminder is not taken for the first.
    for n in (1, 2):
        reminder = envelope.for_transition(Transition.REMINDER, progress={"reminder": n, "of": 2})
        assert announcer.announce(reminder).ok
        assert announcer.announce(reminder).ok
    assert len(teams.accepted()) == 6


def test_a_retry_after_one_person_failed_posts_only_that_persons_card(teams: FakeTeams) -> None:
    """Without the record, the owed retry posted every person's card again; with it, only the missing one."""
    sends = InMemorySends()
    announcer = TeamsAnnounce(teams.url, recipients=lambda e: [ALICE, BOB], links=_links, attempts=1, sends=sends)
    teams.fail_next(500)  # Alice's card
    assert announcer.announce(_envelope()).status is DeliveryStatus.FAILED
    assert [b["agent_wait"]["recipient"] for b in teams.accepted()] == ["bob@example.com"]
    assert announcer.announce(_envelope()).ok  # the owed notice, sent again by the sweep
    assert [b["agent_wait"]["recipient"] for b in teams.accepted()] == ["bob@example.com", "alice@example.com"]


def test_a_card_claimed_by_an_attempt_that_died_is_posted_again(teams: FakeTeams) -> None:
    """A webhook cannot be asked what it posted: a claim never marked accepted is the at-least-once window."""
    sends = InMemorySends()
    announcer = TeamsAnnounce(teams.url, mode="channel", links=_links, sends=sends)
    envelope = _envelope()
    sends.claim("q-1", Send(send_key(envelope, Transition.CREATED, None), CHANNEL, "2026-12-04T10:00:00Z"))
    assert announcer.announce(envelope).ok
    assert len(teams.accepted()) == 1
    assert sends.sends("q-1")[send_key(envelope, Transition.CREATED, None)].message_id == ACCEPTED


def test_the_record_is_kept_in_dynamodb_across_announcers(teams: FakeTeams, aws_client: Any, unique: str) -> None:
    """Two announcers (the router's and the sweep's) on one table: the second posts nothing the first got out."""
    dynamodb = aws_client("dynamodb")
    table = f"teams-sends-{unique}"
    question_keyed_table(dynamodb, table)
    router, sweep = (
        TeamsAnnounce(
            teams.url, recipients=lambda e: [ALICE], links=_links, sends=DynamoDbSends(table, client=dynamodb)
        )
        for _ in range(2)
    )
    assert router.announce(_envelope()).ok
    assert sweep.announce(_envelope()).ok
    assert len(teams.accepted()) == 1
