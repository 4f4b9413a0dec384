"""What the inbox's browser tests share: how Chromium is found and launched, and the running stack as a person
and a test see it (`Inbox`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ("CHROMIUM_ARGS", "EXPECT_MS", "GRAPH", "LARGE", "Inbox", "find_chromium", "running_inbox")

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
)
"""How Chromium runs here: headless, in a container without a sandbox, with nothing that phones home."""
GRAPH = "tests.browser.inbox_graph:build_graph"
LARGE = 900
"""Over the refund's auto-approve limit: finance is asked."""
EXPECT_MS = 60_000
"""How long an expectation on the page waits (the page polls its question every 2 s). Generous, since a passing
expectation returns at once: on a loaded machine the insights page's reads of 200 rows from the emulator took over
10 s at load 5, and over 20 s at load 14 (the insights screenshot test failed so once)."""


def find_chromium() -> str | None:
    """The system Chromium: `AGENT_WAIT_CHROMIUM` if set, else `chromium` or `chromium-browser` on the PATH."""
    named = os.environ.get("AGENT_WAIT_CHROMIUM")
    if named:
        return named if os.path.exists(named) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Inbox:
    """The running stack, its clock and topic, the browser, and what the tests do over and over."""

    local: Any
    clock: Any
    observer: Any
    browser: Any

    @property
    def url(self) -> str:
        return f"{self.local.api_url}/inbox"

    def ask(
        self, amount: int = LARGE, *, kind: str = "refund", order_id: str | None = None, thread: str | None = None
    ) -> tuple[str, str]:
        """Start a refund (or another `kind` of question) and let the router run it; (thread, question id)."""
        thread = thread or f"order-{uuid.uuid4().hex[:6]}"
        return thread, self.start(thread, {"order_id": order_id or thread, "amount": amount, "kind": kind})

    def start(self, thread: str, value: Any) -> str:
        """Start `thread` with the agent's `input` and let the router run it; the one question it asks."""
        self.local.send(
            {"thread_id": thread, "input": value, "start_id": uuid.uuid4().hex}, deduplication_id=uuid.uuid4().hex
        )
        asked = [q for outcome in self.local.pump().outcomes for q in outcome.asked]
        assert len(asked) == 1, f"expected one question, got {asked}"
        return asked[0]

    def links(self, question: str) -> dict[str, str]:
        """The signed links the topic's `wait.created` envelope carried for `question`, by action."""
        created = [e for e in self.observer.drain() if e["type"] == "wait.created" and e["question_id"] == question]
        assert len(created) == 1, created
        return dict(created[0]["reply_to"].get("links") or {})

    def link_for(self, question: str, approver: str, action: str = "approve") -> str:
        """A signed link made for `approver`, with the stack's keys (a quorum question gets no unnamed links)."""
        from agent_wait.aws.ledger import DynamoDbLedger
        from agent_wait.host.links import LinkKeys, answer_links

        secrets = self.local.client("secretsmanager")
        keys = LinkKeys.load(self.local.environment["AGENT_WAIT_LINK_KEYS_ARN"], client=secrets)
        record = DynamoDbLedger(self.local.table, client=self.local.client("dynamodb")).find(question)
        assert record is not None, question
        return answer_links(keys, self.local.api_url, record.envelope, now=self.clock(), approver=approver)[action]

    def page(self, user: str = "alice@example.com", groups: str = "finance", *, width: int = 1200) -> Any:
        """A fresh browser context (its own session storage) signed in through the page's dev sign-in."""
        from playwright.sync_api import expect

        context = self.browser.new_context(viewport={"width": width, "height": 800}, locale="en-GB", timezone_id="UTC")
        context.set_default_timeout(EXPECT_MS)
        page = context.new_page()
        page.errors = []  # pyright: ignore[reportAttributeAccessIssue]
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.on("dialog", lambda dialog: page.errors.append(f"dialog: {dialog.message}"))
        page.goto(self.url)
        page.get_by_label("User").fill(user)
        page.get_by_label("Groups").fill(groups)
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator("#who")).to_contain_text(user)
        return page

    def open(self, page: Any, question: str) -> None:
        """Show one question, as following its link in the list does."""
        from playwright.sync_api import expect

        page.goto(f"{self.url}#/questions/{question}")
        expect(page.locator("#detail-id")).to_have_text(question)

    def status(self, question: str) -> dict[str, Any]:
        from agent_wait.aws.ledger import DynamoDbLedger

        record = DynamoDbLedger(self.local.table, client=self.local.client("dynamodb")).find(question)
        assert record is not None
        from agent_wait.host.api import question_view

        return question_view(record)

    def state(self, thread: str) -> dict[str, Any]:
        """The thread's graph state, through the router the local stack runs (its checkpoints on the emulator)."""
        import agent_wait.host.router

        graph = agent_wait.host.router._router().adapter.graph  # pyright: ignore[reportAttributeAccessIssue]
        return graph.get_state({"configurable": {"thread_id": thread}}).values

    def refunds(self, order_id: str) -> list[int]:
        """The amounts refunded for `order_id`, one per execution of the refund's body."""
        from examples.refund_agent.settings import REFUND_TABLE_VARIABLE

        response = self.local.client("dynamodb").query(
            TableName=self.local.environment[REFUND_TABLE_VARIABLE],
            KeyConditionExpression="order_id = :o",
            ExpressionAttributeValues={":o": {"S": order_id}},
        )
        return [int(item["amount"]["N"]) for item in response["Items"]]


@contextlib.contextmanager
def running_inbox(
    template: dict[str, Any], browser: Any, graph: str, environment: dict[str, str] | None = None
) -> Iterator[Inbox]:
    """The refund stack on the emulator with `graph` as its agent (and `environment` besides), its answer API on
    127.0.0.1, and a browser."""
    from examples.refund_agent.demo import MovableClock

    from agent_wait.cli._dev import Observer
    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(
        template,
        clock=clock,
        stack_name=f"inbox-{uuid.uuid4().hex[:8]}",
        extra_environment={"AGENT_WAIT_GRAPH": graph, **(environment or {})},
    )
    local.start()
    try:
        yield Inbox(local, clock, Observer(local), browser)
    finally:
        local.stop()
