"""`AgentWaitDashboard` and `AgentWait(dashboard=True)`: every metric the synthesized body draws is one the runtime
emits (`agent_wait.engine.metrics.emitted()`), in its namespace, under its `service` and dimension names, and every
metric the runtime emits is drawn; the layout reads top-down (waiting now, speed, trouble)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import REPO, inline_code, new_app
from tests.support.dashboard_body import dashboard_body, every_metric

from agent_wait.contract.schema import Settings
from agent_wait.engine.metrics import NO_TAG, OTHER_TAG, DecisionOutcome, Metric, MetricTags, emitted
from agent_wait.host._powertools import DEFAULT_METRICS_NAMESPACE, DEFAULT_SERVICE_NAME
from agent_wait_cdk import AgentWait, AgentWaitDashboard, AgentWaitPropsError, AnswerApiProps

TAGS = {"team": ["payments", "support"], "priority": ["high"]}
ISSUER = "https://issuer.example.com"


def _agent(stack: Stack, **props: Any) -> AgentWait:
    return AgentWait(
        stack,
        "AgentWait",
        graph="m:g",
        code=inline_code(),
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        **props,
    )


@pytest.fixture(scope="module")
def watched() -> dict[str, Any]:
    stack = Stack(new_app(), "Watched")
    _agent(stack, dashboard=True, metric_tags=TAGS)
    return Template.from_stack(stack).to_json()


def _router_environment(template: dict[str, Any]) -> dict[str, Any]:
    (router,) = [
        r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler") == "agent_wait.host.router.handler"
    ]
    return router["Properties"]["Environment"]["Variables"]


def test_the_router_is_told_the_tags_the_dashboard_draws(watched: dict[str, Any]) -> None:
    setting = _router_environment(watched)[Settings.METRIC_TAGS.value]
    assert MetricTags.parse(setting) == MetricTags.parse('{"team": ["payments", "support"], "priority": ["high"]}')


def test_every_metric_drawn_is_one_the_runtime_emits_and_every_one_it_emits_is_drawn(watched: dict[str, Any]) -> None:
    drawn = every_metric(dashboard_body(watched))
    ours = [m for m in drawn if m.namespace == DEFAULT_METRICS_NAMESPACE]
    declared = emitted(MetricTags.parse(_router_environment(watched)[Settings.METRIC_TAGS.value]))

    pairs = {(m.name, frozenset(m.dimensions)) for m in ours}
    assert pairs <= declared, f"drawn but never emitted: {pairs - declared}"
    assert {m.name for m in ours} == {metric.value for metric in Metric}, "every metric the runtime emits is drawn"
    assert {m.namespace for m in drawn} == {DEFAULT_METRICS_NAMESPACE, "AWS/Lambda", "AWS/SQS"}
    # the same dimension values the runtime writes: its service, its outcomes, the tag values named or folded
    assert {m.dimensions["service"] for m in ours} == {DEFAULT_SERVICE_NAME}
    assert {m.dimensions["outcome"] for m in ours if "outcome" in m.dimensions} == {o.value for o in DecisionOutcome}
    for key, values in TAGS.items():
        assert {m.dimensions[key] for m in ours if key in m.dimensions} == {*values, OTHER_TAG, NO_TAG}
    # a SEARCH leaves only `reason` open, so each reason gets its own line as it first happens
    searched = {m.name: m for m in ours if m.search}
    assert set(searched) == {"AnswersRefused", "MessagesDeadLettered", "AgentFailures", "VersionChanges"}
    assert all(m.dimensions == {"service": DEFAULT_SERVICE_NAME, "reason": "*"} for m in searched.values())
    # time to answer as a person reads it: p50, p90 and p99 of answered questions
    answered = {m.stat for m in ours if m.name == Metric.TIME_TO_ANSWER and m.dimensions.get("outcome") == "answered"}
    assert {"p50", "p90", "p99"} <= answered


def test_the_layout_reads_top_down_and_fits_the_grid(watched: dict[str, Any]) -> None:
    widgets = dashboard_body(watched)["widgets"]
    headings = [w["properties"]["markdown"] for w in sorted(widgets, key=lambda w: w["y"]) if w["type"] == "text"]
    assert headings == ["### What is waiting now", "### How fast questions are answered", "### Trouble"]
    first_row = sorted((w for w in widgets if w["y"] == 1), key=lambda w: w["x"])
    top = [w["properties"]["title"] for w in first_row]
    assert top == ["Open questions", "Oldest open question (seconds)", "Alarms"]
    assert len(first_row[2]["properties"]["alarms"]) == 6, "every alarm's state, at the top"
    cells: set[tuple[int, int]] = set()
    for widget in widgets:
        assert widget["x"] + widget["width"] <= 24, widget
        mine = {(widget["x"] + dx, widget["y"] + dy) for dx in range(widget["width"]) for dy in range(widget["height"])}
        assert not cells & mine, f"widgets overlap at {sorted(cells & mine)[:3]}"
        cells |= mine
    titles = [w["properties"].get("title") for w in widgets if w["type"] == "metric"]
    assert "Time to answer by team, answered, p90 (seconds)" in titles
    assert "Time to answer by priority, answered, p90 (seconds)" in titles


def test_no_dashboard_and_no_tags_unless_asked() -> None:
    stack = Stack(new_app(), "Plain")
    agent = _agent(stack)
    assert agent.dashboard is None
    assert not [c for c in agent.node.find_all() if isinstance(c, AgentWaitDashboard)]
    assert Settings.METRIC_TAGS.value not in _router_environment(Template.from_stack(stack).to_json())


def test_tags_reach_the_router_without_a_dashboard_too() -> None:
    stack = Stack(new_app(), "TagsOnly")
    agent = _agent(stack, metric_tags={"team": ["payments"]})
    assert agent.dashboard is None
    setting = _router_environment(Template.from_stack(stack).to_json())[Settings.METRIC_TAGS.value]
    assert MetricTags.parse(setting).fold({"team": "legal"}) == {"team": OTHER_TAG}


def test_tags_the_router_would_refuse_are_refused_at_construction_all_at_once() -> None:
    stack = Stack(new_app(), "Bad")
    with pytest.raises(AgentWaitPropsError) as caught:
        _agent(
            stack,
            dashboard=True,
            metric_tags={"service": ["a"], "team": [], "region": ["other"], "x y": ["1"]},
        )
    problems = "\n".join(caught.value.problems)
    assert "must name 1 to 3 tag keys" in problems
    assert "key 'service' must be letters" in problems
    assert "['team'] must be a list" in problems
    assert "['region'] lists 'other' or 'none'" in problems
    assert "key 'x y' must be letters" in problems


def test_a_dashboard_period_outside_a_minute_to_a_day_is_refused() -> None:
    stack = Stack(new_app(), "Period")
    with pytest.raises(AgentWaitPropsError, match="period"):
        AgentWaitDashboard(stack, "Dashboard", period=Duration.seconds(10))


def test_the_operate_page_snippet_synthesizes_a_dashboard_and_an_answer_api_alarm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "src" / "refunds_service"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("graph = None\n")
    monkeypatch.chdir(tmp_path)  # graph_source paths resolve from where `cdk` runs
    page = (REPO / "docs" / "operate.md").read_text()
    (snippet,) = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "docs/operate.md", "exec"), namespace)
    stack = namespace["RefundsStack"](new_app(), "Refunds")
    template = Template.from_stack(stack).to_json()
    setting = _router_environment(template)[Settings.METRIC_TAGS.value]
    assert MetricTags.parse(setting).values == {"approver_group": frozenset({"finance", "finance-managers"})}
    drawn = {m.name for m in every_metric(dashboard_body(template))}
    assert Metric.TIME_TO_ANSWER.value in drawn
    alarms = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    (api_errors,) = [a for a in alarms if a.get("MetricName") == Metric.API_SERVER_ERRORS.value]
    assert api_errors["Namespace"] == DEFAULT_METRICS_NAMESPACE
    assert api_errors["Dimensions"] == [{"Name": "service", "Value": DEFAULT_SERVICE_NAME}]
    assert all(a.get("AlarmActions") for a in alarms), "every alarm, the six and the API's, pages on-call"
