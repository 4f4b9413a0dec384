"""The approvals inbox in Chromium, against the refund stack on the emulator, as a person uses it.

One stack and one browser for the module; each test asks its own question, signs in through the page's dev
sign-in in a fresh browser context, and checks what the page shows and what the agent then did (the refunds
table has one row per execution of the refund). `AGENT_WAIT_SCREENSHOTS=docs/images` makes the first test
save the README's screenshots there.
"""

from __future__ import annotations

import os
import re
import urllib.parse
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import Inbox

pytestmark = pytest.mark.timeout(180)

PAYLOAD = "<img src=x onerror=window.__pwned=1><script>window.__pwned=1</script>"
DONE_APPROVE = "Done: your answer “approve” is recorded, and the agent carries on."


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def status(page: Any) -> Any:
    return page.get_by_role("status")


def test_screenshots_of_the_list_and_a_question(inbox: Inbox, tmp_path: Path) -> None:
    # GIVEN three refunds waiting for finance (first in the module: the list holds only these)
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    inbox.ask(900, thread="order-7731")
    _, editable = inbox.ask(1250, kind="editable", thread="order-7734")
    inbox.ask(2400, thread="order-7740")
    page = inbox.page(width=1100)
    expect(page.locator("#rows tr")).to_have_count(3)
    page.set_viewport_size({"width": 1100, "height": 600})
    page.screenshot(path=str(target / "inbox-list.png"))
    # WHEN one is opened
    inbox.open(page, editable)
    page.get_by_label("amount", exact=True).fill("1000")
    page.get_by_label("Note (optional)").fill("Partial refund: one item was used.")
    page.get_by_label("Note (optional)").blur()
    page.set_viewport_size({"width": 1100, "height": 840})  # the page whole, as a laptop shows it
    page.screenshot(path=str(target / "inbox-question.png"))
    # THEN both pictures were taken (the README shows them)
    for name in ("inbox-list.png", "inbox-question.png"):
        assert (target / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_approving_from_the_page_by_keyboard_runs_the_refund_once(inbox: Inbox) -> None:
    # GIVEN a refund over the limit, and alice on the inbox
    thread, question = inbox.ask()
    page = inbox.page()
    # WHEN she opens it from the list and approves, with the keyboard only
    row_link = page.get_by_role("link", name=re.compile(re.escape(thread)))
    expect(row_link).to_contain_text('issue_refund(order_id="' + thread + '", amount=900)')
    row_link.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#detail-id")).to_have_text(question)
    expect(page.locator("#args-rows")).to_contain_text("amount900")
    expect(page.locator("#edit-form")).to_be_hidden()  # the refund example allows no edits
    expect(page.locator("#policy-edits")).to_have_text("not allowed")
    page.get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    # THEN the page says it is recorded and the buttons are gone
    expect(status(page)).to_have_text(DONE_APPROVE)
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    # AND the agent resumes once, the refund runs once, and the page's history follows it
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == [900]
    history = page.locator("#history")
    expect(history).to_contain_text("alice@example.com answered at")
    expect(history).to_contain_text("by the inbox or the answer API")
    expect(history).to_contain_text("The agent carried on at")
    assert inbox.local.pump().outcomes == []
    assert inbox.refunds(thread) == [900]


def test_two_pages_answer_at_once_and_the_late_one_is_told_who_won(inbox: Inbox) -> None:
    # GIVEN alice and bob both looking at the same question
    thread, question = inbox.ask()
    alice, bob = inbox.page("alice@example.com"), inbox.page("bob@example.com")
    inbox.open(alice, question)
    inbox.open(bob, question)
    # WHEN alice approves and bob rejects, before either page could see the other's answer (both clicks are
    # dispatched within a few milliseconds, before alice's answer can even reach the API)
    expect(bob.get_by_role("button", name="Reject")).to_be_enabled()
    alice.evaluate("document.querySelector('#actions [data-action=approve]').click()")
    bob.evaluate("document.querySelector('#actions [data-action=reject]').click()")
    # THEN exactly one answer won, and the other page shows the 409's winner and no buttons
    for page in (alice, bob):
        expect(status(page)).to_have_text(re.compile(r"^(Done|Not recorded)"))
    decided = inbox.status(question)["outcome"]
    winner, action = decided["answered_by"], decided["answer"]["action"]
    loser = bob if winner == "alice@example.com" else alice
    expect(status(loser)).to_contain_text(f"Not recorded: Answered by {winner} ({action}) at ")
    expect(loser.get_by_role("button", name=re.compile("Approve|Reject"))).to_have_count(0)
    # AND the agent runs once with the winner's answer
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == ([900] if action == "approve" else [])


def test_an_open_page_retracts_its_buttons_when_the_sweep_expires_the_question(inbox: Inbox) -> None:
    # GIVEN a page showing an open question
    thread, question = inbox.ask()
    page = inbox.page()
    inbox.open(page, question)
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    # WHEN its deadline passes and the sweep applies the default (and the agent carries on with it)
    inbox.clock.offset += timedelta(days=3, minutes=1)
    try:
        inbox.local.sweep()
        inbox.local.pump()
    finally:
        inbox.clock.offset = timedelta()
    # THEN within a poll or two the page retracts its buttons and says the default applied, not a person
    expect(status(page)).to_have_text(
        "Decided elsewhere: Nobody answered in time: the default applied. There is nothing left to answer."
    )
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    expect(page.locator("#history")).to_contain_text("with no answer: the default applied. Nobody decided this.")
    assert inbox.refunds(thread) == []
    # AND the list of expired questions shows it with the default it took
    page.get_by_role("link", name="All questions").click()
    page.get_by_label("Status").select_option("expired")
    page.get_by_role("button", name="Show").click()
    # (its status as the CLI and the question page say it: resumed, since the agent carried on)
    row = page.get_by_role("row").filter(has_text=thread)
    expect(row.get_by_role("cell").nth(3)).to_have_text("resumedexpired: the default applied (reject)")


def test_the_edit_form_changes_the_amount_and_the_refund_pays_it(inbox: Inbox) -> None:
    # GIVEN a refund whose policy allows edits
    thread, question = inbox.ask(1250, kind="editable")
    page = inbox.page()
    inbox.open(page, question)
    amount = page.get_by_label("amount", exact=True)
    expect(amount).to_have_value("1250")
    # WHEN the approver lowers the amount and approves
    amount.fill("650")
    page.get_by_role("button", name="Approve with edits").click()
    expect(status(page)).to_have_text(DONE_APPROVE)
    # THEN only the edited argument was sent, and the refund paid the edited amount, once
    assert inbox.status(question)["outcome"]["answer"] == {"action": "approve", "args": {"amount": 650}}
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == [650]


def test_a_script_in_the_question_is_shown_as_text_and_never_runs(inbox: Inbox) -> None:
    # GIVEN a question whose arguments hold markup and a script
    thread, question = inbox.ask(order_id=PAYLOAD)
    page = inbox.page()
    # THEN the list shows it as text
    expect(page.get_by_role("row").filter(has_text=thread).get_by_role("link")).to_contain_text(PAYLOAD)
    # AND so does the question, in its heading and its arguments table
    inbox.open(page, question)
    expect(page.locator("#args-rows tr").first.locator("td").nth(1)).to_have_text(PAYLOAD)
    expect(page.locator("#detail-heading")).to_contain_text(PAYLOAD)
    # AND nothing of it became an element or ran
    assert page.locator("main img, main script").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


DESCRIPTION = """**Full refund** for a damaged parcel.

- photos: [order 7731](https://orders.example.com/7731)
- not a link: [click](javascript:window.__pwned=1)

<script>window.__pwned=1</script>"""
LONG_MESSAGE = "We are sorry your parcel arrived damaged. " * 4
ONE_DATE = r"^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}:\d{2} UTC$"
"""How every page writes a time (en-GB, UTC here): 4 Dec 2026, 15:22:41 UTC."""


def test_a_markdown_description_is_rendered_safely_and_a_long_text_gets_a_box_on_both_pages(inbox: Inbox) -> None:
    # GIVEN an Agent Inbox request whose description is Markdown (with a script and a javascript: link in it),
    # and whose arguments hold a long message
    thread = f"order-{uuid.uuid4().hex[:6]}"
    state = {"order_id": thread, "amount": 1250, "kind": "agent_inbox", "description": DESCRIPTION}
    question = inbox.start(thread, {**state, "message": LONG_MESSAGE})
    page = inbox.page()
    inbox.open(page, question)
    # THEN the description is Markdown: bold, a list, one https link that sends no Referer; the rest is text
    description = page.locator("#call-description")
    expect(description.locator("strong")).to_have_text("Full refund")
    expect(description.locator("li")).to_have_count(2)
    expect(description.locator("a")).to_have_count(1)
    expect(description.locator("a")).to_have_attribute("href", "https://orders.example.com/7731")
    expect(description.locator("a")).to_have_attribute("rel", "noopener noreferrer")
    expect(description).to_contain_text("[click](javascript:window.__pwned=1)")
    expect(description).to_contain_text("<script>window.__pwned=1</script>")
    assert page.locator("main script").count() == 0
    assert page.evaluate("window.__pwned") is None
    # AND the long message is a box of several lines to edit, the short values one-line fields
    assert page.get_by_label("message", exact=True).evaluate("field => field.tagName") == "TEXTAREA"
    assert page.get_by_label("amount", exact=True).evaluate("field => field.tagName") == "INPUT"
    expect(page.get_by_label("message", exact=True)).to_have_value(LONG_MESSAGE)
    expect(page.locator("#detail-asked")).to_have_text(re.compile(ONE_DATE))
    # AND the signed link's page renders the same description the same way, and writes its time alike
    link = inbox.links(question)["accept"]
    confirm = inbox.browser.new_context(locale="en-GB", timezone_id="UTC").new_page()
    confirm.goto(link)
    expect(confirm.get_by_role("button", name="Confirm: accept")).to_be_enabled()
    expect(confirm.locator("#description strong")).to_have_text("Full refund")
    expect(confirm.locator("#description li")).to_have_count(2)
    expect(confirm.locator("#function")).to_have_text("issue_refund")
    expect(confirm.locator("#deadline")).to_have_text(re.compile(ONE_DATE))
    assert confirm.evaluate("window.__pwned") is None
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_an_answer_from_the_entry_queue_names_its_sender_readably_and_lists_as_resumed(inbox: Inbox) -> None:
    # GIVEN a question answered on the entry queue by a program that names nobody (its AWS identity answers)
    thread, question = inbox.ask()
    answer = {"thread_id": thread, "question_id": question, "answer": {"action": "approve"}}
    inbox.local.send(answer, deduplication_id=uuid.uuid4().hex)
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    sender = inbox.status(question)["outcome"]["answered_by"]
    assert re.fullmatch(r"A[A-Z0-9]{15,}", sender), sender  # the SQS SenderId, as the router records it
    # WHEN a person reads it
    page = inbox.page()
    inbox.open(page, question)
    # THEN the page says the entry queue's sender answered, by its AWS identity, and leads with the outcome
    expect(page.locator("#outcome")).to_contain_text(f"Answered by a sender on the entry queue (AWS identity {sender})")
    expect(page.locator("#detail-status")).to_have_text("resumed")
    # AND the list's Resumed filter shows it with the same status and who decided it
    page.get_by_role("link", name="All questions").click()
    page.get_by_label("Status").select_option("resumed")
    page.get_by_role("button", name="Show").click()
    row = page.get_by_role("row").filter(has_text=thread)
    expect(row.get_by_role("cell").nth(3)).to_contain_text("resumed")
    expect(row.get_by_role("cell").nth(3)).to_contain_text(
        f"approve · a sender on the entry queue (AWS identity {sender})"
    )
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_a_signed_links_get_changes_nothing_and_its_post_answers(inbox: Inbox) -> None:
    # GIVEN the approve link the topic carried
    thread, question = inbox.ask()
    link = inbox.links(question)["approve"]
    page = inbox.browser.new_context().new_page()
    # WHEN it is opened, twice (a mail scanner, then the person)
    for _ in range(2):
        page.goto(link)
        expect(page.get_by_role("button", name="Confirm: approve")).to_be_enabled()
    # THEN it shows the question in the inbox's look (its arguments in a table, as the inbox does), and nothing
    # is answered
    expect(page.locator("#args-rows tr", has_text="order_id")).to_contain_text(thread)
    expect(page.locator("#args-rows tr", has_text="amount")).to_contain_text("900")
    expect(page.locator("#arguments")).to_be_hidden()
    assert page.locator("header.bar").evaluate("bar => getComputedStyle(bar).display") == "flex"
    assert inbox.local.pump().outcomes == []
    assert inbox.status(question)["status"] == "open"
    # WHEN the person adds a note and confirms (the page's POST)
    page.get_by_label("Note (optional)").fill("checked the order")
    page.get_by_role("button", name="Confirm: approve").click()
    # THEN it is answered, by link, and the refund runs once
    expect(status(page)).to_have_text(DONE_APPROVE)
    outcome = inbox.status(question)["outcome"]
    assert (outcome["via"], outcome["answer"]) == ("link", {"action": "approve", "note": "checked the order"})
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == [900]


def test_a_question_with_a_json_schema_gets_a_form_that_follows_it(inbox: Inbox) -> None:
    # GIVEN a question carrying a JSON schema for its answer
    _, question = inbox.ask(kind="survey")
    page = inbox.page()
    inbox.open(page, question)
    expect(page.locator("#question-fields")).to_contain_text("Set a refund limit")
    expect(page.locator("#question-fields")).not_to_contain_text("response_schema")
    # WHEN a required field is left empty, the page says so and sends nothing
    page.get_by_role("button", name="Approve").click()
    expect(status(page)).to_have_text("Refund limit is required.")
    assert inbox.status(question)["status"] == "open"
    # WHEN the form is filled in
    page.get_by_label("Refund limit", exact=True).fill("300")
    page.get_by_label("Reason", exact=True).fill("loyal customer")
    page.get_by_label("Tell the customer by", exact=True).select_option("phone")
    page.get_by_role("button", name="Approve").click()
    # THEN the answer has the schema's fields, typed as the schema says, beside the action
    expect(status(page)).to_have_text(DONE_APPROVE)
    answer = inbox.status(question)["outcome"]["answer"]
    assert answer == {"action": "approve", "limit": 300, "reason": "loyal customer", "channel": "phone"}
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]


def test_the_tag_filter_keeps_only_questions_with_that_tag(inbox: Inbox) -> None:
    thread, _ = inbox.ask()
    page = inbox.page()
    for tag, shown in (("approver_group:finance", 1), ("approver_group:legal", 0)):
        page.get_by_label("Tag (key:value)").fill(tag)
        page.get_by_label("Tag (key:value)").press("Enter")
        expect(page).to_have_url(re.compile(re.escape(urllib.parse.quote(tag, safe="")) + "$"))
        expect(page.get_by_role("row").filter(has_text=thread)).to_have_count(shown)
    expect(page.get_by_text("No questions here.")).to_be_visible()


def test_a_langgraph_response_schema_is_answered_with_the_forms_values_alone(inbox: Inbox, tmp_path: Path) -> None:
    # GIVEN a node parked on interrupt(value, response_schema=RefundLimit)
    thread, question = inbox.ask(kind="limit")
    page = inbox.page()
    inbox.open(page, question)
    # THEN the page offers the schema's form and one Submit, and no note (the schema has none)
    expect(page.locator("#actions button")).to_have_text(["Submit"])
    expect(page.locator("#note-field")).to_be_hidden()
    # WHEN the form is filled in and submitted
    page.get_by_label("Limit", exact=True).fill("300")
    page.get_by_label("Channel", exact=True).select_option("phone")
    # A full-page capture resizes the page and can swallow the next click: a tall viewport instead.
    page.set_viewport_size({"width": 1200, "height": 1500})
    page.screenshot(path=str(Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path) / "inbox-schema.png"))
    page.get_by_role("button", name="Submit").click()
    expect(status(page)).to_have_text("Done: your answer “submit” is recorded, and the agent carries on.")
    # THEN the answer is exactly the schema's values, and interrupt() returned them as the model
    assert inbox.status(question)["outcome"]["answer"] == {"limit": 300, "channel": "phone"}
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.state(thread)["decision"] == {"limit": 300, "channel": "phone"}
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_an_agent_inbox_request_shows_its_call_and_an_edited_accept_pays_the_edited_amount(
    inbox: Inbox, tmp_path: Path
) -> None:
    # GIVEN a refund asked as an Agent Inbox HumanInterrupt
    thread, question = inbox.ask(1250, kind="agent_inbox")
    page = inbox.page()
    inbox.open(page, question)
    # THEN the page shows the requested call and the config's four responses
    expect(page.locator("#call-function")).to_have_text("issue_refund")
    expect(page.locator("#call-description")).to_have_text(re.compile(r"^Refund order order-\w+\?$"))
    expect(page.locator("#actions button")).to_have_text(["Accept", "Edit", "Response", "Ignore"])
    # WHEN the approver lowers the amount and accepts
    page.get_by_label("amount", exact=True).fill("650")
    expect(page.get_by_role("button", name="Accept with edits")).to_be_visible()
    shot = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path) / "inbox-agent-inbox.png"
    page.set_viewport_size({"width": 1200, "height": 1600})  # not full_page: it can swallow the next click
    page.screenshot(path=str(shot))
    page.get_by_role("button", name="Accept with edits").click()
    expect(status(page)).to_have_text("Done: your answer “accept” is recorded, and the agent carries on.")
    # THEN the graph received an Agent Inbox edit with the request's other arguments kept, and paid 650 once
    assert inbox.status(question)["outcome"]["answer"] == {"action": "accept", "args": {"amount": 650}}
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == [650]
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_a_response_without_a_note_is_refused_by_the_api_and_the_question_stays_open(inbox: Inbox) -> None:
    # GIVEN an Agent Inbox request, WHEN "Response" is pressed with no note
    _, question = inbox.ask(1250, kind="agent_inbox")
    page = inbox.page()
    inbox.open(page, question)
    page.get_by_role("button", name="Response").click()
    # THEN the page shows the API's reason and the question is still open for a correct answer
    expect(status(page)).to_contain_text("a response answer carries the reply as 'note'")
    assert inbox.status(question)["status"] == "open"
    page.get_by_label("Note (optional)").fill("Call the customer first.")
    page.get_by_role("button", name="Response").click()
    expect(status(page)).to_have_text("Done: your answer “response” is recorded, and the agent carries on.")


def test_an_answer_while_the_agent_runs_on_the_thread_is_not_recorded_and_the_page_says_to_try_again(
    inbox: Inbox, tmp_path: Path
) -> None:
    from agent_wait.aws import DynamoDbLedger

    # GIVEN a question, and a run of the agent holding its thread (the router's lease)
    thread, question = inbox.ask()
    ledger = DynamoDbLedger(inbox.local.table, client=inbox.local.client("dynamodb"))
    assert ledger.acquire_lease(thread, "a-run", now=inbox.clock(), seconds=60) is not None
    page = inbox.page()
    inbox.open(page, question)

    # WHEN alice approves while the run holds the thread
    page.get_by_role("button", name="Approve").click()

    # THEN nothing is recorded, the page says why and to try again, and the buttons stay
    busy = "Not recorded: The agent is working on this thread right now; try again in a few seconds."
    expect(status(page)).to_have_text(busy)
    expect(page.get_by_role("button", name="Approve")).to_be_enabled()
    page.screenshot(path=str(Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path) / "inbox-thread-busy.png"))
    assert inbox.status(question)["status"] == "open"

    # AND once the run lets go, the same click decides and the agent runs once
    ledger.release_lease(thread, "a-run")
    page.get_by_role("button", name="Approve").click()
    expect(status(page)).to_contain_text("Done: your answer “approve” is recorded")
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == [900]


def test_the_confirmation_page_takes_the_links_token_out_of_the_address_bar_and_history(inbox: Inbox) -> None:
    # Issue 25: the token (a capability to answer) stayed in the URL fragment, so in the browser's history
    _, question = inbox.ask()
    link = inbox.links(question)["approve"]
    token = link.split("#", 1)[1]
    page = inbox.browser.new_context().new_page()
    page.goto(link)
    expect(page.get_by_role("button", name="Confirm: approve")).to_be_enabled()
    assert page.evaluate("location.hash") == ""
    assert token not in page.evaluate("location.href")
    # AND the page still answers with the token it read
    page.get_by_role("button", name="Confirm: approve").click()
    expect(status(page)).to_have_text(DONE_APPROVE)
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]


def test_an_operator_approves_several_after_a_confirmation_and_cancels_one_with_a_reason(
    inbox: Inbox, tmp_path: Path
) -> None:
    # GIVEN three refunds waiting for finance, listed on alice's page
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    asked = [
        inbox.ask(amount, thread=f"order-81{n}-{uuid.uuid4().hex[:4]}")
        for n, amount in ((1, 900), (2, 1100), (3, 1300))
    ]
    page = inbox.page(width=1100)
    for thread, _ in asked:
        page.get_by_role("checkbox", name=re.compile(re.escape(f" on {thread}"))).check()
    expect(page.get_by_role("button", name="Approve selected (3)")).to_be_enabled()
    # AND, unknown to the page, bob rejects the third on the entry queue meanwhile
    (t1, _), (t2, _), (t3, q3) = asked
    rival = {"thread_id": t3, "question_id": q3, "answer": {"action": "reject"}, "answered_by": "bob@example.com"}
    inbox.local.send(rival, deduplication_id=uuid.uuid4().hex)
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]

    # WHEN she asks to approve the selection: the page names how many and which before sending anything
    page.get_by_role("button", name="Approve selected (3)").click()
    confirm = page.locator("#bulk-confirm")
    expect(confirm).to_contain_text("Approve 3 questions?")
    for thread, _ in asked:
        expect(page.locator("#bulk-confirm-list")).to_contain_text(thread)
    assert inbox.local.pump().outcomes == [], "nothing may be sent before the confirmation"
    page.screenshot(path=str(target / "inbox-approve-selected.png"))
    page.get_by_role("button", name="Approve 3 questions").click()

    # THEN each question has its own result: two approved, the one bob decided not, and why
    expect(status(page)).to_have_text("2 questions approved; 1 not (see why below).")
    results = page.locator("#bulk-results-list li")
    expect(results).to_have_count(3)
    expect(results.nth(2)).to_contain_text("Not approved")
    expect(results.nth(2)).to_contain_text("Someone else answered first.")
    page.screenshot(path=str(target / "inbox-approve-results.png"))
    # AND the agent carried on once with each approval, never with the refused one
    assert sorted(o.kind.value for o in inbox.local.pump().outcomes) == ["applied", "applied"]
    assert (inbox.refunds(t1), inbox.refunds(t2), inbox.refunds(t3)) == ([900], [1100], [])

    # WHEN, on a phone, she cancels another refund with a reason
    thread, question = inbox.ask(700, thread=f"order-8199-{uuid.uuid4().hex[:4]}")
    phone = inbox.page(width=375)
    expect(phone.get_by_role("button", name="Approve selected")).to_be_visible()
    phone.screenshot(path=str(target / "inbox-list-phone.png"))
    inbox.open(phone, question)
    expect(phone.locator("#policy-cancel")).to_have_text("a cancellation with your reason, never the default")
    phone.get_by_text("Cancel this question…").click()
    phone.get_by_role("button", name="Cancel question").click()
    expect(status(phone)).to_have_text("Say why you cancel it: the reason is recorded with your name.")
    phone.get_by_label("Why cancel it?").fill("The customer withdrew the request.")
    phone.screenshot(path=str(target / "inbox-cancel-phone.png"), full_page=True)
    phone.get_by_role("button", name="Cancel question").click()

    # THEN the page says so, the outcome names her and her reason, and the agent got the cancellation answer once
    expect(status(phone)).to_have_text(
        "Cancelled: the agent carries on with the policy's answer for a cancelled question."
    )
    expect(phone.locator("#outcome")).to_contain_text("Cancelled by alice@example.com at ")
    expect(phone.locator("#outcome")).to_contain_text("“The customer withdrew the request.”")
    expect(phone.get_by_role("button", name="Approve")).to_have_count(0)
    phone.screenshot(path=str(target / "inbox-cancelled-phone.png"))
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == []
    outcome = inbox.status(question)["outcome"]
    assert (outcome["status"], outcome["answered_by"], outcome["reason"]) == (
        "cancelled",
        "alice@example.com",
        "The customer withdrew the request.",
    )
    # AND, the agent having resumed, the list's Cancelled filter shows it cancelled by her and why, never as a
    # rejection of hers (the answer the agent got is the policy's, not her decision)
    phone.get_by_role("link", name="All questions").click()
    phone.get_by_label("Status").select_option("cancelled")
    phone.get_by_role("button", name="Show").click()
    row = phone.get_by_role("row").filter(has_text=thread)
    expect(row.get_by_role("cell").nth(3)).to_have_text(
        "resumedcancelled by alice@example.com: The customer withdrew the request."
    )
    phone.screenshot(path=str(target / "inbox-cancelled-row-phone.png"), full_page=True)
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    assert phone.errors == []  # pyright: ignore[reportAttributeAccessIssue]
