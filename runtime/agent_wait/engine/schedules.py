"""Precise deadlines: one-time wake-ups at a question's deadline and its next follow-ups, beside the minute sweep.

The sweep runs every minute, so a deadline, a reminder or an escalation step happens up to a minute (plus the
run's own time) after it falls due. With a `ScheduleBackend` (EventBridge Scheduler: `agent_wait.aws.scheduler`)
each open question also has one-time schedules at the times its next work falls due: its deadline, its next
reminder and its next escalation step (`wakes_for`). Each invokes the sweep for that one question
(`Sweep.run_question`), which does exactly the work the minute run would, through the same code.

- Put when the question is recorded, again when a follow-up is sent (for the next one) and when its deadline is
  extended (the same names, moved). A name is the question's id and its step, so a redelivered record, a second
  sweep or a retried extension puts the same schedule, never a second one.
- Deleted when the question is decided (and each deletes itself once it fired: `ActionAfterCompletion=DELETE`).
- Never in the way: a schedule that cannot be put or deleted is logged and counted (`ScheduleFailures`) and the
  question goes on; the minute sweep stays the safety net for every question, scheduled or not.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from agent_wait.common.times import format_rfc3339, parse_rfc3339, utc_now
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.metrics import HostMetrics, Metric, RecordingMetrics
from agent_wait.ledger import QuestionRecord
from agent_wait.policy.followup import FollowUps

__all__ = ("DeadlineSchedules", "ScheduleBackend", "Step", "Wake", "schedule_name", "wakes_for")

_PLAIN_ID = re.compile(r"[0-9A-Za-z_.-]{1,48}")
"""A question id that can stand in a schedule's name as it is (Scheduler names: 1-64 of `[0-9A-Za-z_.-]`)."""


class Step(StrEnum):
    """What a wake-up is for; the last part of its schedule's name."""

    DEADLINE = "deadline"
    """The question's deadline: its default goes to the entry queue."""
    REMINDER = "r"
    """A reminder (`r<n>`, counted from 1)."""
    ESCALATION = "e"
    """An escalation step (`e<n>`, counted from 1)."""


@dataclass(frozen=True, slots=True)
class Wake:
    """One one-time schedule: invoke the sweep for one question at `at`."""

    name: str
    """`<question id>-<step>` (the id hashed when it holds what a schedule name cannot): idempotent."""
    at: datetime
    """When (UTC, whole seconds: Scheduler's `at()` has no fraction)."""
    thread_id: str
    question_id: str

    @property
    def target_input(self) -> dict[str, Any]:
        """What the sweep receives: `{"question": {"thread_id", "question_id"}, "at": <its time>}`. `at` lets the sweep
        wait out an early wake-up: Scheduler invokes a target within the minute of its time, possibly before it."""
        return {
            "question": {"thread_id": self.thread_id, "question_id": self.question_id},
            "at": format_rfc3339(self.at),
        }


class ScheduleBackend(Protocol):
    """Where one-time schedules live (`agent_wait.aws.scheduler.EventBridgeSchedules`; a test's fake)."""

    def put(self, wake: Wake) -> None:
        """Create the schedule, or move it to `wake.at` when one of that name exists. Raises on a store failure."""
        ...

    def delete(self, name: str) -> None:
        """Delete the schedule; one that is not there (fired, or never put) is fine. Raises on a store failure."""
        ...


def schedule_name(question_id: str, step: str) -> str:
    """The schedule name for `step` of `question_id`: the id itself when it fits, else a hash of it."""
    stem = (
        question_id if _PLAIN_ID.fullmatch(question_id) else "q" + hashlib.sha256(question_id.encode()).hexdigest()[:40]
    )
    return f"{stem}-{step}"


def wakes_for(record: QuestionRecord) -> tuple[Wake, ...]:
    """The schedules an open question should have now: its deadline, its next reminder, its next escalation step."""
    if record.status is not QuestionStatus.OPEN:
        return ()
    ids = (record.thread_id, record.question_id)
    wakes = []
    if record.expires_at is not None:
        wakes.append(
            Wake(schedule_name(record.question_id, Step.DEADLINE.value), parse_rfc3339(record.expires_at), *ids)
        )
    reminders, steps = record.reminder_times(), record.escalation_times()
    sent, escalated = record.progress.reminders, record.progress.escalations
    if sent < len(reminders):
        wakes.append(Wake(schedule_name(record.question_id, f"{Step.REMINDER.value}{sent + 1}"), reminders[sent], *ids))
    if escalated < len(steps):
        wakes.append(
            Wake(schedule_name(record.question_id, f"{Step.ESCALATION.value}{escalated + 1}"), steps[escalated], *ids)
        )
    return tuple(wakes)


def _every_name(envelope: WaitEnvelope) -> tuple[str, ...]:
    """Every schedule name a question may have had: its deadline and each follow-up."""
    followups = FollowUps.of(envelope.rules)
    steps = [Step.DEADLINE.value]
    steps += [f"{Step.REMINDER.value}{n}" for n in range(1, len(followups.reminders) + 1)]
    steps += [f"{Step.ESCALATION.value}{n}" for n in range(1, len(followups.escalation) + 1)]
    return tuple(schedule_name(envelope.question_id, step) for step in steps)


class DeadlineSchedules:
    """Keep a question's one-time schedules in step with its ledger row; never raises (see the module docstring).

    Args:
        backend: where the schedules live.
        metrics: `ScheduleFailures` by reason (`put`, `delete`); in memory when omitted.
        clock: now (UTC); a wake-up already due is left to the sweep.
        log: a stdlib-compatible logger.
    """

    def __init__(
        self,
        backend: ScheduleBackend,
        *,
        metrics: HostMetrics | None = None,
        clock: Callable[[], datetime] = utc_now,
        log: logging.Logger | Any = None,
    ) -> None:
        self.backend = backend
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.clock = clock
        self.log = log or logging.getLogger("agent_wait.host")

    def arrange(self, record: QuestionRecord) -> int:
        """Put the schedules `record` should have now (`wakes_for`), skipping those already due; how many were put."""
        now, put = self.clock(), 0
        for wake in wakes_for(record):
            if wake.at <= now:
                continue  # due already: the sweep that is running, or the next minute's, does it
            if self._isolated("put", wake.name, record, lambda wake=wake: self.backend.put(wake)):
                put += 1
        return put

    def clear(self, envelope: WaitEnvelope) -> None:
        """Delete every schedule the decided question may still have (deleting one that is gone is fine)."""
        for name in _every_name(envelope):
            self._isolated("delete", name, envelope, lambda name=name: self.backend.delete(name))

    def _isolated(self, reason: str, name: str, about: QuestionRecord | WaitEnvelope, work: Callable[[], None]) -> bool:
        try:
            work()
        except Exception as exc:  # never fails the question: the minute sweep still catches it
            self.metrics.count(Metric.SCHEDULE_FAILURES, reason=reason)
            self.log.warning(
                f"schedule {reason} failed ({type(exc).__name__}); the sweep's minute still catches the question",
                extra={"thread_id": about.thread_id, "question_id": about.question_id, "schedule": name},
            )
            self.log.debug(f"schedule {reason} failed", exc_info=True)
            return False
        return True
