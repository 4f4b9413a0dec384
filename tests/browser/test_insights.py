"""The inbox's insights view in Chromium, and the audit export, against the refund stack on the emulator holding
200 questions of mixed outcomes (seeded through `DynamoDbLedger` on the stack's own table, as the router and the
API write them: tests/support/mixed_questions.py).

The figures on the page are checked against what the seeding says each question became; the export (CLI, JSON
lines and CSV; and `GET /audit` over HTTP) against the same list: every decision is in it with who made it and
through which door, and nothing else. `AGENT_WAIT_SCREENSHOTS=docs/images` saves the screenshots there.
"""

from __future__ import annotations

import csv
import json
import os
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import GRAPH, Inbox, running_inbox
from tests.support.mixed_questions import Seeded, seed_questions

from agent_wait.contract.schema import QuestionStatus, Settings

pytestmark = pytest.mark.timeout(240)

AUDIT_GROUP = "auditors"


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture(scope="module")
def stack(refund_template: dict[str, Any], browser: Any) -> Iterator[tuple[Inbox, list[Seeded]]]:
    """The inbox's stack with an audit group, and the 200 questions in its ledger."""
    from agent_wait.aws.ledger import DynamoDbLedger

    environment = {Settings.AUDIT_GROUP.value: AUDIT_GROUP}
    with running_inbox(refund_template, browser, GRAPH, environment) as inbox:
        ledger = DynamoDbLedger(inbox.local.table, client=inbox.local.client("dynamodb"))
        yield inbox, seed_questions(ledger, inbox.clock())


def _in_days(seeded: list[Seeded], inbox: Inbox, days: int) -> dict[str, int]:
    now = inbox.clock()
    since = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    decided = [q for q in seeded if q.decided_at is not None and since <= q.decided_at <= now]
    return {
        "asked": sum(1 for q in seeded if since <= q.asked_at <= now),
        **{outcome: sum(1 for q in decided if q.said == outcome) for outcome in DECIDED},
    }


DECIDED = ("answered", "expired", "cancelled", "withdrawn")


def _figure(page: Any, label: str) -> Any:
    return page.locator(".figure", has=page.locator(".figure-label", has_text=label)).locator(".figure-value")


def test_screenshots_of_the_insights_figures_and_charts(stack: tuple[Inbox, list[Seeded]], tmp_path: Path) -> None:
    inbox, seeded = stack
    shots = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    # GIVEN a person signed in to the inbox, on a laptop's screen
    page = inbox.page(width=1280)
    page.set_viewport_size({"width": 1280, "height": 800})
    # WHEN they open Insights from the header
    page.get_by_role("link", name="Insights").click()
    # THEN the last 7 days' figures are those of the seeded questions
    week = _in_days(seeded, inbox, 7)
    expect(_figure(page, "Asked")).to_have_text(str(week["asked"]))
    for label, key in (("Answered", "answered"), ("Expired", "expired"), ("Cancelled", "cancelled")):
        expect(_figure(page, label)).to_have_text(str(week[key]))
    expect(_figure(page, "Open now")).to_have_text("20")
    expect(page.locator("#days-7")).to_have_attribute("aria-pressed", "true")
    # ... drawn as inline SVG: a column pair per day, a bar per group and per person
    expect(page.locator("#daily-chart rect.asked")).to_have_count(7)
    expect(page.locator("#groups-chart text.row-label")).to_have_count(3)
    assert sorted(page.locator("#groups-chart text.row-label").all_text_contents()) == ["finance", "ops", "support"]
    expect(page.locator("#groups-heading")).to_have_text("Time to answer by approver_group")
    expect(page.locator("#answerers-chart text.row-label")).to_have_count(4)
    expect(page.locator("#slowest-rows tr")).to_have_count(5)
    # ... with the figures and the day-by-day chart on the first screen, and no JSON anywhere
    for selector in ("#insights-figures", "#daily-chart svg"):
        box = page.locator(selector).bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= 800, f"{selector} is below the fold: {box}"
    assert '{"' not in page.locator("#insights-view").inner_text()
    expect(page.locator("#insights-capped")).to_be_hidden()
    page.screenshot(path=str(shots / "inbox-insights.png"))
    page.screenshot(path=str(tmp_path / "inbox-insights-full.png"), full_page=True)

    # WHEN they switch to 30 days and group by the other tag
    page.get_by_role("button", name="Last 30 days").click()
    month = _in_days(seeded, inbox, 30)
    expect(_figure(page, "Asked")).to_have_text(str(month["asked"]))
    expect(_figure(page, "Answered")).to_have_text(str(month["answered"]))
    expect(page.locator("#daily-chart rect.asked")).to_have_count(30)
    page.screenshot(path=str(shots / "inbox-insights-30-days.png"))
    page.get_by_label("Group by tag").select_option("team")
    expect(page.locator("#groups-chart text.row-label")).to_have_text(["refunds"])
    assert "days=30" in page.url
    assert "by=team" in page.url
    # ... and follow the longest-open question
    oldest = min((q for q in seeded if q.status is QuestionStatus.OPEN), key=lambda q: q.asked_at)
    page.locator("#slowest-rows a").first.click()
    expect(page.locator("#detail-id")).to_have_text(oldest.question_id)
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]


def _decisions(seeded: list[Seeded]) -> dict[str, tuple[str | None, str | None, str]]:
    return {q.question_id: (q.answered_by, q.via, q.said) for q in seeded if q.outcome is not None}


def test_the_audit_export_of_the_200_round_trips(
    stack: tuple[Inbox, list[Seeded]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_wait.cli import main
    from agent_wait.cli._target import Target

    inbox, seeded = stack
    local = inbox.local
    monkeypatch.chdir(tmp_path)
    Target(queue_url=local.queue_url, table=local.table, endpoint_url=local.endpoint_url, region="us-east-1").save()
    since = (inbox.clock() - timedelta(days=31)).date().isoformat()
    # WHEN the trail is exported as JSON lines and as CSV
    assert main(["audit", "export", "--since", since, "--out", "trail.jsonl"]) == 0
    assert main(["audit", "export", "--since", since, "--format", "csv", "--out", "trail.csv"]) == 0
    lines = [json.loads(line) for line in (tmp_path / "trail.jsonl").read_text().splitlines()]
    with (tmp_path / "trail.csv").open(newline="") as stream:
        cells = list(csv.DictReader(stream))
    # THEN each holds the 200 questions, every decision with who made it and through which door, and nothing else
    expected = _decisions(seeded)
    assert len(expected) == 180
    assert sorted(row["question_id"] for row in lines) == sorted(q.question_id for q in seeded)
    assert {r["question_id"]: (r["answered_by"], r["via"], r["outcome"]) for r in lines if r["outcome"]} == expected
    assert {
        r["question_id"]: (r["answered_by"] or None, r["via"] or None, r["outcome"]) for r in cells if r["outcome"]
    } == expected
    assert len(cells) == 200
    votes = {r["question_id"]: [v["by"] for v in r["votes"]] for r in lines if r["votes"]}
    assert votes == {q.question_id: q.votes for q in seeded if q.votes}

    # WHEN an auditor reads the same trail over the answer API, a page at a time
    token = local.issuer.token("ann@example.com", [AUDIT_GROUP])
    rows: list[dict[str, Any]] = []
    cursor = ""
    while True:
        body = _get(f"{local.api_url}/audit?since={since}&limit=150{cursor}", token)
        rows += body["questions"]
        if body["next"] is None:
            break
        cursor = f"&cursor={body['next']}"
    # THEN it holds the same rows
    assert sorted(rows, key=lambda r: r["question_id"]) == sorted(lines, key=lambda r: r["question_id"])
    # ... and a person outside the audit group is refused
    other = local.issuer.token("alice@example.com", ["finance"])
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(f"{local.api_url}/audit?since={since}", other)
    assert refused.value.code == 403
    assert json.loads(refused.value.read())["reason"] == "not_an_auditor"


def _get(url: str, token: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())
