"""The announcement topic (standard by default, FIFO on request, KMS, SSL) and the EventBridge bus."""

from __future__ import annotations

import json
import re

import pytest
from aws_cdk import Stack
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Match
from tests.cdk.conftest import Synth, inline_code, new_app

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnnounceTopic, FifoSubscriptionError

REFUSAL = (
    "SNS delivers to a FIFO queue only from a FIFO topic. Create the topic with fifo=True "
    "(AgentWait(topic_fifo=True)), or subscribe a standard queue"
)


def test_topic_is_standard_and_uses_the_aws_managed_sns_key_by_default(refund: Synth) -> None:
    _, topic = refund.one("AWS::SNS::Topic")
    props = topic["Properties"]
    assert "FifoTopic" not in props
    assert props["KmsMasterKeyId"] == {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":kms:", {"Ref": "AWS::Region"}, ":",
                          {"Ref": "AWS::AccountId"}, ":alias/aws/sns"]]
    }  # fmt: skip


def test_topic_refuses_plain_http(refund: Synth) -> None:
    topic_id, _ = refund.one("AWS::SNS::Topic")
    refund.template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "Topics": [{"Ref": topic_id}],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})]
                )
            },
        },
    )


def test_fifo_topic_on_request_has_content_based_deduplication_off_and_the_customer_key(features: Synth) -> None:
    _, topic = features.one("AWS::SNS::Topic", FifoTopic=True)  # the other is the on-call topic
    props = topic["Properties"]
    assert props["FifoTopic"] is True
    assert props["ContentBasedDeduplication"] is False
    assert props["KmsMasterKeyId"] == {"Fn::GetAtt": ["Key961B73FD", "Arn"]}


def test_subscribe_queue_subscribes_a_fifo_queue_to_a_fifo_topic_raw(features: Synth) -> None:
    topic_id, _ = features.one("AWS::SNS::Topic", FifoTopic=True)
    features.template.has_resource_properties(
        "AWS::SNS::Subscription",
        {
            "Protocol": "sqs",
            "TopicArn": {"Ref": topic_id},
            "Endpoint": {"Fn::GetAtt": [Match.string_like_regexp("ApprovalsQueue"), "Arn"]},
            "RawMessageDelivery": True,
        },
    )


def test_subscribe_queue_refuses_a_fifo_queue_on_a_standard_topic_at_once() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code())
    fifo_queue = sqs.Queue(stack, "Approvals", fifo=True)
    with pytest.raises(FifoSubscriptionError, match=re.escape(REFUSAL)) as info:
        agent.subscribe_queue(fifo_queue)
    assert "cannot subscribe the FIFO queue S/Approvals to the standard topic S/AgentWait/Topic" in str(info.value)


def test_a_fifo_queue_added_to_a_standard_topic_any_other_way_fails_synthesis() -> None:
    """CDK itself does not check this; AWS would refuse it at deploy time."""
    app = new_app()
    stack = Stack(app, "S")
    topic = AnnounceTopic(stack, "Topic")
    fifo_queue = sqs.Queue(stack, "Approvals", fifo=True)
    topic.topic.add_subscription(subscriptions.SqsSubscription(fifo_queue))  # type: ignore[arg-type]
    with pytest.raises(Exception, match=re.escape(REFUSAL)):
        app.synth()


def test_a_fifo_queue_on_an_existing_standard_topic_fails_synthesis() -> None:
    from aws_cdk import aws_sns as sns

    app = new_app()
    stack = Stack(app, "S")
    topic = sns.Topic(stack, "Theirs")
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), existing_topic=topic)
    topic.add_subscription(subscriptions.SqsSubscription(sqs.Queue(stack, "Approvals", fifo=True)))  # type: ignore[arg-type]
    with pytest.raises(Exception, match=re.escape(REFUSAL)):
        app.synth()


def test_a_standard_queue_on_a_standard_topic_is_fine() -> None:
    app = new_app()
    stack = Stack(app, "S")
    topic = AnnounceTopic(stack, "Topic")
    topic.subscribe_queue(sqs.Queue(stack, "Inbox"))
    app.synth()


@pytest.mark.parametrize(("fifo", "name"), [(True, "announce"), (False, "announce.fifo")])
def test_topic_name_must_end_in_fifo_exactly_when_fifo(fifo: bool, name: str) -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError, match=re.escape("topic_name must end in '.fifo' exactly when fifo=True")):
        AnnounceTopic(stack, "Topic", fifo=fifo, topic_name=name)


def test_the_refund_stack_announces_on_its_topic_alone_with_no_bus_to_pay_for(refund: Synth) -> None:
    # GIVEN the refund stack as app.py builds it (AgentWait's announcer defaults)
    # THEN it has one announcer, the topic: no bus, no function told of one, no role allowed to put events
    refund.template.resource_count_is("AWS::Events::EventBus", 0)
    refund.template.resource_count_is("AWS::SNS::Topic", 1)
    for _, function in refund.resources("AWS::Lambda::Function").items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        assert "AGENT_WAIT_BUS_NAME" not in variables
    assert "events:PutEvents" not in json.dumps(refund.resources("AWS::IAM::Policy"))


def test_no_bus_and_no_topic_when_switched_off(quiet: Synth) -> None:
    quiet.template.resource_count_is("AWS::Events::EventBus", 0)
    quiet.template.resource_count_is("AWS::SNS::Topic", 0)


def _announcers(*, bring_topic: bool = False, bring_bus: bool = False, **props: object) -> tuple[int, int, set[str]]:
    """Buses and topics AgentWait creates with `props` (and a topic or bus of the app's own), and the variables its
    functions get."""
    from aws_cdk import aws_events as events
    from aws_cdk import aws_sns as sns
    from aws_cdk.assertions import Template

    stack = Stack(new_app(), "S")
    if bring_topic:
        props["existing_topic"] = sns.Topic(stack, "Theirs", enforce_ssl=True)
    if bring_bus:
        props["existing_bus"] = events.EventBus(stack, "TheirBus")
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), **props)  # type: ignore[arg-type]
    template = Template.from_stack(stack)
    functions = template.find_resources("AWS::Lambda::Function").values()
    names = {name for fn in functions for name in fn["Properties"]["Environment"]["Variables"]}
    buses = len(template.find_resources("AWS::Events::EventBus")) - bring_bus
    topics = len(template.find_resources("AWS::SNS::Topic")) - bring_topic
    return buses, topics, names


def test_a_bus_is_created_only_when_chosen_and_then_instead_of_the_topic() -> None:
    # GIVEN an app that chooses a bus and says nothing of a topic
    buses, topics, variables = _announcers(bus=True)
    # THEN AgentWait creates the bus alone, and its functions are told of the bus only
    assert (buses, topics) == (1, 0)
    assert "AGENT_WAIT_BUS_NAME" in variables
    assert "AGENT_WAIT_TOPIC_ARN" not in variables


def test_a_bus_and_a_topic_both_when_both_are_asked_for() -> None:
    buses, topics, variables = _announcers(bus=True, topic=True)
    assert (buses, topics) == (1, 1)
    assert {"AGENT_WAIT_BUS_NAME", "AGENT_WAIT_TOPIC_ARN"} <= variables


def test_a_fifo_topic_asked_for_beside_a_bus_is_created_too() -> None:
    # GIVEN a bus chosen and the topic shaped (FIFO): shaping a topic is asking for one
    buses, topics, _ = _announcers(bus=True, topic_fifo=True)
    assert (buses, topics) == (1, 1)


def test_a_brought_bus_alone_means_no_topic_and_no_bus_created() -> None:
    buses, topics, variables = _announcers(bring_bus=True)
    assert (buses, topics) == (0, 0)
    assert "AGENT_WAIT_BUS_NAME" in variables
    assert "AGENT_WAIT_TOPIC_ARN" not in variables


def test_a_brought_topic_means_no_bus_unless_asked() -> None:
    # GIVEN an app that brings its own topic and says nothing of a bus
    buses, topics, variables = _announcers(bring_topic=True)
    # THEN AgentWait creates no bus and no topic, and its functions announce on the app's topic
    assert (buses, topics) == (0, 0)
    assert "AGENT_WAIT_BUS_NAME" not in variables
    assert "AGENT_WAIT_TOPIC_ARN" in variables


def test_a_brought_topic_with_bus_true_also_gets_a_bus() -> None:
    buses, _, variables = _announcers(bring_topic=True, bus=True)
    assert buses == 1
    assert "AGENT_WAIT_BUS_NAME" in variables


def test_with_the_defaults_the_topic_is_the_one_announcer() -> None:
    buses, topics, variables = _announcers()
    assert (buses, topics) == (0, 1)
    assert "AGENT_WAIT_BUS_NAME" not in variables
