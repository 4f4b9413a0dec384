"""The DynamoDB claim records the doors keep (Slack's posts, the emails and Teams cards sent) on the emulator, each kept
the channel record retention after its last claim.

A second claim of a key must return the first: that is how a redelivered event learns a post or a message was
claimed (and, once its id is recorded, sent). The claims asked for `UPDATED_OLD`, which leaves out an attribute the
update did not change; moto does leave out the claim `if_not_exists` kept, so on the emulator every redelivery took
itself for the first and posted, emailed or carded again. They now ask for the whole item as it was (`ALL_OLD`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait.channels.email import DynamoDbEmailSends
from agent_wait.channels.sends import DynamoDbSends, Send
from agent_wait.channels.slack.records import DynamoDbSlackMessages, Post
from agent_wait.local.tables import question_keyed_table


@pytest.fixture
def table(aws_client: Any, unique: str) -> str:
    name = f"claims-{unique}"
    question_keyed_table(aws_client("dynamodb"), name)
    return name


@pytest.mark.parametrize("store", [DynamoDbSends, DynamoDbEmailSends], ids=["sends", "email"])
def test_a_second_claim_of_a_message_returns_the_first_then_its_id(store: Any, table: str, aws_client: Any) -> None:
    sends = store(table, client=aws_client("dynamodb"))
    first = Send("created:ana@example.com", "ana@example.com", "2026-12-04T10:00:00Z")
    assert sends.claim("q-1", first) is None
    again = Send("created:ana@example.com", "ana@example.com", "2026-12-04T10:05:00Z")
    assert sends.claim("q-1", again) == first  # claimed, not yet sent: the first claim's time kept
    sends.sent("q-1", first.key, "ses-1")
    assert sends.claim("q-1", again) == Send(first.key, first.address, first.claimed_at, "ses-1")
    assert sends.claim("q-2", again) is None  # another question's messages are its own


def test_a_second_claim_of_a_slack_post_returns_the_first_then_its_ts(table: str, aws_client: Any) -> None:
    posts = DynamoDbSlackMessages(table, client=aws_client("dynamodb"))
    first = Post("message:C1", "C1", "2026-12-04T10:00:00Z")
    assert posts.claim("q-1", first) is None
    assert posts.claim("q-1", Post("message:C1", "C1", "2026-12-04T10:05:00Z")) == first
    posts.sent("q-1", first.key, "1733306400.000100", "C1")
    assert posts.claim("q-1", first) == Post(first.key, "C1", first.claimed_at, "1733306400.000100")


@pytest.mark.parametrize(("keep_for", "kept_days"), [(None, None), (timedelta(days=7), 7)], ids=["never", "7 days"])
@pytest.mark.parametrize("store", [DynamoDbSends, DynamoDbSlackMessages], ids=["sends", "slack"])
def test_a_record_is_kept_the_channel_record_retention_after_its_last_claim(
    store: Any, keep_for: timedelta | None, kept_days: int | None, table: str, aws_client: Any
) -> None:
    # GIVEN a channel record told to keep its entries 7 days (`AGENT_WAIT_CHANNEL_RECORD_RETENTION=P7D`), or for ever
    now = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
    records = store(table, client=aws_client("dynamodb"), clock=lambda: now, keep_for=keep_for)
    entry = (
        Send("created:ana@example.com", "ana@example.com", "t") if store is DynamoDbSends else Post("m:C1", "C1", "t")
    )
    # WHEN it claims a send
    records.claim("q-1", entry)
    # THEN the item expires that long after the claim, or never
    item = aws_client("dynamodb").get_item(TableName=table, Key={"question_id": {"S": "q-1"}})["Item"]
    expected = None if kept_days is None else str(int((now + timedelta(days=kept_days)).timestamp()))
    assert item.get("ttl", {}).get("N") == expected
