"""The one per-question channel record on the emulator (`agent_wait.channels.records`), under each channel's names.

Slack's posts and the emails and Teams cards sent are one record: an item per question keyed by `question_id`, a map
attribute per entry (`post:<key>`, `send:<key>`), `ttl` 90 days after the last claim. The items every deployed table
already holds keep this shape, so rows written before read back as they did. A DynamoDB failure leaves the record as
`AwsDeliveryError`, naming the call, the table and AWS's code (never AWS's text), as every AWS boundary does; a
client's own bug passes through as it is.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait.channels.email import EmailAnnounce, InMemoryEmailSends
from agent_wait.channels.sends import DynamoDbSends, Send
from agent_wait.channels.slack import DynamoDbSlackMessages, Post
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.errors import AwsDeliveryError
from agent_wait.local.tables import question_keyed_table
from agent_wait.people.recipients import RecipientRouting
from agent_wait.policy.wait_policy import WaitPolicy

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
TTL = {"N": str(int((NOW + timedelta(days=90)).timestamp()))}


@pytest.fixture
def dynamodb(aws_client: Any) -> Any:
    return aws_client("dynamodb")


def _item(dynamodb: Any, table: str, question_id: str) -> dict[str, Any]:
    return dynamodb.get_item(TableName=table, Key={"question_id": {"S": question_id}})["Item"]


def test_a_slack_post_is_stored_as_it_always_was(dynamodb: Any, unique: str) -> None:
    # GIVEN Slack's record on a table keyed by question_id
    table = question_keyed_table(dynamodb, f"posts-{unique}")
    posts = DynamoDbSlackMessages(table, client=dynamodb, clock=lambda: NOW)
    # WHEN a thread reply is claimed, then marked with what Slack gave back
    posts.claim("q-1", Post("reminder:1@C1", "C1", "2026-12-04T10:00:00Z", thread_ts="1733306400.000100"))
    posts.sent("q-1", "reminder:1@C1", "1733306500.000200", "C1")
    # THEN the item is the question's, with one map per post, as every deployed table holds them
    assert _item(dynamodb, table, "q-1") == {
        "question_id": {"S": "q-1"},
        "ttl": TTL,
        "post:reminder:1@C1": {
            "M": {
                "key": {"S": "reminder:1@C1"},
                "channel": {"S": "C1"},
                "claimed_at": {"S": "2026-12-04T10:00:00Z"},
                "thread_ts": {"S": "1733306400.000100"},
                "ts": {"S": "1733306500.000200"},
            }
        },
    }


def test_a_send_is_stored_as_it_always_was(dynamodb: Any, unique: str) -> None:
    table = question_keyed_table(dynamodb, f"sends-{unique}")
    sends = DynamoDbSends(table, client=dynamodb, clock=lambda: NOW)
    sends.claim("q-1", Send("created:ana@example.com", "ana@example.com", "2026-12-04T10:00:00Z"))
    sends.sent("q-1", "created:ana@example.com", "ses-1")
    assert _item(dynamodb, table, "q-1") == {
        "question_id": {"S": "q-1"},
        "ttl": TTL,
        "send:created:ana@example.com": {
            "M": {
                "key": {"S": "created:ana@example.com"},
                "address": {"S": "ana@example.com"},
                "claimed_at": {"S": "2026-12-04T10:00:00Z"},
                "message_id": {"S": "ses-1"},
            }
        },
    }


def test_rows_written_before_read_back_and_hold_their_claims(dynamodb: Any, unique: str) -> None:
    # GIVEN a row an earlier release wrote: a sent post, and an email claimed but never marked
    table = question_keyed_table(dynamodb, f"old-{unique}")
    post = {"key": {"S": "message:C1"}, "channel": {"S": "C1"}, "claimed_at": {"S": "2026-12-01T09:00:00Z"}}
    send = {"key": {"S": "created:ben@example.com"}, "address": {"S": "ben@example.com"}}
    dynamodb.put_item(
        TableName=table,
        Item={
            "question_id": {"S": "q-old"},
            "ttl": {"N": "1800000000"},
            "post:message:C1": {"M": {**post, "ts": {"S": "1733040000.000100"}}},
            "send:created:ben@example.com": {"M": {**send, "claimed_at": {"S": "2026-12-01T09:00:01Z"}}},
        },
    )
    # WHEN each channel reads it back, and claims again what it holds
    posts = DynamoDbSlackMessages(table, client=dynamodb)
    sends = DynamoDbSends(table, client=dynamodb)
    sent_post = Post("message:C1", "C1", "2026-12-01T09:00:00Z", ts="1733040000.000100")
    claimed_send = Send("created:ben@example.com", "ben@example.com", "2026-12-01T09:00:01Z")
    # THEN it reads as it was written, each channel sees only its own entries, and a claim returns the one held
    assert posts.posts("q-old") == {"message:C1": sent_post}
    assert sends.sends("q-old") == {"created:ben@example.com": claimed_send}
    assert posts.claim("q-old", Post("message:C1", "C1", "2026-12-04T10:00:00Z")) == sent_post
    assert sends.claim("q-old", Send(claimed_send.key, "ben@example.com", "2026-12-04T10:00:00Z")) == claimed_send


CALLS = {
    "update_item": lambda sends: sends.claim("q-1", Send("created:a@example.com", "a@example.com", "2026-12-04")),
    "get_item": lambda sends: sends.sends("q-1"),
}


@pytest.mark.parametrize("method", list(CALLS))
def test_a_dynamodb_failure_leaves_the_record_as_an_aws_delivery_error(dynamodb: Any, unique: str, method: str) -> None:
    # GIVEN a record whose table does not exist (deleted, or a name that was never deployed)
    table = f"missing-{unique}"
    sends = DynamoDbSends(table, client=dynamodb)
    # WHEN it is claimed in (update_item) or read (get_item)
    with pytest.raises(AwsDeliveryError) as failed:
        CALLS[method](sends)
    # THEN the error names the call, the table, AWS's code and the question, and nothing AWS wrote about it
    assert failed.value.code == "ResourceNotFoundException"
    assert failed.value.message == (
        f"DynamoDB {method} on the channel record table {table!r} failed with ResourceNotFoundException (question q-1)"
    )


def test_a_broken_client_passes_through_as_it_is() -> None:
    class Broken:
        def update_item(self, **request: Any) -> Any:
            raise RuntimeError("a bug in the injected client")

    with pytest.raises(RuntimeError, match="a bug in the injected client"):
        DynamoDbSlackMessages("posts", client=Broken()).claim("q-1", Post("message:C1", "C1", "2026-12-04T10:00:00Z"))


def test_a_channel_whose_record_fails_reports_the_code_and_sends_nothing(dynamodb: Any, unique: str) -> None:
    # GIVEN the email channel over a sends table that is gone
    sent: list[Any] = []

    class Ses:
        def send_email(self, **request: Any) -> dict[str, str]:
            sent.append(request)
            return {"MessageId": "ses-1"}

    announcer = EmailAnnounce(
        Ses(),
        RecipientRouting(tags={"*": ["ana@example.com"]}),
        InMemoryEmailSends(),
        sender="agent-wait@example.com",
    )
    announcer.sends = DynamoDbSends(f"gone-{unique}", client=dynamodb)
    envelope = WaitEnvelope.create(Question("t-1", "q-1", {"function": "f"}, policy=WaitPolicy(timeout="P1D")))
    # WHEN a question is announced
    delivery = announcer.announce(envelope)
    # THEN the delivery failed, saying which call and code, and no email went out unclaimed
    assert not delivery.ok
    assert (delivery.error or "").startswith("AwsDeliveryError: DynamoDB update_item on the channel record table")
    assert sent == []
