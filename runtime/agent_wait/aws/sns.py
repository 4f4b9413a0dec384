"""`SnsAnnounce`: publish each envelope to an SNS topic, with attributes a subscription can filter on."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from agent_wait.aws._clients import fifo_id, make_client, translate_errors, wire_json
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import ArgumentError

__all__ = ("MAX_MESSAGE_ATTRIBUTES", "SnsAnnounce")

logger = logging.getLogger("agent_wait.channels.announce.aws")

MAX_MESSAGE_ATTRIBUTES = 10
"""SNS refuses a publish with more message attributes than this."""

BUILT_IN_ATTRIBUTES: tuple[str, ...] = ("transition", "thread_id")
"""Attributes every message carries; a policy tag of the same name is dropped rather than allowed to replace one."""

_ATTRIBUTE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,256}")


def _name_problem(name: str) -> str | None:
    """Why SNS would refuse `name` as a message attribute name, or None when it is fine."""
    if not _ATTRIBUTE_NAME.fullmatch(name):
        return "SNS attribute names are 1-256 of letters, digits, '_', '-' and '.'"
    if name.lower().startswith(("aws.", "amazon.")):
        return "SNS reserves names starting with 'AWS.' and 'Amazon.'"
    if name.startswith(".") or name.endswith("."):
        return "SNS attribute names cannot start or end with '.'"
    if ".." in name:
        return "SNS attribute names cannot hold '..'"
    return None


def message_attributes(envelope: WaitEnvelope, transition: Transition) -> tuple[dict[str, Any], list[str]]:
    """The `MessageAttributes` for one publish, and why any policy tag was left out.

    `transition` and `thread_id` come first; then each policy tag whose value is not empty, whose name
    SNS accepts and that fits under `MAX_MESSAGE_ATTRIBUTES`, in the policy's order. An empty value is
    left out silently: it cannot be filtered on and SNS refuses it. Every other tag left out gets an
    explanation, so the caller can log one line instead of letting SNS refuse the whole publish.

    Returns:
        The attributes, and one explanation per dropped tag (tag names only, never values).
    """
    attributes: dict[str, Any] = {
        "transition": {"DataType": "String", "StringValue": transition.value},
        "thread_id": {"DataType": "String", "StringValue": envelope.thread_id},
    }
    dropped: list[str] = []
    for name, value in envelope.tags.items():
        if value == "":
            continue
        if name in BUILT_IN_ATTRIBUTES:
            dropped.append(f"{name!r} (would replace the built-in {name} attribute)")
        elif problem := _name_problem(name):
            dropped.append(f"{name[:64]!r} ({problem})")
        elif len(attributes) >= MAX_MESSAGE_ATTRIBUTES:
            dropped.append(f"{name!r} (SNS allows {MAX_MESSAGE_ATTRIBUTES} message attributes per message)")
        else:
            attributes[name] = {"DataType": "String", "StringValue": value}
    return attributes, dropped


class SnsAnnounce(BaseAnnounce):
    """Publish each envelope to an SNS topic so subscription filter policies can route it.

    Subject is the envelope type (`wait.created`, ...), the message is the envelope JSON, and the
    message attributes are `transition` (`created`, `answered`, ...), `thread_id` and the policy's tags,
    so a subscription with `{"approver_group": ["finance"]}` receives only finance's questions. A tag
    SNS would refuse is left out with one logged explanation; the publish still happens.

    On a FIFO topic (ARN ending `.fifo`) the message group is the thread id and the deduplication id is
    `envelope.dedupe_key`, so a republish inside SNS's five-minute window is delivered once. Only FIFO
    SQS queues can subscribe to a FIFO topic. One group per thread keeps a thread's envelopes in order,
    and spreads the topic over as many groups as there are threads: in message-group throughput scope
    (how `AgentWait` creates a FIFO topic) SNS applies its quota per group and deduplicates within one, and
    every envelope of a question is in its thread's group.

    Example:
        >>> import boto3
        >>> sns = SnsAnnounce("arn:aws:sns:us-east-1:123456789012:questions", client=boto3.client("sns", "us-east-1"))
        >>> sns.fifo
        False

    Args:
        topic_arn: the topic to publish to.
        client: a boto3 SNS client; one is built (short timeouts, few retries) when None.
        region_name: the region of the client built here; cannot be combined with `client`.
        delivers: the transitions to publish; all by default.
    """

    name = "sns"

    def __init__(
        self,
        topic_arn: str,
        *,
        client: Any = None,
        region_name: str | None = None,
        delivers: Iterable[Transition | str] | None = None,
    ) -> None:
        super().__init__(delivers=delivers)
        if not isinstance(topic_arn, str) or not topic_arn.startswith("arn:"):
            raise ArgumentError(
                f"SnsAnnounce topic_arn must be a topic ARN such as 'arn:aws:sns:us-east-1:123456789012:questions'; "
                f"got {topic_arn!r}"
            )
        self.topic_arn = topic_arn
        self.fifo = topic_arn.endswith(".fifo")
        """True for a FIFO topic: publishes carry a message group and deduplication id."""
        self.client = make_client("sns", client=client, region_name=region_name, owner="SnsAnnounce")

    def build_publish(self, envelope: WaitEnvelope, transition: Transition) -> tuple[dict[str, Any], list[str]]:
        """The keyword arguments `deliver` passes to `Publish`, and the explanations for any dropped tag."""
        attributes, dropped = message_attributes(envelope, transition)
        params: dict[str, Any] = {
            "TopicArn": self.topic_arn,
            "Subject": envelope.type,
            "Message": wire_json(envelope),
            "MessageAttributes": attributes,
        }
        if self.fifo:
            params["MessageGroupId"] = fifo_id(envelope.thread_id)
            params["MessageDeduplicationId"] = fifo_id(envelope.dedupe_key)
        return params, dropped

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        params, dropped = self.build_publish(envelope, transition)
        if dropped:
            logger.warning(
                "sns: left %d policy tag(s) out of the message attributes of %s: %s; thread_id=%s question_id=%s",
                len(dropped),
                envelope.type,
                "; ".join(dropped),
                envelope.thread_id,
                envelope.question_id,
            )
        with translate_errors(f"SNS Publish to {self.topic_arn}"):
            self.client.publish(**params)
