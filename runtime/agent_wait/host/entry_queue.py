"""Sending messages into the entry FIFO queue (the sweep sends deadline answers through it)."""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Protocol

from agent_wait._json import dumps

__all__ = ("EntryQueue", "InMemoryEntryQueue", "SqsEntryQueue")


class EntryQueue(Protocol):
    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        """Enqueue `message` in FIFO group `group_id`. Raise when it could not be sent."""
        ...


class InMemoryEntryQueue:
    """Keeps sent messages in `.messages` as `(message, group_id, deduplication_id)`."""

    def __init__(self) -> None:
        self.messages: list[tuple[dict[str, Any], str, str]] = []
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        with self._lock:
            self.messages.append((message, group_id, deduplication_id))


class SqsEntryQueue:
    """The entry queue on SQS FIFO: grouped by thread, deduplicated on a hash of the caller's key."""

    def __init__(self, queue_url: str, *, client: Any = None, region_name: str | None = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("sqs", region_name=region_name)
        self.queue_url = queue_url
        self._client = client

    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        self._client.send_message(
            QueueUrl=self.queue_url,
            MessageBody=dumps(message),
            MessageGroupId=group_id,
            # Deduplication ids allow 128 characters; a hash keeps any key within that.
            MessageDeduplicationId=hashlib.sha256(deduplication_id.encode("utf-8")).hexdigest(),
        )
