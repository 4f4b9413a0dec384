"""The CloudWatch dashboard `AgentWait(dashboard=True)` synthesizes, drawn locally from its body (its widgets at
their grid positions, with titles and the metrics each names; no data) and looked at in Chromium: every widget on
screen, none overlapping, the three sections top to bottom. `AGENT_WAIT_SCREENSHOTS=docs/images` keeps the picture
docs/operate.md shows (`dashboard.png`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import inline_code, new_app
from tests.support.dashboard_body import dashboard_body, render_html

from agent_wait_cdk import AgentWait, AnswerApiProps

pytestmark = pytest.mark.timeout(120)


def _body() -> dict[str, Any]:
    stack = Stack(new_app(), "Refunds")
    AgentWait(
        stack,
        "AgentWait",
        graph="m:g",
        code=inline_code(),
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer="https://issuer.example.com", jwt_audience=["approvals"]),
        dashboard=True,
        metric_tags={"approver_group": ["finance", "finance-managers"]},
    )
    return dashboard_body(Template.from_stack(stack).to_json())


def test_the_dashboard_reads_top_down_with_every_widget_on_screen(browser: Any, tmp_path: Path) -> None:
    body = _body()
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.set_content(render_html(body))
        width = page.evaluate("document.documentElement.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "nothing scrolls sideways"
        cards = page.locator("section")
        assert cards.count() == len(body["widgets"])
        boxes = [cards.nth(i).bounding_box() for i in range(cards.count())]
        assert all(box is not None and box["width"] > 50 and box["height"] > 20 for box in boxes)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert a is not None
                assert b is not None
                apart = (
                    a["x"] + a["width"] <= b["x"] + 1
                    or b["x"] + b["width"] <= a["x"] + 1
                    or a["y"] + a["height"] <= b["y"] + 1
                    or b["y"] + b["height"] <= a["y"] + 1
                )
                assert apart, f"two widgets overlap on screen: {a} and {b}"
        headings = page.locator("section.text h2")
        tops = [headings.nth(i).bounding_box()["y"] for i in range(headings.count())]  # type: ignore[index]
        assert headings.all_inner_texts() == ["What is waiting now", "How fast questions are answered", "Trouble"]
        assert tops == sorted(tops)
        text = page.inner_text("body")
        for title in ("Open questions", "Alarms", "Time to answer by approver_group, answered, p90 (seconds)"):
            assert title in text
        assert "AgentWaitAlarmsDeadLetters" in text, "the alarm widget names each alarm"
        assert "AnswersRefused by reason" in text, "a SEARCH is drawn as the breakdown it is"
        directory = os.environ.get("AGENT_WAIT_SCREENSHOTS") or str(tmp_path)
        page.screenshot(path=str(Path(directory) / "dashboard.png"), full_page=True)
    finally:
        page.close()
