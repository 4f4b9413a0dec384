"""Where the functions announce questions: `AnnounceTopic` (SNS) and `AnnounceBus` (EventBridge).

A FIFO SQS queue can subscribe only to a FIFO SNS topic. AWS refuses the subscription at deploy time
and CDK does not check, so `AnnounceTopic` refuses it at synth time: at once in `subscribe_queue`, and for
subscriptions made any other way (`topic.add_subscription(...)`) when the stack is synthesized.

A FIFO topic is created in message-group throughput scope: `SnsAnnounce` publishes each thread's envelopes
in the thread's own message group, so the quota applies per thread rather than to the whole topic.
"""

from __future__ import annotations

from typing import Any

import jsii
from aws_cdk import Stack, Token
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IValidation

from agent_wait_cdk import _grants
from agent_wait_cdk._validate import AgentWaitPropsError, PropChecks

__all__ = ("AnnounceBus", "AnnounceTopic", "FifoSubscriptionError", "announcers_chosen", "check_queue_subscription")

AWS_MANAGED_SNS_KEY = "alias/aws/sns"
DEFAULT_FIFO_THROUGHPUT_SCOPE = sns.FifoThroughputScope.MESSAGE_GROUP
"""A FIFO topic's scope unless one is chosen: `SnsAnnounce` groups by thread, so the quota applies per thread."""


class FifoSubscriptionError(AgentWaitPropsError):
    """Raised at synth time when a FIFO SQS queue would subscribe to a standard SNS topic."""


def _refusal(topic_path: str, queue_path: str) -> str:
    return (
        f"cannot subscribe the FIFO queue {queue_path} to the standard topic {topic_path}: SNS delivers to a "
        "FIFO queue only from a FIFO topic. Create the topic with fifo=True (AgentWait(topic_fifo=True)), "
        "or subscribe a standard queue"
    )


def announcers_chosen(
    *,
    topic: bool | None,
    bus: bool | None,
    existing_topic: sns.ITopic | None,
    existing_bus: events.IEventBus | None,
    topic_fifo: bool = False,
) -> tuple[bool, bool]:
    """`AgentWait`'s `(bus, topic)` switches, their defaults resolved: one announcer unless more are asked for.

    A bus only when chosen (`bus=True`, or one brought): a bus beside the topic is a second announcer that every
    envelope pays for. The topic unless a bus was chosen instead; asked for (`topic=True`), brought, or shaped
    (`topic_fifo=True`), it is there beside the bus too. A switch given explicitly is kept as given, so the prop
    checks still refuse `existing_bus` with `bus=False` and `existing_topic` with `topic=False`.
    """
    chosen_bus = bus if bus is not None else existing_bus is not None
    chosen_topic = topic if topic is not None else (existing_topic is not None or topic_fifo or not chosen_bus)
    return chosen_bus, chosen_topic


def check_queue_subscription(topic: sns.ITopic, queue: sqs.IQueue) -> None:
    """Raise `FifoSubscriptionError` if `queue` is FIFO and `topic` is not; a queue whose kind is unknown passes."""
    if queue.fifo and not topic.fifo:
        topic_path = topic.node.path
        raise FifoSubscriptionError(topic_path, [_refusal(topic_path, queue.node.path)])


class AnnounceTopic(Construct):
    """The SNS topic questions are announced on: standard by default, FIFO on request, KMS-encrypted.

    Example:
        topic = AnnounceTopic(self, "Announce", fifo=True)
        topic.subscribe_queue(approvals_queue)  # raises FifoSubscriptionError if the kinds do not fit

    Args:
        scope: the parent construct.
        id: the construct id.
        fifo: a FIFO topic. Default False: a standard topic fans out to email, HTTPS, Lambda and standard
            queues; choose FIFO only when a FIFO queue must receive the announcements. A FIFO topic has
            content-based deduplication off, because every envelope carries its own `dedupe_key`.
        fifo_throughput_scope: a FIFO topic's throughput quota and deduplication scope. Default None: on a FIFO
            topic, `FifoThroughputScope.MESSAGE_GROUP`. `SnsAnnounce` publishes each thread's envelopes in the
            thread's own message group, so in that scope the topic's throughput is bounded by the Region's quota
            rather than by the topic scope's 3,000 messages a second, and deduplication by `dedupe_key` still
            works (a question's envelopes are all in its thread's group). `FifoThroughputScope.TOPIC` keeps SNS's
            own default. Only with `fifo=True`.
        topic_name: a fixed name; a FIFO topic's must end in `.fifo`. Default None: generated.
        master_key: a customer managed KMS key. Default None: the AWS managed key `alias/aws/sns`, which
            encrypts at rest with no key policy to maintain.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        fifo: bool = False,
        fifo_throughput_scope: sns.FifoThroughputScope | None = None,
        topic_name: str | None = None,
        master_key: kms.IKey | None = None,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(checks, fifo=fifo, fifo_throughput_scope=fifo_throughput_scope)
        if topic_name is not None and not Token.is_unresolved(topic_name) and fifo != topic_name.endswith(".fifo"):
            checks.fail(
                "topic_name",
                f"must end in '.fifo' exactly when fifo=True; got fifo={fifo} and topic_name={topic_name!r}",
            )
        checks.raise_if_any()
        if fifo and fifo_throughput_scope is None:
            fifo_throughput_scope = DEFAULT_FIFO_THROUGHPUT_SCOPE
        self.topic = sns.Topic(
            self,
            "Resource",
            fifo=fifo or None,
            fifo_throughput_scope=fifo_throughput_scope,
            content_based_deduplication=False if fifo else None,
            topic_name=topic_name,
            master_key=master_key or kms.Alias.from_alias_name(self, "AwsManagedKey", AWS_MANAGED_SNS_KEY),
            enforce_ssl=True,
        )
        self.topic.node.add_validation(_FifoSubscriptionCheck(self.topic))  # pyright: ignore[reportArgumentType]

    @staticmethod
    def check_props(
        checks: PropChecks, *, fifo: bool, fifo_throughput_scope: sns.FifoThroughputScope | None = None
    ) -> None:
        """A throughput scope is a FIFO topic's setting: refuse it on a standard topic."""
        if fifo_throughput_scope is not None and not fifo:
            checks.fail(
                "fifo_throughput_scope",
                f"applies only to a FIFO topic; got {fifo_throughput_scope} with "
                f"{checks.name('fifo')}=False; pass {checks.name('fifo')}=True too, or drop it",
            )

    @property
    def topic_arn(self) -> str:
        return self.topic.topic_arn

    def subscribe_queue(self, queue: sqs.IQueue, *, raw_message_delivery: bool = True) -> None:
        """Subscribe `queue`, refusing a FIFO queue on a standard topic (`FifoSubscriptionError`).

        Args:
            queue: the subscriber.
            raw_message_delivery: deliver the envelope JSON as the message body. Default True: consumers
                read the envelope directly instead of unwrapping SNS's notification JSON.
        """
        check_queue_subscription(self.topic, queue)  # pyright: ignore[reportArgumentType]
        self.topic.add_subscription(subscriptions.SqsSubscription(queue, raw_message_delivery=raw_message_delivery))

    def grant_publish(self, grantee: iam.IGrantable) -> iam.Grant:
        """`sns:Publish` on the topic (and its customer managed key, if any)."""
        return _grants.grant_publish(grantee, self.topic)  # pyright: ignore[reportArgumentType]


@jsii.implements(IValidation)
class _FifoSubscriptionCheck:
    """At synth time: no FIFO queue in this stack subscribes to this standard topic, however it was added."""

    def __init__(self, topic: sns.ITopic) -> None:
        self._topic = topic

    def validate(self) -> list[str]:
        if self._topic.fifo:
            return []
        stack = Stack.of(self._topic)
        topic_ref = stack.resolve(self._topic.topic_arn)
        fifo_queues = {
            stack.get_logical_id(child): child.node.path
            for child in stack.node.find_all()
            if isinstance(child, sqs.CfnQueue) and stack.resolve(child.fifo_queue) is True
        }
        errors = []
        for child in stack.node.find_all():
            if not isinstance(child, sns.CfnSubscription) or child.protocol != "sqs":
                continue
            if stack.resolve(child.topic_arn) != topic_ref:
                continue
            queue_path = _fifo_endpoint(stack.resolve(child.endpoint), fifo_queues)
            if queue_path is not None:
                errors.append(_refusal(self._topic.node.path, queue_path))
        return errors


def _fifo_endpoint(endpoint: Any, fifo_queues: dict[str, str]) -> str | None:
    """The FIFO queue an SQS subscription endpoint points at, or None."""
    if isinstance(endpoint, str):
        return endpoint if endpoint.endswith(".fifo") else None
    if isinstance(endpoint, dict) and "Fn::GetAtt" in endpoint:
        return fifo_queues.get(endpoint["Fn::GetAtt"][0])
    return None


class AnnounceBus(Construct):
    """The EventBridge bus questions are announced on; rules on it route envelopes by `detail-type`.

    Encrypted at rest by EventBridge with an AWS owned key.

    Example:
        bus = AnnounceBus(self, "Bus")
        bus.grant_put_events(sweep_role)

    Args:
        scope: the parent construct.
        id: the construct id.
        event_bus_name: a fixed name. Default None: generated, so stacks never collide.
    """

    def __init__(self, scope: Construct, id: str, *, event_bus_name: str | None = None) -> None:
        super().__init__(scope, id)
        self.bus = events.EventBus(self, "Resource", event_bus_name=event_bus_name)

    @property
    def event_bus_name(self) -> str:
        return self.bus.event_bus_name

    def grant_put_events(self, grantee: iam.IGrantable) -> iam.Grant:
        """`events:PutEvents` on this bus only."""
        return self.bus.grant_put_events_to(grantee)
