"""The sweep Lambda, on a schedule: what is due happens (deadlines, reminders, escalation steps, announcement retries).

Handler: `agent_wait.host.sweep.handler`. The logic is `Sweep`, usable from any host.

A step that fails, or a deadline answer the queue refuses, does not fail the invocation: it is logged and
counted as `SweepErrors`, which the construct alarms on, and the other steps still run. What does fail the
invocation (and so the function's own `Errors` metric, alarmed too) is a setting missing or wrong at cold
start: no run can succeed until someone fixes it.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from agent_wait.common.times import parse_rfc3339, utc_now
from agent_wait.engine.sweep import Sweep, SweepReport
from agent_wait.host import _powertools
from agent_wait.host._schedule_settings import MAX_EARLY_WAIT_SECONDS
from agent_wait.host._wiring import build_sweep
from agent_wait.host.settings import HostSettings

__all__ = ("WAKE_MARGIN_SECONDS", "Sweep", "SweepReport", "handler", "reset", "wait_until_due")

logger = _powertools.logger()
metrics = _powertools.metrics()
tracer = _powertools.tracer()


@functools.cache
def _settings() -> HostSettings:
    return HostSettings.from_env("sweep")


@functools.cache
def _sweep() -> Sweep:
    return build_sweep(_settings(), metrics=_powertools.PowertoolsMetrics(metrics), log=logger)


def reset() -> None:
    """Forget the cold-start state: the next invocation builds the sweep again from the environment."""
    _sweep.cache_clear()
    _settings.cache_clear()


WAKE_MARGIN_SECONDS = 10.0
"""What an early wake-up leaves of the invocation's time for the work itself when it waits."""


def wait_until_due(
    at: object, context: Any, *, sleep: Any = time.sleep, limit: float = MAX_EARLY_WAIT_SECONDS
) -> float:
    """Wait out a wake-up that came before its time; the seconds waited (0 when none).

    EventBridge Scheduler invokes a one-time schedule's target within the minute of its time, possibly before it
    (its documented precision is 60 seconds): woken before the question's due time, the sweep would find nothing
    due. So it waits until then, at most `limit` seconds (`AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS`, default 60)
    and never past its own timeout (less `WAKE_MARGIN_SECONDS`); a wake-up that cannot wait that long does
    nothing, and the minute sweep catches the question.
    """
    if not isinstance(at, str):
        return 0.0
    try:
        due = parse_rfc3339(at)
    except ValueError:
        return 0.0
    early = (due - utc_now()).total_seconds()
    remaining = (
        context.get_remaining_time_in_millis() / 1000 if hasattr(context, "get_remaining_time_in_millis") else 60
    )
    if early <= 0 or early > min(limit, remaining - WAKE_MARGIN_SECONDS):
        return 0.0
    logger.info("woken before the question's time; waiting", extra={"seconds": round(early, 3)})
    sleep(early)
    return early


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)  # the report lists question ids; keep them out of traces
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point for the minute schedule (a whole run) and for a precise-deadline schedule, whose event is
    `{"question": {"thread_id", "question_id"}}` (that question's due work only); returns what it did (ids only).

    Raises:
        ConfigurationError: on the cold-start call, when a setting is missing or wrong (names each one).
    """
    question = event.get("question") if isinstance(event, dict) else None
    if isinstance(question, dict):  # a precise-deadline schedule's wake-up: that one question's due work
        schedules = _settings().schedules
        wait_until_due(event.get("at"), context, limit=schedules.early_wait if schedules else MAX_EARLY_WAIT_SECONDS)
        report = _sweep().run_question(str(question.get("thread_id")), str(question.get("question_id")))
    else:
        report = _sweep().run()
    logger.info(
        "sweep done",
        extra={
            "expired_sent": len(report.expired_sent),
            "reannounced": len(report.reannounced),
            "reminded": len(report.reminded),
            "escalated": len(report.escalated),
            "due_read": report.due_read,
            "failed_questions": len(report.failed_questions),
            "handed_over": len(report.handed_over),
            "overdue_age_seconds": report.overdue_age_seconds,
            "send_failed": len(report.send_failed),
            "failed_steps": list(report.failed_steps),
            "skipped_steps": list(report.skipped_steps),
            "open_questions": report.open_questions,
            "open_counted_at": report.open_counted_at,
        },
    )
    return {
        "expired_sent": list(report.expired_sent),
        "reannounced": list(report.reannounced),
        "reminded": list(report.reminded),
        "escalated": list(report.escalated),
        "failed_questions": list(report.failed_questions),
        "due_read": report.due_read,
        "handed_over": list(report.handed_over),
        "overdue_age_seconds": report.overdue_age_seconds,
        "oldest_open_age_seconds": report.oldest_open_age_seconds,
        "open_questions": report.open_questions,
        "open_counted_at": report.open_counted_at,
        "send_failed": list(report.send_failed),
        "failed_steps": list(report.failed_steps),
        "skipped_steps": list(report.skipped_steps),
    }
