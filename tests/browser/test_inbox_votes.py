"""The approvals inbox in Chromium for questions with follow-ups: a two-person quorum, and an escalation step.

Its own refund stack on the emulator (the module's `inbox`), with the inbox test graph's `quorum` kind
(`WaitPolicy(..., quorum=2)`: two different people must approve, any reject decides at once) and `escalating`
kind (finance only, then after two days finance-managers too). `AGENT_WAIT_SCREENSHOTS=<dir>` keeps the
pictures the tests take (a tall viewport, not full-page shots, so no click is lost to a resize).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import Inbox

from agent_wait.common.times import parse_rfc3339

pytestmark = pytest.mark.timeout(180)

DONE_APPROVE = "Done: your answer “approve” is recorded, and the agent carries on."
TALL = {"width": 1100, "height": 1500}
"""Tall enough for the whole question page, so a screenshot needs no full-page resize."""


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def status(page: Any) -> Any:
    return page.get_by_role("status")


def shoot(page: Any, name: str, tmp_path: Path) -> None:
    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / name))
    assert (target / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def vote_rows(page: Any) -> list[list[str]]:
    rows = page.locator("#votes-rows tr")
    return [[cell.strip() for cell in rows.nth(i).locator("td").all_inner_texts()] for i in range(rows.count())]


def test_a_quorum_question_needs_two_people_and_the_page_shows_the_votes_so_far(inbox: Inbox, tmp_path: Path) -> None:
    # GIVEN a refund two people must approve, and alice on its page
    thread, question = inbox.ask(kind="quorum")
    alice = inbox.page("alice@example.com")
    alice.set_viewport_size(TALL)
    inbox.open(alice, question)
    votes = alice.get_by_role("region", name="Votes")
    expect(votes.locator("#votes-count")).to_have_text("0 of 2 approvals: 2 more approvals needed.")
    expect(votes.locator("#votes-rule")).to_have_text(
        "Each answer is a vote; 2 approvals from different people decide. Any reject decides at once."
    )
    expect(votes.get_by_text("No votes yet.")).to_be_visible()
    expect(status(alice)).to_have_text("Open: 2 more approvals needed.")
    shoot(alice, "inbox-quorum-open.png", tmp_path)

    # WHEN alice approves
    alice.get_by_role("button", name="Approve").click()

    # THEN her vote is recorded, one more approval is needed, and she has nothing left to press
    expect(status(alice)).to_have_text("Your vote “approve” is recorded; 1 more approval needed.")
    expect(alice.locator("#votes-count")).to_have_text("1 of 2 approvals: 1 more approval needed.")
    assert vote_rows(alice)[0][:2] == ["alice@example.com", "approve"]
    expect(alice.locator("#your-vote")).to_contain_text("Your vote “approve” is recorded (")
    expect(alice.locator("#your-vote")).to_contain_text("A second vote changes nothing.")
    expect(alice.get_by_role("button", name=re.compile("Approve|Reject"))).to_have_count(0)
    shoot(alice, "inbox-quorum-voted.png", tmp_path)
    # AND the question is still open, and the agent has not run
    assert inbox.status(question)["status"] == "open"
    inbox.local.pump()
    assert inbox.refunds(thread) == []

    # WHEN bob opens the list and the question
    bob = inbox.page("bob@example.com")
    bob.set_viewport_size(TALL)
    row = bob.get_by_role("row").filter(has_text=thread)
    expect(row).to_contain_text("1 of 2 approvals")
    shoot(bob, "inbox-quorum-list.png", tmp_path)
    inbox.open(bob, question)

    # THEN he sees alice's vote and may vote himself
    expect(bob.locator("#votes-count")).to_have_text("1 of 2 approvals: 1 more approval needed.")
    assert vote_rows(bob)[0][:2] == ["alice@example.com", "approve"]
    expect(bob.locator("#your-vote")).to_be_hidden()

    # WHEN bob approves too
    bob.get_by_role("button", name="Approve").click()

    # THEN his vote decides it, the agent runs once, and alice's page follows
    expect(status(bob)).to_have_text(DONE_APPROVE)
    expect(bob.locator("#votes-count")).to_have_text("2 of 2 approvals: the quorum decided it.")
    expect(bob.locator("#your-vote")).to_have_text(re.compile(r"^Your vote “approve” is recorded \(.*\)\.$"))
    assert [r[:2] for r in vote_rows(bob)] == [["alice@example.com", "approve"], ["bob@example.com", "approve"]]
    expect(status(alice)).to_have_text(re.compile(r"^Decided elsewhere: Answered by bob@example.com \(approve\)"))
    shoot(bob, "inbox-quorum-decided.png", tmp_path)
    assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    assert inbox.refunds(thread) == [900]
    assert [v["by"] for v in inbox.status(question)["outcome"]["answer"]["votes"]] == [
        "alice@example.com",
        "bob@example.com",
    ]
    for page in (alice, bob):
        assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_a_second_vote_by_the_same_person_is_refused_and_changes_nothing(inbox: Inbox) -> None:
    # GIVEN alice has the same quorum question open in two tabs
    thread, question = inbox.ask(kind="quorum")
    first, second = inbox.page("alice@example.com"), inbox.page("alice@example.com")
    inbox.open(first, question)
    inbox.open(second, question)
    expect(second.get_by_role("button", name="Reject")).to_be_enabled()

    # WHEN she approves in both, before either tab saw the other's vote (both approve: a reject first would be a
    # veto that decides the question, and which click lands first is the browser's to choose)
    first.evaluate("document.querySelector('#actions [data-action=approve]').click()")
    second.evaluate("document.querySelector('#actions [data-action=approve]').click()")

    # THEN one vote is recorded; the other tab is told a second vote changes nothing; nothing is decided
    for page in (first, second):
        expect(status(page)).to_have_text(re.compile(r"^(Your vote|Not recorded)"))
    view = inbox.status(question)
    assert view["status"] == "open"
    assert [(v["by"], v["action"]) for v in view["votes"]] == [("alice@example.com", "approve")]
    refused = [page for page in (first, second) if status(page).inner_text().startswith("Not recorded")]
    assert len(refused) == 1, [status(page).inner_text() for page in (first, second)]
    expect(status(refused[0])).to_have_text("Not recorded: You voted already; a second vote changes nothing.")
    expect(refused[0].locator("#your-vote")).to_contain_text("Your vote “approve” is recorded (")
    expect(refused[0].get_by_role("button", name=re.compile("Approve|Reject"))).to_have_count(0)
    inbox.local.pump()
    assert inbox.refunds(thread) == []


def test_a_reject_vetoes_a_quorum_question_at_once(inbox: Inbox) -> None:
    thread, question = inbox.ask(kind="quorum")
    page = inbox.page("carol@example.com")
    inbox.open(page, question)

    page.get_by_role("button", name="Reject").click()

    expect(status(page)).to_have_text("Done: your answer “reject” is recorded, and the agent carries on.")
    expect(page.locator("#votes-count")).to_have_text("0 of 2 approvals: a reject decided it.")
    assert inbox.status(question)["outcome"]["answer"]["action"] == "reject"
    inbox.local.pump()
    assert inbox.refunds(thread) == []


def test_an_escalated_question_shows_who_may_answer_now_and_accepts_the_new_audience(
    inbox: Inbox, tmp_path: Path
) -> None:
    # GIVEN a refund only finance may answer for two days, and carol of finance-managers on its page
    thread, question = inbox.ask(kind="escalating")
    carol = inbox.page("carol@example.com", "finance-managers")
    carol.set_viewport_size(TALL)
    inbox.open(carol, question)
    expect(carol.locator("#policy-answerers")).to_have_text("members of finance")
    expect(carol.locator("#policy-escalation")).to_contain_text("Not escalated yet. At ")
    expect(carol.locator("#policy-escalation")).to_contain_text(
        " it escalates to approver_group: finance-managers, and finance-managers may answer too."
    )
    expect(carol.get_by_role("region", name="Votes")).to_be_hidden()
    shoot(carol, "inbox-escalation-pending.png", tmp_path)
    # WHEN she approves before the step, she is refused
    carol.get_by_role("button", name="Approve").click()
    expect(status(carol)).to_contain_text("You are not one of the people who may answer this question.")
    assert inbox.status(question)["status"] == "open"
    # WHEN the step's time comes
    inbox.clock.offset += timedelta(days=2, minutes=1)
    try:
        # THEN within a poll the page says finance-managers may answer now, and her approval is accepted
        expect(status(carol)).to_have_text("Escalated: members of finance, finance-managers may answer now.")
        expect(carol.locator("#policy-answerers")).to_have_text("members of finance, finance-managers")
        expect(carol.locator("#policy-escalation")).to_have_text(
            "Escalated, step 1 of 1: routed to approver_group: finance-managers."
        )
        expect(carol.locator("#policy-tags")).to_have_text(
            "approver_group: finance-managers (asked with approver_group: finance)"
        )
        shoot(carol, "inbox-escalated.png", tmp_path)
        carol.get_by_role("button", name="Approve").click()
        expect(status(carol)).to_have_text(DONE_APPROVE)
        assert [o.kind.value for o in inbox.local.pump().outcomes] == ["applied"]
    finally:
        inbox.clock.offset = timedelta()
    assert inbox.refunds(thread) == [900]
    assert carol.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def test_a_signed_links_vote_says_it_is_recorded_and_how_many_more_approvals_are_needed(
    inbox: Inbox, tmp_path: Path
) -> None:
    # GIVEN a quorum question (the topic carried no links: a link made for nobody proves no voter) and an
    # approve link made for alice
    thread, question = inbox.ask(kind="quorum")
    assert inbox.links(question) == {}
    link = inbox.link_for(question, "alice@example.com")
    page = inbox.browser.new_context(viewport={"width": 900, "height": 1100}, locale="en-GB").new_page()
    page.goto(link)
    expect(page.locator("#votes")).to_contain_text("No votes yet.")
    expect(page.locator("#votes")).to_contain_text("0 of 2 approvals; 2 more approvals needed.")
    # WHEN the person confirms
    page.get_by_role("button", name="Confirm: approve").click()
    # THEN the page says the vote is recorded and one more approval is needed; nothing is decided yet
    expect(status(page)).to_have_text("Your vote “approve” is recorded; 1 more approval needed.")
    expect(page.locator("#votes")).to_contain_text("alice@example.com: approve, ")
    expect(page.get_by_role("button", name="Confirm: approve")).to_be_hidden()
    shoot(page, "confirm-quorum-voted.png", tmp_path)
    assert inbox.status(question)["status"] == "open"
    # AND the same link opened again offers no second vote
    page.goto("about:blank")
    page.goto(link)
    expect(status(page)).to_have_text(
        "Your vote “approve” is recorded already; a second vote changes nothing. 1 more approval needed."
    )
    expect(page.get_by_role("button", name="Confirm: approve")).to_be_hidden()
    inbox.local.pump()
    assert inbox.refunds(thread) == []


def test_a_finance_manager_extends_the_deadline_from_the_page_and_finance_may_not(inbox: Inbox, tmp_path: Path) -> None:
    # GIVEN a refund finance-managers may extend by up to three days (P3D deadline), and carol of finance-managers
    _, question = inbox.ask(kind="escalating")
    asked_deadline = inbox.status(question)["policy"]["expires_at"]
    carol = inbox.page("carol@example.com", "finance-managers")
    carol.set_viewport_size(TALL)
    inbox.open(carol, question)
    extend = carol.get_by_role("button", name="Extend")
    expect(extend).to_be_visible()
    before = carol.locator("#policy-deadline").inner_text()
    # WHEN she moves the deadline by a day
    carol.get_by_label("Move the deadline later by").select_option("P1D")
    extend.click()
    # THEN the page says where it is now, the Deadline row shows it, and the ledger holds it
    expect(status(carol)).to_contain_text("Deadline moved to ")
    expect(status(carol)).to_contain_text("; the reminders moved with it.")
    expect(carol.locator("#policy-deadline")).not_to_have_text(before)
    moved = inbox.status(question)["policy"]["expires_at"]
    assert (_parse(moved) - _parse(asked_deadline)) == timedelta(days=1)
    # AND the escalation step the page announces moved by the same day (P2D after asking, plus one)
    view = inbox.status(question)
    assert _parse(view["escalation"]["next_at"]) - _parse(view["asked_at"]) == timedelta(days=3)
    shoot(carol, "inbox-extended.png", tmp_path)
    # AND three more days would pass the policy's maximum: refused, and the page says why
    carol.get_by_label("Move the deadline later by").select_option("P3D")
    extend.click()
    expect(status(carol)).to_contain_text("Not extended: That is further than this question's policy lets its deadline")
    # AND alice of finance may answer but not extend
    alice = inbox.page("alice@example.com", "finance")
    inbox.open(alice, question)
    alice.get_by_role("button", name="Extend").click()
    expect(status(alice)).to_contain_text(
        "Not extended: You are not one of the people who may extend this question's deadline."
    )
    assert inbox.status(question)["policy"]["expires_at"] == moved
    assert carol.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    assert alice.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def _parse(text: str) -> datetime:
    return parse_rfc3339(text)
