"""The pages' scripts as ES modules in Chromium: the inbox and the signed-link page each load every module from
the answer API (as JavaScript, under their Content-Security-Policy) with no error in the console, and work.
The same rules read from the files: tests/host/test_page_module_files.py."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import pytest
from _inbox_page import Inbox

pytestmark = pytest.mark.timeout(180)

WORKER = "inbox-sw.js"
"""The inbox's service worker: the browser fetches it to register it, not the page (test_inbox_push.py)."""
SCRIPTS = {
    path.name
    for path in (files("agent_wait.host.api") / "pages").iterdir()
    if path.name.endswith(".js") and path.name != WORKER
}


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


class Watched:
    """A fresh page whose console errors, uncaught errors and script responses are recorded from its first load."""

    def __init__(self, inbox: Inbox) -> None:
        self.page = inbox.browser.new_context(locale="en-GB", timezone_id="UTC").new_page()
        self.problems: list[str] = []
        self.scripts: dict[str, tuple[int, str]] = {}
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"uncaught: {error}"))
        self.page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _response(self, response: Any) -> None:
        if response.url.endswith(".js"):
            name = response.url.rsplit("/", 1)[1]
            self.scripts[name] = (response.status, response.headers.get("content-type", ""))


def test_the_inbox_loads_every_module_from_the_api_and_logs_no_error(inbox: Inbox) -> None:
    # GIVEN a question waiting, and a fresh inbox page watched from its first request
    _, question = inbox.ask()
    watched = Watched(inbox)
    page = watched.page
    # WHEN a person signs in, opens the question, then the insights
    page.goto(inbox.url)
    page.get_by_label("User").fill("alice@example.com")
    page.get_by_label("Groups").fill("finance")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#rows")).to_contain_text("issue_refund")
    inbox.open(page, question)
    expect(page.get_by_role("button", name="Approve")).to_be_enabled()
    page.goto(f"{inbox.url}#/insights")
    expect(page.locator("#insights-figures")).to_contain_text("Open now")
    # THEN every module but the link page's own came from the API once, as JavaScript, and nothing went wrong
    assert sorted(watched.scripts) == sorted(SCRIPTS - {"confirm.js"})
    assert {name: status for name, (status, _) in watched.scripts.items() if status != 200} == {}
    assert all(kind.startswith("text/javascript") for _, kind in watched.scripts.values()), watched.scripts
    assert watched.problems == []


def test_the_signed_link_page_loads_its_modules_from_the_api_and_logs_no_error(inbox: Inbox) -> None:
    # GIVEN a question with signed links, and a fresh page watched from its first request
    _, question = inbox.ask()
    link = inbox.links(question)["approve"]
    watched = Watched(inbox)
    # WHEN the link is opened
    watched.page.goto(link)
    # THEN its module and the two it imports (the shared helpers, and the inbox's reading of a question, so the link
    # page reads a question as the inbox does) came from the API as JavaScript, the page works, and nothing went wrong
    expect(watched.page.get_by_role("button", name="Confirm: approve")).to_be_enabled()
    assert watched.scripts == {
        "confirm.js": (200, "text/javascript; charset=utf-8"),
        "shared.js": (200, "text/javascript; charset=utf-8"),
        "inbox-reading.js": (200, "text/javascript; charset=utf-8"),
    }
    assert watched.problems == []
