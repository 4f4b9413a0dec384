"""A batched review, an Agent Inbox question and a schema question in Chromium, in every channel, read as the inbox
reads them: the Slack preview (message and modal), the Teams page (Microsoft's renderer, its buttons live), the email,
and the signed-link page a Teams button opens, where confirming decides the question.

One answer API in process (`create_app` on an in-memory ledger, behind `LocalApi`), whose `/dev/teams` keeps the cards
`TeamsAnnounce` posts to it. `AGENT_WAIT_SCREENSHOTS=docs/images` keeps the screenshots docs/slack.md, docs/teams.md
and docs/email.md show; each was looked at.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient
from tests.support.fake_slack import FakeSlack
from tests.support.question_kinds import HEADLINES, RAW, T0, calls_of, envelope_of

from agent_wait.channels.email.render import question_email
from agent_wait.channels.slack import (
    InMemorySlackMessages,
    PreviewMessage,
    SlackAnnounce,
    SlackRouting,
    preview_page,
)
from agent_wait.channels.slack.preview import question_modal
from agent_wait.channels.teams.announce import TeamsAnnounce
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys, answer_links
from agent_wait.ledger import InMemoryLedger
from agent_wait.local.api_server import LocalApi
from agent_wait.local.teams_preview import TeamsCards

pytestmark = pytest.mark.timeout(180)

KINDS = ("review", "agent_inbox", "schema")
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k" * 40}))
FOLD = 800
"""A laptop's screen height: what a person must act on is above it."""


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def _target(tmp_path: Path) -> Path:
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


def _assert_reads_as_text(shown: str) -> None:
    for raw in RAW:
        assert raw not in shown, f"a person sees {raw!r} in: {shown[:600]}"


class Api:
    """The answer API with signed links and the local Teams page, on 127.0.0.1."""

    def __init__(self) -> None:
        self.ledger = InMemoryLedger()
        service = AnswerService(self.ledger, InMemoryEntryQueue(), clock=lambda: T0)
        context = ApiContext(ledger=self.ledger, service=service, link_keys=KEYS, clock=lambda: T0)
        app = create_app(lambda: context)
        self.cards = TeamsCards()
        self.local = LocalApi(lambda event: app.resolve(event, {}), dev_routes=self.cards.handle)

    def links(self, envelope: Any, _recipient: Any = None) -> dict[str, str]:
        return answer_links(KEYS, self.local.url, envelope, now=T0)

    def ask_in_teams(self, kind: str) -> str:
        envelope = envelope_of(kind, f"q-teams-{kind}")
        self.ledger.open(envelope, now=T0)
        teams = TeamsAnnounce(
            f"{self.local.url}/dev/teams/webhook", mode="channel", links=self.links, inbox_url=f"{self.local.url}/inbox"
        )
        teams.announce(envelope)
        return envelope.question_id


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    api = Api()
    with api.local:
        yield api


@pytest.mark.parametrize("kind", KINDS)
def test_the_slack_preview_of_each_kind_reads_as_the_inbox(browser: Any, tmp_path: Path, kind: str) -> None:
    # GIVEN a question of this kind posted to (a fake) Slack
    with FakeSlack() as slack:
        client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
        announcer = SlackAnnounce(
            client, SlackRouting(channels={"*": "C0OPS"}), InMemorySlackMessages(), inbox_url="https://aw.example/inbox"
        )
        envelope = envelope_of(kind)
        announcer.announce(envelope)
        [posted] = slack.messages("C0OPS")
    message = PreviewMessage(posted.channel, posted.ts, posted.blocks, posted.text)
    modal = question_modal(envelope)
    page = browser.new_page(viewport={"width": 1100, "height": FOLD})
    try:
        # WHEN the preview draws the message, and the form its last button opens
        page.set_content(preview_page([message], title="#ops", modals=[modal]))
        body = page.inner_text("body")
        # THEN it reads as the inbox: the headline, a block per call, no raw JSON, escaped line breaks or `**`
        _assert_reads_as_text(body)
        expect(page.get_by_text(HEADLINES[kind], exact=False).first).to_be_visible()
        for name in calls_of(kind):
            assert name in body
        # AND its buttons are on the first screen
        buttons = page.locator(".message .button")
        assert buttons.count() > 0
        box = buttons.first.bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= FOLD
        page.screenshot(path=str(_target(tmp_path) / f"slack-{kind}.png"), full_page=True)
    finally:
        page.close()


@pytest.mark.parametrize("kind", KINDS)
def test_the_email_of_each_kind_reads_as_the_inbox(browser: Any, tmp_path: Path, kind: str) -> None:
    # GIVEN the email a question of this kind sends
    envelope = envelope_of(kind)
    links = answer_links(KEYS, "https://api.example.com", envelope, now=T0)
    inbox = f"https://api.example.com/inbox#/questions/{envelope.question_id}"
    content = question_email(envelope, links=links, recipient="ana@example.com", now=T0, inbox_url=inbox)
    page = browser.new_page(viewport={"width": 1100, "height": FOLD})
    try:
        # WHEN a mail client shows it
        page.set_content(content.html)
        body = page.inner_text("body")
        # THEN it reads as the inbox, a block per call, and every button is on the first screen
        _assert_reads_as_text(content.subject + body)
        assert content.subject.startswith(f"Your answer is needed: {HEADLINES[kind]}")
        assert page.locator("[data-call]").count() == len(calls_of(kind))
        for url in [*links.values(), inbox]:
            box = page.locator(f"a[href='{url}']").first.bounding_box()
            assert box is not None
        page.screenshot(path=str(_target(tmp_path) / f"email-{kind}.png"), full_page=True)
    finally:
        page.close()


@pytest.mark.parametrize("kind", KINDS)
def test_the_teams_card_of_each_kind_reads_as_the_inbox_and_its_button_decides(
    api: Api, browser: Any, tmp_path: Path, kind: str
) -> None:
    target = _target(tmp_path)
    # GIVEN a question of this kind, its card posted to the local Teams webhook
    question = api.ask_in_teams(kind)
    context = browser.new_context(viewport={"width": 1100, "height": FOLD}, locale="en-GB", timezone_id="UTC")
    page = context.new_page()
    try:
        # WHEN /dev/teams draws it with Microsoft's renderer
        page.goto(f"{api.local.url}/dev/teams")
        post = page.locator(f'article[data-question="{question}"]')
        expect(post).to_contain_text(HEADLINES[kind])
        # THEN it reads as the inbox: no raw JSON, escaped line breaks or `**`; each call named
        _assert_reads_as_text(post.inner_text())
        for name in calls_of(kind):
            expect(post).to_contain_text(name)
        expect(post.get_by_role("link", name="Open in the inbox")).to_be_visible()
        post.screenshot(path=str(target / f"teams-{kind}.png"))
        answers = [a for a in api.links(envelope_of(kind, question)) if a]
        if not answers:  # a form: the inbox answers it, and the card has no answer button
            assert kind == "schema"
            expect(post.get_by_role("link", name="Submit")).to_have_count(0)
            return
        # WHEN its first answer button is pressed, the link page opens, and the person confirms
        with context.expect_page() as opened:
            post.get_by_role("link", name=answers[0].capitalize(), exact=True).click()
        confirm = opened.value
        confirm.set_viewport_size({"width": 1100, "height": FOLD})
        button = confirm.get_by_role("button", name=f"Confirm: {answers[0]}")
        expect(button).to_be_enabled()
        # THEN the link page reads as the inbox too, the button above the fold
        expect(confirm.locator("#headline")).to_contain_text(HEADLINES[kind])
        _assert_reads_as_text(confirm.inner_text("body"))
        assert confirm.locator("#calls [data-call]").count() == (len(calls_of(kind)) if kind == "review" else 0)
        box = button.bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= FOLD
        confirm.screenshot(path=str(target / f"link-{kind}.png"), full_page=True)
        button.click()
        expect(confirm.get_by_role("status")).to_contain_text(f"Done: your answer “{answers[0]}” is recorded")
        record = api.ledger.find(question)
        assert record is not None
        assert record.status is QuestionStatus.ANSWERED
    finally:
        context.close()
