"""An MCP server's question in the inbox, in Chromium: a LangGraph agent books through the test MCP server with
LangChain's `MCPAdapter` (tests/agents/mcp_elicit_graphs.py) on the emulator; the server's form round is answered in
the inbox's form, and its URL round shows the server's message and link and asks for nothing.

Screenshots go to `AGENT_WAIT_SCREENSHOTS` (default: the test's own directory).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.agents.mcp_elicit_graphs import URL_VARIABLE
from tests.browser._inbox_page import Inbox, running_inbox
from tests.support.elicit_server import PAY_URL, ElicitServer, elicit_server

pytestmark = pytest.mark.timeout(300)

GRAPH = "tests.agents.mcp_elicit_graphs:build_graph"


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture(scope="module")
def booked(refund_template: dict[str, Any], browser: Any) -> Iterator[tuple[Inbox, ElicitServer]]:
    with elicit_server() as server, running_inbox(refund_template, browser, GRAPH, {URL_VARIABLE: server.url}) as inbox:
        yield inbox, server


def _shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


def test_the_servers_form_is_the_inbox_form_and_its_answer_reaches_the_server_once(
    booked: tuple[Inbox, ElicitServer], tmp_path: Path
) -> None:
    inbox, server = booked
    # GIVEN the agent waits on the server's question: who is booking
    question = inbox.start("booking-form", {"day": "fri"})
    page = inbox.page(groups="")
    inbox.open(page, question)
    # THEN the inbox shows the server's message and its form, and MCP's three answers
    expect(page.locator("#detail-heading")).to_have_text("Who is booking?")
    expect(page.get_by_label("Your name")).to_be_visible()
    expect(page.get_by_label("Seats")).to_be_visible()
    buttons = page.locator("#actions button")
    expect(buttons).to_have_text(["Accept", "Decline", "Cancel"])
    page.screenshot(path=str(_shots(tmp_path) / "inbox-mcp-form.png"), full_page=True)
    # WHEN alice fills it in and accepts, and presses again
    page.get_by_label("Your name").fill("Ana")
    page.get_by_label("Seats").fill("2")
    page.get_by_role("button", name="Accept").click()
    expect(page.locator("#status")).to_contain_text("recorded")
    inbox.local.pump()
    # THEN the server received the content once, typed as its schema says, and the agent finished
    assert [call for call in server.received if call["day"] == "fri"] == [
        {
            "day": "fri",
            "state": "day=fri",
            "responses": {"contact": {"action": "accept", "content": {"name": "Ana", "seats": 2}}},
        }
    ]
    assert inbox.status(question)["status"] == "resumed"
    assert page.errors == []


def test_a_url_round_shows_the_link_and_asks_for_nothing(booked: tuple[Inbox, ElicitServer], tmp_path: Path) -> None:
    inbox, server = booked
    question = inbox.start("booking-url", {"day": "sat", "mode": "url"})
    page = inbox.page(groups="")
    inbox.open(page, question)
    expect(page.locator("#detail-heading")).to_have_text("Pay the deposit")
    link = page.get_by_role("link", name=PAY_URL)
    expect(link).to_have_attribute("href", PAY_URL)
    expect(page.locator("#schema-fields input")).to_have_count(0)
    page.screenshot(path=str(_shots(tmp_path) / "inbox-mcp-url.png"), full_page=True)
    page.get_by_label("Note (optional)").fill("paid by card")  # stays in agent-wait's record: MCP has no field for it
    page.get_by_role("button", name="Accept").click()
    expect(page.locator("#status")).to_contain_text("recorded")
    inbox.local.pump()
    assert [call["responses"] for call in server.received if call["day"] == "sat"] == [
        {"deposit": {"action": "accept", "content": None}}
    ]
    assert page.errors == []


@pytest.mark.parametrize("mode", ["form", "url"])
def test_slacks_message_and_modal_read_as_the_inbox(
    booked: tuple[Inbox, ElicitServer], tmp_path: Path, mode: str
) -> None:
    from slack_sdk import WebClient
    from tests.support.fake_slack import FakeSlack

    from agent_wait.aws.ledger import DynamoDbLedger
    from agent_wait.channels.slack import (
        InMemorySlackMessages,
        PreviewMessage,
        SlackAnnounce,
        SlackRouting,
        preview_page,
    )
    from agent_wait.channels.slack.preview import question_modal

    inbox, _ = booked
    question = inbox.start(f"booking-slack-{mode}", {"day": f"slack-{mode}", "mode": mode})
    record = DynamoDbLedger(inbox.local.table, client=inbox.local.client("dynamodb")).find(question)
    assert record is not None
    # GIVEN the question posted to (a fake) Slack, as the stack's Slack channel posts it
    with FakeSlack() as slack:
        client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
        routing = SlackRouting(channels={"*": "C0OPS"})
        SlackAnnounce(client, routing, InMemorySlackMessages(), inbox_url=inbox.url).announce(record.envelope)
        [posted] = slack.messages("C0OPS")
    message = PreviewMessage(posted.channel, posted.ts, posted.blocks, posted.text)
    page = inbox.browser.new_page(viewport={"width": 1100, "height": 800})
    try:
        # WHEN the preview draws the message and the modal its "Answer…" button opens
        page.set_content(preview_page([message], title="#ops", modals=[question_modal(record.envelope)]))
        body = page.inner_text("body")
        # THEN a form round asks its fields in the modal; a URL round shows the link and asks for nothing
        if mode == "form":
            assert "Who is booking?" in body
            assert "Your name" in body
            assert "Required to accept." in body
        else:
            expect(page.locator(".message").get_by_role("link", name=PAY_URL)).to_have_attribute("href", PAY_URL)
            assert "Your name" not in body
        assert "requested_schema" not in body
        assert '{"' not in body
        page.screenshot(path=str(_shots(tmp_path) / f"slack-mcp-{mode}.png"), full_page=True)
    finally:
        page.close()
