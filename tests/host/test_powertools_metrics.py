"""The handlers' Powertools settings: `POWERTOOLS_SERVICE_NAME` and `POWERTOOLS_METRICS_NAMESPACE` are honoured,
and every metric, with or without a `reason`, lands in one namespace under one `service` dimension.

The embedded metric format (EMF) is read from stdout, where Powertools prints it on Lambda.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools import Metrics

import agent_wait
from agent_wait.host._powertools import PowertoolsMetrics

SERVICE, NAMESPACE = "refunds-approvals", "RefundsProd"


def emitted(out: str) -> list[dict[str, Any]]:
    """Every EMF document Powertools printed."""
    return [json.loads(line) for line in out.splitlines() if line.startswith("{") and '"_aws"' in line]


def by_metric(documents: list[dict[str, Any]]) -> dict[tuple[str, str | None], dict[str, Any]]:
    """{(metric name, reason or None): {"namespace", "dimension_sets", "service"}} over all documents."""
    found: dict[tuple[str, str | None], dict[str, Any]] = {}
    for document in documents:
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                found[(metric["Name"], document.get("reason"))] = {
                    "namespace": directive["Namespace"],
                    "dimension_sets": [sorted(dims) for dims in directive["Dimensions"]],
                    "service": document.get("service"),
                }
    return found


@pytest.fixture(autouse=True)
def metrics_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")


def emit(metrics: Metrics) -> None:
    """What a handler does: plain counts, a timing and reason counts, flushed by `@log_metrics`."""
    host_metrics = PowertoolsMetrics(metrics)

    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> None:
        host_metrics.count("QuestionsAsked")
        host_metrics.seconds("OldestOpenQuestionAgeSeconds", 12.0)
        host_metrics.count("AnswersRefused", reason="expired")
        host_metrics.count("SweepErrors", 3, reason="send")

    handler({}, None)


def test_reason_metrics_carry_the_service_dimension_and_namespace_of_the_others(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN Metrics configured in code, with no Powertools variable to fall back on
    monkeypatch.delenv("POWERTOOLS_SERVICE_NAME", raising=False)
    monkeypatch.delenv("POWERTOOLS_METRICS_NAMESPACE", raising=False)
    capsys.readouterr()

    # WHEN plain and reason metrics are emitted
    emit(Metrics(namespace=NAMESPACE, service=SERVICE))

    # THEN all of them are in that namespace, under that service
    metrics = by_metric(emitted(capsys.readouterr().out))
    for key in (("QuestionsAsked", None), ("OldestOpenQuestionAgeSeconds", None), ("AnswersRefused", "expired")):
        assert metrics[key]["namespace"] == NAMESPACE, key
        assert metrics[key]["service"] == SERVICE, key
    assert metrics[("AnswersRefused", "expired")]["dimension_sets"] == [["reason", "service"]]
    assert metrics[("SweepErrors", "send")]["dimension_sets"] == [["reason", "service"]]
    # ... and each reason metric's total is in the batch, under service alone, which is what the alarms watch
    assert metrics[("SweepErrors", None)] == {
        "namespace": NAMESPACE,
        "dimension_sets": [["service"]],
        "service": SERVICE,
    }
    assert metrics[("QuestionsAsked", None)]["dimension_sets"] == [["service"]]


def test_the_factories_honour_the_powertools_variables(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the Powertools variables set, as the AgentWait construct sets them
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", SERVICE)
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE)
    capsys.readouterr()

    # WHEN the handlers' logger, metrics and tracer are built and metrics emitted
    from agent_wait.host import _powertools

    logger, metrics, tracer = _powertools.logger(), _powertools.metrics(), _powertools.tracer()
    emit(metrics)

    # THEN every one of them uses the given service, and every metric the given namespace
    assert (logger.service, metrics.service, tracer.service) == (SERVICE, SERVICE, SERVICE)
    found = by_metric(emitted(capsys.readouterr().out))
    assert {m["namespace"] for m in found.values()} == {NAMESPACE}
    assert {m["service"] for m in found.values()} == {SERVICE}
    assert all("service" in dims for m in found.values() for dims in m["dimension_sets"])


def test_the_factories_default_to_the_names_the_construct_alarms_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no Powertools variable (or a blank one)
    monkeypatch.delenv("POWERTOOLS_SERVICE_NAME", raising=False)
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", " ")

    # WHEN / THEN the names are agent-wait's own
    from agent_wait.host import _powertools

    assert (_powertools.service_name(), _powertools.metrics_namespace()) == ("agent-wait", "AgentWait")
    metrics = _powertools.metrics()
    assert (metrics.namespace, metrics.service) == ("AgentWait", "agent-wait")
    assert _powertools.logger().service == "agent-wait"


def _import_sweep(env: dict[str, str]) -> dict[str, Any]:
    code = (
        "import json, agent_wait.host.sweep as s; "
        "print(json.dumps([s.logger.service, s.metrics.namespace, s.metrics.service, s.tracer.disabled]))"
    )
    runtime = str(Path(agent_wait.__file__).resolve().parents[1])  # the code this test session imports
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "PYTHONPATH": runtime},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    service, namespace, metric_service, disabled = json.loads(done.stdout.strip().splitlines()[-1])
    return {"service": service, "namespace": namespace, "metric_service": metric_service, "tracing_off": disabled}


def test_the_sweep_handler_uses_the_configured_names_and_traces_only_on_lambda() -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS_", "LAMBDA_", "AWS_LAMBDA_"))}
    # GIVEN the variables set, outside Lambda
    # WHEN the sweep handler module is imported
    outside = _import_sweep({**base, "POWERTOOLS_SERVICE_NAME": SERVICE, "POWERTOOLS_METRICS_NAMESPACE": NAMESPACE})
    # THEN its logger and metrics use them, and the tracer is off: no X-Ray call from tests or the local runner
    assert outside == {"service": SERVICE, "namespace": NAMESPACE, "metric_service": SERVICE, "tracing_off": True}

    # GIVEN a Lambda environment whose tracing the construct turned off
    inside = _import_sweep({**base, "LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"})
    # THEN the names are the defaults and the tracer stays off
    assert inside == {
        "service": "agent-wait",
        "namespace": "AgentWait",
        "metric_service": "agent-wait",
        "tracing_off": True,
    }
