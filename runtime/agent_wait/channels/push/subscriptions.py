"""The inbox's push subscriptions: one per person and device, with the groups their token named.

A signed-in person who taps "Notify me on this device" sends the browser's `PushSubscription` (its endpoint at the
push service and its two keys) to `POST /push/subscriptions`. It is kept under their person key
(`agent_wait.people.keys.person_key`, the one the answer API records) and the device's id (a digest of the endpoint,
which the push service makes unique per browser profile), so the same device subscribing again replaces its own
subscription, and one person may have several devices. Their proven subject (`iss#sub`) and groups are kept beside
it, as the token said when they subscribed, so a push reaches the people a policy names by group or by principal
(the page subscribes again at every sign-in, so the groups follow the token). A subscription is removed by its
owner (`DELETE /push/subscriptions/{device}`) or when the push service says it is gone (404 or 410).

`DynamoDbPushSubscriptions` keeps them in a table with partition key `person` and sort key `device` (strings);
finding who to push reads the table whole (a paged `Scan`): subscriptions number the people who approve times their
devices, a few per person, so one page of 1 MB holds thousands. `InMemoryPushSubscriptions` is the same in a dict.

Example:
    >>> found = parse_subscription({"endpoint": "https://push.example.com/s/1", "keys": {
    ...     "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
    ...     "auth": "tBHItJI5svbpez7KI4CCXg"}})
    >>> found.endpoint, len(device_id(found.endpoint))
    ('https://push.example.com/s/1', 43)
"""

from __future__ import annotations

import hashlib
import ipaddress
import threading
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_wait.channels.push.keys import b64url, b64url_bytes
from agent_wait.errors import ArgumentError, AwsDeliveryError

__all__ = (
    "MAX_ENDPOINT_CHARS",
    "BrowserKeys",
    "DynamoDbPushSubscriptions",
    "InMemoryPushSubscriptions",
    "PushSubscriptions",
    "Subscription",
    "device_id",
    "parse_subscription",
)

MAX_ENDPOINT_CHARS = 1024
"""The longest endpoint accepted (push services hand out a few hundred characters)."""


@dataclass(frozen=True, slots=True)
class BrowserKeys:
    """What the browser sent: where its push service takes messages, and the keys to encrypt them for it."""

    endpoint: str
    """The push service's URL for this subscription (RFC 8030 §5)."""
    p256dh: str
    """The browser's P-256 public key (RFC 8291), base64url."""
    auth: str
    """The 16-byte authentication secret (RFC 8291), base64url."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """One person's subscription on one device. `repr` leaves out the endpoint and keys (they are a capability)."""

    person: str
    """Their person key (`person_key`): a verified address, else `iss#sub`."""
    endpoint: str
    p256dh: str
    auth: str
    subject: str | None = None
    """Their proven subject (`iss#sub`), matched against a policy's principals too."""
    groups: tuple[str, ...] = field(default=())
    """The groups their token named when they subscribed."""
    created_at: str = ""
    """RFC 3339 time of the (last) subscription."""

    @property
    def device(self) -> str:
        """The device's id: a digest of the endpoint (the route that removes it takes it)."""
        return device_id(self.endpoint)

    def info(self) -> dict[str, Any]:
        """The `subscription_info` `pywebpush` takes."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}

    def __repr__(self) -> str:
        return f"Subscription(person={self.person!r}, device={self.device!r}, groups={self.groups!r})"


def device_id(endpoint: str) -> str:
    """The id of the device behind `endpoint`: SHA-256 of it, base64url (43 characters)."""
    return b64url(hashlib.sha256(endpoint.encode("utf-8")).digest())


def parse_subscription(body: Any, *, allow_loopback: bool = False) -> BrowserKeys:
    """The browser's `PushSubscription.toJSON()` (`{"endpoint", "keys": {"p256dh", "auth"}}`), checked.

    The router will POST to the endpoint, so only a push service's address is taken: `https://` to a host name, never
    an IP address or `localhost` (nothing inside the network can be reached through a subscription).

    Args:
        body: the request's JSON.
        allow_loopback: also take `http://127.0.0.1:<port>/...` (`agent-wait dev`'s local push service).

    Raises:
        ArgumentError: what is wrong, and what the page should send instead.
    """
    if not isinstance(body, Mapping):
        raise ArgumentError(
            'send the browser\'s PushSubscription as JSON: {"endpoint": "https://...", "keys": {"p256dh", "auth"}}',
            argument="subscription",
        )
    endpoint, keys = body.get("endpoint"), body.get("keys")
    if not isinstance(endpoint, str) or not _push_service_url(endpoint, allow_loopback=allow_loopback):
        raise ArgumentError(
            "endpoint must be the push service's https:// URL from PushSubscription (a host name, not an IP address "
            f"or localhost; at most {MAX_ENDPOINT_CHARS} characters)",
            argument="endpoint",
        )
    if not isinstance(keys, Mapping):
        raise ArgumentError('keys must be {"p256dh", "auth"}, as PushSubscription.toJSON() gives', argument="keys")
    p256dh, auth = _key(keys.get("p256dh"), 65, "p256dh"), _key(keys.get("auth"), 16, "auth")
    return BrowserKeys(endpoint, p256dh, auth)


def _key(value: Any, size: int, name: str) -> str:
    try:
        good = isinstance(value, str) and len(b64url_bytes(value)) == size
    except ValueError:
        good = False
    if not good or (name == "p256dh" and b64url_bytes(value)[0] != 4):
        raise ArgumentError(
            f"keys.{name} must be the browser's {size}-byte {'P-256 public key' if size == 65 else 'secret'} in "
            "base64url, as PushSubscription.toJSON() gives",
            argument=f"keys.{name}",
        )
    return str(value).rstrip("=")


def _push_service_url(url: str, *, allow_loopback: bool) -> bool:
    if len(url) > MAX_ENDPOINT_CHARS:
        return False
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        _ = parts.port  # a malformed port raises
    except ValueError:
        return False
    if allow_loopback and parts.scheme == "http" and host == "127.0.0.1":
        return True
    if parts.scheme != "https" or not host or host == "localhost" or host.endswith(".localhost") or parts.username:
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return "." in host
    return False


class PushSubscriptions(Protocol):
    """Where the subscriptions are kept."""

    def put(self, subscription: Subscription) -> None:
        """Keep `subscription`, replacing the same person's on the same device."""
        ...

    def remove(self, person: str, device: str) -> bool:
        """Remove `person`'s subscription on `device`; whether there was one."""
        ...

    def of(self, person: str) -> list[Subscription]:
        """Every subscription of `person`."""
        ...

    def every(self) -> Iterator[Subscription]:
        """Every subscription."""
        ...


class InMemoryPushSubscriptions:
    """`PushSubscriptions` in a dict (tests); thread-safe."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], Subscription] = {}
        self._lock = threading.Lock()

    def put(self, subscription: Subscription) -> None:
        with self._lock:
            self._items[(subscription.person, subscription.device)] = subscription

    def remove(self, person: str, device: str) -> bool:
        with self._lock:
            return self._items.pop((person, device), None) is not None

    def of(self, person: str) -> list[Subscription]:
        with self._lock:
            return [s for (p, _), s in self._items.items() if p == person]

    def every(self) -> Iterator[Subscription]:
        with self._lock:
            found = list(self._items.values())
        yield from found


class DynamoDbPushSubscriptions:
    """`PushSubscriptions` in a DynamoDB table: partition key `person`, sort key `device` (strings).

    Args:
        table: the table's name (`AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE`).
        client: a boto3 DynamoDB client.
    """

    def __init__(self, table: str, *, client: Any) -> None:
        self.table = table
        self.client = client

    def put(self, subscription: Subscription) -> None:
        item: dict[str, Any] = {
            "person": {"S": subscription.person},
            "device": {"S": subscription.device},
            "endpoint": {"S": subscription.endpoint},
            "p256dh": {"S": subscription.p256dh},
            "auth": {"S": subscription.auth},
            "groups": {"L": [{"S": group} for group in subscription.groups]},
            "created_at": {"S": subscription.created_at},
        }
        if subscription.subject:
            item["subject"] = {"S": subscription.subject}
        self._call("put_item", Item=item)

    def remove(self, person: str, device: str) -> bool:
        response = self._call("delete_item", Key=self._key(person, device), ReturnValues="ALL_OLD")
        return bool(response.get("Attributes"))

    def of(self, person: str) -> list[Subscription]:
        response = self._call(
            "query",
            KeyConditionExpression="person = :p",
            ExpressionAttributeValues={":p": {"S": person}},
            ConsistentRead=True,
        )
        return [_subscription(item) for item in response.get("Items", [])]

    def every(self) -> Iterator[Subscription]:
        request: dict[str, Any] = {}
        while True:
            response = self._call("scan", **request)
            yield from (_subscription(item) for item in response.get("Items", []))
            if not response.get("LastEvaluatedKey"):
                return
            request = {"ExclusiveStartKey": response["LastEvaluatedKey"]}

    @staticmethod
    def _key(person: str, device: str) -> dict[str, Any]:
        return {"person": {"S": person}, "device": {"S": device}}

    def _call(self, method: str, **request: Any) -> dict[str, Any]:
        """One DynamoDB call; an AWS failure leaves as `AwsDeliveryError` (the call, the table, AWS's code)."""
        try:
            return getattr(self.client, method)(TableName=self.table, **request)
        except Exception as exc:
            from agent_wait.aws.errors import AWS_ERRORS, error_code

            if not isinstance(exc, AWS_ERRORS):
                raise
            code = error_code(exc)
            raise AwsDeliveryError(
                f"DynamoDB {method} on the push subscriptions table {self.table!r} failed with {code}", code=code
            ) from exc


def _subscription(item: Mapping[str, Any]) -> Subscription:
    groups: Sequence[Any] = item.get("groups", {}).get("L", [])
    return Subscription(
        person=item["person"]["S"],
        endpoint=item["endpoint"]["S"],
        p256dh=item["p256dh"]["S"],
        auth=item["auth"]["S"],
        subject=item.get("subject", {}).get("S"),
        groups=tuple(g["S"] for g in groups if "S" in g),
        created_at=item.get("created_at", {}).get("S", ""),
    )
