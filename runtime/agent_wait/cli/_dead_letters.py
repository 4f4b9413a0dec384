"""`agent-wait dead-letters list|redrive`: read the entry queue's dead letters with their reasons, and move
the ones that can apply now back to the entry queue, in their thread's message group (a dead letter with no
thread, a body that did not parse, has a group of its own: `malformed-<sha256>`).

Listing leaves every message where it was: each one read is made visible again at once. A redrive sends
the body verbatim to the entry queue under its dead letter's group and deletes it from the dead-letter queue
only once the send succeeded, so nothing is lost if either call fails. `agent_failed`, `checkpoint_too_large`
and `arguments_changed` dead letters are never redriven: `agent-wait retry THREAD` applies a failed thread's start
or decision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from agent_wait.cli._target import CliError, Target

__all__ = ("NEVER_REDRIVEN", "DeadLetterMessage", "list_dead_letters", "redrive")

NEVER_REDRIVEN = frozenset({"agent_failed", "checkpoint_too_large", "arguments_changed"})
"""Reasons whose message a redrive would only fail again, or run twice: the retry command applies them."""
_READ_AT_ONCE = 10
_HIDDEN_SECONDS = 30
"""How long a message read here stays hidden before this command makes it visible again (or after a crash)."""


@dataclass(frozen=True)
class DeadLetterMessage:
    """One dead letter: why it was refused, and what is needed to put it back."""

    message_id: str
    reason: str
    detail: str
    thread_id: str | None
    group_id: str | None
    sent_at: str | None
    body: str
    receipt: str

    def as_row(self) -> dict[str, Any]:
        """What `list` prints (the body is left out: it may hold question content)."""
        return {
            "message_id": self.message_id,
            "reason": self.reason,
            "thread_id": self.thread_id,
            "sent_at": self.sent_at,
            "detail": self.detail,
        }


def _queue(target: Target) -> str:
    if not target.dead_letter_url:
        raise CliError(
            f"no dead-letter queue is known for {target.source}: use the running `agent-wait dev`, --outputs "
            "with the stack's DeadLetterQueueUrl, or set AGENT_WAIT_DLQ_URL"
        )
    return target.dead_letter_url


def _read_all(target: Target, client: Any) -> list[DeadLetterMessage]:
    """Every dead letter SQS hands out now (each hidden for a while; the caller makes them visible again)."""
    queue, found = _queue(target), []
    seen: set[str] = set()
    while True:
        try:
            messages = client.receive_message(
                QueueUrl=queue,
                MaxNumberOfMessages=_READ_AT_ONCE,
                VisibilityTimeout=_HIDDEN_SECONDS,
                MessageAttributeNames=["All"],
                AttributeNames=["All"],
            ).get("Messages", [])
        except Exception as exc:
            raise CliError(f"could not read {queue} ({type(exc).__name__}); is the stack running?") from None
        fresh = [m for m in messages if m["MessageId"] not in seen]
        if not fresh:
            return found
        for message in fresh:
            seen.add(message["MessageId"])
            attributes = message.get("MessageAttributes", {})
            system = message.get("Attributes", {})

            def text(name: str, attributes: dict[str, Any] = attributes) -> str | None:
                return (attributes.get(name) or {}).get("StringValue")

            found.append(
                DeadLetterMessage(
                    message_id=message["MessageId"],
                    # No attribute: SQS moved it on its own (a timeout or crash on the last receive).
                    reason=text("agent_wait_reason") or "(none: moved by SQS)",
                    detail=text("agent_wait_detail") or "",
                    thread_id=text("agent_wait_thread_id"),
                    group_id=system.get("MessageGroupId"),
                    sent_at=system.get("SentTimestamp"),
                    body=message["Body"],
                    receipt=message["ReceiptHandle"],
                )
            )


def _release(target: Target, client: Any, messages: list[DeadLetterMessage]) -> None:
    for message in messages:
        client.change_message_visibility(QueueUrl=_queue(target), ReceiptHandle=message.receipt, VisibilityTimeout=0)


def list_dead_letters(target: Target) -> list[DeadLetterMessage]:
    """The dead letters now on the queue, oldest first; they stay on the queue."""
    client = target.client("sqs")
    found = _read_all(target, client)
    _release(target, client, found)
    return sorted(found, key=lambda m: (m.sent_at or "", m.message_id))


def redrive(
    target: Target, *, reasons: Collection[str] = (), thread_id: str | None = None
) -> tuple[list[DeadLetterMessage], list[DeadLetterMessage]]:
    """Move dead letters back to the entry queue; returns (moved, kept).

    Args:
        target: the stack.
        reasons: only dead letters with one of these reasons (none: every reason but `NEVER_REDRIVEN`).
        thread_id: only this thread's dead letters.

    Raises:
        CliError: a reason in `reasons` is never redriven, or a queue cannot be reached.
    """
    refused = sorted(set(reasons) & NEVER_REDRIVEN)
    if refused:
        raise CliError(
            f"{', '.join(refused)} dead letters are never redriven: fix the agent, then run "
            "`agent-wait retry THREAD`, which applies the recorded start or decision once"
        )
    client = target.client("sqs")
    found = _read_all(target, client)
    moved: list[DeadLetterMessage] = []
    kept: list[DeadLetterMessage] = []
    for message in sorted(found, key=lambda m: (m.sent_at or "", m.message_id)):
        wanted = (
            message.reason not in NEVER_REDRIVEN
            and (not reasons or message.reason in reasons)
            and (thread_id is None or message.thread_id == thread_id)
            and message.group_id is not None
        )
        if not wanted:
            kept.append(message)
            continue
        try:
            client.send_message(
                QueueUrl=target.queue_url,
                MessageBody=message.body,
                MessageGroupId=message.group_id,
                # A redrive that is cut off and run again sends each message once (SQS's 5-minute window).
                MessageDeduplicationId=hashlib.sha256(f"redrive\0{message.message_id}".encode()).hexdigest(),
            )
        except Exception as exc:
            _release(target, client, [m for m in found if m not in moved])
            raise CliError(
                f"could not send dead letter {message.message_id} back to {target.queue_url} "
                f"({type(exc).__name__}); it is still on the dead-letter queue; {len(moved)} moved before it"
            ) from None
        client.delete_message(QueueUrl=_queue(target), ReceiptHandle=message.receipt)
        moved.append(message)
    _release(target, client, kept)
    return moved, kept
