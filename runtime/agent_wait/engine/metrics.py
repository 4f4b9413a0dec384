"""Metrics the host emits, behind a tiny interface so the same router runs on Lambda, locally and in tests.

Every metric is in one namespace (`AgentWait` unless `POWERTOOLS_METRICS_NAMESPACE` says otherwise) under the
dimension `service`; some are also emitted under more dimensions. `EMITTED` lists, for each metric, every set of
dimension names it is emitted under: the CDK dashboard draws only these (`tests/cdk/test_dashboard.py` compares
them), and the emulator test checks the handlers emit nothing else (`tests/host/test_metric_values.py`).

Time to answer (`TimeToAnswerSeconds`, asked to decided) is emitted three ways: under `service` alone for answered
questions (what it always meant); under `service` and `outcome` (`answered`, `expired` or `cancelled`); and under
`service`, `outcome` and one tag key for each key named in `AGENT_WAIT_METRIC_TAGS` (`MetricTags`). A tag's
dimension value is one of the values named there, `other` for any value not named, or `none` when the question
has no such tag, so the number of metrics stays bounded whatever the agents tag their questions with.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Protocol

from agent_wait.errors import ConfigurationError

__all__ = (
    "EMITTED",
    "MAX_METRIC_TAG_KEYS",
    "MAX_METRIC_TAG_VALUES",
    "METRIC_NAMES",
    "NO_TAG",
    "OTHER_TAG",
    "REASONED",
    "SERVICE_DIMENSION",
    "DecisionOutcome",
    "HostMetrics",
    "Metric",
    "MetricTags",
    "RecordingMetrics",
    "emitted",
    "time_to_decision",
)


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
    OPEN_QUESTIONS = "OpenQuestions"
    REANNOUNCED = "QuestionsReannounced"
    AGENT_FAILED = "AgentFailures"
    RETRIED = "ThreadsRetried"
    ROUTER_ERRORS = "RouterErrors"
    THREAD_BUSY = "ThreadBusy"
    SWEEP_ERRORS = "SweepErrors"
    VOTES = "VotesRecorded"
    REMINDERS = "RemindersSent"
    ESCALATIONS = "QuestionsEscalated"
    API_REQUESTS = "ApiRequests"
    API_CLIENT_ERRORS = "ApiClientErrors"
    API_SERVER_ERRORS = "ApiServerErrors"
    API_LATENCY = "ApiLatencySeconds"
    SCHEDULE_FAILURES = "ScheduleFailures"
    DEADLINES_EXTENDED = "DeadlinesExtended"
    VERSION_CHANGES = "VersionChanges"


METRIC_NAMES = {metric.name.lower(): metric.value for metric in Metric}
"""Every metric name by its short key (`METRIC_NAMES["asked"]`, as before `Metric`); refusals and dead letters
carry a `reason` dimension.

`AgentFailures` (reason `start`, `answer` or `retry`) counts runs whose agent raised: the thread is failed
until `agent-wait retry`. `RouterErrors` (reason: the error type) counts records the router could not
apply this time and handed back to SQS. `SweepErrors` (reason: the step) counts what one sweep run had
to skip. `ThreadBusy` counts deliveries that waited out another delivery's lease on their thread.
`VotesRecorded`, `RemindersSent` and `QuestionsEscalated` count the policy's follow-ups (`docs/policies.md`).
`OpenQuestions` and `OldestOpenQuestionAgeSeconds` are the sweep's gauges, once a run (read them as Maximum).
`ApiRequests`, `ApiClientErrors` (4xx) and `ApiServerErrors` (5xx, reason: the status code) and
`ApiLatencySeconds` are the answer API's, one per request. `ScheduleFailures` (reason `put` or `delete`) counts
precise-deadline schedules that could not be written (the sweep's minute still catches their question);
`DeadlinesExtended` counts deadlines moved later (`POST /questions/{id}/extend`). `VersionChanges` (reason
`resumed`, `migrated` or `failed`) counts resumes of questions asked under another version of the agent
(docs/versions.md).
"""

SERVICE_DIMENSION = "service"
REASON_DIMENSION = "reason"
OUTCOME_DIMENSION = "outcome"


class DecisionOutcome(StrEnum):
    """How a question left `open`: the `outcome` dimension of time to answer."""

    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


REASONED = frozenset(
    {
        Metric.REFUSED,
        Metric.ANNOUNCE_FAILED,
        Metric.DEAD_LETTERED,
        Metric.AGENT_FAILED,
        Metric.ROUTER_ERRORS,
        Metric.SWEEP_ERRORS,
        Metric.API_CLIENT_ERRORS,
        Metric.API_SERVER_ERRORS,
        Metric.VERSION_CHANGES,
    }
)
"""The counts also emitted with a `reason` dimension (their total is under `service` alone, which alarms watch)."""

OTHER_TAG = "other"
"""The dimension value of a tag whose value `AGENT_WAIT_METRIC_TAGS` does not name."""
NO_TAG = "none"
"""The dimension value of a tag the question does not have."""
MAX_METRIC_TAG_KEYS = 3
MAX_METRIC_TAG_VALUES = 10
"""At most 3 tag keys of at most 10 values each: 3 x (10 + 2) x 3 outcomes = 108 metrics at most."""
_RESERVED = frozenset({SERVICE_DIMENSION, REASON_DIMENSION, OUTCOME_DIMENSION})
_DIMENSION_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_SETTING = "AGENT_WAIT_METRIC_TAGS"


@dataclass(frozen=True, slots=True)
class MetricTags:
    """The policy tags time to answer is broken down by, each with the bounded set of values it is drawn for.

    Example:
        >>> tags = MetricTags.parse('{"team": ["payments", "support"]}')
        >>> tags.fold({"team": "payments"}), tags.fold({"team": "legal"}), tags.fold({})
        ({'team': 'payments'}, {'team': 'other'}, {'team': 'none'})
    """

    values: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def parse(cls, text: str | None) -> MetricTags:
        """`AGENT_WAIT_METRIC_TAGS`: a JSON object from a tag key to the list of its values to draw; empty when None.

        Raises:
            ConfigurationError: not such an object; a key reserved (`service`, `outcome`, `reason`) or not a plain
                name; `other` or `none` listed as a value; more than 3 keys or 10 values a key.
        """
        if text is None or not text.strip():
            return cls()
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        shape = f'{_SETTING} must be a JSON object from a tag key to a list of its values ({{"team": ["payments"]}})'
        if not isinstance(data, dict) or not data:
            raise ConfigurationError([f"{shape}; got {text!r}"], variables=[_SETTING])
        problems: list[str] = []
        if len(data) > MAX_METRIC_TAG_KEYS:
            problems.append(
                f"{_SETTING} names {len(data)} tag keys; at most {MAX_METRIC_TAG_KEYS} (each is a CloudWatch metric "
                "per value and outcome): keep the keys you chart"
            )
        values: dict[str, frozenset[str]] = {}
        for key, listed in data.items():
            if key in _RESERVED or not _DIMENSION_NAME.fullmatch(key):
                problems.append(
                    f"{_SETTING} key {key!r} must be a tag key of letters, digits, '_', '.' or '-' (up to 64), and "
                    f"not one of {sorted(_RESERVED)}"
                )
                continue
            if not isinstance(listed, list) or not listed or not all(isinstance(v, str) and v for v in listed):
                problems.append(f"{_SETTING} key {key!r} must list its values as non-empty strings; got {listed!r}")
                continue
            if len(listed) > MAX_METRIC_TAG_VALUES:
                problems.append(
                    f"{_SETTING} key {key!r} lists {len(listed)} values; at most {MAX_METRIC_TAG_VALUES}: the rest are "
                    f"drawn as {OTHER_TAG!r} anyway"
                )
            if {OTHER_TAG, NO_TAG} & set(listed):
                problems.append(
                    f"{_SETTING} key {key!r} lists {OTHER_TAG!r} or {NO_TAG!r}: those stand for a value not listed and "
                    "for no tag; leave them out"
                )
            if any(len(v) > 255 for v in listed):
                problems.append(f"{_SETTING} key {key!r} has a value over 255 characters (CloudWatch's limit)")
            values[key] = frozenset(listed)
        if problems:
            raise ConfigurationError(problems, variables=[_SETTING])
        return cls(MappingProxyType(values))

    @classmethod
    def checked(cls, text: str | None, problems: list[str], variables: list[str]) -> MetricTags:
        """`parse`, with its problems added to `problems` and the variable to `variables` (empty tags) instead."""
        try:
            return cls.parse(text)
        except ConfigurationError as exc:
            problems.extend(exc.problems)
            variables.extend(exc.variables)
            return cls()

    def to_setting(self) -> str:
        """The `AGENT_WAIT_METRIC_TAGS` value that parses back to these tags."""
        return json.dumps({key: sorted(values) for key, values in sorted(self.values.items())}, separators=(",", ":"))

    def fold(self, tags: Mapping[str, str]) -> dict[str, str]:
        """Each key's dimension value for a question tagged `tags`: its value if named, else `other`, or `none`."""
        folded: dict[str, str] = {}
        for key, named in self.values.items():
            value = tags.get(key)
            folded[key] = NO_TAG if value is None else value if value in named else OTHER_TAG
        return folded


def emitted(tags: MetricTags | None = None) -> frozenset[tuple[str, frozenset[str]]]:
    """Every (metric name, set of dimension names) the host emits, with `tags` (`AGENT_WAIT_METRIC_TAGS`)."""
    service = frozenset({SERVICE_DIMENSION})
    found = {(metric.value, service) for metric in Metric}
    found |= {(metric.value, service | {REASON_DIMENSION}) for metric in REASONED}
    by_outcome = service | {OUTCOME_DIMENSION}
    found.add((Metric.TIME_TO_ANSWER.value, by_outcome))
    found |= {(Metric.TIME_TO_ANSWER.value, by_outcome | {key}) for key in (tags or MetricTags()).values}
    return frozenset(found)


EMITTED = emitted()
"""What the host emits with no `AGENT_WAIT_METRIC_TAGS`: (metric name, dimension names) pairs."""


class HostMetrics(Protocol):
    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None: ...

    def seconds(self, name: str, value: float, *, dimensions: Mapping[str, str] | None = None) -> None: ...


def time_to_decision(
    metrics: HostMetrics, outcome: DecisionOutcome, seconds: float, tags: Mapping[str, str], metric_tags: MetricTags
) -> None:
    """Emit one question's time from asked to decided: by outcome, then by outcome and each tag key drawn.

    Answered questions are also timed under `service` alone (`TimeToAnswerSeconds`, as always) by the caller.
    """
    seconds = max(seconds, 0.0)
    metrics.seconds(Metric.TIME_TO_ANSWER, seconds, dimensions={OUTCOME_DIMENSION: outcome.value})
    for key, value in metric_tags.fold(tags).items():
        metrics.seconds(Metric.TIME_TO_ANSWER, seconds, dimensions={OUTCOME_DIMENSION: outcome.value, key: value})


class RecordingMetrics:
    """Keeps every metric in memory: `counts[("AnswersRefused", "expired")]`, `timings["TimeToAnswerSeconds"]`,
    and timings with dimensions in `by_dimensions[("TimeToAnswerSeconds", (("outcome", "expired"),))]`."""

    def __init__(self) -> None:
        self.counts: defaultdict[tuple[str, str | None], float] = defaultdict(float)
        self.timings: dict[str, list[float]] = {}
        self.by_dimensions: dict[tuple[str, tuple[tuple[str, str], ...]], list[float]] = {}
        self._lock = threading.Lock()

    def count(self, name: str, value: float = 1, *, reason: str | None = None) -> None:
        with self._lock:
            self.counts[(name, reason)] += value

    def seconds(self, name: str, value: float, *, dimensions: Mapping[str, str] | None = None) -> None:
        with self._lock:
            if dimensions:
                self.by_dimensions.setdefault((name, tuple(sorted(dimensions.items()))), []).append(value)
            else:
                self.timings.setdefault(name, []).append(value)

    def total(self, name: str) -> float:
        return sum(value for (metric, _), value in self.counts.items() if metric == name)
