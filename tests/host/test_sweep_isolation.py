"""Each step of a sweep run is isolated: one that raises is logged and counted, and the others still run.

A missing optional index (`open_by_age`) only degrades the run (a warning, no error count); a missing
`by_announce_due`, without which failed announcements would be lost, is an error. The sweep handler
returns its report for step failures, and still raises for a setting missing at cold start.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.host.conftest import FakeLambdaContext, HostStack, load_event, reset_handlers

from agent_wait import InMemoryAnnounce
from agent_wait.envelope import Question, WaitEnvelope
from agent_wait.errors import ConfigurationError, LedgerIndexMissingError
from agent_wait.host import InMemoryEntryQueue, InMemoryLedger, RecordingMetrics, Sweep
from agent_wait.host.entry_queue import SqsEntryQueue
from agent_wait.host.ledger.base import Ledger, LedgerUnavailableError, QuestionRecord
from agent_wait.host.ledger.dynamodb import DynamoDbLedger
from agent_wait.host.observe import METRIC_NAMES
from agent_wait.policy import WaitPolicy
from agent_wait.schema import QUESTION_TABLE, Settings

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
LATER = T0 + timedelta(hours=2)
SWEEP_ERRORS = METRIC_NAMES["sweep_errors"]


def ask(ledger: Ledger, thread_id: str, question_id: str, *, announced: bool = True) -> None:
    question = Question(
        thread_id,
        question_id,
        {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}},
        WaitPolicy(timeout="PT1H", default={"action": "reject"}),
        source={"function": "issue_refund"},
        asked_at=T0,
    )
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0)
    if announced:
        ledger.mark_announced(thread_id, question_id)


class FailingLedger(InMemoryLedger):
    """An in-memory ledger whose named queries raise the given errors."""

    def __init__(self, **failures: Exception) -> None:
        super().__init__()
        self._broken = failures

    def overdue(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        self._maybe_fail("overdue")
        return super().overdue(now, limit=limit)

    def oldest_open(self) -> QuestionRecord | None:
        self._maybe_fail("oldest_open")
        return super().oldest_open()

    def announce_due(self, *, limit: int) -> list[QuestionRecord]:
        self._maybe_fail("announce_due")
        return super().announce_due(limit=limit)

    def _maybe_fail(self, query: str) -> None:
        if query in self._broken:
            raise self._broken[query]


def missing(index: str) -> LedgerIndexMissingError:
    return LedgerIndexMissingError(f"question table t: query needs index {index!r}", index=index, table="t")


def sweep_on(ledger: Ledger, metrics: RecordingMetrics, announce: InMemoryAnnounce | None = None) -> Sweep:
    return Sweep(
        ledger, InMemoryEntryQueue(), announce=[announce or InMemoryAnnounce()], metrics=metrics, clock=lambda: LATER
    )


def test_a_failing_overdue_query_is_counted_and_the_other_steps_still_run(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a ledger whose overdue query fails, with one question never announced
    ledger = FailingLedger(overdue=LedgerUnavailableError("question table t: query failed (Throttling)"))
    ask(ledger, "t-1", "q-1", announced=False)
    metrics, announce = RecordingMetrics(), InMemoryAnnounce()

    # WHEN the sweep runs
    report = sweep_on(ledger, metrics, announce).run()

    # THEN the expire step is reported and counted, and the oldest-open metric and the re-announce still ran
    assert report.failed_steps == ("expire",)
    assert metrics.counts[(SWEEP_ERRORS, "expire")] == 1
    assert report.reannounced == ("q-1",)
    assert metrics.timings[METRIC_NAMES["oldest_open_age"]] == [7200.0]
    # ... and the log line names the step and the error type, nothing else
    (line,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert (line.step, line.error_type) == ("expire", "LedgerUnavailableError")  # type: ignore[attr-defined]
    assert "Throttling" not in line.getMessage()


def test_a_failing_reannounce_step_does_not_stop_the_expiry() -> None:
    # GIVEN an overdue question and a ledger whose announce-due query fails
    ledger = FailingLedger(announce_due=RuntimeError("boom"))
    ask(ledger, "t-1", "q-1")
    metrics = RecordingMetrics()

    # WHEN the sweep runs
    report = sweep_on(ledger, metrics).run()

    # THEN the default was still sent, and the failed step is reported and counted
    assert report.expired_sent == ("q-1",)
    assert report.failed_steps == ("reannounce",)
    assert metrics.counts[(SWEEP_ERRORS, "reannounce")] == 1


def test_a_missing_open_by_age_index_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a ledger without the optional open_by_age index
    ledger = FailingLedger(oldest_open=missing("open_by_age"))
    ask(ledger, "t-1", "q-1")
    metrics = RecordingMetrics()

    # WHEN the sweep runs
    report = sweep_on(ledger, metrics).run()

    # THEN the step is skipped with a warning naming the index and the fix; nothing is counted as an error
    assert report.skipped_steps == ("oldest_open",)
    assert report.failed_steps == ()
    assert report.expired_sent == ("q-1",)
    assert metrics.total(SWEEP_ERRORS) == 0
    assert METRIC_NAMES["oldest_open_age"] not in metrics.timings  # no made-up zero for the alarm
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "open_by_age" in warning.getMessage()
    assert "agent_wait.schema.QUESTION_TABLE" in warning.getMessage()


def test_a_missing_by_announce_due_index_is_an_error_because_announcements_would_be_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN a ledger without by_announce_due
    ledger = FailingLedger(announce_due=missing("by_announce_due"))
    metrics = RecordingMetrics()

    # WHEN the sweep runs
    report = sweep_on(ledger, metrics).run()

    # THEN it is reported, counted and logged as an error naming the index to deploy
    assert report.failed_steps == ("reannounce",)
    assert metrics.counts[(SWEEP_ERRORS, "reannounce")] == 1
    (line,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "by_announce_due" in line.getMessage()


def test_a_ledger_table_without_open_by_age_on_dynamodb_still_expires(
    host: HostStack, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a question table on moto made without the open_by_age index, and one overdue question in it
    request = QUESTION_TABLE.create_table_request(f"no-age-{unique}")
    request["GlobalSecondaryIndexes"] = [
        i for i in request["GlobalSecondaryIndexes"] if i["IndexName"] != "open_by_age"
    ]
    used = {k["AttributeName"] for i in request["GlobalSecondaryIndexes"] for k in i["KeySchema"]}
    used |= {k["AttributeName"] for k in request["KeySchema"]}
    request["AttributeDefinitions"] = [a for a in request["AttributeDefinitions"] if a["AttributeName"] in used]
    host.dynamodb.create_table(**request)
    ledger = DynamoDbLedger(request["TableName"], client=host.dynamodb)
    ask(ledger, f"t-{unique}", f"q-{unique}")
    metrics = RecordingMetrics()
    sweep = Sweep(ledger, SqsEntryQueue(host.queue_url, client=host.sqs), metrics=metrics, clock=lambda: LATER)

    # WHEN the sweep runs
    report = sweep.run()

    # THEN the default went to the entry queue, and the missing index is a warning, not an error
    assert report.expired_sent == (f"q-{unique}",)
    assert report.skipped_steps == ("oldest_open",)
    assert report.failed_steps == ()
    assert [json.loads(m["Body"])["question_id"] for m in host.entry_messages()] == [f"q-{unique}"]
    assert metrics.total(SWEEP_ERRORS) == 0
    assert any(r.levelno == logging.WARNING and "open_by_age" in r.getMessage() for r in caplog.records)


def test_the_sweep_handler_returns_its_report_when_steps_fail(
    host: HostStack,
    monkeypatch: pytest.MonkeyPatch,
    lambda_context: FakeLambdaContext,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a sweep whose table does not exist, so every step fails
    from agent_wait.host import sweep

    monkeypatch.setenv(Settings.TABLE.value, f"{host.table}-gone")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    reset_handlers()

    # WHEN the schedule invokes the handler
    result = sweep.handler(load_event("scheduled_event.json"), lambda_context)

    # THEN it returns, naming each failed step, and the metrics carry SweepErrors for each (the alarm's signal)
    assert result["failed_steps"] == ["expire", "oldest_open", "reannounce", "handover"]
    emitted = _emf_lines(capsys.readouterr().out)
    reasons = {line.get("reason") for line in emitted if "SweepErrors" in line}
    assert {"expire", "oldest_open", "reannounce"} <= reasons


def test_the_sweep_handler_still_raises_for_a_setting_missing_at_cold_start(
    host: HostStack, monkeypatch: pytest.MonkeyPatch, lambda_context: FakeLambdaContext
) -> None:
    # GIVEN no question table setting
    from agent_wait.host import sweep

    monkeypatch.delenv(Settings.TABLE.value)
    reset_handlers()

    # WHEN / THEN the invocation fails, so the function's own Errors metric (and its alarm) shows it
    with pytest.raises(ConfigurationError, match=Settings.TABLE.value):
        sweep.handler(load_event("scheduled_event.json"), lambda_context)


def _emf_lines(out: str) -> list[dict[str, Any]]:
    lines = []
    for text in out.splitlines():
        if text.startswith("{") and '"_aws"' in text:
            lines.append(json.loads(text))
    return lines
