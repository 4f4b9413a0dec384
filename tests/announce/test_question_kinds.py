"""Every question kind as Slack, Teams and email show it, read as the inbox reads it: a batched review is "Review 2
tool calls: drop_table, notify_team" with one block per call; an Agent Inbox request, a `response_schema` question, a
single tool-call approval, a `@wait` call and a plain ask each read as text and tables, never as raw JSON, escaped
line breaks or Markdown's `**` (`tests/support/question_kinds.py`).

What is checked is what a person sees: the Slack message as posted to FakeSlack, the Teams card as posted, the email's
subject, HTML and text. The buttons each offers are pressed through its door in `tests/host/test_link_kinds.py`
(links) and below (Slack, over real HTTP).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from slack_sdk import WebClient
from tests.support.fake_slack import FakeSlack
from tests.support.question_kinds import HEADLINES, KINDS, RAW, T0, calls_of, envelope_of

from agent_wait.channels.email.render import question_email
from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackInteractions, SlackRouting
from agent_wait.channels.teams.announce import TeamsAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys, answer_links
from agent_wait.ledger import InMemoryLedger
from agent_wait.local.api_server import LocalApi

API = "https://api.example.com"
INBOX = f"{API}/inbox"
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k" * 40}))
SIGNING_SECRET = "kinds-signing-secret"
ANSWER_PREFIX, OPEN_MODAL = "agent_wait:answer:", "agent_wait:modal"


def _links(envelope: WaitEnvelope, _recipient: Any = None) -> dict[str, str]:
    return answer_links(KEYS, API, envelope, now=T0)


def _texts(node: Any, keys: tuple[str, ...] = ("text",)) -> Iterator[str]:
    """Every string under one of `keys` anywhere in a JSON document (a card's or a message's texts)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and isinstance(value, str):
                yield value
            else:
                yield from _texts(value, keys)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item, keys)


def _assert_reads_as_text(shown: str) -> None:
    for raw in RAW:
        assert raw not in shown, f"a person sees {raw!r} in: {shown[:400]}"


class _Visible(HTMLParser):
    """The text an HTML email shows, and its links."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.calls: list[str] = []
        self._skip = 0
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("style", "title"):
            self._skip += 1
        if tag == "a":
            self._href = found.get("href") or ""
            self.text.append("")
        if found.get("data-call"):
            self.calls.append(str(found["data-call"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "title"):
            self._skip -= 1
        if tag == "a" and self._href is not None:
            self.links.append((self.text[-1].strip(), self._href))
            self._href = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._href is not None:
            self.text[-1] += data
        else:
            self.text.append(data)


# -- Teams -----------------------------------------------------------------------------------------------------


def _card(kind: str) -> dict[str, Any]:
    teams = TeamsAnnounce(
        "https://example.logic.azure.com/workflows/x?sig=y", mode="channel", links=_links, inbox_url=INBOX
    )
    return teams.card(envelope_of(kind), Transition.CREATED, None)


@pytest.mark.parametrize("kind", KINDS)
def test_a_teams_card_reads_each_kind_as_the_inbox_does(kind: str) -> None:
    # GIVEN a question of each kind, WHEN Teams draws its card
    card = _card(kind)
    shown = "\n".join(_texts(card, ("text", "title", "value", "fallbackText")))
    # THEN a person reads text and tables, never raw JSON or escaped line breaks (Teams draws the card's Markdown
    # itself: `**` is its bold, and the preview page's test sees it drawn)
    for raw in RAW[:2]:
        assert raw not in shown
    # AND the card's title is the inbox's headline
    headings = [b["text"] for b in card["body"] if b.get("style") == "heading"]
    assert headings
    assert headings[0].startswith(HEADLINES[kind])
    # AND each call the question asks about has a block of its own, with its arguments as facts
    calls = [b for b in card["body"] if str(b.get("id", "")).startswith("call-")]
    assert [c["id"] for c in calls] == [f"call-{n}" for n in range(len(calls_of(kind)))]
    for block, name in zip(calls, calls_of(kind), strict=True):
        assert name in json.dumps(block)
        assert any(item.get("type") == "FactSet" for item in block["items"])


@pytest.mark.parametrize("kind", KINDS)
def test_a_teams_card_offers_only_the_links_that_decide_and_the_inbox_for_the_rest(kind: str) -> None:
    # GIVEN a question of each kind, WHEN Teams draws its card
    card = _card(kind)
    envelope = envelope_of(kind)
    links = _links(envelope)
    buttons = {a["title"]: a["url"] for a in card.get("actions", [])}
    # THEN every answer button is one of the question's signed links (each pressed in tests/host/test_link_kinds.py)
    answers = {t: u for t, u in buttons.items() if t != "Open in the inbox"}
    assert sorted(answers.values()) == sorted(links.values())
    # AND no button asks for an answer a link cannot carry (an edit of several calls, a reply, a form)
    assert "edit" not in links
    assert "response" not in links
    assert "respond" not in links
    # AND the inbox, where the rest is answered, is one button away
    assert buttons["Open in the inbox"] == f"{INBOX}#/questions/{envelope.question_id}"


# -- email -----------------------------------------------------------------------------------------------------


def _email(kind: str) -> tuple[Any, _Visible]:
    envelope = envelope_of(kind)
    inbox = f"{INBOX}#/questions/{envelope.question_id}"
    content = question_email(envelope, links=_links(envelope), recipient="ana@example.com", now=T0, inbox_url=inbox)
    visible = _Visible()
    visible.feed(content.html)
    return content, visible


@pytest.mark.parametrize("kind", KINDS)
def test_an_email_reads_each_kind_as_the_inbox_does(kind: str) -> None:
    # GIVEN a question of each kind, WHEN its email is rendered
    content, visible = _email(kind)
    # THEN its subject names what is asked, as the inbox's headline does
    assert content.subject == f"Your answer is needed: {HEADLINES[kind]}" or content.subject.startswith(
        f"Your answer is needed: {HEADLINES[kind]}"
    )
    # AND neither part shows raw JSON, an escaped line break or Markdown markers
    _assert_reads_as_text(content.subject)
    _assert_reads_as_text(" ".join(visible.text))
    _assert_reads_as_text(content.text)
    assert "…" not in " ".join(visible.text), "nothing the question says is cut"
    # AND each call has a block of its own in the HTML, named in the text part
    assert visible.calls == calls_of(kind)
    for name in calls_of(kind):
        assert name in content.text


@pytest.mark.parametrize("kind", KINDS)
def test_an_email_offers_only_the_links_that_decide_and_the_inbox_for_the_rest(kind: str) -> None:
    # GIVEN a question of each kind, WHEN its email is rendered
    envelope = envelope_of(kind)
    _, visible = _email(kind)
    links = _links(envelope)
    # THEN its answer buttons are exactly its signed links, and the inbox is linked for the rest
    confirm = sorted(href for _, href in visible.links if "/confirm#" in href)
    assert confirm == sorted(links.values())
    assert "edit" not in links
    assert any(href == f"{INBOX}#/questions/{envelope.question_id}" for _, href in visible.links)


# -- Slack, through its door -----------------------------------------------------------------------------------


class SlackDoor:
    """The answer API with Slack on over real HTTP; FakeSlack holds what `SlackAnnounce` posted."""

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.ledger = InMemoryLedger()
        self.queue = InMemoryEntryQueue()
        client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
        routing = SlackRouting(channels={"*": "C0ALL"})
        self.service = AnswerService(self.ledger, self.queue, clock=lambda: T0)
        interactions = SlackInteractions(
            signing_secret=SIGNING_SECRET,
            service=self.service,
            find=self.ledger.find,
            client=client,
            routing=routing,
            clock=lambda: T0,
        )
        self.announcer = SlackAnnounce(
            client, routing, InMemorySlackMessages(), records=self.ledger.find, clock=lambda: T0, inbox_url=INBOX
        )
        context = ApiContext(ledger=self.ledger, service=self.service, clock=lambda: T0, slack=interactions)
        app = create_app(lambda: context)
        self.api = LocalApi(lambda event: app.resolve(event, {}))

    def ask(self, kind: str, question_id: str) -> Any:
        envelope = envelope_of(kind, question_id)
        self.ledger.open(envelope, now=T0)
        self.announcer.announce(envelope)
        [message] = [
            m
            for m in self.slack.messages()
            if (m.metadata or {}).get("event_payload", {}).get("question_id") == question_id
        ]
        return message

    def decided(self, question_id: str) -> bool:
        record = self.ledger.find(question_id)
        return record is not None and record.status is not QuestionStatus.OPEN

    def click(self, message: Any, action_id: str) -> Any:
        endpoint = f"{self.api.url}/slack/interactions"
        return self.slack.click(
            endpoint, message, action_id, user_id="U0ANA", signing_secret=SIGNING_SECRET, timestamp=int(T0.timestamp())
        )

    def submit(self, question_id: str, values: dict[str, dict[str, Any]]) -> Any:
        view = [v for v in self.slack.views.values() if v.get("private_metadata") == question_id][-1]
        endpoint = f"{self.api.url}/slack/interactions"
        return self.slack.submit_view(
            endpoint, view, values, user_id="U0ANA", signing_secret=SIGNING_SECRET, timestamp=int(T0.timestamp())
        )


@pytest.fixture(scope="module")
def door() -> Iterator[SlackDoor]:
    with FakeSlack() as slack:
        door = SlackDoor(slack)
        with door.api:
            yield door


def _buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"] if e.get("type") == "button"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_slack_message_reads_each_kind_as_the_inbox_does(door: SlackDoor, kind: str) -> None:
    # GIVEN a question of each kind, WHEN it is posted to Slack
    message = door.ask(kind, f"q-read-{kind}")
    # THEN the message and its notification text read as text: no raw JSON, escaped line break or `**`
    _assert_reads_as_text("\n".join(_texts(message.blocks)))
    _assert_reads_as_text(message.text)
    # AND its header is the inbox's headline
    [header] = [b for b in message.blocks if b["type"] == "header"]
    assert header["text"]["text"].startswith(HEADLINES[kind])
    # AND each call has a block of its own, its arguments as fields
    calls = [b for b in message.blocks if str(b.get("block_id", "")).startswith("call:")]
    assert [b["block_id"] for b in calls] == [f"call:{n}" for n in range(len(calls_of(kind)))]
    for block, name in zip(calls, calls_of(kind), strict=True):
        assert name in block["text"]["text"]
        assert block.get("fields")
    # AND a description's Markdown is mrkdwn: `**Drop**` is Slack's bold `*Drop*`, not its emphasis
    if kind == "review":
        assert "*Drop* the `orders` table" in calls[0]["text"]["text"]


def _filled(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A valid filling of a modal: each choice as offered first (or as drawn), each empty number 3, text kept."""
    values: dict[str, dict[str, Any]] = {}
    for block in view["blocks"]:
        if block["type"] != "input":
            continue
        element = block["element"]
        action_id = element["action_id"]
        if element["type"] == "static_select":
            chosen = element.get("initial_option") or element["options"][0]
            values[block["block_id"]] = {action_id: chosen["value"]}
        elif element["type"] == "number_input":
            values[block["block_id"]] = {action_id: element.get("initial_value") or "3"}
        elif element.get("initial_value") is not None:
            values[block["block_id"]] = {action_id: element["initial_value"]}
    return values


@pytest.mark.parametrize("kind", KINDS)
def test_every_slack_button_of_each_kind_decides_through_the_door(door: SlackDoor, kind: str) -> None:
    # GIVEN the buttons a question of this kind gets in Slack
    shown = door.ask(kind, f"q-buttons-{kind}")
    buttons = _buttons(shown.blocks)
    assert buttons, "every kind can be answered from Slack"
    for n, button in enumerate(buttons):
        question_id = f"q-press-{kind}-{n}"
        message = door.ask(kind, question_id)
        if "url" in button:  # a link button opens the inbox on this question, and decides nothing
            assert button["url"].startswith(f"{INBOX}#/questions/")
            continue
        # WHEN a person presses it (and fills the form it opens, as drawn)
        reply = door.click(message, button["action_id"])
        assert reply.status == 200
        if button["action_id"] == OPEN_MODAL:
            view = [v for v in door.slack.views.values() if v.get("private_metadata") == question_id][-1]
            _assert_reads_as_text("\n".join(_texts(view["blocks"])))
            submitted = door.submit(question_id, _filled(view))
            assert submitted.status == 200, submitted.body
            assert b"errors" not in submitted.body, submitted.body
        # THEN the question is decided: no button leads to a refusal
        assert door.decided(question_id), f"{button['action_id']} on a {kind} question decided nothing"


@pytest.mark.parametrize("kind", KINDS)
def test_an_emails_subject_reads_back_whole_from_its_mime_message(kind: str) -> None:
    import email
    import email.policy

    from agent_wait.channels.email.render import mime_message

    # GIVEN the email of a question whose headline is long (a call with its arguments)
    content, _ = _email(kind)
    # WHEN it is sent as MIME and a mail client reads it back
    raw = mime_message(content, sender="a@example.com", to="ana@example.com", question_id="q-1")
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    # THEN the subject is as written: not folded into a leading space
    assert parsed["Subject"] == content.subject
