"""Metrics the host emits, behind a tiny interface so the same router runs on Lambda, locally and in tests."""

from __future__ import annotations

import threading
from collections import defaultdict
from enum import StrEnum
from typing import Protocol

__all__ = ("METRIC_NAMES", "HostMetrics", "Metric", "RecordingMetrics")


class Metric(StrEnum):
    """Every metric name, in the `AgentWait` namespace (a `str`: Powertools and CloudWatch take it as its value)."""

    ASKED = "QuestionsAsked"
    ACCEPTED = "AnswersAccepted"
    REFUSED = "AnswersRefused"
    EXPIRED = "QuestionsExpired"
    CANCELLED = "QuestionsCancelled"
    TIME_TO_ANSWER = "TimeToAnswerSeconds"
    ANNOUNCE_FAILED = "AnnounceFailures"
    DEAD_LETTERED = "MessagesDeadLettered"
    STARTS = "StartsApplied"
    STARTS_REPLAYED = "StartsReplayed"
    OVERDUE = "OverdueQuestions"
    OVERDUE_AGE = "OverdueQuestionAgeSeconds"
    OLDEST_OPEN_AGE = "OldestOpenQuestionAgeSeconds"
    REANNOUNCED = "QuestionsReannounced"
    AGENT_FAILED = "AgentFailures"
    RETRIED = "ThreadsRetried"
    ROUTER_ERRORS = "RouterErrors"
    THREAD_BUSY = "ThreadBusy"
    SWEEP_ERRORS = "SweepErrors"
    VOTES = "VotesRecorded"
    REMINDERS = "RemindersSent"
    ESCALATIONS = "QuestionsEscalated"


METRIC_NAMES = {metric.name.lower(): metric.value for metric in Metric}
"""Every metric name by its short key (`METRIC_NAMES["asked"]`, as before `Metric`); refusals and dead letters
carry a `reason` dimension.

`AgentFailures` (reason `start`, `answer` or `retry`) counts runs whose agent raised: the thread is failed
until `agent-wait retry`. `RouterErrors` (reason: the error type) counts records the router could not
apply this time and handed back to SQS. `SweepErrors` (reason: the step) counts what one sweep run had
to skip. `ThreadBusy` counts deliveries that waited out another delivery's lease on their thread.
`VotesRecorded`, `RemindersSent` and `QuestionsEscalated` count the policy's follow-ups (`docs/policies.md`).
"""


class HostMetrics(Protocol):
    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None: ...

    def seconds(self, name: str, value: float) -> None: ...


class RecordingMetrics:
    """Keeps every metric in memory: `counts[("AnswersRefused", "expired")]`, `timings["TimeToAnswerSeconds"]`."""

    def __init__(self) -> None:
        self.counts: defaultdict[tuple[str, str | None], float] = defaultdict(float)
        self.timings: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None:
        with self._lock:
            self.counts[(name, reason)] += value

    def seconds(self, name: str, value: float) -> None:
        with self._lock:
            self.timings.setdefault(name, []).append(value)

    def total(self, name: str) -> float:
        return sum(value for (metric, _), value in self.counts.items() if metric == name)
