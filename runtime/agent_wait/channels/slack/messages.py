"""Where a question's Slack messages are: which channel and `ts` each post got, so later steps update them.

Every post has a key of its own (`message:<channel>` for a question's message in a channel, `reminder:2`,
`escalated:1` for thread replies). A post is claimed before it is sent and its `ts` recorded after: a claim with no
`ts` is a post that may or may not have reached Slack (the process died in between), which the announcer looks
for by the metadata it sends with every post before it posts again. So a redelivered event never posts twice.

`DynamoDbSlackMessages` keeps one item per question (`question_id`, the partition key) with one map attribute per
post; `InMemorySlackMessages` is the same in a dict, for tests.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from agent_wait.common.times import format_rfc3339, parse_rfc3339

__all__ = ("DynamoDbSlackMessages", "InMemorySlackMessages", "Post", "SlackMessages")

KEEP_FOR = timedelta(days=90)
"""How long a question's message pointers are kept after its last post (the item's `ttl`)."""


@dataclass(frozen=True, slots=True)
class Post:
    """One post of a question's: where it went, and its `ts` once Slack answered."""

    key: str
    channel: str
    claimed_at: str
    ts: str | None = None
    thread_ts: str | None = None

    @property
    def claimed(self) -> datetime:
        return parse_rfc3339(self.claimed_at)


class SlackMessages(Protocol):
    """The pointers to a question's Slack posts."""

    def claim(self, question_id: str, post: Post) -> Post | None:
        """Claim `post.key` for `question_id`: the post already there (claimed or sent), or None if this claimed it."""
        ...

    def sent(self, question_id: str, key: str, ts: str, channel: str) -> None:
        """Record the `ts` (and the channel: a direct message's is Slack's own) Slack gave the claimed post `key`."""
        ...

    def posts(self, question_id: str) -> dict[str, Post]:
        """Every post of `question_id`, by key."""
        ...


class InMemorySlackMessages:
    """`SlackMessages` in a dict (tests, the local preview)."""

    def __init__(self) -> None:
        self._posts: dict[str, dict[str, Post]] = {}
        self._lock = threading.Lock()

    def claim(self, question_id: str, post: Post) -> Post | None:
        with self._lock:
            posts = self._posts.setdefault(question_id, {})
            if post.key in posts:
                return posts[post.key]
            posts[post.key] = post
            return None

    def sent(self, question_id: str, key: str, ts: str, channel: str) -> None:
        with self._lock:
            post = self._posts[question_id][key]
            self._posts[question_id][key] = Post(post.key, channel, post.claimed_at, ts, post.thread_ts)

    def posts(self, question_id: str) -> dict[str, Post]:
        with self._lock:
            return dict(self._posts.get(question_id, {}))


def _attribute(key: str) -> str:
    return f"post:{key}"


class DynamoDbSlackMessages:
    """`SlackMessages` in a DynamoDB table whose partition key is `question_id` (string), with `ttl` enabled.

    Args:
        table: the table's name.
        client: a boto3 DynamoDB client.
        clock: returns now (UTC), for the `ttl`.
    """

    def __init__(self, table: str, *, client: Any, clock: Any = None) -> None:
        from agent_wait.common.times import utc_now

        self.table = table
        self.client = client
        self.clock = clock or utc_now

    def claim(self, question_id: str, post: Post) -> Post | None:
        value: dict[str, Any] = {
            "key": {"S": post.key},
            "channel": {"S": post.channel},
            "claimed_at": {"S": post.claimed_at},
        }
        if post.thread_ts:
            value["thread_ts"] = {"S": post.thread_ts}
        response = self.client.update_item(
            TableName=self.table,
            Key={"question_id": {"S": question_id}},
            UpdateExpression="SET #post = if_not_exists(#post, :post), #ttl = :ttl",
            ExpressionAttributeNames={"#post": _attribute(post.key), "#ttl": "ttl"},
            ExpressionAttributeValues={":post": {"M": value}, ":ttl": {"N": str(self._ttl())}},
            # The whole item as it was: UPDATED_OLD leaves out an attribute the update did not change, and on moto
            # an earlier claim kept by if_not_exists is such an attribute (DynamoDB returns it).
            ReturnValues="ALL_OLD",
        )
        old = (response.get("Attributes") or {}).get(_attribute(post.key))
        return _post(old["M"]) if old else None

    def sent(self, question_id: str, key: str, ts: str, channel: str) -> None:
        self.client.update_item(
            TableName=self.table,
            Key={"question_id": {"S": question_id}},
            UpdateExpression="SET #post.#ts = :ts, #post.#channel = :channel",
            ExpressionAttributeNames={"#post": _attribute(key), "#ts": "ts", "#channel": "channel"},
            ExpressionAttributeValues={":ts": {"S": ts}, ":channel": {"S": channel}},
        )

    def posts(self, question_id: str) -> dict[str, Post]:
        item = (
            self.client.get_item(
                TableName=self.table, Key={"question_id": {"S": question_id}}, ConsistentRead=True
            ).get("Item")
            or {}
        )
        found = (_post(value["M"]) for name, value in item.items() if name.startswith("post:") and "M" in value)
        return {post.key: post for post in found}

    def _ttl(self) -> int:
        return int((self.clock() + KEEP_FOR).timestamp())


def _post(value: Mapping[str, Any]) -> Post:
    def text(name: str) -> str | None:
        return value[name]["S"] if name in value else None

    return Post(str(text("key")), str(text("channel")), str(text("claimed_at")), text("ts"), text("thread_ts"))


def now_text(clock: Any) -> str:
    return format_rfc3339(clock())
