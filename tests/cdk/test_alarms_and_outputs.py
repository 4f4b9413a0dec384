"""Alarms on dead letters and the oldest open question; stack outputs for everything a consumer needs."""

from __future__ import annotations

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


def test_alarm_actions_can_be_added_to_both() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code())
    assert agent.alarms is not None
    agent.alarms.add_alarm_action(actions.SnsAction(sns.Topic(stack, "Oncall")))  # type: ignore[arg-type]
    alarms = Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm")
    assert len(alarms) == 2
    assert all(len(a["Properties"]["AlarmActions"]) == 1 for a in alarms.values())


def test_outputs_name_every_resource_a_consumer_needs(refund: Synth) -> None:
    outputs = refund.json["Outputs"]
    by_suffix = {
        key.removeprefix("AgentWait")[:-8]: value["Value"]
        for key, value in outputs.items()
        if key.startswith("AgentWait")  # the example stack adds its own RefundTableName
    }
    assert by_suffix["EntryQueueUrl"] == {"Ref": "AgentWaitEntryQueue74B3737D"}
    assert by_suffix["DeadLetterQueueUrl"] == {"Ref": "AgentWaitEntryQueueDeadLetterQueueB64EFE3E"}
    assert set(by_suffix) == {
        "EntryQueueUrl",
        "DeadLetterQueueUrl",
        "QuestionTableName",
        "CheckpointTableName",
        "TopicArn",
        "BusName",
    }


def test_outputs_follow_the_announcers(features: Synth, quiet: Synth) -> None:
    names = {key.removeprefix("AgentWait")[:-8] for key in features.json["Outputs"]}
    assert "TopicArn" in names
    assert "BusName" not in names
    assert "Outputs" not in quiet.json
