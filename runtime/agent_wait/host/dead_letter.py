"""Where the router puts a message it can never process: the entry queue's dead-letter queue, with its reason."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ("DeadLetter", "DeadLetterRecord", "InMemoryDeadLetter", "SqsDeadLetter")

REASON_ATTRIBUTE = "agent_wait_reason"
DETAIL_ATTRIBUTE = "agent_wait_detail"


class DeadLetter(Protocol):
    def send(self, body: str, *, reason: str, detail: str, message_id: str | None) -> None:
        """Store `body` with why it was refused. Raise if it could not be stored (SQS then retries)."""
        ...


@dataclass(frozen=True, slots=True)
class DeadLetterRecord:
    body: str
    reason: str
    detail: str
    message_id: str | None


class InMemoryDeadLetter:
    """Keeps dead letters in `.records` (tests, local runs)."""

    def __init__(self) -> None:
        self.records: list[DeadLetterRecord] = []
        self._lock = threading.Lock()

    def send(self, body: str, *, reason: str, detail: str, message_id: str | None) -> None:
        with self._lock:
            self.records.append(DeadLetterRecord(body, reason, detail, message_id))


class SqsDeadLetter:
    """Send the original body to an SQS dead-letter queue, the reason in message attributes.

    On a FIFO queue the group is `malformed` and the deduplication id derives from the original message
    id, so a redelivered malformed message is dead-lettered once.
    """

    def __init__(self, queue_url: str, *, client: Any = None, region_name: str | None = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("sqs", region_name=region_name)
        self.queue_url = queue_url
        self._client = client
        self._fifo = queue_url.endswith(".fifo")

    def send(self, body: str, *, reason: str, detail: str, message_id: str | None) -> None:
        kwargs: dict[str, Any] = {
            "QueueUrl": self.queue_url,
            "MessageBody": body if body else "<empty>",
            "MessageAttributes": {
                REASON_ATTRIBUTE: {"DataType": "String", "StringValue": reason},
                DETAIL_ATTRIBUTE: {"DataType": "String", "StringValue": detail[:1000] or reason},
            },
        }
        if self._fifo:
            identity = message_id or hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()
            kwargs["MessageGroupId"] = "malformed"
            kwargs["MessageDeduplicationId"] = hashlib.sha256(identity.encode()).hexdigest()
        self._client.send_message(**kwargs)
