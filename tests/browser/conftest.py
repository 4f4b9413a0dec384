"""The approvals inbox in a real browser: Debian's Chromium driven by Playwright, against the refund stack on
the emulator (`EmulatedStack`, as `agent-wait dev` runs it), one stack for the module, one
Chromium for the test process (each module gets its own browser contexts, closed at its end).

No Chromium: outside CI the tests skip and say how to install it; under `CI=true` that is a failure, since
CI is where these tests must run (`scripts/dev setup` installs Chromium on Debian and Ubuntu).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
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


class _SharedChromium:
    """One Playwright driver and one Chromium for a run of browser tests: each launch costs a second or two of CPU,
    and each module launching its own paid it once per module.

    Launched by the first module that needs a browser and stopped once the next test to run is not a browser test
    (`pytest_runtest_teardown` below): a running sync Playwright holds an event loop in the test process, and a
    later `asyncio.run` in another folder's test on this worker would fail. Chromium's CPU shows in the suite's CPU
    table when it stops (a child's CPU counts once it is reaped): on the teardown of the run's last browser test."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None

    def get(self, chromium: str) -> Any:
        if self._browser is None:
            from playwright.sync_api import expect, sync_playwright

            expect.set_options(timeout=EXPECT_MS)
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=chromium, args=list(CHROMIUM_ARGS), headless=True
            )
        return self._browser

    def contexts(self) -> list[Any]:
        """The browser contexts open now (none while no Chromium runs)."""
        return list(self._browser.contexts) if self._browser is not None else []

    def stop(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


_SHARED = _SharedChromium()


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    """The shared Chromium, for one module: every context (and page) the module opened is closed at its end, so no
    page of it keeps polling a stack that stopped, and the next module starts with none open, as it did when each
    module launched its own Chromium."""
    launched = _SHARED.get(chromium)
    yield launched
    for context in list(launched.contexts):
        context.close()


@pytest.fixture(autouse=True)
def _close_the_tests_own_pages() -> Iterator[None]:
    """Close the browser contexts a test opened when it ends: an inbox page left open polls its question every 2 s,
    and the local API that answers it runs in this test process, for the rest of the module."""
    before = set(_SHARED.contexts())
    yield
    for context in _SHARED.contexts():
        if context not in before:
            context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a browser test's fixtures are torn down: stop the shared Chromium unless the next test is one too."""
    yield
    if nextitem is None or Path(__file__).parent not in nextitem.path.parents:
        _SHARED.stop()


@pytest.fixture(scope="session")
def refund_template() -> dict[str, Any]:
    from examples.refund_agent.local import template

    return template()


@pytest.fixture(scope="module")
def inbox(refund_template: dict[str, Any], browser: Any) -> Iterator[Inbox]:
    """The refund stack with the inbox test graph (`tests/browser/inbox_graph.py`)."""
    with running_inbox(refund_template, browser, GRAPH) as running:
        yield running
