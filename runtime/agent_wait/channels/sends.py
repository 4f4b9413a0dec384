"""Which messages a door has sent for a question: one claim per message key, so a redelivered event sends once.

A door (email, Teams) names each message it sends for a question with a key of its own, such as
`created:ana@example.com`. The message is claimed before it is sent and the service's id for it recorded after. A
claim with an id was sent: a redelivery skips it. A claim without one may or may not have reached the service (the
process died, or the service failed, in between); when the service cannot be asked what it took, that one message
is sent again. That window is the only at-least-once part.

`DynamoDbSends` keeps one item per question (`question_id`, the partition key) with one map attribute per message;
`InMemorySends` is the same in a dict, for tests and the local previews.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from agent_wait.common.times import parse_rfc3339, utc_now

__all__ = ("KEEP_FOR", "DynamoDbSends", "InMemorySends", "Send", "Sends", "sent_to")

KEEP_FOR = timedelta(days=90)
"""How long a question's send records are kept after its last message (the item's `ttl`)."""


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


def sent_to(sends: Sends, question_id: str, *, keys: Callable[[str], bool]) -> list[str]:
    """Where the question's messages whose key `keys` accepts went, each address once, in the order of their keys;
    only messages the service took (a claim without its id may never have been sent)."""
    sent = sends.sends(question_id).values()
    return list(dict.fromkeys(send.address for send in sent if send.message_id and keys(send.key)))


class InMemorySends:
    """`Sends` in a dict (tests, the local preview)."""

    def __init__(self) -> None:
        self._sends: dict[str, dict[str, Send]] = {}
        self._lock = threading.Lock()

    def claim(self, question_id: str, send: Send) -> Send | None:
        with self._lock:
            sends = self._sends.setdefault(question_id, {})
            if send.key in sends:
                return sends[send.key]
            sends[send.key] = send
            return None

    def sent(self, question_id: str, key: str, message_id: str) -> None:
        with self._lock:
            self._sends[question_id][key] = replace(self._sends[question_id][key], message_id=message_id)

    def sends(self, question_id: str) -> dict[str, Send]:
        with self._lock:
            return dict(self._sends.get(question_id, {}))


def _attribute(key: str) -> str:
    return f"send:{key}"


class DynamoDbSends:
    """`Sends` in a DynamoDB table whose partition key is `question_id` (string), with `ttl` enabled.

    Args:
        table: the table's name (`AGENT_WAIT_EMAIL_SENDS_TABLE`, `AGENT_WAIT_TEAMS_SENDS_TABLE`).
        client: a boto3 DynamoDB client.
        clock: returns now (UTC), for the `ttl`.
    """

    def __init__(self, table: str, *, client: Any, clock: Callable[[], datetime] = utc_now) -> None:
        self.table = table
        self.client = client
        self.clock = clock

    def claim(self, question_id: str, send: Send) -> Send | None:
        value = {"key": {"S": send.key}, "address": {"S": send.address}, "claimed_at": {"S": send.claimed_at}}
        response = self.client.update_item(
            TableName=self.table,
            Key={"question_id": {"S": question_id}},
            UpdateExpression="SET #send = if_not_exists(#send, :send), #ttl = :ttl",
            ExpressionAttributeNames={"#send": _attribute(send.key), "#ttl": "ttl"},
            ExpressionAttributeValues={":send": {"M": value}, ":ttl": {"N": str(self._ttl())}},
            # The whole item as it was: UPDATED_OLD leaves out an attribute the update did not change, and on moto
            # an earlier claim kept by if_not_exists is such an attribute (DynamoDB returns it).
            ReturnValues="ALL_OLD",
        )
        old = (response.get("Attributes") or {}).get(_attribute(send.key))
        return _send(old["M"]) if old else None

    def sent(self, question_id: str, key: str, message_id: str) -> None:
        self.client.update_item(
            TableName=self.table,
            Key={"question_id": {"S": question_id}},
            UpdateExpression="SET #send.#id = :id",
            ExpressionAttributeNames={"#send": _attribute(key), "#id": "message_id"},
            ExpressionAttributeValues={":id": {"S": message_id}},
        )

    def sends(self, question_id: str) -> dict[str, Send]:
        response = self.client.get_item(
            TableName=self.table, Key={"question_id": {"S": question_id}}, ConsistentRead=True
        )
        item = response.get("Item") or {}
        found = (_send(value["M"]) for name, value in item.items() if name.startswith("send:") and "M" in value)
        return {send.key: send for send in found}

    def _ttl(self) -> int:
        return int((self.clock() + KEEP_FOR).timestamp())


def _send(value: Mapping[str, Any]) -> Send:
    def text(name: str) -> str | None:
        return value[name]["S"] if name in value else None

    return Send(str(text("key")), str(text("address")), str(text("claimed_at")), text("message_id"))
