"""`AgentWaitAlarms`: the alarms that say agent-wait needs a person, and what that person does.

Each alarm fires on its first bad period and treats missing data as fine (no traffic is not a fault).
The custom metrics are in namespace `AgentWait` with dimension `service=agent-wait` (the functions'
`POWERTOOLS_METRICS_NAMESPACE` and `POWERTOOLS_SERVICE_NAME`), emitted by Powertools Metrics; a count
with a `reason` is also emitted as a total under `service` alone, which is what these alarms watch.

- **DeadLetters** — the dead-letter queue holds a message (`ApproximateNumberOfMessagesVisible > 0`,
  Maximum over 1 minute). A start or an answer failed `maxReceiveCount` times, or the router parked a
  malformed one there with its reason; its thread waits. *Do:* read the message's `agent_wait_reason`
  and `agent_wait_detail` attributes, fix the cause, then redrive it to the entry queue (or delete it).
- **OldestOpenQuestion** — the sweep's `OldestOpenQuestionAgeSeconds` (Maximum over 5 minutes) is above
  the threshold. Nobody is answering, or the sweep is not expiring what it should. *Do:* check that the
  question's announcement reached someone who can answer; if it is past its deadline, look at the sweep
  alarms below.
- **RouterErrors** — the router's `RouterErrors` (Sum over 5 minutes) is above 0: records it could not
  apply this time and handed back to SQS (throttling, a store that failed, another delivery holding the
  thread). SQS retries them; the last receive dead-letters them. *Do:* find the `reason` dimension or the
  router's `error_type` log lines; a burst that stops is weather, one that persists needs the cause fixed.
- **RouterFunctionErrors** — the router function's own `Errors` (Sum over 5 minutes) is above 0: whole
  invocations failed (a setting missing at cold start, a graph that does not import, a timeout, out of
  memory); the whole batch goes back to the queue. Partial batch failures do not show here; those are
  `RouterErrors`. *Do:* read the router's log group for the `ConfigurationError` or traceback; fix the
  setting or the bundle, or raise `router.timeout` / `router.memory_size`.
- **SweepErrors** — the sweep's `SweepErrors` (Sum over 5 minutes) is above 0: a step of a run failed
  (`reason` `due`, `oldest_open` or `handover`), acting on one due question failed (`announce`, `expire`,
  `remind`, `escalate`, `repair`), or a deadline answer was refused (`send`). The other steps and questions
  ran and the next run retries, but overdue questions stay open until their answer is sent. *Do:* read the
  sweep's log lines for the step, the error type or code, and the question ids.
- **SweepFunctionErrors** — the sweep function's own `Errors` (Sum over 5 minutes) is above 0: the
  invocation itself failed (a setting missing at cold start, a timeout), so nothing expired in that run.
  *Do:* read the sweep's log group; fix the setting, or raise `sweep.timeout`.

- **EmailBounces** (with email) — SES counted a bounce or a complaint for a question's email (`Bounce` plus
  `Complaint` in `AWS/SES`, dimension `ses:configuration-set`, Sum over 5 minutes, above 0). An address in the
  recipients mapping is wrong or gone, or someone marked the email as spam; SES pauses an account whose rates
  stay high. *Do:* find the address in SES's suppression list or the bounce notice, fix the mapping
  (`EmailProps.groups` / `tags`), and redeploy.

With `alarm_topic`, every alarm notifies it both when it fires and when it is OK again.
"""

from __future__ import annotations

import jsii
from aws_cdk import Annotations, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IValidation

from agent_wait_cdk._defaults import FIVE_MINUTES, ONE_DAY
from agent_wait_cdk._shapes import (
    METRICS_NAMESPACE,
    OLDEST_OPEN_QUESTION_METRIC,
    ROUTER_ERRORS_METRIC,
    SERVICE_NAME,
    SWEEP_ERRORS_METRIC,
)
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "METRICS_NAMESPACE",
    "OLDEST_OPEN_QUESTION_METRIC",
    "ROUTER_ERRORS_METRIC",
    "SWEEP_ERRORS_METRIC",
    "AgentWaitAlarms",
    "email_bounces_metric",
    "oldest_open_question_metric",
    "router_errors_metric",
    "sweep_errors_metric",
)


def _agent_wait_metric(name: str, *, statistic: str, period: Duration, unit: cloudwatch.Unit) -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        # Powertools Metrics adds the service name as the `service` dimension to every metric it emits.
        dimensions_map={"service": SERVICE_NAME},
        statistic=statistic,
        period=period,
        unit=unit,
    )


def oldest_open_question_metric(*, period: Duration = FIVE_MINUTES) -> cloudwatch.Metric:
    """The sweep's `OldestOpenQuestionAgeSeconds` metric (Maximum over `period`), e.g. for a dashboard."""
    return _agent_wait_metric(
        OLDEST_OPEN_QUESTION_METRIC, statistic=cloudwatch.Stats.MAXIMUM, period=period, unit=cloudwatch.Unit.SECONDS
    )


def router_errors_metric(*, period: Duration = FIVE_MINUTES) -> cloudwatch.Metric:
    """The router's `RouterErrors` total over all reasons (Sum over `period`): records handed back to SQS."""
    return _agent_wait_metric(
        ROUTER_ERRORS_METRIC, statistic=cloudwatch.Stats.SUM, period=period, unit=cloudwatch.Unit.COUNT
    )


def sweep_errors_metric(*, period: Duration = FIVE_MINUTES) -> cloudwatch.Metric:
    """The sweep's `SweepErrors` total over all reasons (Sum over `period`): failed steps and refused sends."""
    return _agent_wait_metric(
        SWEEP_ERRORS_METRIC, statistic=cloudwatch.Stats.SUM, period=period, unit=cloudwatch.Unit.COUNT
    )


def email_bounces_metric(configuration_set_name: str, *, period: Duration = FIVE_MINUTES) -> cloudwatch.IMetric:
    """Bounces plus complaints of the emails sent with `configuration_set_name` (Sum over `period`; none is 0)."""

    def ses_metric(name: str) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace="AWS/SES",
            metric_name=name,
            dimensions_map={"ses:configuration-set": configuration_set_name},
            statistic=cloudwatch.Stats.SUM,
            period=period,
        )

    return cloudwatch.MathExpression(
        expression="FILL(bounces, 0) + FILL(complaints, 0)",
        using_metrics={"bounces": ses_metric("Bounce"), "complaints": ses_metric("Complaint")},
        label="Bounces and complaints",
        period=period,
    )


class AgentWaitAlarms(Construct):
    """The alarms on agent-wait's health (see the module docstring for each, and what to do when it fires).

    Example:
        alarms = AgentWaitAlarms(
            self, "Alarms", dead_letter_queue=dlq, router_function=router, sweep_function=sweep, alarm_topic=oncall
        )

    Args:
        scope: the parent construct.
        id: the construct id.
        dead_letter_queue: the entry queue's dead-letter queue.
        router_function: the router; alarm on its own `Errors`. Default None: no such alarm (the
            `RouterErrors` alarm needs only the metric, and is always made).
        sweep_function: the sweep; alarm on its own `Errors`. Default None: no such alarm (the
            `SweepErrors` alarm is always made).
        oldest_open_question_threshold: alarm when the oldest open question is older than this. Default
            1 day: most approvals are decided within a working day; raise it if your policies wait longer.
        alarm_topic: notify this topic when any alarm fires and when it is OK again. Default None: no
            actions, so nothing pages anyone until you add one (`add_alarm_action`) — pass your on-call topic.
            A topic encrypted with a customer managed key must let `cloudwatch.amazonaws.com` use that key.
        email_configuration_set_name: the SES configuration set questions are emailed with; alarm on its bounces
            and complaints. Default None: no such alarm (no email).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        dead_letter_queue: sqs.IQueue,
        router_function: lambda_.IFunction | None = None,
        sweep_function: lambda_.IFunction | None = None,
        oldest_open_question_threshold: Duration = ONE_DAY,
        alarm_topic: sns.ITopic | None = None,
        email_configuration_set_name: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(checks, oldest_open_question_threshold=oldest_open_question_threshold)
        checks.raise_if_any()
        self.dead_letters = self._alarm(
            "DeadLetters",
            dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(1), statistic=cloudwatch.Stats.MAXIMUM
            ),
            "the dead-letter queue holds a start or an answer the router could not apply; its thread waits. "
            "Read the message's agent_wait_reason attribute, fix the cause, then redrive it to the entry queue",
        )
        self.oldest_open_question = self._alarm(
            "OldestOpenQuestion",
            oldest_open_question_metric(),
            f"a question has been open for more than {oldest_open_question_threshold.to_human_string()}: nobody "
            "is answering, or the sweep is not expiring it. Check its announcement reached an approver, and the "
            "sweep alarms",
            threshold=oldest_open_question_threshold.to_seconds(),
        )
        self.router_errors = self._alarm(
            "RouterErrors",
            router_errors_metric(),
            "the router handed records back to SQS (RouterErrors > 0 in 5 minutes); SQS retries them and "
            "dead-letters them on the last receive. Find the reason dimension or the router's error_type log lines",
        )
        self.router_function_errors: cloudwatch.Alarm | None = None
        if router_function is not None:
            self.router_function_errors = self._alarm(
                "RouterFunctionErrors",
                router_function.metric_errors(period=FIVE_MINUTES, statistic=cloudwatch.Stats.SUM),
                "router invocations failed as a whole (a setting missing at cold start, a graph that does not "
                "import, a timeout); the batch went back to the queue. Read the router's log group",
            )
        self.sweep_errors = self._alarm(
            "SweepErrors",
            sweep_errors_metric(),
            "a sweep step failed or a deadline answer was not sent (SweepErrors > 0 in 5 minutes); the next run "
            "retries, but overdue questions stay open until then. Read the sweep's logs for the step and error",
        )
        self.sweep_function_errors: cloudwatch.Alarm | None = None
        if sweep_function is not None:
            self.sweep_function_errors = self._alarm(
                "SweepFunctionErrors",
                sweep_function.metric_errors(period=FIVE_MINUTES, statistic=cloudwatch.Stats.SUM),
                "sweep invocations failed as a whole (a setting missing at cold start, a timeout), so nothing "
                "expired in them. Read the sweep's log group",
            )
        self.email_bounces: cloudwatch.Alarm | None = None
        if email_configuration_set_name is not None:
            self.email_bounces = self._alarm(
                "EmailBounces",
                email_bounces_metric(email_configuration_set_name),
                "SES counted a bounce or a complaint for a question's email: an address in the recipients mapping is "
                "wrong or gone, or the email was marked as spam. Find the address in SES's suppression list, fix the "
                "mapping (EmailProps.groups / tags) and redeploy",
            )
        if alarm_topic is not None:
            action = cloudwatch_actions.SnsAction(alarm_topic)  # pyright: ignore[reportArgumentType]
            self.add_alarm_action(action)  # pyright: ignore[reportArgumentType]
            self.add_ok_action(action)  # pyright: ignore[reportArgumentType]
        # Checked at synth, not here: actions may still be added after construction (`add_alarm_action`).
        self.node.add_validation(_TellsSomebody(self))

    def _alarm(
        self, id: str, metric: cloudwatch.IMetric, description: str, *, threshold: float = 0
    ) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(
            self,
            id,
            alarm_description=f"agent-wait: {description}",
            metric=metric,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            # Missing data (no traffic, or a run that emitted nothing) is not a fault: the function Errors
            # alarms catch a sweep or router that fails to run at all.
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )

    @staticmethod
    def check_props(checks: PropChecks, *, oldest_open_question_threshold: Duration | None = None) -> None:
        """Record an out-of-range threshold in `checks`; None means not given."""
        checks.duration_between(
            "oldest_open_question_threshold",
            oldest_open_question_threshold,
            minimum=Duration.minutes(1),
            maximum=Duration.days(365),
        )

    @property
    def alarms(self) -> tuple[cloudwatch.Alarm, ...]:
        """Every alarm made, in the order of the module docstring."""
        made = (
            self.dead_letters,
            self.oldest_open_question,
            self.router_errors,
            self.router_function_errors,
            self.sweep_errors,
            self.sweep_function_errors,
            self.email_bounces,
        )
        return tuple(alarm for alarm in made if alarm is not None)

    def without_actions(self) -> list[str]:
        """The ids of the alarms that notify nobody when they fire (no alarm action)."""
        stack = Stack.of(self)
        silent = []
        for alarm in self.alarms:
            cfn = alarm.node.default_child
            actions = stack.resolve(cfn.alarm_actions) if isinstance(cfn, cloudwatch.CfnAlarm) else None
            if not actions:
                silent.append(alarm.node.id)
        return silent

    def add_alarm_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Add `actions` (e.g. `cloudwatch_actions.SnsAction(topic)`) to every alarm, for when it fires."""
        for alarm in self.alarms:
            alarm.add_alarm_action(*actions)

    def add_ok_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Add `actions` to every alarm, for when it returns to OK."""
        for alarm in self.alarms:
            alarm.add_ok_action(*actions)


@jsii.implements(IValidation)
class _TellsSomebody:
    """At synth: warn when an alarm has no action, so a deploy never has alarms that tell nobody."""

    def __init__(self, alarms: AgentWaitAlarms) -> None:
        self.alarms = alarms

    def validate(self) -> list[str]:
        silent = self.alarms.without_actions()
        if silent:
            Annotations.of(self.alarms).add_warning_v2(
                "agent-wait:alarms-without-actions",
                f"the alarms {', '.join(silent)} notify nobody: pass AgentWait(alarm_topic=...) (your on-call SNS "
                "topic), or call agent_wait.alarms.add_alarm_action(...); alarms=False turns them off",
            )
        return []  # a warning, never a failed synth: a stack may still be wired to a topic elsewhere
