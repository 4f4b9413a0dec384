"""The inbox's insights view shows what standing grants decided, in Chromium, against the refund stack on the emulator:
Ana's grant (refunds up to 500 for an hour, three uses) was made and decided three refunds through the router on the
stack's own table (`tests/support/granted_refunds.py`), beside a refund Bob approved.

The page says what share of the period's decisions grants made, and lists Ana's grant in words: its function, what it
allows, who granted it and how many it decided; on a laptop and on a phone. `AGENT_WAIT_SCREENSHOTS=docs/images`
saves the screenshots there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import GRAPH, Inbox, running_inbox
from tests.support.granted_refunds import GRANTER, GrantedRun, grant_and_use

pytestmark = pytest.mark.timeout(240)


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture(scope="module")
def stack(refund_template: dict[str, Any], browser: Any) -> Iterator[tuple[Inbox, GrantedRun]]:
    """The inbox's stack, and Ana's grant made and used on its table."""
    from agent_wait.aws.ledger import DynamoDbLedger

    with running_inbox(refund_template, browser, GRAPH) as inbox:
        ledger = DynamoDbLedger(inbox.local.table, client=inbox.local.client("dynamodb"))
        yield inbox, grant_and_use(ledger, inbox.clock())


def _figure(page: Any, label: str) -> Any:
    return page.locator(".figure", has=page.locator(".figure-label", has_text=label)).locator(".figure-value")


def _note(page: Any, label: str) -> Any:
    return page.locator(".figure", has=page.locator(".figure-label", has_text=label)).locator(".figure-note")


@pytest.mark.parametrize(
    ("width", "height", "name"),
    [(1280, 800, "inbox-insights-grants.png"), (390, 844, "inbox-insights-grants-phone.png")],
    ids=["laptop", "phone"],
)
def test_screenshots_of_the_insights_share_decided_by_grants_and_the_grant_in_words(
    stack: tuple[Inbox, GrantedRun], tmp_path: Path, width: int, height: int, name: str
) -> None:
    inbox, _ = stack
    shots = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    # GIVEN Alice signed in to the inbox, on this screen
    page = inbox.page(width=width)
    page.set_viewport_size({"width": width, "height": height})

    # WHEN she opens Insights
    page.get_by_role("link", name="Insights").click()

    # THEN three of the five decisions were made by grants, under the Answered figure and in the grants card
    expect(_figure(page, "Answered")).to_have_text("5")
    expect(_note(page, "Answered")).to_have_text("3 by standing grants (60%)")
    expect(page.locator("#grants-share")).to_have_text(
        "3 of 5 decisions (60%) were made by standing grants: nobody was asked those."
    )
    # ... and Ana's grant, in words: what it allows, who granted it, how many it decided
    expect(page.locator("#grants-rows tr")).to_have_count(1)
    expect(page.locator("#grants-rows td")).to_have_text(["issue_refund", "amount at most 500", GRANTER, "3"])
    expect(page.locator("#grants-hidden")).to_be_hidden()
    # ... the people's figures are people's: two decisions, Ana's own approval and Bob's
    expect(page.locator("#answerers-chart text.row-label")).to_have_count(2)
    expect(page.locator("#status")).to_contain_text("3 decided by standing grants")
    assert '{"' not in page.locator("#insights-view").inner_text()
    page.screenshot(path=str(tmp_path / f"top-{name}"))  # the figures: looked at, not kept in docs/images
    page.locator("#insights-grants-heading").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / name))
    page.screenshot(path=str(tmp_path / f"full-{name}"), full_page=True)
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
