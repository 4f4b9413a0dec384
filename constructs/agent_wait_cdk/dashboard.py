"""`AgentWaitDashboard`: one CloudWatch dashboard that says what is waiting, how fast people answer, and what broke.

It reads top to bottom the way an operator asks (docs/operate.md walks through it):

1. **What is waiting now**: open questions, the age of the oldest, and every alarm's state.
2. **How fast questions are answered**: time to answer (p50, p90, p99) of answered questions; the outcomes over time
   (asked, answered, expired, cancelled); time to answer by outcome, and by each tag named in `metric_tags`; the
   follow-ups (reminders, escalations, votes).
3. **Trouble**: refusals by reason, dead letters by reason (and the dead-letter queue's depth), failed threads by
   reason, then the router (duration, errors, records handed back), the sweep and announcers, and the answer API
   (requests, 4xx, 5xx, latency).

Every metric it draws is one the runtime emits (`agent_wait.engine.metrics.emitted()`), in namespace `AgentWait`
under `service=agent-wait` (what `AgentWait` sets `POWERTOOLS_METRICS_NAMESPACE` and `POWERTOOLS_SERVICE_NAME` to);
`tests/cdk/test_dashboard.py` compares the synthesized body with that list. Breakdowns by `reason` are CloudWatch
`SEARCH` expressions, so a reason shows up the first time it happens, without a line per reason written here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk._defaults import FIVE_MINUTES
from agent_wait_cdk._shapes import ENV_METRIC_TAGS, METRICS_NAMESPACE, SERVICE_NAME
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "MAX_METRIC_TAG_KEYS",
    "MAX_METRIC_TAG_VALUES",
    "AgentWaitDashboard",
    "check_metric_tags",
    "metric_tags_variable",
)

MAX_METRIC_TAG_KEYS = 3
MAX_METRIC_TAG_VALUES = 10
"""The runtime's bounds on `AGENT_WAIT_METRIC_TAGS` (`agent_wait.engine.metrics.MetricTags`), restated."""
_RESERVED = ("outcome", "reason", "service")
_TAG_KEY = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_FOLDED = ("other", "none")
"""The values a tag is drawn as when its value is not listed, and when the question has no such tag."""
_WIDTH = 24


def check_metric_tags(checks: PropChecks, metric_tags: Mapping[str, Sequence[str]] | None) -> None:
    """Record in `checks` what the router would refuse at cold start in `metric_tags` (`AGENT_WAIT_METRIC_TAGS`)."""
    if metric_tags is None:
        return
    if not metric_tags or len(metric_tags) > MAX_METRIC_TAG_KEYS:
        checks.fail(
            "metric_tags",
            f"must name 1 to {MAX_METRIC_TAG_KEYS} tag keys (each is a CloudWatch metric per value and outcome); "
            f"got {len(metric_tags)}",
        )
    for key, values in metric_tags.items():
        if key in _RESERVED or not _TAG_KEY.fullmatch(key):
            checks.fail(
                "metric_tags",
                f"key {key!r} must be letters, digits, '_', '.' or '-' (up to 64) and not one of {list(_RESERVED)}",
            )
        if isinstance(values, str) or not values or not all(isinstance(v, str) and 0 < len(v) <= 255 for v in values):
            checks.fail("metric_tags", f"[{key!r}] must be a list of 1 to 255-character values; got {values!r}")
        elif len(values) > MAX_METRIC_TAG_VALUES:
            checks.fail("metric_tags", f"[{key!r}] lists {len(values)} values; at most {MAX_METRIC_TAG_VALUES}")
        elif set(values) & set(_FOLDED):
            checks.fail(
                "metric_tags",
                f"[{key!r}] lists 'other' or 'none': those stand for a value not listed and for no tag; leave them out",
            )


def metric_tags_variable(metric_tags: Mapping[str, Sequence[str]] | None) -> dict[str, str]:
    """The router's `AGENT_WAIT_METRIC_TAGS` for `metric_tags` (JSON), or nothing when None or empty."""
    if not metric_tags:
        return {}
    tags = {key: list(values) for key, values in sorted(metric_tags.items())}
    return {ENV_METRIC_TAGS: json.dumps(tags, separators=(",", ":"))}


class AgentWaitDashboard(Construct):
    """A CloudWatch dashboard of agent-wait's metrics and alarms (the module docstring says what is on it).

    Example:
        AgentWaitDashboard(
            self, "Dashboard", router_function=router, sweep_function=sweep, dead_letter_queue=dlq,
            alarms=agent.alarms.alarms, metric_tags={"team": ["payments", "support"]},
        )

    Args:
        scope: the parent construct.
        id: the construct id.
        dashboard_name: Default None: CloudFormation names it.
        router_function: the router; its duration, errors and throttles are drawn. Default None: not drawn.
        sweep_function: the sweep; its errors are drawn beside `SweepErrors`. Default None: not drawn.
        answer_api_function: the answer API's function; its requests, errors and latency are drawn. Default None:
            no answer API row.
        dead_letter_queue: the entry queue's dead-letter queue; its depth is drawn. Default None: not drawn.
        alarms: the alarms whose state the top row shows (`AgentWaitAlarms.alarms`). Default: none.
        metric_tags: the router's `AGENT_WAIT_METRIC_TAGS` as a mapping: a p90 time-to-answer graph per key, one
            line per value and `other` and `none`. Default None: no tag graphs.
        period: the period of every graph. Default 5 minutes (the sweep's gauges come once a minute).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        dashboard_name: str | None = None,
        router_function: lambda_.IFunction | None = None,
        sweep_function: lambda_.IFunction | None = None,
        answer_api_function: lambda_.IFunction | None = None,
        dead_letter_queue: sqs.IQueue | None = None,
        alarms: Sequence[cloudwatch.IAlarm] = (),
        metric_tags: Mapping[str, Sequence[str]] | None = None,
        period: Duration = FIVE_MINUTES,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        check_metric_tags(checks, metric_tags)
        checks.duration_between("period", period, minimum=Duration.minutes(1), maximum=Duration.days(1))
        checks.raise_if_any()
        self.period = period
        self.dashboard = cloudwatch.Dashboard(self, "Resource", dashboard_name=dashboard_name)
        self._waiting_now(alarms)
        self._speed(metric_tags or {})
        self._trouble(dead_letter_queue)
        self._functions(router_function, sweep_function, answer_api_function)

    # -- the rows, top to bottom ---------------------------------------------------------------------

    def _waiting_now(self, alarms: Sequence[cloudwatch.IAlarm]) -> None:
        self.dashboard.add_widgets(_heading("What is waiting now"))
        self.dashboard.add_widgets(
            cloudwatch.SingleValueWidget(
                title="Open questions",
                metrics=[self._metric("OpenQuestions", "Maximum", label="open, as last counted (every 2 hours)")],
                width=6,
                height=5,
                sparkline=True,
            ),
            cloudwatch.SingleValueWidget(
                title="Oldest open question (seconds)",
                metrics=[self._metric("OldestOpenQuestionAgeSeconds", "Maximum", label="asked this long ago")],
                width=6,
                height=5,
                sparkline=True,
            ),
            cloudwatch.AlarmStatusWidget(
                title="Alarms",
                alarms=list(alarms),
                width=12,
                height=5,
                sort_by=cloudwatch.AlarmStatusWidgetSortBy.STATE_UPDATED_TIMESTAMP,
            ),
        )

    def _speed(self, metric_tags: Mapping[str, Sequence[str]]) -> None:
        self.dashboard.add_widgets(_heading("How fast questions are answered"))
        answered = {"outcome": "answered"}
        self.dashboard.add_widgets(
            _graph(
                title="Time to answer, answered questions (seconds)",
                left=[
                    self._metric("TimeToAnswerSeconds", stat, dimensions=answered, label=stat)
                    for stat in ("p50", "p90", "p99")
                ],
                width=12,
                unit="seconds",
            ),
            _graph(
                title="Outcomes",
                left=[
                    self._metric("QuestionsAsked", "Sum", label="asked"),
                    self._metric("AnswersAccepted", "Sum", label="answered"),
                    self._metric("QuestionsExpired", "Sum", label="expired"),
                    self._metric("QuestionsCancelled", "Sum", label="cancelled"),
                ],
                width=12,
                unit="questions",
            ),
        )
        width = 6 if len(metric_tags) == 1 else 8  # four graphs fill a row; three or six fill one or two
        by_outcome = _graph(
            title="Time to answer by outcome, p90 (seconds)",
            left=[
                self._metric("TimeToAnswerSeconds", "p90", dimensions={"outcome": outcome}, label=outcome)
                for outcome in ("answered", "expired", "cancelled")
            ],
            width=width,
            unit="seconds",
        )
        follow_ups = _graph(
            title="Follow-ups",
            left=[
                self._metric("RemindersSent", "Sum", label="reminders"),
                self._metric("QuestionsEscalated", "Sum", label="escalations"),
                self._metric("VotesRecorded", "Sum", label="votes"),
                self._metric("DeadlinesExtended", "Sum", label="deadlines extended"),
            ],
            width=width,
        )
        tagged = [
            _graph(
                title=f"Time to answer by {key}, answered, p90 (seconds)",
                left=[
                    self._metric(
                        "TimeToAnswerSeconds", "p90", dimensions={"outcome": "answered", key: value}, label=value
                    )
                    for value in (*values, *_FOLDED)
                ],
                width=width,
                unit="seconds",
            )
            for key, values in sorted(metric_tags.items())
        ]
        runs = _graph(
            title="Agent runs",
            left=[
                self._metric("StartsApplied", "Sum", label="starts run"),
                self._metric("StartsReplayed", "Sum", label="starts redelivered (nothing ran)"),
                self._metric("ThreadBusy", "Sum", label="waited for another delivery"),
            ],
            width=width,
        )
        row: list[cloudwatch.IWidget] = [by_outcome, *tagged, follow_ups, runs]
        per_row = 4 if len(row) == 4 else 3
        for start in range(0, len(row), per_row):
            self.dashboard.add_widgets(*row[start : start + per_row])

    def _trouble(self, dead_letter_queue: sqs.IQueue | None) -> None:
        self.dashboard.add_widgets(_heading("Trouble"))
        dead_letters: list[cloudwatch.IMetric] = [self._by_reason("MessagesDeadLettered")]
        if dead_letter_queue is not None:
            dead_letters.append(
                dead_letter_queue.metric_approximate_number_of_messages_visible(
                    period=self.period, statistic="Maximum", label="waiting in the dead-letter queue"
                )
            )
        self.dashboard.add_widgets(
            _graph(
                title="Answers refused, by reason",
                left=[self._by_reason("AnswersRefused")],
            ),
            _graph(
                title="Dead letters, by reason",
                left=dead_letters,
            ),
            _graph(
                title="Failed threads (agent raised), by start, answer or retry",
                left=[
                    self._by_reason("AgentFailures"),
                    self._metric("ThreadsRetried", "Sum", label="retried by an operator"),
                    # resumes of questions asked under another version: resumed, migrated, failed (docs/versions.md)
                    self._by_reason("VersionChanges"),
                ],
            ),
        )

    def _functions(
        self,
        router: lambda_.IFunction | None,
        sweep: lambda_.IFunction | None,
        api: lambda_.IFunction | None,
    ) -> None:
        widgets: list[cloudwatch.IWidget] = []
        if router is not None:
            widgets.append(
                _graph(
                    title="Router",
                    left=[
                        router.metric_duration(period=self.period, statistic="p50", label="duration p50"),
                        router.metric_duration(period=self.period, statistic="p99", label="duration p99"),
                    ],
                    right=[
                        router.metric_errors(period=self.period, statistic="Sum", label="invocations failed"),
                        router.metric_throttles(period=self.period, statistic="Sum", label="throttled"),
                        self._metric("RouterErrors", "Sum", label="records handed back to SQS"),
                    ],
                    unit="ms",
                    right_unit="count",
                )
            )
        sweep_metrics: list[cloudwatch.IMetric] = [
            self._metric("SweepErrors", "Sum", label="sweep errors"),
            self._metric("AnnounceFailures", "Sum", label="announcements failed"),
            self._metric("OverdueQuestions", "Sum", label="overdue found"),
            self._metric("QuestionsReannounced", "Sum", label="announced again"),
            # precise deadlines' schedules that could not be put or deleted (the minute sweep still catches them)
            self._metric("ScheduleFailures", "Sum", label="schedules failed"),
        ]
        if sweep is not None:
            sweep_metrics.insert(0, sweep.metric_errors(period=self.period, statistic="Sum", label="runs failed"))
        widgets.append(
            _graph(
                title="Sweep and announcing",
                left=sweep_metrics,
                right=[self._metric("OverdueQuestionAgeSeconds", "Maximum", label="most overdue (seconds)")],
                unit="count",
                right_unit="seconds",
            )
        )
        if api is not None:
            widgets.append(
                _graph(
                    title="Answer API",
                    left=[
                        self._metric("ApiRequests", "Sum", label="requests"),
                        self._metric("ApiClientErrors", "Sum", label="4xx"),
                        self._metric("ApiServerErrors", "Sum", label="5xx"),
                    ],
                    right=[
                        self._metric("ApiLatencySeconds", "p50", label="latency p50"),
                        self._metric("ApiLatencySeconds", "p99", label="latency p99"),
                    ],
                    unit="requests",
                    right_unit="seconds",
                )
            )
        self.dashboard.add_widgets(*widgets)

    # -- metrics ----------------------------------------------------------------------------------------

    def _metric(
        self, name: str, statistic: str, *, dimensions: Mapping[str, str] | None = None, label: str | None = None
    ) -> cloudwatch.Metric:
        """One of agent-wait's metrics under `service` (and `dimensions`), over the dashboard's period."""
        return cloudwatch.Metric(
            namespace=METRICS_NAMESPACE,
            metric_name=name,
            dimensions_map={"service": SERVICE_NAME, **(dimensions or {})},
            statistic=statistic,
            period=self.period,
            label=label,
        )

    def _by_reason(self, name: str) -> cloudwatch.MathExpression:
        """Every `reason` of a count, one line each, as it happens (a CloudWatch SEARCH expression)."""
        seconds = int(self.period.to_seconds())
        search = (
            f'SEARCH(\'{{{METRICS_NAMESPACE},reason,service}} MetricName="{name}" service="{SERVICE_NAME}"\', '
            f"'Sum', {seconds})"
        )
        return cloudwatch.MathExpression(expression=search, label="", period=self.period, using_metrics={})


def _graph(
    *,
    title: str,
    left: Sequence[cloudwatch.IMetric],
    right: Sequence[cloudwatch.IMetric] = (),
    width: int = 8,
    unit: str | None = None,
    right_unit: str | None = None,
) -> cloudwatch.GraphWidget:
    """A graph 6 high, its axes from 0 labelled with their unit (CloudWatch's own units left off)."""
    return cloudwatch.GraphWidget(
        title=title,
        left=list(left),
        right=list(right),
        left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False, label=unit),
        right_y_axis=cloudwatch.YAxisProps(min=0, show_units=False, label=right_unit),
        width=width,
        height=6,
    )


def _heading(text: str) -> cloudwatch.TextWidget:
    return cloudwatch.TextWidget(markdown=f"### {text}", width=_WIDTH, height=1)
