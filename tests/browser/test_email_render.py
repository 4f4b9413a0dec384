"""The emails a question sends, rendered in Chromium as a mail client would show them: an open question, a
reminder, a deadline extension (with new links) and an outcome, at a phone's width (375 px) and a desktop's
(1280 px). Each must fit without sideways scrolling, show its buttons as the recipient's own links, and keep the
question's text as text. `AGENT_WAIT_SCREENSHOTS=docs/images` keeps the screenshots docs/email.md shows.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.email.render import Decided, EmailContent, outcome_email, question_email
from agent_wait.contract.envelope import Transition

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
POLICY = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "reason": "no answer within P3D"},
    allowed_actions=["approve", "reject"],
    tags={"approver_group": "finance"},
    answerer_groups=["finance"],
    reminders=["PT4H"],
)
LINKS = {
    "approve": "https://api.example.com/questions/q-7731/confirm#v1.k1.approve-token.sig",
    "reject": "https://api.example.com/questions/q-7731/confirm#v1.k1.reject-token.sig",
}
ASKED = {
    "function": "issue_refund",
    "args": {"order_id": "A-1042", "amount": 1250, "reason": "<b>damaged</b> on arrival, customer sent photos"},
    "description": "Refund **over the auto-approve limit** of 500. See the [order](https://shop.example.com/A-1042).",
}


def _emails() -> dict[str, EmailContent]:
    envelope = WaitEnvelope.create(Question("thread-A-1042", "q-7731", ASKED, policy=POLICY), now=NOW)
    reminder = envelope.for_transition(Transition.REMINDER, progress={"reminder": 1, "of": 1})
    later = NOW + timedelta(days=5)
    extended = replace(envelope, expires_at=later.strftime("%Y-%m-%dT%H:%M:%SZ")).for_transition(
        Transition.EXTENDED,
        progress={"extension": 1, "from": envelope.expires_at, "to": later.strftime("%Y-%m-%dT%H:%M:%SZ"), "by": "max"},
    )
    decided = Decided(
        "answered",
        {"action": "approve", "note": "photos checked"},
        "email:ana@example.com",
        "link",
        (NOW + timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    inbox = "https://api.example.com/inbox#/questions/q-7731"
    return {
        "question": question_email(envelope, links=LINKS, recipient="ana@example.com", now=NOW, inbox_url=inbox),
        "reminder": question_email(
            reminder, links=LINKS, recipient="ana@example.com", now=NOW + timedelta(hours=4), inbox_url=inbox
        ),
        "extended": question_email(
            extended, links=LINKS, recipient="ana@example.com", now=NOW + timedelta(days=1), inbox_url=inbox
        ),
        "outcome": outcome_email(envelope, decided, recipient="ana@example.com", inbox_url=inbox),
    }


EMAILS = _emails()


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("kind", ["question", "reminder", "extended", "outcome"])
def test_each_email_reads_well_at_a_phones_and_a_desktops_width(browser: Any, kind: str, width: int) -> None:
    content = EMAILS[kind]
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.set_content(content.html)
        # THEN nothing scrolls sideways, and the question's own markup stayed text
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("b").count() == 0
        assert "<b>damaged</b>" in page.inner_text("body") or kind == "outcome"
        if kind == "outcome":
            assert "ana@example.com answered approve (note: photos checked)" in page.inner_text("body")
            assert page.locator("a[href*='confirm']").count() == 0
        else:
            # AND each button is the recipient's own link, wholly on screen
            for action, url in LINKS.items():
                button = page.locator(f"a[href='{url}']")
                assert button.inner_text() == action.capitalize()
                box = button.bounding_box()
                assert box is not None
                assert box["x"] >= 0
                assert box["x"] + box["width"] <= width
            assert page.locator("strong", has_text="over the auto-approve limit").count() == 1
            # AND the buttons are on the first screen of a phone (844 px tall), under what changed
            assert page.locator(f"a[href='{LINKS['approve']}']").bounding_box()["y"] < 844  # type: ignore[index]
        if kind == "extended":
            body = page.inner_text("body")
            assert "Deadline extended to Wednesday 9 December 2026 at 09:00 UTC (it was Monday 7 December" in body
        directory = os.environ.get("AGENT_WAIT_SCREENSHOTS")
        if directory:
            page.screenshot(path=str(Path(directory) / f"email-{kind}-{width}.png"), full_page=True)
    finally:
        page.close()


def test_the_plain_text_parts_say_the_same_without_markup() -> None:
    question, reminder, outcome = EMAILS["question"].text, EMAILS["reminder"].text, EMAILS["outcome"].text
    assert "An agent waits for your answer: issue_refund" in question
    assert "  reason: <b>damaged</b> on arrival" in question, "plain text is not HTML-escaped"
    assert f"Approve: {LINKS['approve']}" in question
    assert "Answer in about 3 days, by Monday 7 December 2026 at 09:00 UTC." in question
    assert "the default applies: reject (reason: no answer within P3D)" in question
    assert reminder.startswith("REMINDER 1 of 1: this still waits for an answer.")
    assert "Answer in about 68 hours" not in reminder
    assert "ana@example.com answered approve (note: photos checked) on Friday 4 December 2026 at 14:00 UTC." in outcome
    assert not re.search(r"</?(p|strong|em|a|br|table|div)\b", outcome), "no markup of ours in plain text"
