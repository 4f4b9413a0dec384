"""The approvals inbox in a real browser: Debian's Chromium driven by Playwright, against the refund stack on
the emulator (`EmulatedStack`, as `agent-wait dev` runs it), one stack and one browser for the module.

No Chromium: outside CI the tests skip and say how to install it; under `CI=true` that is a failure, since
CI is where these tests must run (`scripts/dev setup` installs Chromium on Debian and Ubuntu).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from _inbox_page import CHROMIUM_ARGS, EXPECT_MS, GRAPH, Inbox, find_chromium, running_inbox
from tests.support.iam_denials import iam_denials  # noqa: F401 - autouse: no test passes while a call was refused


@pytest.fixture(scope="session")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        message = (
            "no Chromium found: the inbox's browser tests need the system Chromium "
            "(`scripts/dev setup` installs it on Debian/Ubuntu; or `apt-get install chromium`; "
            "or set AGENT_WAIT_CHROMIUM to its path)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}. CI must run these tests, so a missing Chromium fails the run.")
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_MS)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS), headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def refund_template() -> dict[str, Any]:
    from examples.refund_agent.local import template

    return template()


@pytest.fixture(scope="module")
def inbox(refund_template: dict[str, Any], browser: Any) -> Iterator[Inbox]:
    """The refund stack with the inbox test graph (`tests/browser/inbox_graph.py`)."""
    with running_inbox(refund_template, browser, GRAPH) as running:
        yield running
