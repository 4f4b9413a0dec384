"""Embedding AgentWait into an existing stack with its own table, topic and graph."""

from __future__ import annotations

import json
import re

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from tests.cdk.conftest import Synth, getatt, inline_code, new_app, ref
from tests.cdk.test_permissions import ROUTER_QUESTIONS, actions_on, index_arn, statements

from agent_wait_cdk import AgentWait, AgentWaitPropsError, EntryQueueProps


def test_embedded_stack_uses_the_existing_table_and_topic(embedded: Synth) -> None:
    tables = embedded.resources("AWS::DynamoDB::Table")
    assert sorted(k.rstrip("0123456789ABCDEF") for k in tables) == ["AgentWaitCheckpointTable", "Questions"]
    assert len(embedded.resources("AWS::SNS::Topic")) == 1
    (table_id,) = [k for k in tables if k.startswith("Questions")]
    (topic_id,) = embedded.resources("AWS::SNS::Topic")
    for fn in embedded.resources("AWS::Lambda::Function").values():
        env = fn["Properties"]["Environment"]["Variables"]
        assert env["AGENT_WAIT_TABLE"] == {"Ref": table_id}
        assert env["AGENT_WAIT_TOPIC_ARN"] == {"Ref": topic_id}
    router = actions_on(statements(embedded, "AgentWaitRouter"))
    assert router[getatt(table_id)] == ROUTER_QUESTIONS
    sweep = actions_on(statements(embedded, "AgentWaitSweep"))
    assert sweep[index_arn(table_id, "by_due_shard")] >= {"dynamodb:Query"}
    assert router[ref(topic_id)] == {"sns:Publish"}


def test_embedded_stack_keeps_the_generated_defaults_elsewhere(embedded: Synth) -> None:
    """The entry queue is still created; no bus, since the stack brought its topic (and asked for none)."""
    assert len(embedded.resources("AWS::Events::EventBus")) == 0
    assert len(embedded.resources("AWS::SQS::Queue")) == 2


def _stack() -> Stack:
    return Stack(new_app(), "S")


def test_existing_and_props_for_the_same_resource_are_refused_together() -> None:
    stack = _stack()
    topic = sns.Topic(stack, "Topic")
    bus = events.EventBus(stack, "Bus")
    queue = sqs.Queue(stack, "Queue", fifo=True)
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            existing_topic=topic,
            topic=False,
            topic_fifo=True,
            existing_bus=bus,
            bus=False,
            existing_entry_queue=queue,
            queue=EntryQueueProps(retention_period=Duration.days(1)),
        )
    assert info.value.problems == (
        "existing_topic cannot go with topic=False; pass existing_topic to announce on it, or neither",
        "topic_fifo shapes a topic AgentWait creates; with existing_topic, the topic's own kind is used",
        "existing_bus cannot go with bus=False; pass existing_bus to announce on it, or neither",
        "existing_entry_queue and existing_dead_letter_queue go together: the router dead-letters malformed "
        "messages itself, so it needs the queue the entry queue's redrive policy sends to",
        "queue.retention_period shapes an entry queue AgentWait creates; it cannot go with existing_entry_queue",
    )


def test_an_existing_entry_queue_must_be_fifo() -> None:
    stack = _stack()
    with pytest.raises(AgentWaitPropsError, match=re.escape("existing_entry_queue must be a FIFO queue")):
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            existing_entry_queue=sqs.Queue(stack, "Q"),
            existing_dead_letter_queue=sqs.Queue(stack, "D", fifo=True),
        )


def test_an_imported_fifo_queue_is_accepted() -> None:
    stack = _stack()
    arn = "arn:aws:sqs:us-east-1:123456789012:entry.fifo"
    AgentWait(
        stack,
        "AgentWait",
        graph="m:g",
        code=inline_code(),
        existing_entry_queue=sqs.Queue.from_queue_arn(stack, "Q", arn),
        existing_dead_letter_queue=sqs.Queue.from_queue_arn(stack, "D", arn.replace("entry", "dlq")),
    )


def test_an_existing_table_of_the_wrong_shape_is_refused() -> None:
    stack = _stack()
    table = dynamodb.Table(stack, "T", partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING))
    with pytest.raises(AgentWaitPropsError, match=re.escape("keys ('pk', 'sk'); its keys are ('id', None)")):
        AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), existing_question_table=table)


def test_an_existing_table_without_the_status_index_is_refused() -> None:
    stack = _stack()
    string = dynamodb.AttributeType.STRING
    table = dynamodb.Table(
        stack,
        "T",
        partition_key=dynamodb.Attribute(name="pk", type=string),
        sort_key=dynamodb.Attribute(name="sk", type=string),
    )
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), existing_question_table=table)
    assert info.value.problems == (
        "existing_question_table must have the shape of agent_wait.contract.schema.QUESTION_TABLE: it has no index "
        "'by_status' on ('status_shard', 'expires_at')",
        "existing_question_table must have the shape of agent_wait.contract.schema.QUESTION_TABLE: it has no index "
        "'by_due_shard' on ('due', 'due_at')",
        "existing_question_table must have the shape of agent_wait.contract.schema.QUESTION_TABLE: it has no index "
        "'open_by_age_shard' on ('open_since', 'asked_at')",
        "existing_question_table must have the shape of agent_wait.contract.schema.QUESTION_TABLE: it has no index "
        "'by_question' on ('question_id', 'pk')",
    )


def test_an_imported_table_is_trusted() -> None:
    stack = _stack()
    table = dynamodb.Table.from_table_name(stack, "T", "their-questions")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), existing_question_table=table)
    assert agent.question_table is table


def test_subscribe_queue_without_a_topic_says_what_to_do() -> None:
    stack = _stack()
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), topic=False)
    with pytest.raises(ValueError, match=re.escape("there is no topic to subscribe to; pass topic=True")):
        agent.subscribe_queue(sqs.Queue(stack, "Q"))


def test_graph_missing_from_graph_source_warns(tmp_path: object) -> None:
    from pathlib import Path

    source = Path(str(tmp_path)) / "svc"
    source.mkdir()
    stack = _stack()
    construct = AgentWait(stack, "AgentWait", graph="svc.agent:graph", graph_source=[source])
    # Read from the construct's own metadata, not `Annotations.find_warning`: its results are cloud-assembly
    # `MetadataEntry` structs, which jsii cannot resolve when the separately installed aws-cdk.cloud-assembly-schema
    # package's module replaced aws-cdk-lib's copy of `aws_cdk.cloud_assembly_schema` (uv installs both).
    warnings = [
        entry.data
        for entry in construct.node.metadata
        if entry.type == "aws:cdk:warning" and "graph module 'svc.agent' is not in graph_source" in str(entry.data)
    ]
    assert len(warnings) == 1


def test_an_existing_bus_is_announced_on_and_granted() -> None:
    from aws_cdk.assertions import Template

    stack = _stack()
    bus = events.EventBus.from_event_bus_name(stack, "Default", "default")
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), existing_bus=bus)
    template = Template.from_stack(stack).to_json()
    assert not [r for r in template["Resources"].values() if r["Type"] == "AWS::Events::EventBus"]
    functions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    assert {fn["Properties"]["Environment"]["Variables"]["AGENT_WAIT_BUS_NAME"] for fn in functions} == {"default"}
    policies = [r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"]
    put_events = [
        stmt["Resource"]
        for policy in policies
        for stmt in policy["Properties"]["PolicyDocument"]["Statement"]
        if stmt["Action"] == "events:PutEvents"
    ]
    assert len(put_events) == 2  # the router and the sweep
    assert all(":event-bus/default" in json.dumps(resource) for resource in put_events)


def test_an_existing_table_whose_by_question_index_has_other_keys_is_refused() -> None:
    # GIVEN a brought table with every index but by_question keyed on (question_id, sk) instead of (question_id, pk)
    stack = _stack()
    string = dynamodb.AttributeType.STRING
    table = dynamodb.Table(
        stack,
        "T",
        partition_key=dynamodb.Attribute(name="pk", type=string),
        sort_key=dynamodb.Attribute(name="sk", type=string),
    )
    for name, partition, sort in (
        ("by_status", "status_shard", "expires_at"),
        ("by_due_shard", "due", "due_at"),
        ("open_by_age_shard", "open_since", "asked_at"),
        ("by_question", "question_id", "sk"),
    ):
        table.add_global_secondary_index(
            index_name=name,
            partition_key=dynamodb.Attribute(name=partition, type=string),
            sort_key=dynamodb.Attribute(name=sort, type=string),
        )
    # WHEN AgentWait is given it THEN the one wrong index is named, with the keys it should have
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), existing_question_table=table)
    assert info.value.problems == (
        "existing_question_table must have the shape of agent_wait.contract.schema.QUESTION_TABLE: index 'by_question' "
        "is on ('question_id', 'sk'), not ('question_id', 'pk')",
    )
