"""The Slack messages a question gets, as the local preview renders them, in Chromium: an open question with its
buttons, the same question answered, and another expired. The announcer posts to a fake Slack over HTTP (the real
`slack_sdk` client), and the preview draws what the fake holds. `AGENT_WAIT_SCREENSHOTS=docs/images` keeps the
screenshots docs/slack.md shows.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.support.fake_slack import FakeSlack, PostedMessage

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.slack import InMemorySlackMessages, PreviewMessage, SlackAnnounce, SlackRouting, preview_page
from agent_wait.contract.envelope import Transition
from agent_wait.contract.schema import QuestionStatus

pytestmark = pytest.mark.timeout(120)

POLICY = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "reason": "no answer within P3D"},
    allowed_actions=["approve", "reject"],
    tags={"approver_group": "finance"},
    answerer_groups=["finance"],
    allow_edits=True,
)
DECIDED = {
    "q-7731": SimpleNamespace(
        status=QuestionStatus.RESUMED,
        outcome=QuestionStatus.ANSWERED,
        answer={"action": "approve", "note": "receipt checked"},
        answered_by="alice@example.com",
        via="slack",
        decided_at="2026-12-04T10:12:00Z",
        resumed_at="2026-12-04T10:12:01Z",
        followups=SimpleNamespace(voting=False),
        failure=None,
        reason=None,
    ),
    "q-7740": SimpleNamespace(
        status=QuestionStatus.EXPIRED,
        outcome=None,
        answer={"action": "reject", "reason": "no answer within P3D"},
        answered_by="agent-wait:deadline",
        via="deadline",
        decided_at="2026-12-07T09:00:00Z",
        resumed_at=None,
        followups=SimpleNamespace(voting=False),
        failure=None,
        reason=None,
    ),
}


def _envelope(question_id: str, order: str, amount: int, transition: Transition) -> WaitEnvelope:
    asked = {"function": "issue_refund", "args": {"order_id": order, "amount": amount}}
    question = Question(f"thread-{order}", question_id, asked, policy=POLICY)
    return WaitEnvelope.create(question, transition=transition)


def _preview(message: PostedMessage) -> PreviewMessage:
    replies = tuple(_preview(reply) for reply in message.replies)
    return PreviewMessage(message.channel, message.ts, message.blocks, message.text, replies, message.updated > 0)


def test_the_preview_of_an_open_an_answered_and_an_expired_message(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect
    from slack_sdk import WebClient

    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    with FakeSlack() as slack:
        client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
        routing = SlackRouting(channels={"approver_group:finance": "C0FINANCE"}, mentions={"finance": "S0FINANCE"})
        announcer = SlackAnnounce(
            client,
            routing,
            InMemorySlackMessages(),
            records=DECIDED.get,
            inbox_url="https://approvals.example.com/inbox",
        )
        # GIVEN three refunds asked: one stays open, one is approved in Slack, one expires
        for question_id, order, amount in (("q-7734", "order-7734", 1250), ("q-7731", "order-7731", 900)):
            announcer.announce(_envelope(question_id, order, amount, Transition.CREATED))
        announcer.announce(_envelope("q-7731", "order-7731", 900, Transition.RESUMED))
        announcer.announce(_envelope("q-7740", "order-7740", 2400, Transition.CREATED))
        announcer.announce(_envelope("q-7740", "order-7740", 2400, Transition.EXPIRED))
        posted = slack.messages("C0FINANCE")
    assert len(posted) == 3
    page = browser.new_page(viewport={"width": 900, "height": 560})
    try:
        # WHEN the open one is previewed
        page.set_content(preview_page([_preview(posted[0])], title="#finance-approvals"))
        # THEN it reads as a Slack message: the call, its arguments, its buttons, who may answer
        expect(page.get_by_text('issue_refund(order_id="order-7734", amount=1250)')).to_be_visible()
        for label in ("Approve", "Reject", "Edit…"):
            expect(page.get_by_text(label, exact=True)).to_be_visible()
        page.screenshot(path=str(target / "slack-open.png"))
        expect(page.locator("body")).to_contain_text("Who may answer: @finance")
        # WHEN the answered and the expired ones are previewed
        page.set_viewport_size({"width": 900, "height": 640})
        page.set_content(preview_page([_preview(posted[1]), _preview(posted[2])], title="#finance-approvals"))
        # THEN neither has buttons, one says who answered, the other that the default applied
        expect(page.get_by_text("Approve", exact=True)).to_have_count(0)
        expect(page.get_by_text("alice@example.com answered", exact=False)).to_be_visible()
        expect(page.get_by_text("Nobody answered by the deadline", exact=False)).to_be_visible()
        page.screenshot(path=str(target / "slack-decided.png"))
    finally:
        page.close()
