"""Where a question's Slack messages are: which channel and `ts` each post got, so later steps update them.

Every post has a key of its own (`message:<channel>` for a question's message in a channel, `reminder:2@<channel>`,
`escalated:1@<channel>` for thread replies). A post is claimed before it is sent and its `ts` recorded after: a claim
with no `ts` is a post that may or may not have reached Slack (the process died in between), which the announcer
looks for by the metadata it sends with every post before it posts again. So a redelivered event never posts twice.

The record is the one every channel keeps (`agent_wait.channels.records`); these are its names for Slack: each post
is the map attribute `post:<key>` of the question's item, marked with its `ts` and `channel`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from agent_wait.channels.contract import ChannelRecord, RecordKind
from agent_wait.channels.records import KEEP_FOR, DynamoDbChannelRecord, InMemoryChannelRecord
from agent_wait.common.times import parse_rfc3339

__all__ = ("KEEP_FOR", "POSTS", "DynamoDbSlackMessages", "InMemorySlackMessages", "Post", "PostRecord", "SlackMessages")


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


POSTS = RecordKind(entry=Post, prefix="post:", marks=("ts", "channel"))
"""A Slack post in the channel record: the attribute `post:<key>`, marked with its `ts` and `channel`."""


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


class PostRecord:
    """`SlackMessages` on a channel record (`InMemorySlackMessages`, `DynamoDbSlackMessages`)."""

    def __init__(self, record: ChannelRecord[Post]) -> None:
        self.record = record

    def claim(self, question_id: str, post: Post) -> Post | None:
        return self.record.claim(question_id, post)

    def sent(self, question_id: str, key: str, ts: str, channel: str) -> None:
        self.record.mark(question_id, key, ts=ts, channel=channel)

    def posts(self, question_id: str) -> dict[str, Post]:
        return self.record.read(question_id)


class InMemorySlackMessages(PostRecord):
    """`SlackMessages` in a dict (tests, the local preview)."""

    def __init__(self) -> None:
        super().__init__(InMemoryChannelRecord(POSTS))


class DynamoDbSlackMessages(PostRecord):
    """`SlackMessages` in a DynamoDB table whose partition key is `question_id` (string), with `ttl` enabled.

    Args:
        table: the table's name (`AGENT_WAIT_SLACK_MESSAGES_TABLE`).
        client: a boto3 DynamoDB client.
        clock: returns now (UTC), for the `ttl`; the current time by default.
        keep_for: how long a question's posts are remembered after the last (`AGENT_WAIT_CHANNEL_RECORD_RETENTION`);
            None: for ever.
    """

    def __init__(
        self,
        table: str,
        *,
        client: Any,
        clock: Callable[[], datetime] | None = None,
        keep_for: timedelta | None = KEEP_FOR,
    ) -> None:
        options = {"clock": clock} if clock is not None else {}
        super().__init__(DynamoDbChannelRecord(POSTS, table, client=client, keep_for=keep_for, **options))
        self.table = table
