"""Where the router puts a message it can never process: the entry queue's dead-letter queue, with its reason."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from agent_wait.contract.messages import group_id_for

__all__ = (
    "DeadLetter",
    "DeadLetterRecord",
    "InMemoryDeadLetter",
    "SqsDeadLetter",
    "malformed_group_id",
    "message_identity",
)

REASON_ATTRIBUTE = "agent_wait_reason"
DETAIL_ATTRIBUTE = "agent_wait_detail"
THREAD_ATTRIBUTE = "agent_wait_thread_id"
MALFORMED_GROUP_PREFIX = "malformed-"
"""The start of the FIFO group of a dead letter whose thread is unknown (the body did not parse); the rest is
the SHA-256 of the message's id (else of its body), so each such message has a group of its own.

Not one shared group: on a high-throughput FIFO queue the throughput quota applies per message group, so one
group would cap every malformed message at one group's rate; and SQS hands out no more of a group's messages
while some are in flight, so `agent-wait dead-letters list` and `redrive` would see only the first ten."""


class DeadLetter(Protocol):
    def send(
        self, body: str, *, reason: str, detail: str, message_id: str | None, thread_id: str | None = None
    ) -> None:
        """Store `body` with why it was refused. Raise if it could not be stored (SQS then retries).

        Args:
            body: the message, verbatim, so it can be redriven.
            reason: a short slug (`agent_failed`, `bad_answer`, ...).
            detail: one sentence with ids only, never question content.
            message_id: the message's own id; a dead letter of the same message on the same thread for
                the same reason is stored once.
            thread_id: the message's thread, when it parsed.
        """
        ...


@dataclass(frozen=True, slots=True)
class DeadLetterRecord:
    body: str
    reason: str
    detail: str
    message_id: str | None
    thread_id: str | None = None


class InMemoryDeadLetter:
    """Keeps dead letters in `.records` (tests, local runs)."""

    def __init__(self) -> None:
        self.records: list[DeadLetterRecord] = []
        self._lock = threading.Lock()

    def send(
        self, body: str, *, reason: str, detail: str, message_id: str | None, thread_id: str | None = None
    ) -> None:
        with self._lock:
            self.records.append(DeadLetterRecord(body, reason, detail, message_id, thread_id))


class SqsDeadLetter:
    """Send the original body to an SQS dead-letter queue, the reason, detail and thread in message attributes.

    On a FIFO queue the group is the thread's own (`group_id_for`), so a redrive back to the entry queue
    keeps the thread's order and passes the router's group check; a body that did not parse has no thread
    and gets a group of its own (`malformed_group_id`). The deduplication id derives from the thread, the
    message id and the reason, so a redelivered message is dead-lettered once (its group is the same each
    time, as deduplication in a high-throughput queue holds within a group) and two threads' messages never
    collapse into one.
    """

    def __init__(self, queue_url: str, *, client: Any = None, region_name: str | None = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("sqs", region_name=region_name)
        self.queue_url = queue_url
        self._client = client
        self._fifo = queue_url.endswith(".fifo")

    def send(
        self, body: str, *, reason: str, detail: str, message_id: str | None, thread_id: str | None = None
    ) -> None:
        """Dead-letter `body` with its reason.

        Raises:
            QueueUnavailableError: SQS refused it or did not answer; the message is retried.
        """
        attributes = {
            REASON_ATTRIBUTE: {"DataType": "String", "StringValue": reason},
            DETAIL_ATTRIBUTE: {"DataType": "String", "StringValue": detail[:1000] or reason},
        }
        if thread_id is not None:
            attributes[THREAD_ATTRIBUTE] = {"DataType": "String", "StringValue": thread_id}
        kwargs: dict[str, Any] = {
            "QueueUrl": self.queue_url,
            # A body SQS cannot carry (a lone surrogate) is kept as its escaped form rather than lost.
            "MessageBody": body.encode("utf-8", "backslashreplace").decode("utf-8") if body else "<empty>",
            "MessageAttributes": attributes,
        }
        if self._fifo:
            identity = message_identity(body, message_id)
            key = "\0".join((thread_id or "", identity, reason))
            kwargs["MessageGroupId"] = (
                group_id_for(thread_id) if thread_id is not None else malformed_group_id(body, message_id)
            )
            kwargs["MessageDeduplicationId"] = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()
        from agent_wait.aws.errors import queue_errors  # this queue is SQS: AWS is installed

        with queue_errors(f"dead-letter queue {self.queue_url}: SendMessage"):
            self._client.send_message(**kwargs)


def malformed_group_id(body: str, message_id: str | None) -> str:
    """The FIFO group of a dead letter with no thread: `malformed-` and the SHA-256 of its message id, else of
    its body. The same message gets the same group on every redelivery; two messages get two groups."""
    return (
        MALFORMED_GROUP_PREFIX
        + hashlib.sha256(message_identity(body, message_id).encode("utf-8", "replace")).hexdigest()
    )


def message_identity(body: str, message_id: str | None) -> str:
    """What tells one dead-lettered message from another: its message id, else the SHA-256 of its body."""
    return message_id or hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()
