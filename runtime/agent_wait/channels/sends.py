"""Which messages a door has sent for a question (email, Teams): one `Send` per message key, in the channel record.

A door names each message it sends for a question with a key of its own, such as `created:ana@example.com`. The
message is claimed before it is sent and the service's id for it recorded after (`agent_wait.channels.records` says
why, and what the one at-least-once window is). These are the record's names for such messages: each is the map
attribute `send:<key>` of the question's item, marked with `message_id`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from agent_wait.channels.contract import ChannelRecord, RecordKind
from agent_wait.channels.records import KEEP_FOR, DynamoDbChannelRecord, InMemoryChannelRecord
from agent_wait.common.times import parse_rfc3339, utc_now

__all__ = ("KEEP_FOR", "SENDS", "DynamoDbSends", "InMemorySends", "Send", "SendRecord", "Sends", "sent_to")


@dataclass(frozen=True, slots=True)
class Send:
    """One message of a question's: to whom, when it was claimed, and the service's id for it once it took it."""

    key: str
    """The message's own key within its question, such as `created:ana@example.com` (each door names its own)."""
    address: str
    """Where it goes: the recipient's address, or the channel."""
    claimed_at: str
    """RFC 3339 time of the first claim; links in the message may count their lifetime from it."""
    message_id: str | None = None
    """The service's id for the message (SES's `MessageId`, a webhook's answer); None while it may not have been
    sent."""

    @property
    def claimed(self) -> datetime:
        return parse_rfc3339(self.claimed_at)


SENDS = RecordKind(entry=Send, prefix="send:", marks=("message_id",))
"""A send in the channel record: the attribute `send:<key>`, marked with the service's `message_id`."""


class Sends(Protocol):
    """The record of a question's messages through one door."""

    def claim(self, question_id: str, send: Send) -> Send | None:
        """Claim `send.key` for `question_id`: the claim already there (sent or not), or None if this one claimed it."""
        ...

    def sent(self, question_id: str, key: str, message_id: str) -> None:
        """Record the id the service gave the claimed message `key`."""
        ...

    def sends(self, question_id: str) -> dict[str, Send]:
        """Every message of `question_id`, by key."""
        ...


class SendRecord:
    """`Sends` on a channel record (`InMemorySends`, `DynamoDbSends`)."""

    def __init__(self, record: ChannelRecord[Send]) -> None:
        self.record = record

    def claim(self, question_id: str, send: Send) -> Send | None:
        return self.record.claim(question_id, send)

    def sent(self, question_id: str, key: str, message_id: str) -> None:
        self.record.mark(question_id, key, message_id=message_id)

    def sends(self, question_id: str) -> dict[str, Send]:
        return self.record.read(question_id)


class InMemorySends(SendRecord):
    """`Sends` in a dict (tests, the local preview)."""

    def __init__(self) -> None:
        super().__init__(InMemoryChannelRecord(SENDS))


class DynamoDbSends(SendRecord):
    """`Sends` in a DynamoDB table whose partition key is `question_id` (string), with `ttl` enabled.

    Args:
        table: the table's name (`AGENT_WAIT_EMAIL_SENDS_TABLE`, `AGENT_WAIT_TEAMS_SENDS_TABLE`).
        client: a boto3 DynamoDB client.
        clock: returns now (UTC), for the `ttl`.
        keep_for: how long a question's sends are kept after the last (`AGENT_WAIT_CHANNEL_RECORD_RETENTION`);
            None: kept for ever.
    """

    def __init__(
        self,
        table: str,
        *,
        client: Any,
        clock: Callable[[], datetime] = utc_now,
        keep_for: timedelta | None = KEEP_FOR,
    ) -> None:
        super().__init__(DynamoDbChannelRecord(SENDS, table, client=client, clock=clock, keep_for=keep_for))
        self.table = table


def sent_to(sends: Sends, question_id: str, *, keys: Callable[[str], bool]) -> list[str]:
    """Where the question's messages whose key `keys` accepts went, each address once, in the order of their keys;
    only messages the service took (a claim without its id may never have been sent)."""
    sent = sends.sends(question_id).values()
    return list(dict.fromkeys(send.address for send in sent if send.message_id and keys(send.key)))
