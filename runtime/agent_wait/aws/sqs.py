"""`SqsAnnounce`: send each envelope to an SQS queue; on a FIFO queue, a republish is one message."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agent_wait.aws._clients import fifo_id, make_client, translate_errors, wire_json
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import ArgumentError

__all__ = ("SqsAnnounce",)


class SqsAnnounce(BaseAnnounce):
    """Send each envelope to an SQS queue as the message body.

    Every message carries the attributes `transition` (`created`, `answered`, ...) and `thread_id`. On a
    FIFO queue (URL ending `.fifo`) the message group is the thread id, so one conversation's questions
    arrive in order, and the deduplication id is `envelope.dedupe_key`, so a republish inside SQS's
    five-minute window is swallowed by the queue. A standard queue gets neither.

    Example:
        >>> import boto3
        >>> url = "https://sqs.us-east-1.amazonaws.com/123456789012/questions.fifo"
        >>> sqs = SqsAnnounce(url, group_id=lambda env: env.tags.get("tenant", env.thread_id),
        ...                   client=boto3.client("sqs", "us-east-1"))
        >>> sqs.fifo
        True

    Args:
        queue_url: the queue to send to.
        group_id: FIFO only: maps an envelope to its message group; the thread id by default.
        client: a boto3 SQS client; one is built (short timeouts, few retries) when None.
        region_name: the region of the client built here; cannot be combined with `client`.
        delivers: the transitions to send; all by default.

    Raises:
        ArgumentError (a ValueError): `group_id` was given for a standard queue.
    """

    name = "sqs"

    def __init__(
        self,
        queue_url: str,
        *,
        group_id: Callable[[WaitEnvelope], str] | None = None,
        client: Any = None,
        region_name: str | None = None,
        delivers: Iterable[Transition | str] | None = None,
    ) -> None:
        super().__init__(delivers=delivers)
        if not isinstance(queue_url, str) or not queue_url.startswith(("https://", "http://")):
            raise ArgumentError(
                "SqsAnnounce queue_url must be a queue URL such as "
                f"'https://sqs.us-east-1.amazonaws.com/123456789012/questions'; got {queue_url!r}"
            )
        self.queue_url = queue_url
        self.fifo = queue_url.endswith(".fifo")
        """True for a FIFO queue: messages carry a group id and a deduplication id."""
        if group_id is not None and not self.fifo:
            raise ArgumentError(
                f"SqsAnnounce group_id applies only to FIFO queues (URL ending .fifo); {queue_url!r} is a standard "
                "queue: drop group_id, or send to a FIFO queue"
            )
        self.group_id = group_id
        self.client = make_client("sqs", client=client, region_name=region_name, owner="SqsAnnounce")

    def build_send(self, envelope: WaitEnvelope, transition: Transition) -> dict[str, Any]:
        """The keyword arguments `deliver` passes to `SendMessage`."""
        params: dict[str, Any] = {
            "QueueUrl": self.queue_url,
            "MessageBody": wire_json(envelope),
            "MessageAttributes": {
                "transition": {"DataType": "String", "StringValue": transition.value},
                "thread_id": {"DataType": "String", "StringValue": envelope.thread_id},
            },
        }
        if self.fifo:
            group = self.group_id(envelope) if self.group_id is not None else envelope.thread_id
            if not isinstance(group, str) or not group:
                raise ArgumentError(f"SqsAnnounce group_id must return a non-empty string; got {group!r}")
            params["MessageGroupId"] = fifo_id(group)
            params["MessageDeduplicationId"] = fifo_id(envelope.dedupe_key)
        return params

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        params = self.build_send(envelope, transition)
        with translate_errors(f"SQS SendMessage to {self.queue_url}"):
            self.client.send_message(**params)
