"""Alarms on dead letters, router and sweep errors and the oldest open question; stack outputs for everything a
consumer needs."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template
from tests.cdk.conftest import Synth, inline_code, new_app

from agent_wait_cdk import METRICS_NAMESPACE, OLDEST_OPEN_QUESTION_METRIC, AgentWait


def test_metric_name_and_namespace_are_the_published_contract() -> None:
    assert (METRICS_NAMESPACE, OLDEST_OPEN_QUESTION_METRIC) == ("AgentWait", "OldestOpenQuestionAgeSeconds")


def test_dead_letter_alarm_fires_on_one_visible_message(refund: Synth) -> None:
    refund.template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Namespace": "AWS/SQS",
            "MetricName": "ApproximateNumberOfMessagesVisible",
            "Dimensions": [
                {
                    "Name": "QueueName",
                    "Value": {"Fn::GetAtt": ["AgentWaitEntryQueueDeadLetterQueueB64EFE3E", "QueueName"]},
                }
            ],
            "Statistic": "Maximum",
            "Period": 60,
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "EvaluationPeriods": 1,
            "TreatMissingData": "notBreaching",
        },
    )


def test_oldest_open_question_alarm_watches_the_sweep_metric(refund: Synth, features: Synth) -> None:
    for synth, threshold in ((refund, 86400), (features, 4 * 3600)):
        synth.template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "Namespace": "AgentWait",
                "MetricName": "OldestOpenQuestionAgeSeconds",
                "Dimensions": [{"Name": "service", "Value": "agent-wait"}],
                "Statistic": "Maximum",
                "Unit": "Seconds",
                "Period": 300,
                "Threshold": threshold,
                "ComparisonOperator": "GreaterThanThreshold",
                "TreatMissingData": "notBreaching",
            },
        )


def test_alarms_are_off_on_request(quiet: Synth) -> None:
    quiet.template.resource_count_is("AWS::CloudWatch::Alarm", 0)


def custom_metric_alarm(metric: str) -> dict[str, object]:
    """The properties of an alarm on the total of an agent-wait counter: any count in five minutes fires it."""
    return {
        "Namespace": "AgentWait",
        "MetricName": metric,
        "Dimensions": [{"Name": "service", "Value": "agent-wait"}],
        "Statistic": "Sum",
        "Unit": "Count",
        "Period": 300,
        "Threshold": 0,
        "ComparisonOperator": "GreaterThanThreshold",
        "EvaluationPeriods": 1,
        "TreatMissingData": "notBreaching",
    }


def test_router_errors_and_sweep_errors_alarms_watch_the_totals_the_runtime_emits(refund: Synth) -> None:
    # RouterErrors and SweepErrors carry a reason; PowertoolsMetrics also emits their total under service alone.
    for metric in ("RouterErrors", "SweepErrors"):
        refund.template.has_resource_properties("AWS::CloudWatch::Alarm", custom_metric_alarm(metric))


def test_each_function_s_own_errors_are_alarmed(refund: Synth) -> None:
    # Invocation failures (a bad setting, a timeout) show only in Lambda's Errors, never in a partial batch response.
    for handler in ("agent_wait.host.router.handler", "agent_wait.host.sweep.handler"):
        function_id, _ = refund.one("AWS::Lambda::Function", Handler=handler)
        refund.template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "Namespace": "AWS/Lambda",
                "MetricName": "Errors",
                "Dimensions": [{"Name": "FunctionName", "Value": {"Ref": function_id}}],
                "Statistic": "Sum",
                "Period": 300,
                "Threshold": 0,
                "ComparisonOperator": "GreaterThanThreshold",
                "TreatMissingData": "notBreaching",
            },
        )


def test_every_alarm_says_what_to_do_and_has_no_action_unless_given(refund: Synth) -> None:
    alarms = refund.resources("AWS::CloudWatch::Alarm")
    assert len(alarms) == 6
    names = {key.split("Alarms", 1)[1].rstrip("0123456789ABCDEF") for key in alarms}
    assert names == {
        "DeadLetters",
        "OldestOpenQuestion",
        "RouterErrors",
        "RouterFunctionErrors",
        "SweepErrors",
        "SweepFunctionErrors",
    }
    for alarm in alarms.values():
        assert alarm["Properties"]["AlarmDescription"].startswith("agent-wait: ")
        assert "AlarmActions" not in alarm["Properties"]
        assert "OKActions" not in alarm["Properties"]


def test_every_alarm_notifies_the_alarm_topic_when_it_fires_and_when_it_is_ok(features: Synth) -> None:
    oncall = {"Ref": features.one("AWS::SNS::Topic", FifoTopic=None)[0]}
    alarms = features.resources("AWS::CloudWatch::Alarm")
    assert len(alarms) == 6
    for alarm in alarms.values():
        assert alarm["Properties"]["AlarmActions"] == [oncall]
        assert alarm["Properties"]["OKActions"] == [oncall]


def test_alarm_actions_can_be_added_to_every_alarm() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code())
    assert agent.alarms is not None
    agent.alarms.add_alarm_action(actions.SnsAction(sns.Topic(stack, "Oncall")))  # type: ignore[arg-type]
    alarms = Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm")
    assert len(alarms) == len(agent.alarms.alarms) == 6
    assert all(len(a["Properties"]["AlarmActions"]) == 1 for a in alarms.values())


def test_alarms_on_their_own_need_only_the_dead_letter_queue() -> None:
    from aws_cdk import aws_sqs as sqs

    from agent_wait_cdk import AgentWaitAlarms

    stack = Stack(new_app(), "S")
    alarms = AgentWaitAlarms(stack, "Alarms", dead_letter_queue=sqs.Queue(stack, "Dlq"))
    assert (alarms.router_function_errors, alarms.sweep_function_errors) == (None, None)
    assert len(alarms.alarms) == 4


def test_outputs_name_every_resource_a_consumer_needs(refund: Synth) -> None:
    outputs = refund.json["Outputs"]
    by_suffix = {
        key.removeprefix("AgentWait")[:-8]: value["Value"]
        for key, value in outputs.items()
        if key.startswith("AgentWait")  # the example stack adds its own (RefundTableName, UserPoolId, ...)
    }
    assert by_suffix["EntryQueueUrl"] == {"Ref": "AgentWaitEntryQueue74B3737D"}
    assert by_suffix["DeadLetterQueueUrl"] == {"Ref": "AgentWaitEntryQueueDeadLetterQueueB64EFE3E"}
    assert set(by_suffix) == {
        "EntryQueueUrl",
        "DeadLetterQueueUrl",
        "QuestionTableName",
        "CheckpointTableName",
        "TopicArn",
        "AnswerApiUrl",
    }


def test_outputs_follow_the_announcers(features: Synth, quiet: Synth) -> None:
    names = {key.removeprefix("AgentWait")[:-8] for key in features.json["Outputs"]}
    assert "TopicArn" in names
    assert "BusName" not in names
    assert "Outputs" not in quiet.json


def _warnings(scope: Any, code: str) -> list[str]:
    """Warnings on `scope`'s tree with this id, read from the metadata (see tests/cdk/test_embedding.py for why)."""
    found = []
    for construct in scope.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == "aws:cdk:warning" and code in str(entry.data):
                found.append(str(entry.data))
    return found


def test_alarms_that_notify_nobody_warn_at_synth_and_an_action_added_later_silences_it() -> None:
    # Issue 25: none of the six alarms had an action unless alarm_topic was given, and nothing said so.
    import aws_cdk as cdk

    app = cdk.App(context={"aws:cdk:bundling-stacks": []})
    silent = cdk.Stack(app, "Silent")
    AgentWait(silent, "AgentWait", graph="m:g", code=inline_code())
    told = cdk.Stack(app, "Told")
    wired = AgentWait(told, "AgentWait", graph="m:g", code=inline_code())
    assert wired.alarms is not None
    wired.alarms.add_alarm_action(actions.SnsAction(sns.Topic(told, "OnCall")))  # after construction
    app.synth()

    (warning,) = _warnings(silent, "alarms-without-actions")
    assert "DeadLetters" in warning
    assert "pass AgentWait(alarm_topic=...)" in warning
    assert _warnings(told, "alarms-without-actions") == []
