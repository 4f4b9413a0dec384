"""A question an MCP client asked (`ask_person`), in the inbox in Chromium: listed with the others, shown as asked, and
approved there, which completes the client's task with the answer. Screenshots in `AGENT_WAIT_SCREENSHOTS` (else a
temporary folder): `inbox-mcp-list.png`, `inbox-mcp-question.png`."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import Inbox
from tests.local.mcp_clients import Door, ask, get

from agent_wait.mcp.tasks import CreateTaskResult, GetTaskResult

pytestmark = pytest.mark.timeout(240)


def off_the_loop(call: Callable[..., Any], *args: Any) -> Any:
    """Run an MCP client call on its own thread: Playwright's sync API holds an event loop on this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call, *args).result(timeout=120)


def test_an_mcp_question_is_listed_shown_and_approved_in_the_inbox(inbox: Inbox, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    target = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    # GIVEN a refund the agent asked, and a question an MCP client asked (an object, shown field by field)
    inbox.ask(900, thread="order-7731")
    door = Door(inbox.local.api_url, token=inbox.local.issuer.token("ana@example.com"))
    task = off_the_loop(ask, door, {"question": {"summary": "Refund 900 EUR to order 8812?", "customer": "C-1042"}})
    assert isinstance(task, CreateTaskResult), task
    # WHEN alice (finance) opens the inbox
    page = inbox.page(width=1100)
    expect(page.locator("#rows tr")).to_have_count(2)
    row = page.locator(f'#rows a[href="#/questions/{task.task_id}"]')
    expect(row).to_contain_text("Refund 900 EUR to order 8812?")
    expect(page.locator("#rows")).to_contain_text(f"mcp:{task.task_id}")  # its synthetic thread
    page.set_viewport_size({"width": 1100, "height": 600})
    page.screenshot(path=str(target / "inbox-mcp-list.png"))
    # THEN the question shows as asked, and approving it there completes the task with her answer
    inbox.open(page, task.task_id)
    expect(page.locator("#detail-heading")).to_have_text("Refund 900 EUR to order 8812?")  # its summary, not JSON
    expect(page.locator("main")).to_contain_text("C-1042")
    page.set_viewport_size({"width": 1100, "height": 840})
    page.screenshot(path=str(target / "inbox-mcp-question.png"))
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_role("status")).to_contain_text("Done")
    done = off_the_loop(get, door, task.task_id)
    assert isinstance(done, GetTaskResult), done
    assert done.status == "completed"
    result = done.call_result()
    assert result is not None
    assert result.structured_content == {
        "answer": {"action": "approve"},
        "expired": False,
        "answered_by": "alice@example.com",
    }
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
