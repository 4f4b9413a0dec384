"""`AgentWait(resource_name_prefix=...)`: a physical name for every named resource it creates, so an operator can
find them in the console and write IAM policies by name; without it CloudFormation generates names, as before."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Match, Template
from tests.cdk.conftest import inline_code, new_app

from agent_wait_cdk import AgentWait, AgentWaitPropsError


def _template(**props: Any) -> Template:
    stack = Stack(new_app(), "S")
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), **props)
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def named() -> Template:
    return _template(resource_name_prefix="refunds-prod", topic=True, bus=True)


def test_the_tables_are_named_with_the_prefix(named: Template) -> None:
    tables = sorted(t["Properties"]["TableName"] for t in named.find_resources("AWS::DynamoDB::Table").values())
    assert tables == ["refunds-prod-checkpoints", "refunds-prod-questions"]


def test_the_queues_topic_and_bus_are_named_with_the_prefix(named: Template) -> None:
    queues = sorted(q["Properties"]["QueueName"] for q in named.find_resources("AWS::SQS::Queue").values())
    assert queues == ["refunds-prod-entry-dlq.fifo", "refunds-prod-entry.fifo"]
    named.has_resource_properties("AWS::SNS::Topic", {"TopicName": "refunds-prod-announcements"})
    named.has_resource_properties("AWS::Events::EventBus", {"Name": "refunds-prod-announcements"})


def test_the_functions_and_their_log_groups_are_named_with_the_prefix(named: Template) -> None:
    functions = sorted(f["Properties"]["FunctionName"] for f in named.find_resources("AWS::Lambda::Function").values())
    assert functions == ["refunds-prod-router", "refunds-prod-sweep"]
    groups = sorted(g["Properties"]["LogGroupName"] for g in named.find_resources("AWS::Logs::LogGroup").values())
    assert groups == ["/aws/lambda/refunds-prod-router", "/aws/lambda/refunds-prod-sweep"]


def test_the_checkpoint_bucket_is_named_with_the_prefix_account_and_region(named: Template) -> None:
    named.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketName": {
                "Fn::Join": ["", ["refunds-prod-checkpoints-", {"Ref": "AWS::AccountId"}, "-", {"Ref": "AWS::Region"}]]
            }
        },
    )


def test_a_fifo_topic_gets_the_fifo_suffix() -> None:
    template = _template(resource_name_prefix="refunds", topic_fifo=True)
    template.has_resource_properties("AWS::SNS::Topic", {"TopicName": "refunds-announcements.fifo"})


def test_without_a_prefix_cloudformation_names_them() -> None:
    template = _template()
    for type_, name in (("AWS::DynamoDB::Table", "TableName"), ("AWS::Lambda::Function", "FunctionName")):
        for resource in template.find_resources(type_).values():
            assert name not in resource["Properties"]
    template.has_resource_properties("AWS::SQS::Queue", {"QueueName": Match.absent()})


@pytest.mark.parametrize("prefix", ["Refunds", "refunds_prod", "-refunds", "refunds-", "a" * 21, ""])
def test_a_prefix_that_cannot_name_every_resource_is_refused(prefix: str) -> None:
    message = (
        "resource_name_prefix must be 1 to 20 lowercase letters, digits and hyphens, starting with a letter and "
        "not ending with a hyphen (it names S3 buckets and Lambda functions too, whose names are short and "
        f"lowercase), such as 'refunds-prod'; got {prefix!r}"
    )
    with pytest.raises(AgentWaitPropsError, match=re.escape(message)):
        _template(resource_name_prefix=prefix)
