"""Email as an answer channel, end to end: the refund stack on the emulator, its answer API on 127.0.0.1, and
moto's SES keeping every email the real boto3 `sesv2` client sends. Each recipient's buttons are their own signed
links; following one is what the confirmation page's script does (it POSTs the token from the link's fragment).

Finance's questions (tag `approver_group:finance`) go to ana and dana; the escalation step's tag
(`approver_group:finance-managers`) to max.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from tests.support.refund_world import RefundWorld, refund_stack

pytestmark = pytest.mark.timeout(180)

ANA, DANA, MAX = "ana@example.com", "dana@example.com", "max@example.com"
ROUTING = {
    "groups": {"finance": [ANA, DANA], "finance-managers": [MAX]},
    "tags": {"approver_group:finance": [ANA, DANA], "approver_group:finance-managers": [MAX]},
}


class EmailWorld(RefundWorld):
    def emails(self, question: str) -> list[Any]:
        from agent_wait.local.email_preview import sent_emails

        return [e for e in sent_emails() if e.question_id == question]

    def links(self, sent: Any) -> dict[str, str]:
        """The email's buttons, by action, read from its plain text (`Approve: <url>`)."""
        return {m[1].lower(): m[2] for m in re.finditer(r"^(\w+): (http://\S+)$", sent.text, re.MULTILINE)}

    def post(self, url: str, path: str) -> tuple[int, Any]:
        parts = urllib.parse.urlsplit(url)
        target = f"{self.local.api_url}{parts.path.removesuffix('/confirm')}{path}"
        body = json.dumps({"token": parts.fragment}).encode()
        request = urllib.request.Request(target, data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def follow(self, url: str) -> tuple[int, Any]:
        return self.post(url, "/link/answer")


@pytest.fixture(scope="module")
def world(refund_template: dict[str, Any]) -> Iterator[EmailWorld]:
    # `agent-wait dev` emails by itself (`agent_wait.local.email_setup`): the sender, its verified domain and the
    # sends table are the local ones; only who is emailed, and the reply-to, are this test's.
    settings = {
        "AGENT_WAIT_EMAIL_RECIPIENTS": json.dumps(ROUTING),
        "AGENT_WAIT_EMAIL_REPLY_TO": "finance-desk@example.com",
    }
    with refund_stack(refund_template, "email", settings) as stack:
        yield EmailWorld(stack.local, stack.clock)


def test_one_email_per_recipient_and_one_link_decides_and_resumes_the_agent_once(world: EmailWorld) -> None:
    # GIVEN a refund for finance: one email each to ana and dana, with their own buttons
    thread, question = world.ask()
    emails = world.emails(question)
    assert sorted(e.to for e in emails) == [ANA, DANA]
    ana = next(e for e in emails if e.to == ANA)
    dana = next(e for e in emails if e.to == DANA)
    assert ana.subject.startswith("Your answer is needed: issue_refund(order_id=")
    assert ana.sender == "Approvals <approvals@example.com>"
    assert set(world.links(ana)) == {"approve", "reject"}
    assert world.links(ana)["approve"] != world.links(dana)["approve"], "each recipient has their own links"
    assert "  amount: 900" in ana.text
    assert world.links(ana)["approve"] in ana.html

    # WHEN a mail scanner opens (GET) and probes (HEAD) ana's link: nothing is decided
    page = urllib.parse.urlsplit(world.links(ana)["approve"])
    with urllib.request.urlopen(f"{world.local.api_url}{page.path}", timeout=10) as response:
        assert response.status == 200  # the static confirmation page
    # the local server does not serve HEAD (501); either way a probe reaches no answer route
    head = urllib.request.Request(f"{world.local.api_url}{page.path}", method="HEAD")
    with pytest.raises(urllib.error.HTTPError, match="501"):
        urllib.request.urlopen(head, timeout=10)
    assert world.row(question).status.value == "open"

    # WHEN ana approves from her email
    status, body = world.follow(world.links(ana)["approve"])

    # THEN it decides as ana, and the agent resumes once
    assert (status, body["result"]) == (200, "won")
    assert [o.kind.value for o in world.local.pump().outcomes] == ["applied"]
    assert world.refunds(thread) == [900]
    record = world.row(question)
    assert (record.status.value, record.answered_by, record.via) == ("resumed", ANA, "link")
    assert world.local.pump().outcomes == []

    # AND dana's link now shows who answered, and her reject changes nothing
    status, seen = world.post(world.links(dana)["reject"], "/link")
    assert status == 200
    assert seen["question"]["outcome"]["answered_by"] == ANA
    status, _ = world.follow(world.links(dana)["reject"])
    assert status == 409
    assert world.row(question).answer == {"action": "approve"}

    # AND each of them got one outcome email saying who answered
    outcomes = [e for e in world.emails(question) if e.subject.startswith("Answered:")]
    assert sorted(e.to for e in outcomes) == [ANA, DANA]
    assert f"{ANA} answered approve" in outcomes[0].text


def test_a_two_person_quorum_needs_two_recipients_links(world: EmailWorld) -> None:
    thread, question = world.ask(1250, kind="quorum")
    by_to = {e.to: world.links(e) for e in world.emails(question)}

    status, first = world.follow(by_to[ANA]["approve"])
    assert (status, first["remaining"]) == (202, 1)
    assert world.row(question).status.value == "open"

    status, last = world.follow(by_to[DANA]["approve"])
    assert (status, last["result"]) == (200, "won")
    world.local.pump()
    assert world.refunds(thread) == [1250], "the agent resumed once, with the approval"
    assert world.row(question).status.value == "resumed"


def test_a_reminder_and_an_escalation_send_their_emails_with_working_links(world: EmailWorld) -> None:
    _, question = world.ask()
    asked = {e.to: world.links(e) for e in world.emails(question)}
    try:
        # WHEN four hours pass (the reminder), then two days (the escalation step to finance-managers)
        world.later(timedelta(hours=4, minutes=1))
        reminders = [e for e in world.emails(question) if e.subject.startswith("Reminder:")]
        world.later(timedelta(days=2))
        escalations = [e for e in world.emails(question) if e.subject.startswith("Escalated:")]
        # AND the sweep runs again: nothing is sent twice
        count = len(world.emails(question))
        world.local.sweep()
        world.local.pump()
        assert len(world.emails(question)) == count
    finally:
        world.clock.offset = timedelta()
    # THEN each step emailed its audience, with fresh links that still answer
    assert sorted(e.to for e in reminders) == [ANA, DANA]
    assert "REMINDER 1 of 1" in reminders[0].text
    # (made again when sent: the current key and audience; within the deadline they equal the first email's)
    assert world.post(world.links(reminders[0])["approve"], "/link")[0] == 200
    assert set(asked) == {ANA, DANA}
    assert sorted(e.to for e in escalations) == [MAX]
    assert "ESCALATED (step 1 of 1)" in escalations[0].text
    status, body = world.follow(world.links(escalations[0])["reject"])
    assert (status, body["result"]) == (200, "won")
    assert world.row(question).answered_by == MAX


def test_agent_wait_dev_shows_every_sent_email_at_dev_email(world: EmailWorld) -> None:
    _, question = world.ask(700)

    with urllib.request.urlopen(f"{world.local.api_url}/dev/email", timeout=10) as response:
        page = response.read().decode("utf-8")
        policy = response.headers["Content-Security-Policy"]

    # THEN each email is there: its HTML in a sandboxed frame whose links open a new tab, its plain text beside
    assert f"question {question}" in page
    assert 'sandbox="allow-popups allow-popups-to-escape-sandbox"' in page
    assert "&lt;base target=&quot;_blank&quot;&gt;" in page
    assert "Approve: http://127.0.0.1" in page
    assert "script" not in policy
    assert "default-src 'none'" in policy
