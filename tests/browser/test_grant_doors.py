"""The doors without the inbox's form, granting, in Chromium at a desktop's width (1280x900) and a phone's (390x844):
Ana's email with its grant offer beside Approve, her Teams card on `/dev/teams`, the Slack message with the offer's
button and "Approve and allow…" and its modal, and the confirmation page of the offer's link, which approves and makes
the grant. Each offer reads as words, never JSON, and the confirm button is above the fold.
`AGENT_WAIT_SCREENSHOTS=<dir>` keeps the screenshots (`grant-*.png`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.agents.grant_graphs import UP_TO_500_FOR_AN_HOUR
from tests.host.test_link_grants import ANA, ask_refund
from tests.host.test_link_routes import KEYS, T0, Api

from agent_wait.channels.email.render import question_email
from agent_wait.channels.slack._blocks import open_blocks, to_dicts
from agent_wait.channels.slack.preview import PreviewMessage, grant_modal, preview_page
from agent_wait.channels.teams.cards import question_card, webhook_body
from agent_wait.contract.schema import QuestionStatus
from agent_wait.host.links import answer_links
from agent_wait.local.api_server import LocalApi
from agent_wait.local.teams_preview import TeamsCards

pytestmark = pytest.mark.timeout(180)

SIZES = {"desktop": (1280, 900), "phone": (390, 844)}
LABEL = UP_TO_500_FOR_AN_HOUR.label
WORDS = "issue_refund with amount at most 500, on any thread, for 1 hour, 3 uses"


class Doors:
    """The answer API (link routes, in-memory ledger, at T0) and the local Teams webhook and page, over HTTP."""

    def __init__(self) -> None:
        self.api = Api()
        self.cards = TeamsCards()
        self.server = LocalApi(lambda event: self.api.app.resolve(event, {}), dev_routes=self.cards.handle)
        self.envelope = ask_refund(self.api)

    def links(self) -> dict[str, str]:
        return answer_links(KEYS, self.server.url, self.envelope, now=T0, approver=ANA)


@pytest.fixture(scope="module")
def doors() -> Iterator[Doors]:
    doors = Doors()
    with doors.server:
        yield doors


@pytest.fixture
def target(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _page(browser: Any, size: str) -> Any:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", timezone_id="UTC")
    return context.new_page()


def _above_the_fold(page: Any, locator: Any) -> None:
    box = locator.bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= page.viewport_size["height"], f"{box} is below the fold"


@pytest.mark.parametrize("size", SIZES)
def test_the_email_shows_the_offer_beside_approve_in_words(browser: Any, doors: Doors, target: Path, size: str):
    from playwright.sync_api import expect

    email = question_email(doors.envelope, links=doors.links(), recipient=ANA, now=T0)
    page = _page(browser, size)
    page.set_content(email.html)
    offer = page.get_by_role("link", name=LABEL)
    expect(offer).to_be_visible()
    expect(page.locator("body")).to_contain_text(f"Allows {WORDS}")
    expect(page.locator("body")).not_to_contain_text('{"')
    _above_the_fold(page, offer)
    page.screenshot(path=str(target / f"grant-email-{size}.png"), full_page=True)
    page.context.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_teams_card_shows_the_offer_as_an_action(browser: Any, doors: Doors, target: Path, size: str):
    from playwright.sync_api import expect

    card = question_card(doors.envelope, doors.links())
    about = {"event": "wait.created", "question_id": "q-1", "recipient": ANA}
    if not doors.cards.received():
        doors.cards.take(json.dumps(webhook_body(card, about=about)).encode())
    page = _page(browser, size)
    page.goto(f"{doors.server.url}/dev/teams")
    post = page.locator('article[data-question="q-1"]').first
    offer = post.get_by_role("link", name=LABEL)
    expect(offer).to_be_visible()
    expect(post).to_contain_text(f"allows {WORDS}")
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size][0], "the card scrolls sideways"
    page.screenshot(path=str(target / f"grant-teams-{size}.png"), full_page=True)
    page.context.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_slack_message_shows_the_offer_and_approve_and_allow_and_its_modal(
    browser: Any, doors: Doors, target: Path, size: str
):
    from playwright.sync_api import expect

    message = PreviewMessage("finance-approvals", f"{T0.timestamp():.6f}", to_dicts(open_blocks(doors.envelope)))
    page = _page(browser, size)
    page.set_content(preview_page([message], title="#finance-approvals"))
    expect(page.get_by_text(LABEL, exact=True)).to_be_visible()
    expect(page.get_by_text("Approve and allow…", exact=True)).to_be_visible()
    _above_the_fold(page, page.get_by_text(LABEL, exact=True))
    page.screenshot(path=str(target / f"grant-slack-{size}.png"), full_page=True)
    page.set_content(preview_page([], title="Approve and allow", modals=[grant_modal(doors.envelope)]))
    for label in ("Where", "For (at most 1 hour)", "Uses (at most 3)", "amount (asked: 300)"):
        expect(page.get_by_text(label, exact=True)).to_be_visible()
    expect(page.locator("body")).not_to_contain_text('{"')
    page.screenshot(path=str(target / f"grant-slack-modal-{size}.png"), full_page=True)
    page.context.close()


def test_the_confirm_page_of_an_offer_link_says_what_it_allows_and_approves_with_the_grant(
    browser: Any, target: Path
) -> None:
    from playwright.sync_api import expect

    for size in SIZES:  # a fresh question each time: confirming decides it
        doors = Doors()
        with doors.server:
            page = _page(browser, size)
            page.goto(doors.links()["grant:1"])
            expect(page.locator("#grant")).to_contain_text(LABEL)
            expect(page.locator("#grant")).to_contain_text(f"Allows {WORDS}.")
            button = page.get_by_role("button", name="Confirm: approve and allow")
            expect(button).to_be_enabled()
            _above_the_fold(page, button)
            page.screenshot(path=str(target / f"grant-confirm-{size}.png"), full_page=True)
            button.click()
            expect(page.locator("#status")).to_contain_text("the grant is made")
            assert doors.api.status() is QuestionStatus.ANSWERED
            (grant,) = doors.api.ledger.grants(now=T0)
            assert (grant.granted_by, grant.via) == (ANA, "link")
            page.context.close()
