"""Throughput props: the router event source's maximum concurrency and the FIFO topic's throughput scope.

See docs/scaling.md: past a few hundred lifecycles a second these are what a user sets.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template
from tests.cdk.conftest import Synth, inline_code, lone_router_function, new_app, synth

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnnounceTopic, RouterProps

ROUTER = "agent_wait.host.router.handler"


def _agent_wait(stack: Stack, **props: Any) -> AgentWait:
    return AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), **props)


@pytest.fixture(scope="module")
def capped() -> Synth:
    """A FIFO topic at its default scope and a router whose event source runs at most 50 invocations at once."""
    app = new_app()
    stack = Stack(app, "Capped")
    _agent_wait(stack, topic_fifo=True, router=RouterProps(max_concurrency=50))
    return synth(app, stack)  # cdk-nag runs as a validation plugin: a finding fails here


def event_source(result: Synth) -> dict:
    (_, mapping) = result.one("AWS::Lambda::EventSourceMapping")
    return mapping["Properties"]


def test_router_max_concurrency_sets_the_event_sources_scaling_config(capped: Synth) -> None:
    router_id, _ = capped.one("AWS::Lambda::Function", Handler=ROUTER)
    props = event_source(capped)
    assert props["FunctionName"] == {"Ref": router_id}
    assert props["ScalingConfig"] == {"MaximumConcurrency": 50}
    assert props["BatchSize"] == 10  # the other event source settings are unchanged
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_without_router_max_concurrency_the_event_source_has_no_scaling_config(refund: Synth) -> None:
    assert "ScalingConfig" not in event_source(refund)


def test_a_fifo_topic_is_in_message_group_scope_by_default(capped: Synth, features: Synth) -> None:
    for result in (capped, features):
        _, topic = result.one("AWS::SNS::Topic", FifoTopic=True)
        assert topic["Properties"]["FifoThroughputScope"] == "MessageGroup"


def test_a_standard_topic_has_no_throughput_scope(refund: Synth) -> None:
    _, topic = refund.one("AWS::SNS::Topic")
    assert "FifoThroughputScope" not in topic["Properties"]


def test_topic_scope_on_request() -> None:
    # GIVEN an AgentWait asking for the topic scope (SNS's own default)
    stack = Stack(new_app(), "S")
    _agent_wait(
        stack,
        topic_fifo=True,
        topic_fifo_throughput_scope=sns.FifoThroughputScope.TOPIC,
    )
    # THEN the topic says so
    Template.from_stack(stack).has_resource_properties(
        "AWS::SNS::Topic", {"FifoTopic": True, "FifoThroughputScope": "Topic"}
    )


def test_announce_topic_alone_defaults_a_fifo_topic_to_message_group_scope() -> None:
    stack = Stack(new_app(), "S")
    AnnounceTopic(stack, "Fifo", fifo=True)
    AnnounceTopic(stack, "Standard")
    template = Template.from_stack(stack).to_json()
    scopes = {k: v["Properties"].get("FifoThroughputScope") for k, v in template["Resources"].items()
              if v["Type"] == "AWS::SNS::Topic"}  # fmt: skip
    assert sorted(scopes.values(), key=str) == ["MessageGroup", None]


@pytest.mark.parametrize("value", [0, 1, 1001, 5000])
def test_router_max_concurrency_outside_2_to_1000_is_refused(value: int) -> None:
    stack = Stack(new_app(), "S")
    message = f"router.max_concurrency must be between 2 and 1000 concurrent invocations; got {value} concurrent"
    with pytest.raises(AgentWaitPropsError, match=re.escape(message)) as info:
        _agent_wait(stack, router=RouterProps(max_concurrency=value))
    assert len(info.value.problems) == 1


@pytest.mark.parametrize("value", [2, 1000])
def test_router_max_concurrency_bounds_are_accepted(value: int) -> None:
    stack = Stack(new_app(), "S")
    _agent_wait(stack, router=RouterProps(max_concurrency=value))
    assert Template.from_stack(stack).find_resources(
        "AWS::Lambda::EventSourceMapping", {"Properties": {"ScalingConfig": {"MaximumConcurrency": value}}}
    )


def test_router_max_concurrency_above_the_reservation_is_refused() -> None:
    stack = Stack(new_app(), "S")
    message = (
        "router.max_concurrency must be at most router.reserved_concurrent_executions when both are set (the "
        "event source would start invocations Lambda throttles, and each throttled batch spends a receive of "
        "its records); got 50 and 10"
    )
    with pytest.raises(AgentWaitPropsError, match=re.escape(message)):
        _agent_wait(stack, router=RouterProps(max_concurrency=50, reserved_concurrent_executions=10))


@pytest.mark.parametrize(("maximum", "reserved"), [(10, 10), (5, 10), (50, 0)])
def test_router_max_concurrency_within_the_reservation_or_with_the_router_stopped_is_fine(
    maximum: int, reserved: int
) -> None:
    stack = Stack(new_app(), "S")
    _agent_wait(stack, router=RouterProps(max_concurrency=maximum, reserved_concurrent_executions=reserved))


def test_router_function_checks_max_concurrency_under_its_own_names() -> None:
    with pytest.raises(AgentWaitPropsError) as info:
        lone_router_function(max_concurrency=1)
    assert info.value.problems == (
        "max_concurrency must be between 2 and 1000 concurrent invocations; got 1 concurrent invocations",
    )


def test_a_throughput_scope_on_a_standard_topic_is_refused() -> None:
    stack = Stack(new_app(), "S")
    message = (
        "topic_fifo_throughput_scope applies only to a FIFO topic; got FifoThroughputScope.MESSAGE_GROUP with "
        "topic_fifo=False; pass topic_fifo=True too, or drop it"
    )
    with pytest.raises(AgentWaitPropsError, match=re.escape(message)):
        _agent_wait(
            stack,
            topic_fifo_throughput_scope=sns.FifoThroughputScope.MESSAGE_GROUP,
        )


def test_announce_topic_refuses_a_scope_on_a_standard_topic() -> None:
    stack = Stack(new_app(), "S")
    message = "fifo_throughput_scope applies only to a FIFO topic; got FifoThroughputScope.TOPIC with fifo=False"
    with pytest.raises(AgentWaitPropsError, match=re.escape(message)):
        AnnounceTopic(stack, "Topic", fifo_throughput_scope=sns.FifoThroughputScope.TOPIC)


def test_a_throughput_scope_with_an_existing_topic_or_no_topic_is_refused() -> None:
    stack = Stack(new_app(), "S")
    theirs = sns.Topic(stack, "Theirs", fifo=True)
    with pytest.raises(
        AgentWaitPropsError,
        match=re.escape(
            "topic_fifo_throughput_scope shapes a topic AgentWait creates; with existing_topic, set the scope on "
            "your own topic"
        ),
    ):
        _agent_wait(
            stack,
            existing_topic=theirs,  # type: ignore[arg-type]
            topic_fifo_throughput_scope=sns.FifoThroughputScope.MESSAGE_GROUP,
        )
    with pytest.raises(
        AgentWaitPropsError,
        match=re.escape("topic_fifo_throughput_scope cannot go with topic=False: there is no topic to shape"),
    ):
        AgentWait(
            stack,
            "AgentWait2",
            graph="m:g",
            code=inline_code(),
            topic=False,
            topic_fifo_throughput_scope=sns.FifoThroughputScope.TOPIC,
        )
