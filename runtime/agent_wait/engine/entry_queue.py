"""Sending messages into the entry FIFO queue (the sweep sends deadline answers through it).

On SQS every message carries the sender's trace context (`agent_wait.engine.tracing.sqs_send_attributes`:
`traceparent`, `tracestate` and the X-Ray `AWSTraceHeader`), so the router's delivery continues the trace.

`send` enqueues one message and raises when it could not. `send_batch` enqueues many in as few calls as
the queue allows and never raises for a message it could not send: it returns one `SendFailure` per such
message (with the error code, never the message), so one refused message cannot hold back the others.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_wait.common.canonical_json import dumps
from agent_wait.engine import tracing

__all__ = (
    "MAX_BATCH_BYTES",
    "MAX_BATCH_ENTRIES",
    "EntryMessage",
    "EntryQueue",
    "InMemoryEntryQueue",
    "SendFailure",
    "SqsEntryQueue",
    "batch_chunks",
    "sqs_deduplication_id",
)

MAX_BATCH_ENTRIES = 10
"""The most entries one SQS `SendMessageBatch` call takes."""
MAX_BATCH_BYTES = 256 * 1024
"""The most bytes of message bodies one `SendMessageBatch` call carries (SQS's 256 KiB payload limit)."""


@dataclass(frozen=True, slots=True)
class EntryMessage:
    """One message for the entry queue, with the FIFO ids SQS needs."""

    message: dict[str, Any]
    """The body, a start or an answer (sent as JSON)."""
    group_id: str
    """The FIFO message group: `agent_wait.contract.messages.group_id_for(thread_id)`, one group per thread."""
    deduplication_id: str
    """The caller's key for this message; a resend with the same key is dropped by the queue (hashed on SQS)."""


@dataclass(frozen=True, slots=True)
class SendFailure:
    """One message of a `send_batch` call that was not sent, and why (an error code, never the content)."""

    index: int
    """The message's position in the sequence given to `send_batch`."""
    entry: EntryMessage
    """The message that was not sent (log its ids, not its body)."""
    code: str
    """The queue's error code (`InvalidParameterValue`, `AWS.SimpleQueueService.NonExistentQueue`, ...), or the
    exception type when the call failed without one (`EndpointConnectionError`)."""
    sender_fault: bool = False
    """True when the queue says the message itself is at fault, so sending it again unchanged will fail again."""


class EntryQueue(Protocol):
    """Where starts and answers are enqueued, grouped by thread."""

    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        """Enqueue `message` in FIFO group `group_id`. Raise when it could not be sent."""
        ...

    def send_batch(self, messages: Sequence[EntryMessage]) -> list[SendFailure]:
        """Enqueue every message, in order; return one `SendFailure` per message not sent. Never raises for one."""
        ...


class InMemoryEntryQueue:
    """Keeps sent messages in `.messages` as `(message, group_id, deduplication_id)`.

    Args:
        refuse: called with each message `send_batch` is given; a returned error code makes that message
            fail with it (tests use this to stand in for a message the queue refuses). Default None: all sent.

    Example:
        queue = InMemoryEntryQueue(refuse=lambda entry: "InvalidParameterValue" if entry.group_id == "bad" else None)
    """

    def __init__(self, *, refuse: Callable[[EntryMessage], str | None] | None = None) -> None:
        self.messages: list[tuple[dict[str, Any], str, str]] = []
        self.refuse = refuse
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        with self._lock:
            self.messages.append((message, group_id, deduplication_id))

    def send_batch(self, messages: Sequence[EntryMessage]) -> list[SendFailure]:
        failures: list[SendFailure] = []
        with self._lock:
            for index, entry in enumerate(messages):
                code = self.refuse(entry) if self.refuse is not None else None
                if code:
                    failures.append(SendFailure(index, entry, code, sender_fault=True))
                    continue
                self.messages.append((entry.message, entry.group_id, entry.deduplication_id))
        return failures


class SqsEntryQueue:
    """The entry queue on SQS FIFO: grouped by thread, deduplicated on a hash of the caller's key.

    `send_batch` uses `SendMessageBatch`: at most `MAX_BATCH_ENTRIES` messages and `MAX_BATCH_BYTES` of
    bodies per call, so ten deadline answers cost one call instead of ten.

    Args:
        queue_url: the entry queue's URL.
        client: a boto3 SQS client; one is created for `region_name` when omitted.
        region_name: region for the client created here.
    """

    def __init__(self, queue_url: str, *, client: Any = None, region_name: str | None = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("sqs", region_name=region_name)
        self.queue_url = queue_url
        self._client = client

    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        """Send one message.

        Raises:
            QueueUnavailableError: SQS refused it or did not answer; the caller decides whether to try again.
        """
        from agent_wait.aws.errors import queue_errors  # this queue is SQS: AWS is installed

        with queue_errors(f"entry queue {self.queue_url}: SendMessage"):
            self._client.send_message(
                QueueUrl=self.queue_url,
                MessageBody=dumps(message),
                MessageGroupId=group_id,
                MessageDeduplicationId=sqs_deduplication_id(deduplication_id),
                **tracing.sqs_send_attributes(),  # the sender's trace, continued by the router's delivery
            )

    def send_batch(self, messages: Sequence[EntryMessage]) -> list[SendFailure]:
        from agent_wait.aws.errors import AWS_ERRORS, error_code  # this queue is SQS: AWS is installed

        failures: list[SendFailure] = []
        bodies = [dumps(entry.message) for entry in messages]
        traced = tracing.sqs_send_attributes()  # one sender, one context: the same on every entry
        overhead = sum(  # message attributes count toward SQS's payload limit (system attributes do not)
            len(f"{name}{value['DataType']}{value['StringValue']}".encode())
            for name, value in traced.get("MessageAttributes", {}).items()
        )
        for chunk in batch_chunks(bodies, overhead=overhead):
            entries = [
                {
                    "Id": str(index),  # unique within the call; maps a result back to its message
                    "MessageBody": bodies[index],
                    "MessageGroupId": messages[index].group_id,
                    "MessageDeduplicationId": sqs_deduplication_id(messages[index].deduplication_id),
                    **traced,
                }
                for index in chunk
            ]
            try:
                response = self._client.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except AWS_ERRORS as exc:  # refused, or no answer at all (connection, timeout): every message of the call
                failures.extend(SendFailure(index, messages[index], error_code(exc)) for index in chunk)
                continue
            for failed in response.get("Failed", []):
                index = int(failed["Id"])
                failures.append(
                    SendFailure(
                        index, messages[index], str(failed.get("Code") or "Unknown"), bool(failed.get("SenderFault"))
                    )
                )
        return sorted(failures, key=lambda failure: failure.index)


def sqs_deduplication_id(key: str) -> str:
    """The SQS deduplication id for a caller's key: its SHA-256 (SQS allows 128 characters; a hash fits any key)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def batch_chunks(bodies: Sequence[str], *, overhead: int = 0) -> Iterator[list[int]]:
    """Indexes of `bodies` in runs SQS takes in one call: at most 10 entries and 256 KiB of bodies, each counted
    with `overhead` bytes more (its message attributes).

    A body alone over the limit still gets a call of its own, so SQS reports it and the others go.
    """
    chunk: list[int] = []
    size = 0
    for index, body in enumerate(bodies):
        length = len(body.encode("utf-8")) + overhead
        if chunk and (len(chunk) == MAX_BATCH_ENTRIES or size + length > MAX_BATCH_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(index)
        size += length
    if chunk:
        yield chunk
