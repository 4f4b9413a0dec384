"""`agent-wait dev`'s Teams page in Chromium: the stack posts each question's Adaptive Card to its local Teams webhook,
`/dev/teams` draws it with Microsoft's renderer (the `adaptivecards` package), its Approve button opens the real
confirmation page of the local answer API, confirming there decides the question, and the outcome card follows.
Read at 1280 and 375 px wide. `AGENT_WAIT_SCREENSHOTS=docs/images` keeps the screenshots docs/teams.md shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import GRAPH, Inbox, running_inbox

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def inbox(refund_template: dict[str, Any], browser: Any) -> Iterator[Inbox]:
    with running_inbox(refund_template, browser, GRAPH) as running:
        yield running


def _page(inbox: Inbox, width: int) -> Any:
    context = inbox.browser.new_context(viewport={"width": width, "height": 900}, locale="en-GB", timezone_id="UTC")
    page = context.new_page()
    page.errors = []  # pyright: ignore[reportAttributeAccessIssue]
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    return page


def test_a_question_card_is_drawn_answered_from_its_button_and_followed_by_its_outcome(
    inbox: Inbox, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    # GIVEN a refund over the limit, asked on the local stack (its Teams webhook is the local one)
    thread, question = inbox.ask(1250, order_id="order-7734")
    [kept] = [c for c in inbox.local.teams_cards.received() if c["question_id"] == question]
    assert kept["event"] == "wait.created"
    assert kept["recipient"] is None  # the refund stack has no Teams of its own: one card for a channel
    page = _page(inbox, 1280)
    try:
        # WHEN /dev/teams is opened
        page.goto(f"{inbox.local.api_url}/dev/teams")
        post = page.locator(f'article[data-question="{question}"][data-event="wait.created"]')
        # THEN the card reads as Teams would show it: the call, its facts, the deadline, one button per action
        expect(post).to_contain_text('issue_refund(order_id="order-7734", amount=1250)')
        expect(post).to_contain_text("amount")
        expect(post).to_contain_text("Answer by")
        expect(post).not_to_contain_text("{{DATE")  # the renderer wrote the deadline in the reader's terms
        approve = post.get_by_role("link", name="Approve")  # Action.OpenUrl: a link, drawn as a button
        expect(approve).to_be_visible()
        expect(post.get_by_role("link", name="Reject")).to_be_visible()
        expect(post.get_by_role("link", name="Open in the inbox")).to_be_visible()
        page.screenshot(path=str(target / "teams-open.png"))
        # WHEN its Approve button is clicked: the confirmation page opens, and nothing is decided by opening it
        with page.context.expect_page() as opened:
            approve.click()
        confirm = opened.value
        confirm.wait_for_load_state()
        assert confirm.url.startswith(f"{inbox.local.api_url}/questions/{question}/confirm")
        button = confirm.get_by_role("button", name="Confirm: approve")
        expect(button).to_be_enabled()
        assert inbox.status(question)["status"] == "open"
        # WHEN the person confirms there, and the router carries on
        button.click()
        expect(confirm.get_by_role("status")).to_contain_text("Done: your answer “approve” is recorded")
        assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
        # THEN the outcome card arrives and says who answered what, and how
        page.get_by_role("button", name="Reload").click()
        outcome = page.locator(f'article[data-question="{question}"][data-event="wait.answered"]')
        expect(outcome).to_contain_text("Answered")
        expect(outcome).to_contain_text("approve")
        expect(outcome).to_contain_text("Someone with the card's link answered approve at ")
        expect(outcome.get_by_role("link", name="Approve")).to_have_count(0)
        page.screenshot(path=str(target / "teams-answered.png"))
        assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    finally:
        page.context.close()
    # AND at 375 px the same cards read without scrolling sideways
    narrow = _page(inbox, 375)
    try:
        narrow.goto(f"{inbox.local.api_url}/dev/teams")
        expect(narrow.locator(f'article[data-question="{question}"]').first).to_be_visible()
        narrow.screenshot(path=str(target / "teams-narrow.png"), full_page=True)
        assert narrow.evaluate("document.documentElement.scrollWidth") <= 375
        assert narrow.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    finally:
        narrow.context.close()
    assert thread


def test_the_local_webhook_refuses_what_teams_would_and_serves_only_its_own_files(inbox: Inbox) -> None:
    import urllib.error
    import urllib.request

    base = inbox.local.api_url

    def post(body: bytes) -> int:
        request = urllib.request.Request(
            f"{base}/dev/teams/webhook", data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    before = len(inbox.local.teams_cards.received())
    assert post(b"not json") == 400
    assert post(b'{"type": "message", "attachments": []}') == 400
    assert len(inbox.local.teams_cards.received()) == before
    with urllib.request.urlopen(f"{base}/dev/teams", timeout=5) as response:
        policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "default-src 'none'" in policy


def test_the_sweeps_reminder_and_escalation_post_their_cards_with_fresh_links(inbox: Inbox) -> None:
    from datetime import timedelta

    # GIVEN a refund asked, then four hours with no answer (its policy reminds after PT4H, escalates after P2D)
    _, question = inbox.ask(1300)
    before = inbox.clock.offset
    try:
        inbox.clock.offset = before + timedelta(hours=4, minutes=1)
        inbox.local.sweep()
        inbox.clock.offset = before + timedelta(days=2, minutes=1)
        inbox.local.sweep()
    finally:
        inbox.clock.offset = before
    # THEN a reminder card and an escalation card arrived for it, each with the question's answer buttons
    kept = {c["event"]: c["card"] for c in inbox.local.teams_cards.received() if c["question_id"] == question}
    assert kept["wait.reminder"]["body"][0]["text"] == "Reminder 1 of 1: this still waits for an answer"
    # the refund policy names no answerers, so its escalation widens who is told, not who may answer
    assert kept["wait.escalated"]["body"][0]["text"] == "Escalated (step 1 of 1): this still waits for an answer"
    for card in (kept["wait.reminder"], kept["wait.escalated"]):
        urls = [a["url"] for a in card["actions"] if a["title"] in ("Approve", "Reject")]
        assert len(urls) == 2
        assert all(f"/questions/{question}/confirm#v1." in url for url in urls)
