"""Standing grants in the inbox, in Chromium, against the refund stack on the emulator running the granting refund
graph (`tests/agents/grant_graphs.py`: `issue_refund(order_id, amount)` under a policy that allows grants for at most
an hour and three uses, offering "up to 500 for an hour"): the "Approve and allow…" form (pins prefilled from the call,
a widening refused with its reason, a grant made that decides the next asks), the Grants page (list, revoke), and the
suggestion after identical approvals with its dry run. Screenshots at 1280x800 and 390x844 go where
`AGENT_WAIT_SCREENSHOTS` points.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import Inbox, running_inbox

from agent_wait.aws.ledger import DynamoDbLedger

pytestmark = pytest.mark.timeout(240)

GRAPH = "tests.agents.grant_graphs:build_granted_refund_graph"
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture(scope="module")
def inbox(refund_template: dict[str, Any], browser: Any) -> Iterator[Inbox]:
    # IAM judged as on AWS: the answer API's role makes a grant by a conditional update, never a put.
    with running_inbox(refund_template, browser, GRAPH) as running:
        yield running


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


def refund(inbox: Inbox, amount: int, order: str | None = None) -> tuple[str, str]:
    thread = f"order-{uuid.uuid4().hex[:6]}"
    return thread, inbox.start(thread, {"order_id": order or thread, "amount": amount})


def above_the_fold(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


def test_the_form_prefills_pins_refuses_a_widening_with_its_reason_and_a_grant_decides_the_next_asks(
    inbox: Inbox, shots: Path
) -> None:
    # GIVEN a refund of 300 waiting, open on a laptop's screen
    _, question = refund(inbox, 300)
    page = inbox.page(width=1280)
    page.set_viewport_size(LAPTOP)
    inbox.open(page, question)

    # WHEN alice opens "Approve and allow…"
    page.get_by_role("button", name="Approve and allow…").click()

    # THEN each argument is pinned exactly to its asked value, within the policy's limits, and the policy's offer is a
    # preset; Approve and the question stay on screen
    expect(page.get_by_label("order_id", exact=True)).to_have_value("equals")
    expect(page.get_by_label("amount", exact=True)).to_have_value("equals")
    expect(page.locator("#grant-pin-1-value")).to_have_value("300")
    expect(page.locator("#grant-ttl option")).to_have_text(["15 minutes", "1 hour"])
    expect(page.locator("#grant-uses option")).to_have_text(["1 ask", "2 asks", "3 asks"])
    expect(page.locator("#grant-offers")).to_contain_text("up to 500 for an hour")
    assert above_the_fold(page, '#actions button[data-action="approve"]')
    assert above_the_fold(page, "#detail-heading")
    page.screenshot(path=str(shots / "inbox-grant-form.png"))

    # WHEN she widens it: any order, amounts up to 200 (the 300 asked does not satisfy it)
    page.get_by_label("order_id", exact=True).select_option("any")
    page.get_by_label("amount", exact=True).select_option("at_most")
    page.locator("#grant-pin-1-value").fill("200")
    page.get_by_role("button", name="Approve and grant").click()

    # THEN the API's reason shows next to the form, and the question is still open
    expect(page.locator("#grant-problem")).to_contain_text("the grant was refused (widens)")
    expect(page.locator("#grant-problem")).to_contain_text("a grant may only narrow")
    assert inbox.status(question)["status"] == "open"
    page.screenshot(path=str(shots / "inbox-grant-refused.png"))

    # WHEN she picks the policy's preset (up to 500, any order, an hour, 3 uses) and sends it
    page.get_by_role("button", name=re.compile("up to 500 for an hour")).click()
    expect(page.locator("#grant-pin-1-value")).to_have_value("500")
    expect(page.get_by_label("order_id", exact=True)).to_have_value("any")
    page.get_by_role("button", name="Approve and grant").click()

    # THEN it is approved, the grant shows in words, and the refund ran once
    expect(page.get_by_role("status")).to_contain_text("Done: approved, and granted issue_refund with")
    expect(page.locator("#grant-made")).to_contain_text("any order_id, amount ≤ 500")
    expect(page.locator("#grant-made")).to_contain_text("for up to 3 asks")
    page.screenshot(path=str(shots / "inbox-grant-made.png"))
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    # AND the next ask of 450 is decided by the grant, with nobody asked, and the page says so
    _, next_question = refund(inbox, 450)
    assert inbox.status(next_question)["outcome"]["via"] == "grant"
    inbox.open(page, next_question)
    expect(page.locator("#history")).to_contain_text("by a standing grant")
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    # (revoked, so that it decides none of the other tests' asks)
    ledger = DynamoDbLedger(inbox.local.table, client=inbox.local.client("dynamodb"))
    assert ledger.revoke_grant(f"issue_refund~{question}", by="test", now=inbox.clock()) is not None


def test_the_form_works_on_a_phone(inbox: Inbox, shots: Path) -> None:
    # GIVEN a refund waiting, open on a phone
    _, question = refund(inbox, 700)
    page = inbox.page(width=390)
    page.set_viewport_size(PHONE)
    inbox.open(page, question)
    # WHEN the form is opened, THEN its fields fit the screen's width and Approve is still reachable above it
    page.get_by_role("button", name="Approve and allow…").click()
    expect(page.get_by_role("button", name="Approve and grant")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways on a phone: {width}px"
    page.screenshot(path=str(shots / "inbox-grant-form-phone.png"))
    page.locator("#grant-pin-1").select_option("at_most")
    page.get_by_role("button", name="Approve and grant").click()
    expect(page.get_by_role("status")).to_contain_text("Done: approved, and granted")
    page.screenshot(path=str(shots / "inbox-grant-made-phone.png"), full_page=True)
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_the_grants_page_lists_live_grants_in_words_and_revokes_one_after_a_confirmation(
    inbox: Inbox, shots: Path
) -> None:
    # GIVEN a grant bob made in the inbox: exactly this refund of 777, on this thread
    thread, question = refund(inbox, 777)
    page = inbox.page("bob@example.com", width=1280)
    page.set_viewport_size(LAPTOP)
    inbox.open(page, question)
    page.get_by_role("button", name="Approve and allow…").click()
    page.get_by_role("button", name="Approve and grant").click()
    expect(page.get_by_role("status")).to_contain_text("Done: approved, and granted exactly this call")
    inbox.local.pump()
    grant_id = f"issue_refund~{question}"

    # WHEN he opens the Grants page
    page.get_by_role("link", name="Grants", exact=True).click()

    # THEN the grant is listed in words, with its question linked
    row = page.locator(f'#grant-rows tr[data-grant="{grant_id}"]')
    expect(row).to_contain_text("exactly the call asked")
    expect(row).to_contain_text(f"this thread only ({thread})")
    expect(row).to_contain_text("1 of 1 left")
    expect(row).to_contain_text("bob@example.com via the inbox or the API")
    expect(row.get_by_role("link", name=question)).to_have_attribute("href", f"#/questions/{question}")
    page.screenshot(path=str(shots / "inbox-grants-page.png"))

    # WHEN he presses Revoke, THEN nothing is revoked until he confirms
    row.get_by_role("button", name="Revoke").click()
    expect(row).to_contain_text("Revoke this grant?")
    page.screenshot(path=str(shots / "inbox-grants-revoke-confirm.png"))
    assert row.get_by_role("button", name="Yes, revoke").is_visible()
    # WHEN he confirms, THEN the row says it is revoked, by him, and has no Revoke button
    row.get_by_role("button", name="Yes, revoke").click()
    expect(row).to_contain_text("revoked by bob@example.com")
    expect(row.get_by_role("button", name="Revoke")).to_have_count(0)
    # AND the list with ended grants has it, the live list no longer
    ended = page.get_by_label("Show ended (revoked, expired, used up)")
    ended.check()
    expect(page).to_have_url(re.compile(r"#/grants\?all=1$"))
    expect(page.locator(f'#grant-rows tr[data-grant="{grant_id}"]')).to_contain_text("revoked by bob@example.com")
    ended.uncheck()
    expect(page).to_have_url(re.compile(r"#/grants$"))
    expect(page.locator(f'#grant-rows tr[data-grant="{grant_id}"]')).to_have_count(0)

    # AND on a phone the page reads as one card per grant
    phone = inbox.page("bob@example.com", width=390)
    phone.set_viewport_size(PHONE)
    phone.goto(f"{inbox.url}#/grants?all=1")
    expect(phone.locator(f'#grant-rows tr[data-grant="{grant_id}"]')).to_be_visible()
    phone.screenshot(path=str(shots / "inbox-grants-page-phone.png"), full_page=True)
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    assert phone.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_after_three_identical_approvals_the_inbox_suggests_a_grant_with_a_dry_run_of_the_past_questions(
    inbox: Inbox, shots: Path
) -> None:
    # GIVEN carol approved the same refund (one order, 640) three times this week, and rejected a 900 refund of it
    order = f"O-{uuid.uuid4().hex[:6]}"
    carol = inbox.page("carol@example.com", width=1280)
    for _ in range(3):
        _, past = refund(inbox, 640, order=order)
        inbox.open(carol, past)
        carol.get_by_role("button", name="Approve", exact=True).click()
        expect(carol.get_by_role("status")).to_contain_text("Done: your answer “approve” is recorded")
        inbox.local.pump()
    _, rejected = refund(inbox, 900, order=order)
    inbox.open(carol, rejected)
    carol.get_by_role("button", name="Reject").click()
    expect(carol.get_by_role("status")).to_contain_text("Done: your answer “reject” is recorded")
    inbox.local.pump()

    # WHEN the same refund is asked a fourth time and alice opens it
    _, question = refund(inbox, 640, order=order)
    page = inbox.page(width=1280)
    page.set_viewport_size(LAPTOP)
    inbox.open(page, question)

    # THEN the inbox suggests a grant, naming the approvals, and nothing is granted yet
    suggestion = page.locator("#grant-suggestion")
    expect(suggestion).to_contain_text("This exact call was approved 3 times in the last 7 days (by carol@example.com)")
    assert above_the_fold(page, '#actions button[data-action="approve"]')
    page.screenshot(path=str(shots / "inbox-grant-suggestion.png"))

    # WHEN she reviews it, THEN the dry run of the exact grant lists the three approvals it would have decided
    page.get_by_role("button", name="Review a grant and its dry run").click()
    dry = page.locator("#grant-dry")
    expect(dry).to_contain_text("would have decided 3 past questions")
    expect(dry.locator("li")).to_have_count(3)

    # WHEN she sets the pins to this order, at most 1000, and runs it again, THEN the rejected 900 is covered too,
    # marked as differing from what a person decided
    page.get_by_label("amount", exact=True).select_option("at_most")
    page.locator("#grant-pin-1-value").fill("1000")
    page.get_by_role("button", name="Dry run", exact=True).click()
    expect(dry).to_contain_text(f"order_id = “{order}”, amount ≤ 1000")
    expect(dry).to_contain_text("would have decided 4 past questions")
    expect(dry.locator("li.dry-differs")).to_contain_text("reject by carol@example.com")
    page.screenshot(path=str(shots / "inbox-grant-dry-run.png"))
    assert inbox.status(question)["status"] == "open"
    # AND, back from the list, the question opened again suggests the grant again, with a fresh form and no dry run
    page.get_by_role("link", name="All questions").click()
    inbox.open(page, question)
    expect(suggestion).to_be_visible()
    expect(page.locator("#grant-box")).to_be_hidden()
    expect(dry).to_be_hidden()
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
