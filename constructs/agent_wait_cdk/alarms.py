"""`AgentWaitAlarms`: the two alarms that say agent-wait needs a person.

- **Dead letters**: the dead-letter queue holds a message (`ApproximateNumberOfMessagesVisible > 0`). A
  start or an answer failed `max_receive_count` times, or the router parked a malformed message there;
  its thread waits until someone reads it.
- **Oldest open question**: the sweep's `OldestOpenQuestionAgeSeconds` (namespace `AgentWait`, dimension
  `service=agent-wait`, emitted by Powertools Metrics on every run) is above the threshold. Nobody is
  answering, or the sweep is not expiring what it should.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk._defaults import FIVE_MINUTES, ONE_DAY
from agent_wait_cdk._shapes import METRICS_NAMESPACE, OLDEST_OPEN_QUESTION_METRIC, SERVICE_NAME
from agent_wait_cdk._validate import PropChecks

__all__ = ("METRICS_NAMESPACE", "OLDEST_OPEN_QUESTION_METRIC", "AgentWaitAlarms", "oldest_open_question_metric")


def oldest_open_question_metric(*, period: Duration = FIVE_MINUTES) -> cloudwatch.Metric:
    """The sweep's `OldestOpenQuestionAgeSeconds` metric (Maximum over `period`), e.g. for a dashboard."""
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=OLDEST_OPEN_QUESTION_METRIC,
        # Powertools Metrics adds the service name as the `service` dimension to every metric it emits.
        dimensions_map={"service": SERVICE_NAME},
        statistic=cloudwatch.Stats.MAXIMUM,
        period=period,
        unit=cloudwatch.Unit.SECONDS,
    )


class AgentWaitAlarms(Construct):
    """An alarm on dead letters and one on the age of the oldest open question; no actions unless given.

    Example:
        alarms = AgentWaitAlarms(self, "Alarms", dead_letter_queue=dlq)
        alarms.add_alarm_action(cw_actions.SnsAction(oncall_topic))

    Args:
        scope: the parent construct.
        id: the construct id.
        dead_letter_queue: the entry queue's dead-letter queue.
        oldest_open_question_threshold: alarm when the oldest open question is older than this. Default
            1 day: most approvals are decided within a working day; raise it if your policies wait longer.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        dead_letter_queue: sqs.IQueue,
        oldest_open_question_threshold: Duration = ONE_DAY,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(checks, oldest_open_question_threshold=oldest_open_question_threshold)
        checks.raise_if_any()
        self.dead_letters = cloudwatch.Alarm(
            self,
            "DeadLetters",
            alarm_description=(
                "agent-wait: the dead-letter queue holds a start or an answer the router could not apply; "
                "its thread waits until someone reads it"
            ),
            metric=dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(1), statistic=cloudwatch.Stats.MAXIMUM
            ),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.oldest_open_question = cloudwatch.Alarm(
            self,
            "OldestOpenQuestion",
            alarm_description=(
                f"agent-wait: a question has been open for more than "
                f"{oldest_open_question_threshold.to_human_string()}: nobody is answering, or the sweep is not "
                "expiring it"
            ),
            metric=oldest_open_question_metric(),
            threshold=oldest_open_question_threshold.to_seconds(),
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            # Missing data (the sweep did not run, or emitted nothing) does not alarm: the sweep function's
            # own Errors metric is the signal for that.
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
    def alarms(self) -> tuple[cloudwatch.Alarm, cloudwatch.Alarm]:
        return (self.dead_letters, self.oldest_open_question)

    def add_alarm_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Add `actions` (e.g. `cloudwatch_actions.SnsAction(topic)`) to both alarms."""
        for alarm in self.alarms:
            alarm.add_alarm_action(*actions)
