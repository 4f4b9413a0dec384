"""Signed answer links over real HTTP on the emulator, from the refund stack as it deploys.

The refund stack turns the answer API on with links for its SNS topic. On `EmulatedStack` the router signs
links with the keys of the stack's own Secrets Manager secret, the topic carries them, and the API
serves the confirmation page and its POSTs on 127.0.0.1. Each test follows a link as a person (or a mail
scanner) would: the URL as sent, the fragment never sent to the server, the token posted by the page.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from _http import Reply, call
from examples.refund_agent.demo import MovableClock, count_refunds

from agent_wait.cli._dev import Observer
from agent_wait.local.stack import EmulatedStack

LARGE = 900
"""Over the refund's auto-approve limit: finance is asked."""
NEW_KEY = "k2-" + "n" * 45


@dataclass
class Link:
    """A link as announced: the page URL (what a browser requests) and the token in its fragment."""

    url: str

    @property
    def page(self) -> str:
        return self.url.split("#", 1)[0]

    @property
    def token(self) -> str:
        return self.url.split("#", 1)[1]

    @property
    def kid(self) -> str:
        return self.token.split(".")[1]

    @property
    def api_path(self) -> str:
        return self.page.removesuffix("/confirm")


@dataclass
class Links:
    local: EmulatedStack
    clock: MovableClock
    observer: Observer

    def ask(self) -> tuple[str, str, dict[str, Link]]:
        """Start a refund over the limit; (thread, question id, its links by action) from the SNS envelope."""
        thread = f"order-link-{uuid.uuid4().hex[:8]}"
        self.local.send(
            {"thread_id": thread, "input": {"order_id": thread, "amount": LARGE}, "start_id": uuid.uuid4().hex},
            deduplication_id=uuid.uuid4().hex,
        )
        [question] = [q for outcome in self.local.pump().outcomes for q in outcome.asked]
        created = [e for e in self.observer.drain() if e["type"] == "wait.created" and e["question_id"] == question]
        assert len(created) == 1, created
        links = created[0]["reply_to"].get("links") or {}
        return thread, question, {action: Link(url) for action, url in links.items()}

    def use(self, link: Link, *, note: str | None = None) -> Reply:
        body: dict[str, Any] = {"token": link.token}
        if note:
            body["note"] = note
        return call(f"{link.api_path}/link/answer", method="POST", body=body)

    def status(self, question: str) -> str:
        token = self.local.issuer.token("auditor@example.com", ["audit"])
        reply = call(f"{self.local.api_url}/questions/{question}", token=token)
        assert reply.status == 200, reply
        return reply.body["status"]

    def refunds(self, order_id: str) -> int:
        return count_refunds(self.local, order_id)

    def rotate(self, secret: dict[str, str]) -> None:
        """Store new link keys, then cold-start the functions (a warm one follows within KEYRING_MAX_AGE)."""
        arn = self.local.environment["AGENT_WAIT_LINK_KEYS_ARN"]
        self.local.client("secretsmanager").put_secret_value(SecretId=arn, SecretString=json.dumps(secret))
        self.local.cold_start()

    def secret(self) -> dict[str, str]:
        arn = self.local.environment["AGENT_WAIT_LINK_KEYS_ARN"]
        return json.loads(self.local.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"])


@pytest.fixture(scope="module")
def links(refund_template: dict[str, Any]) -> Iterator[Links]:
    clock = MovableClock()
    local = EmulatedStack(refund_template, clock=clock, stack_name=f"links-{uuid.uuid4().hex[:8]}")
    local.start()
    try:
        yield Links(local, clock, Observer(local))
    finally:
        local.stop()


def test_the_refund_stack_signs_links_with_its_own_secret_and_only_the_topic_carries_them(links: Links) -> None:
    from agent_wait.aws.ledger import DynamoDbLedger

    _, question, by_action = links.ask()
    # THEN the topic's envelope has one link per allowed action, to this API's confirmation page
    assert sorted(by_action) == ["approve", "reject"]
    for link in by_action.values():
        assert link.page == f"{links.local.api_url}/questions/{question}/confirm"
        assert link.kid == links.secret()["active"]
    # AND the ledger's copy of the envelope holds none (a link is a capability; the row is readable by more)
    record = DynamoDbLedger(links.local.table, client=links.local.client("dynamodb")).find(question)
    assert record is not None
    assert "links" not in record.envelope.reply_to


def test_a_scanner_opening_the_link_twice_changes_nothing(links: Links) -> None:
    thread, question, by_action = links.ask()
    # WHEN a mail scanner GETs the link twice (a browser never sends the fragment)
    pages = [call(by_action["approve"].page) for _ in range(2)]
    # THEN it got the static page both times, and the question is still open
    assert [p.status for p in pages] == [200, 200]
    assert all(p.headers["content-type"].startswith("text/html") for p in pages)
    assert "script-src 'self'" in pages[0].headers["content-security-policy"]
    assert links.local.pump().outcomes == []
    assert links.status(question) == "open"
    assert links.refunds(thread) == 0


def test_the_page_reads_the_link_then_answers_once_and_the_agent_resumes_once(links: Links) -> None:
    thread, question, by_action = links.ask()
    approve = by_action["approve"]
    # WHEN the page posts the token to read what the link does
    read = call(f"{approve.api_path}/link", method="POST", body={"token": approve.token})
    assert read.status == 200, read
    assert (read.body["link"]["action"], read.body["question"]["question_id"]) == ("approve", question)
    assert read.body["question"]["status"] == "open"
    # AND the person confirms
    first = links.use(approve, note="looks right")
    # THEN the answer won, recorded as coming by link
    assert first.status == 200, first
    assert (first.body["result"], first.body["outcome"]["via"]) == ("won", "link")
    assert [o.kind.value for o in links.local.pump().outcomes] == ["applied"]
    assert links.refunds(thread) == 1
    # AND the same link again repeats the outcome; the other link is told who won
    again = links.use(approve)
    assert (again.status, again.body["result"]) == (200, "repeated")
    other = links.use(by_action["reject"])
    assert (other.status, other.body["reason"]) == (409, "already_decided")
    assert other.body["question"]["outcome"]["answer"]["action"] == "approve"
    assert links.local.pump().outcomes == []
    assert links.refunds(thread) == 1


def _tampered(link: Link) -> Link:
    version, kid, payload, signature = link.token.split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return Link(f"{link.page}#{version}.{kid}.{payload}.{flipped}")


@pytest.mark.parametrize(
    ("case", "reason"),
    [("tampered", "tampered"), ("another question's", "wrong_question"), ("without its signature", "malformed")],
)
def test_a_link_that_cannot_be_used_is_403_with_its_reason_and_the_question_stays_open(
    links: Links, case: str, reason: str
) -> None:
    _, question, by_action = links.ask()
    _, _, others = links.ask()
    link = {
        "tampered": _tampered(by_action["approve"]),
        # another question's token, posted on this question's path
        "another question's": Link(f"{by_action['approve'].page}#{others['approve'].token}"),
        "without its signature": Link(f"{by_action['approve'].page}#{by_action['approve'].token.rsplit('.', 1)[0]}"),
    }[case]
    reply = links.use(link)
    assert (reply.status, reply.body["reason"]) == (403, reason)
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert links.status(question) == "open"


def test_a_link_past_its_question_deadline_is_refused_as_expired(links: Links) -> None:
    _, question, by_action = links.ask()
    # WHEN the link is used after the question's deadline (P3D)
    links.clock.offset += timedelta(days=3, minutes=1)
    try:
        reply = links.use(by_action["approve"])
    finally:
        links.clock.offset -= timedelta(days=3, minutes=1)
    # THEN it is refused, and answers nothing
    assert (reply.status, reply.body["reason"]) == (403, "expired")
    assert links.status(question) == "open"


def test_rotation_keeps_links_in_flight_valid_and_a_removed_key_stops_its_links(links: Links) -> None:
    old_secret = links.secret()
    old_kid = old_secret["active"]
    _, before, sent_before = links.ask()
    _, kept_open, sent_long_ago = links.ask()
    try:
        # WHEN a new key is added and made active
        links.rotate({**old_secret, "active": "k2", "k2": NEW_KEY})
        thread_after, after, sent_after = links.ask()
        # THEN new links are signed with it, and links sent before still work
        assert (sent_before["approve"].kid, sent_after["approve"].kid) == (old_kid, "k2")
        assert links.use(sent_before["approve"]).status == 200
        assert links.use(sent_after["reject"]).status == 200
        assert {o.kind.value for o in links.local.pump().outcomes} == {"applied"}
        # WHEN the old key is removed
        links.rotate({"active": "k2", "k2": NEW_KEY})
        # THEN a link signed with it is refused, and its question stays open
        refused = links.use(sent_long_ago["approve"])
        assert (refused.status, refused.body["reason"]) == (403, "unknown_key")
        assert links.status(kept_open) == "open"
    finally:
        links.rotate(old_secret)
    assert (links.status(before), links.status(after)) == ("resumed", "resumed")
    assert links.refunds(thread_after) == 0  # rejected: no refund
