"""Each metric has the value of what happened: questions driven through the router, the sweep and the answer API
handlers on the emulator (moto), and their metrics read back from the embedded metric format (EMF) lines Powertools
prints, as CloudWatch would read them. Every (metric, dimensions) pair printed is one `emitted()` declares, which is
the list the dashboard is tested against (`tests/cdk/test_dashboard.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.api_events import http_event
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    load_event,
    records_from_queue,
    reset_handlers,
    sqs_event,
    sqs_record,
    start_message,
)

from agent_wait.contract.schema import Settings
from agent_wait.engine import Metric, MetricTags
from agent_wait.engine.metrics import emitted
from agent_wait.engine.sweep import COUNT_OPEN_EVERY

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
TAGS = '{"approver_group": ["finance"]}'
FINANCE = {"answered_by": "fin@example.com", "groups": ["finance"]}
READER = {"iss": "https://issuer.example.com", "sub": "u-reader", "email": "reader@example.com"}


@dataclass(frozen=True)
class Point:
    """One metric value as CloudWatch reads it from an EMF document."""

    namespace: str
    name: str
    dimensions: dict[str, str]
    values: tuple[float, ...]
    unit: str


def points(out: str) -> list[Point]:
    """Every metric value in the EMF documents printed to stdout, one per metric and dimension set."""
    found: list[Point] = []
    for line in out.splitlines():
        if not (line.startswith("{") and '"_aws"' in line):
            continue
        document = json.loads(line)
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for dimension_set in directive["Dimensions"]:
                for metric in directive["Metrics"]:
                    value = document[metric["Name"]]
                    found.append(
                        Point(
                            directive["Namespace"],
                            metric["Name"],
                            {name: document[name] for name in dimension_set},
                            tuple(value if isinstance(value, list) else [value]),
                            metric.get("Unit", ""),
                        )
                    )
    return found


class Phase:
    """What one step of the scenario printed, read by metric and exact dimensions (besides `service`)."""

    def __init__(self, out: str, service: str) -> None:
        self.points = points(out)
        self.service = service

    def values(self, name: Metric, **dimensions: str) -> list[float]:
        wanted = {"service": self.service, **dimensions}
        return [v for p in self.points if p.name == name.value and p.dimensions == wanted for v in p.values]

    def total(self, name: Metric, **dimensions: str) -> float:
        return sum(self.values(name, **dimensions))

    def reasons(self, name: Metric) -> dict[str, float]:
        found: dict[str, float] = {}
        for p in self.points:
            if p.name == name.value and set(p.dimensions) == {"service", "reason"}:
                found[p.dimensions["reason"]] = found.get(p.dimensions["reason"], 0) + sum(p.values)
        return found


@pytest.fixture
def stack(host: HostStack, monkeypatch: pytest.MonkeyPatch) -> Iterator[HostStack]:
    from agent_wait.host import _powertools, api, router, sweep

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    # Each handler's Metrics took its service and namespace from the environment when its module was first imported,
    # maybe by an earlier test with other values: this one reads what this environment says.
    for module in (router, sweep, api):
        monkeypatch.setattr(module.metrics, "service", _powertools.service_name())
        monkeypatch.setattr(module.metrics, "namespace", _powertools.metrics_namespace())
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.followup_graphs:build_escalating_graph")
    monkeypatch.setenv(Settings.METRIC_TAGS.value, TAGS)
    reset_handlers()
    api.reset()
    try:
        yield host
    finally:
        api.reset()


def _at(moment: datetime) -> None:
    from agent_wait.host import router, sweep

    router._router().clock = lambda: moment
    sweep._sweep().clock = lambda: moment


def _route(context: FakeLambdaContext, *records: dict[str, Any]) -> None:
    from agent_wait.host import router

    assert router.handler(sqs_event(*records), context) == {"batchItemFailures": []}


def _sweep(context: FakeLambdaContext) -> None:
    from agent_wait.host import sweep

    sweep.handler(load_event("scheduled_event.json"), context)


def test_each_metric_has_the_value_of_what_happened(
    stack: HostStack, lambda_context: FakeLambdaContext, unique: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_wait.host import _powertools, api

    service, namespace = _powertools.service_name(), _powertools.metrics_namespace()
    seen: list[Point] = []

    def phase() -> Phase:
        read = Phase(capsys.readouterr().out, service)
        seen.extend(read.points)
        return read

    # GIVEN three refunds asked at T0, each tagged approver_group=finance, reminded after 4 hours
    threads = [f"m-{unique}-{n}" for n in range(3)]
    _at(T0)
    capsys.readouterr()
    _route(lambda_context, *(sqs_record(start_message(t, t), group_id=t, sent_at=T0) for t in threads))
    asked = phase()
    questions = {t: stack.ledger().questions(t)[0].question_id for t in threads}
    a, b, c = threads
    assert asked.total(Metric.ASKED) == 3
    assert asked.total(Metric.STARTS) == 3

    # WHEN the sweep runs five hours later
    _at(T0 + timedelta(hours=5))
    _sweep(lambda_context)
    swept = phase()
    # THEN it reminded all three and saw three open, the oldest five hours old
    assert swept.total(Metric.REMINDERS) == 3
    assert swept.values(Metric.OPEN_QUESTIONS) == [3]
    assert swept.values(Metric.OLDEST_OPEN_AGE) == [5 * 3600]

    # WHEN at six hours finance approves A, a manager answers B too early, A is answered again, and junk arrives
    six = T0 + timedelta(hours=6)
    _at(six)
    _route(
        lambda_context,
        sqs_record(answer_message(a, questions[a], **FINANCE, answer_id="a-1"), group_id=a, sent_at=six),
        sqs_record(
            answer_message(b, questions[b], answered_by="boss@example.com", groups=["finance-managers"]),
            group_id=b,
            sent_at=six,
        ),
        sqs_record(answer_message(a, questions[a], "reject", **FINANCE, answer_id="a-2"), group_id=a, sent_at=six),
        sqs_record("this is not json", group_id=c, sent_at=six),
    )
    answered = phase()
    # THEN one answer is accepted and timed six hours, by outcome and by its tag's value; two are refused by reason;
    # the junk is dead-lettered by reason
    assert answered.total(Metric.ACCEPTED) == 1
    assert answered.values(Metric.TIME_TO_ANSWER) == [6 * 3600]
    assert answered.values(Metric.TIME_TO_ANSWER, outcome="answered") == [6 * 3600]
    assert answered.values(Metric.TIME_TO_ANSWER, outcome="answered", approver_group="finance") == [6 * 3600]
    assert answered.reasons(Metric.REFUSED) == {"answerer_not_allowed": 1, "already_decided": 1}
    assert answered.total(Metric.REFUSED) == 2, "the total, which alarms and the dashboard's line read"
    assert answered.reasons(Metric.DEAD_LETTERED) == {"not_json": 1}

    # WHEN the answer API serves a question, an unknown one, and an answer it cannot take (its clock is today's, so
    # the question asked in 2026-09 is past its deadline)
    for method, path, body in (
        ("GET", f"/questions/{questions[b]}", None),
        ("GET", "/questions/q-nobody-asked", None),
        ("POST", f"/questions/{questions[b]}/answer", {"answer": {"action": "escalate"}}),
    ):
        api.handler(http_event(method, path, body, claims=READER), lambda_context)
    served = phase()
    # THEN each request is counted and timed, the 4xx by status code, and the refusal by its reason
    assert served.total(Metric.API_REQUESTS) == 3
    assert served.reasons(Metric.API_CLIENT_ERRORS) == {"404": 1, "410": 1}
    assert served.reasons(Metric.REFUSED) == {"expired": 1}
    assert served.total(Metric.API_SERVER_ERRORS) == 0
    assert len(served.values(Metric.API_LATENCY)) == 3

    # WHEN the sweep runs past the escalation step (P2D), then past the deadline (P3D)
    _at(T0 + timedelta(days=2, minutes=1))
    _sweep(lambda_context)
    escalated = phase()
    late = T0 + timedelta(days=3, minutes=1)
    _at(late)
    _sweep(lambda_context)
    overdue = phase()
    deadlines = records_from_queue(stack.entry_messages(), stack.queue_arn)
    for record in deadlines:  # SQS stamps them now; the router judges them by when the sweep sent them
        record["attributes"]["SentTimestamp"] = str(int(late.timestamp() * 1000))
    _route(lambda_context, *deadlines)
    expired = phase()
    _at(late + COUNT_OPEN_EVERY)  # the open questions were counted at `late`: the next count is due this long after
    _sweep(lambda_context)
    after = phase()

    # THEN B and C escalated, went overdue, and expired after three days and a minute, timed by outcome
    assert escalated.total(Metric.ESCALATIONS) == 2
    assert escalated.values(Metric.OPEN_QUESTIONS) == [2]
    assert overdue.total(Metric.OVERDUE) == 2
    assert expired.total(Metric.EXPIRED) == 2
    waited = (late - T0).total_seconds()
    assert expired.values(Metric.TIME_TO_ANSWER, outcome="expired") == [waited, waited]
    by_tag = expired.values(Metric.TIME_TO_ANSWER, outcome="expired", approver_group="finance")
    assert by_tag == [waited, waited], "drawn by the tag the question was asked with"
    assert expired.values(Metric.TIME_TO_ANSWER) == [], "under service alone only answered questions are timed"
    assert after.values(Metric.OPEN_QUESTIONS) == [0], "counted again once the last count is two hours old"
    assert after.values(Metric.OLDEST_OPEN_AGE) == [0]

    # AND every metric printed is in the one namespace, under the service, with a dimension set emitted() declares
    declared = emitted(MetricTags.parse(TAGS))
    assert {p.namespace for p in seen} == {namespace}
    assert all(p.dimensions["service"] == service for p in seen)
    printed = {(p.name, frozenset(p.dimensions)) for p in seen}
    assert printed <= declared, f"printed but not declared in engine/metrics.py: {printed - declared}"
    assert {p.unit for p in seen if p.name.endswith("Seconds")} == {"Seconds"}


def test_votes_and_a_failed_thread_are_counted(
    stack: HostStack,
    lambda_context: FakeLambdaContext,
    unique: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.agents import graphs

    from agent_wait.host import _powertools

    service = _powertools.service_name()
    # GIVEN a two-person quorum question, asked at T0
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.followup_graphs:build_quorum_graph")
    reset_handlers()
    voted = f"v-{unique}"
    _at(T0)
    _route(lambda_context, sqs_record(start_message(voted, voted), group_id=voted, sent_at=T0))
    question = stack.ledger().questions(voted)[0].question_id
    capsys.readouterr()

    # WHEN two people approve it, ten and twenty minutes later
    for minutes, person in ((10, "ana@example.com"), (20, "ben@example.com")):
        moment = T0 + timedelta(minutes=minutes)
        _at(moment)
        answer = answer_message(voted, question, answered_by=person, answer_id=f"{person}-{question}")
        _route(lambda_context, sqs_record(answer, group_id=voted, sent_at=moment))
    votes = Phase(capsys.readouterr().out, service)
    # THEN each vote is counted once, and the question is answered after twenty minutes
    assert votes.total(Metric.VOTES) == 2
    assert votes.total(Metric.ACCEPTED) == 1
    assert votes.values(Metric.TIME_TO_ANSWER, outcome="answered") == [20 * 60]
    assert votes.values(Metric.TIME_TO_ANSWER, outcome="answered", approver_group="none") == [20 * 60], (
        "a question without the tag is drawn as none"
    )

    # WHEN a start's agent raises (the refund graph, whose prepare node fails for this order)
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_graph")
    reset_handlers()
    failing = f"f-{unique}"
    graphs.FAIL_ORDERS.add(failing)
    try:
        _route(lambda_context, sqs_record(start_message(failing, failing), group_id=failing))
    finally:
        graphs.FAIL_ORDERS.discard(failing)
    failed = Phase(capsys.readouterr().out, service)
    # THEN the failed thread is counted by what failed, and its start dead-lettered by reason
    assert failed.reasons(Metric.AGENT_FAILED) == {"start": 1}
    assert failed.reasons(Metric.DEAD_LETTERED) == {"agent_failed": 1}
    assert failed.total(Metric.AGENT_FAILED) == 1
