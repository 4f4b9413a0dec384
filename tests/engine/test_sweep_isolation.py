"""Each step of a sweep run, and each due question, is isolated: one that raises is logged and counted,
and the others still run.

A missing optional index (`open_by_age`) only degrades the run (a warning, no error count); a missing
`by_due`, without which nothing would be expired, reminded or announced again, is an error. The sweep
handler returns its report for step failures, and still raises for a setting missing at cold start.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.aws_stack import FakeLambdaContext, HostStack, load_event, reset_handlers

from agent_wait import InMemoryAnnounce
from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QUESTION_TABLE, Settings
from agent_wait.engine import InMemoryEntryQueue, RecordingMetrics, SqsEntryQueue, Sweep
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.errors import ConfigurationError, LedgerIndexMissingError, LedgerUnavailableError
from agent_wait.ledger import InMemoryLedger, Ledger, QuestionRecord
from agent_wait.policy import WaitPolicy

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
LATER = T0 + timedelta(hours=2)
SWEEP_ERRORS = METRIC_NAMES["sweep_errors"]


def ask(
    ledger: Ledger, thread_id: str, question_id: str, *, announced: bool = True, policy: WaitPolicy | None = None
) -> None:
    question = Question(
        thread_id,
        question_id,
        {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}},
        policy or WaitPolicy(timeout="PT1H", default={"action": "reject"}),
        source={"function": "issue_refund"},
        asked_at=T0,
    )
    opened = ledger.open(WaitEnvelope.create(question, now=T0), now=T0)
    if announced:
        ledger.mark_announced(thread_id, question_id, due_at=opened.record.next_due(announced=True))


class FailingLedger(InMemoryLedger):
    """An in-memory ledger whose named calls raise the given errors (`advance` only for question ids in `bad`)."""

    def __init__(self, *, bad: frozenset[str] = frozenset(), **failures: Exception) -> None:
        super().__init__()
        self._broken = failures
        self._bad = bad

    def due(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        self._maybe_fail("due")
        return super().due(now, limit=limit)

    def oldest_open(self) -> QuestionRecord | None:
        self._maybe_fail("oldest_open")
        return super().oldest_open()

    def advance(self, thread_id: str, question_id: str, progress: Any, **kwargs: Any) -> Any:
        if question_id in self._bad:
            self._maybe_fail("advance")
        return super().advance(thread_id, question_id, progress, **kwargs)

    def _maybe_fail(self, query: str) -> None:
        if query in self._broken:
            raise self._broken[query]


def missing(index: str) -> LedgerIndexMissingError:
    return LedgerIndexMissingError(f"question table t: query needs index {index!r}", index=index, table="t")


def sweep_on(ledger: Ledger, metrics: RecordingMetrics, announce: InMemoryAnnounce | None = None) -> Sweep:
    return Sweep(
        ledger, InMemoryEntryQueue(), announce=[announce or InMemoryAnnounce()], metrics=metrics, clock=lambda: LATER
    )


def test_a_failing_due_query_is_counted_and_the_other_steps_still_run(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a ledger whose due query fails, with one question open
    ledger = FailingLedger(due=LedgerUnavailableError("question table t: query failed (Throttling)"))
    ask(ledger, "t-1", "q-1", announced=False)
    metrics, announce = RecordingMetrics(), InMemoryAnnounce()

    # WHEN the sweep runs
    report = sweep_on(ledger, metrics, announce).run()

    # THEN the due step is reported and counted once, and the oldest-open metric still ran
    assert report.failed_steps == ("due",)
    assert metrics.counts[(SWEEP_ERRORS, "due")] == 1
    assert report.expired_sent == ()
    assert metrics.timings[METRIC_NAMES["oldest_open_age"]] == [7200.0]
    # ... and the log line names the step and the error type, nothing else
    (line,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert (line.step, line.error_type) == ("due", "LedgerUnavailableError")  # type: ignore[attr-defined]
    assert "Throttling" not in line.getMessage()


def test_one_question_whose_follow_up_fails_never_holds_back_the_others(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN two questions due for a reminder, one of whose rows cannot be written, and one overdue question
    reminded = WaitPolicy(timeout="PT3H", default={"action": "reject"}, reminders=["PT1H"])
    ledger = FailingLedger(bad=frozenset({"q-bad"}), advance=RuntimeError("boom"))
    ask(ledger, "t-1", "q-bad", policy=reminded)
    ask(ledger, "t-2", "q-good", policy=reminded)
    ask(ledger, "t-3", "q-late")
    metrics, announce = RecordingMetrics(), InMemoryAnnounce()

    # WHEN the sweep runs after the reminders' time and the third question's deadline
    report = sweep_on(ledger, metrics, announce).run()

    # THEN the good question was reminded and the late one expired; the bad one is reported and counted
    assert report.reminded == ("q-good",)
    assert report.expired_sent == ("q-late",)
    assert report.failed_questions == ("q-bad",)
    assert report.failed_steps == ()
    assert metrics.counts[(SWEEP_ERRORS, "remind")] == 1
    assert [e.question_id for e in announce.of("reminder")] == ["q-good"]
    (line,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert (line.question_id, line.error_type) == ("q-bad", "RuntimeError")  # type: ignore[attr-defined]
    assert "boom" not in line.getMessage()

    # AND the next run, with the row writable again, reminds it
    ledger._bad = frozenset()
    assert sweep_on(ledger, RecordingMetrics(), announce).run().reminded == ("q-bad",)


def test_an_entry_queue_that_fails_counts_the_deadlines_as_expire_and_the_reminders_still_go_out() -> None:
    class DownQueue(InMemoryEntryQueue):
        def send_batch(self, messages: Any) -> Any:
            raise ConnectionError("sqs unreachable")

    # GIVEN an overdue question, a question due for a reminder, and an entry queue that is down
    ledger, metrics, announce = InMemoryLedger(), RecordingMetrics(), InMemoryAnnounce()
    ask(ledger, "t-1", "q-late")
    ask(ledger, "t-2", "q-remind", policy=WaitPolicy(timeout="PT3H", reminders=["PT1H"]))
    sweep = Sweep(ledger, DownQueue(), announce=[announce], metrics=metrics, clock=lambda: LATER)

    # WHEN the sweep runs
    report = sweep.run()

    # THEN the overdue question is reported and counted under expire, and the reminder still went out
    assert report.failed_questions == ("q-late",)
    assert report.expired_sent == ()
    assert metrics.counts[(SWEEP_ERRORS, "expire")] == 1
    assert report.reminded == ("q-remind",)


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
    assert "agent_wait.contract.schema.QUESTION_TABLE" in warning.getMessage()


def test_a_missing_by_due_index_is_an_error_because_nothing_would_expire(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN a ledger without by_due
    ledger = FailingLedger(due=missing("by_due"))
    metrics = RecordingMetrics()

    # WHEN the sweep runs
    report = sweep_on(ledger, metrics).run()

    # THEN it is reported, counted and logged as an error naming the index to deploy
    assert report.failed_steps == ("due",)
    assert metrics.counts[(SWEEP_ERRORS, "due")] == 1
    (line,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "by_due" in line.getMessage()


def test_a_ledger_table_without_open_by_age_on_dynamodb_still_expires(
    host: HostStack, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a question table on moto made without the open_by_age_shard index (nor the open_by_age it
    # replaced), and one overdue question in it
    request = QUESTION_TABLE.create_table_request(f"no-age-{unique}")
    request["GlobalSecondaryIndexes"] = [
        i for i in request["GlobalSecondaryIndexes"] if i["IndexName"] != "open_by_age_shard"
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
    assert any(r.levelno == logging.WARNING and "'open_by_age_shard'" in r.getMessage() for r in caplog.records)


def test_the_sweep_handler_returns_its_report_when_steps_fail(
    host: HostStack,
    monkeypatch: pytest.MonkeyPatch,
    lambda_context: FakeLambdaContext,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a sweep whose table does not exist, so every step that reads it fails (the hand-over works on the due
    # rows the first step reads, so it has none)
    from agent_wait.host import sweep

    monkeypatch.setenv(Settings.TABLE.value, f"{host.table}-gone")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    reset_handlers()

    # WHEN the schedule invokes the handler
    result = sweep.handler(load_event("scheduled_event.json"), lambda_context)

    # THEN it returns, naming each failed step, and the metrics carry SweepErrors for each (the alarm's signal)
    assert result["failed_steps"] == ["due", "oldest_open"]
    emitted = _emf_lines(capsys.readouterr().out)
    reasons = {line.get("reason") for line in emitted if "SweepErrors" in line}
    assert {"due", "oldest_open"} <= reasons


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
