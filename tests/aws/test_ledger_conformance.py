"""Both ledgers pass the one conformance suite (agent_wait.testing.ledger_contract); the DynamoDB row's own shape."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from agent_wait.aws import DynamoDbLedger
from agent_wait.contract.schema import QUESTION_TABLE, QuestionStatus, shard_key
from agent_wait.errors import LedgerIndexMissingError
from agent_wait.ledger import Decision, InMemoryLedger, Notice, Progress
from agent_wait.ledger.records import PROGRESS_ATTRIBUTES
from agent_wait.testing import ledger_contract


@pytest.mark.parametrize("rule", ledger_contract.rules_for(InMemoryLedger), ids=lambda rule: rule.__name__)
def test_in_memory_ledger_conforms(rule: Any) -> None:
    shared = InMemoryLedger()
    rule(lambda: shared)


@pytest.mark.parametrize("rule", ledger_contract.rules_for(DynamoDbLedger), ids=lambda rule: rule.__name__)
def test_dynamodb_ledger_conforms(rule: Any, question_table: tuple[str, Any]) -> None:
    name, client = question_table
    rule(lambda: DynamoDbLedger(name, client=client))


# -- what the DynamoDB row holds, beyond the contract --------------------------------------------------------

T0 = ledger_contract.T0


def _raw(client: Any, table: str, envelope: Any) -> dict[str, Any]:
    key = {"pk": {"S": f"THREAD#{envelope.thread_id}"}, "sk": {"S": f"WAIT#{envelope.question_id}"}}
    return client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]


def test_a_new_row_is_lean_and_in_the_due_index_until_it_is_decided(question_table: tuple[str, Any]) -> None:
    # GIVEN a question opened on the DynamoDB ledger
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    envelope = ledger_contract.sample_envelope(reminders=("PT10M",))
    ledger.open(envelope, now=T0)

    # THEN the row carries the sparse keys (unannounced, open, and due already at its first reminder, where the
    # announcement leaves it; the index keys in the question's shard) and no progress attributes
    row = _raw(client, name, envelope)
    q = envelope.question_id
    assert (row["announce_due"], row["open_since"], row["due"], row["status_shard"]) == (
        {"S": "due"},
        {"S": shard_key("open", q, 8)},
        {"S": shard_key("due", q, 8)},
        {"S": shard_key("open", q, 8)},
    )
    assert (row["asked_at"], row["due_at"]) == ({"S": "2026-09-11T09:00:00Z"}, {"S": "2026-09-11T09:10:00Z"})
    assert not set(PROGRESS_ATTRIBUTES) & set(row)
    assert not {"outcome", "answer", "decided_at"} & set(row)

    # WHEN it is announced (due at its reminder), then decided
    ledger.mark_announced(envelope.thread_id, envelope.question_id, due_at="2026-09-11T09:10:00Z")
    announced = _raw(client, name, envelope)
    ledger.decide(envelope.thread_id, envelope.question_id, Decision(QuestionStatus.ANSWERED, None, "a-1"), now=T0)
    decided = _raw(client, name, envelope)

    # THEN announcing only took the marker off (the due key stays where it was put) and decided rows leave every
    # sparse index
    assert "announce_due" not in announced
    assert (announced["due"], announced["due_at"]) == (row["due"], row["due_at"])
    assert not {"announce_due", "open_since", "due", "due_at"} & set(decided)
    assert decided["status_shard"] == {"S": shard_key("answered", q, 8)}


def test_an_announcement_after_the_row_was_made_due_at_once_sets_its_due_time_again(
    question_table: tuple[str, Any],
) -> None:
    # GIVEN a question whose first announcement failed, so the row was made due at once (when asked)
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    envelope = ledger_contract.sample_envelope(reminders=("PT10M",))
    thread, question = envelope.thread_id, envelope.question_id
    opened = ledger.open(envelope, now=T0).record
    ledger.advance(thread, question, Progress(version=1), expected_version=0, due_at=opened.asked_at, now=T0)
    assert _raw(client, name, envelope)["due_at"] == {"S": "2026-09-11T09:00:00Z"}

    # WHEN the sweep's announcement succeeds
    ledger.mark_announced(thread, question, due_at="2026-09-11T09:10:00Z")

    # THEN the row is announced and due at its first reminder again
    row = _raw(client, name, envelope)
    assert "announce_due" not in row
    assert row["due_at"] == {"S": "2026-09-11T09:10:00Z"}


def test_resuming_moves_no_status_index_key_and_a_door_decision_waits_in_the_due_index(
    question_table: tuple[str, Any],
) -> None:
    # GIVEN a question answered through the queue and one answered through the API (to hand over)
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    queued, door = ledger_contract.sample_envelope(), ledger_contract.sample_envelope()
    for envelope in (queued, door):
        ledger.open(envelope, now=T0)
    ledger.decide(queued.thread_id, queued.question_id, Decision(QuestionStatus.ANSWERED, None, "a-q"), now=T0)
    at = "2026-09-11T09:00:00Z"
    handed = Decision(QuestionStatus.ANSWERED, None, "a-d", "ana", via="api", hand_over_at=at)
    ledger.decide(door.thread_id, door.question_id, handed, now=T0)
    decided = {e.question_id: _raw(client, name, e) for e in (queued, door)}

    # THEN the door's decision is in the due index (from when it was made), the queue's is not
    assert (decided[door.question_id]["due"], decided[door.question_id]["due_at"]) == (
        {"S": shard_key("due", door.question_id, 8)},
        {"S": at},
    )
    assert "due" not in decided[queued.question_id]

    # WHEN both are resumed
    for envelope in (queued, door):
        assert ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0)

    # THEN each keeps its status index key (under its outcome), and neither is due
    for envelope in (queued, door):
        row = _raw(client, name, envelope)
        assert row["status"] == {"S": "resumed"}
        assert row["status_shard"] == {"S": shard_key("answered", envelope.question_id, 8)}
        assert not {"due", "due_at"} & set(row)


def test_an_advance_that_removes_the_notice_and_the_due_time_removes_the_attributes(
    question_table: tuple[str, Any],
) -> None:
    # GIVEN a question with a claimed reminder's notice pending
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    envelope = ledger_contract.sample_envelope(reminders=("PT10M",))
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    claimed = Progress(reminders=1, notice=Notice.REMINDER, version=1)
    ledger.advance(thread, question, claimed, expected_version=0, due_at="2026-09-11T09:00:00Z", now=T0)
    assert _raw(client, name, envelope)["notice"] == {"S": "reminder"}

    # WHEN its announcement succeeded and nothing else is due
    ledger.advance(thread, question, Progress(reminders=1, version=2), expected_version=1, due_at=None, now=T0)

    # THEN the row holds no notice and is out of the due index (absent, never null: a sparse key must be absent)
    row = _raw(client, name, envelope)
    assert not {"notice", "due", "due_at"} & set(row)
    assert row["version"] == {"N": "2"}


def test_a_table_without_the_due_index_raises_index_missing(moto_server: str) -> None:
    # GIVEN a question table without by_due_shard, nor the by_due it replaced
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"questions-old-{uuid.uuid4().hex[:8]}"
    request = QUESTION_TABLE.create_table_request(name)
    request["GlobalSecondaryIndexes"] = [
        i for i in request["GlobalSecondaryIndexes"] if i["IndexName"] != "by_due_shard"
    ]
    keys = request["AttributeDefinitions"]
    request["AttributeDefinitions"] = [key for key in keys if key["AttributeName"] not in ("due", "due_at")]
    client.create_table(**request)

    # WHEN the sweep asks what is due / THEN the error names the index to deploy
    with pytest.raises(LedgerIndexMissingError) as raised:
        DynamoDbLedger(name, client=client).due(T0, limit=10)
    assert raised.value.index == "by_due_shard"


def test_a_note_is_not_taken_after_an_earlier_agent_wait_held_the_thread(question_table: tuple[str, Any]) -> None:
    """An agent-wait from before lease notes (a rollback) takes and lets go of the lease without removing the
    note, and may write checkpoints meanwhile: the note it leaves behind must not be trusted."""
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    assert ledger.acquire_lease(thread, "new-1", now=T0, seconds=60) is not None
    ledger.release_lease(thread, "new-1", note="latest: c-1")
    key = {"pk": {"S": f"THREAD#{thread}"}, "sk": {"S": "~THREAD"}}
    # The earlier version's lease write and release, as it made them.
    client.update_item(
        TableName=name,
        Key=key,
        UpdateExpression="SET lease_holder = :holder, lease_until = :until",
        ExpressionAttributeValues={":holder": {"S": "old"}, ":until": {"N": str(T0.timestamp() + 60)}},
    )
    client.update_item(TableName=name, Key=key, UpdateExpression="REMOVE lease_holder, lease_until")
    assert client.get_item(TableName=name, Key=key)["Item"]["lease_note"] == {"S": "latest: c-1"}
    taken = ledger.acquire_lease(thread, "new-2", now=T0, seconds=60)
    assert taken is not None
    assert taken.note is None, "a note from before another version's lease is stale"
    ledger.release_lease(thread, "new-2", note="latest: c-2")
    again = ledger.acquire_lease(thread, "new-3", now=T0, seconds=60)
    assert again is not None
    assert again.note == "latest: c-2"
