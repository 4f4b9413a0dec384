"""The question table's indexes on DynamoDB: sharded keys, lean projections, sparse open keys, and old rows.

Each shared index key value is `<value>#<shard>` (`agent_wait.contract.schema.shard_key`), so no single key value
takes every open question's writes; the ledger queries every shard and merges them in key order. Each test
uses a table of its own, so what an index holds is exactly what the test wrote.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from agent_wait.aws import DynamoDbLedger
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import (
    LEGACY_QUESTION_INDEXES,
    QUESTION_TABLE,
    QuestionStatus,
    index_shards_from_env,
    shard_key,
    shard_of,
)
from agent_wait.errors import ArgumentError, ConfigurationError
from agent_wait.ledger import Decision
from agent_wait.testing import ledger_contract

T0 = ledger_contract.T0
SHARDS = 4


@pytest.fixture
def table(moto_server: str) -> Iterator[tuple[str, Any]]:
    """A fresh question table of the current shape; yields (name, client)."""
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"questions-shards-{uuid.uuid4().hex[:8]}"
    client.create_table(**QUESTION_TABLE.create_table_request(name))
    yield name, client
    client.delete_table(TableName=name)


class Calls:
    """Counts the DynamoDB calls a client makes: (operation, index or table) and the items each query returned."""

    def __init__(self, client: Any) -> None:
        self.made: list[tuple[str, str, int]] = []
        client.meta.events.register("after-call.dynamodb.*", self._after)

    def _after(self, event_name: str, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        items = len(parsed.get("Items", [])) if model.name == "Query" else 0
        self.made.append((model.name, "", items))

    def queries(self) -> list[int]:
        return [items for operation, _, items in self.made if operation == "Query"]

    def count(self, operation: str) -> int:
        return sum(1 for made, _, _ in self.made if made == operation)


def _index_items(client: Any, table: str, index: str, key: str, value: str) -> list[dict[str, Any]]:
    return client.query(
        TableName=table,
        IndexName=index,
        KeyConditionExpression="#k = :v",
        ExpressionAttributeNames={"#k": key},
        ExpressionAttributeValues={":v": {"S": value}},
    )["Items"]


def _every_shard(client: Any, table: str, index: str, key: str, value: str) -> list[dict[str, Any]]:
    return [item for n in range(SHARDS) for item in _index_items(client, table, index, key, f"{value}#{n}")]


def test_shards_spread_question_ids_evenly_and_stably() -> None:
    # GIVEN 8,000 question ids
    ids = [uuid.uuid4().hex for _ in range(8000)]

    # WHEN each is given its shard of 8
    spread = Counter(shard_of(question_id, 8) for question_id in ids)

    # THEN every shard takes about an eighth, and the shard of an id is the same in every process (CRC-32)
    assert set(spread) == set(range(8))
    assert all(800 <= n <= 1200 for n in spread.values()), spread
    assert (shard_key("due", "q-2", 8), shard_key("due", "q-3", 8)) == ("due#2", "due#4")


def test_open_questions_are_spread_over_the_shards_and_the_indexes_hold_only_their_keys(
    table: tuple[str, Any],
) -> None:
    # GIVEN 24 questions opened on a ledger with 4 shards
    name, client = table
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    opened = [ledger.open(ledger_contract.sample_envelope(tags={"team": "finance"}), now=T0) for _ in range(24)]

    # WHEN each shard of each shared key is read straight from its index
    due = _every_shard(client, name, "by_due_shard", "due", "due")
    open_since = _every_shard(client, name, "open_by_age_shard", "open_since", "open")
    status = _every_shard(client, name, "by_status", "status_shard", "open")

    # THEN every question is in each index once, in its own shard, with more than one shard in use
    assert len(due) == len(open_since) == len(status) == 24
    for item in due:
        assert item["due"]["S"] == shard_key("due", item["sk"]["S"].removeprefix("WAIT#"), SHARDS)
    assert len({item["due"]["S"] for item in due}) > 1
    assert {r.record.question_id for r in opened} == {item["sk"]["S"].removeprefix("WAIT#") for item in status}
    # AND the open indexes project keys only, the status index keys and the tags its filter reads
    assert all(set(item) == {"pk", "sk", "due", "due_at"} for item in due)
    assert all(set(item) == {"pk", "sk", "open_since", "asked_at"} for item in open_since)
    assert all(set(item) == {"pk", "sk", "status_shard", "expires_at", "tags"} for item in status)


def test_the_sweep_reads_the_earliest_due_across_shards_within_its_limit_one_query_per_shard(
    table: tuple[str, Any],
) -> None:
    # GIVEN 12 announced questions due a minute apart (spread over 4 shards) and 5 due only tomorrow
    name, client = table
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    due_times = {}
    for n in range(17):
        envelope = ledger_contract.sample_envelope(timeout="P3D")
        ledger.open(envelope, now=T0)
        due_at = T0 + (timedelta(minutes=n) if n < 12 else timedelta(days=1))
        ledger.mark_announced(envelope.thread_id, envelope.question_id, due_at=format_rfc3339(due_at))
        due_times[envelope.question_id] = format_rfc3339(due_at)
    now = T0 + timedelta(hours=1)
    calls = Calls(client)

    # WHEN the sweep asks for at most 5 of what is due
    first = ledger.due(now, limit=5)

    # THEN it gets the 5 earliest due across every shard, soonest first
    earliest = sorted((t, q) for q, t in due_times.items() if t <= format_rfc3339(now))[:5]
    assert [(r.due_at, r.question_id) for r in first] == earliest
    # AND it queried each shard once (and the unsharded partition of rows from before the shards), read the
    # five rows in one consistent BatchGetItem, and never a row of what is not due
    assert len(calls.queries()) == SHARDS + 1
    assert calls.count("BatchGetItem") == 1

    # WHEN it asks with a limit above what is due
    calls.made.clear()
    every = ledger.due(now, limit=100)

    # THEN it reads exactly the 12 due index items, one query per shard, and returns them in order
    assert [r.question_id for r in every] == [q for _, q in sorted((t, q) for q, t in due_times.items())][:12]
    assert sum(calls.queries()) == 12
    assert len(calls.queries()) == SHARDS + 1


def test_a_decided_question_leaves_the_open_indexes_and_moves_to_its_status_shard(table: tuple[str, Any]) -> None:
    # GIVEN two open questions, one of which is then answered
    name, client = table
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    older = ledger_contract.sample_envelope(asked_at=T0 - timedelta(hours=1))
    newer = ledger_contract.sample_envelope()
    ledger.open(older, now=T0 - timedelta(hours=1))
    ledger.open(newer, now=T0)
    ledger.decide(older.thread_id, older.question_id, Decision(QuestionStatus.ANSWERED, {"action": "ok"}, "a"), now=T0)

    # WHEN the indexes are read
    in_due = {i["sk"]["S"] for i in _every_shard(client, name, "by_due_shard", "due", "due")}
    in_open = {i["sk"]["S"] for i in _every_shard(client, name, "open_by_age_shard", "open_since", "open")}
    answered = _every_shard(client, name, "by_status", "status_shard", "answered")

    # THEN the decided question is in neither open index, only in the answered shard of the status index
    assert in_due == in_open == {f"WAIT#{newer.question_id}"}
    assert [i["sk"]["S"] for i in answered] == [f"WAIT#{older.question_id}"]
    assert ledger.oldest_open().question_id == newer.question_id  # type: ignore[union-attr]
    assert [r.question_id for r in ledger.page(QuestionStatus.OPEN, limit=10).records] == [newer.question_id]


def test_a_page_merges_the_shards_in_deadline_order_across_pages(table: tuple[str, Any]) -> None:
    # GIVEN 11 open questions with deadlines an hour apart (opened in shuffled order), and one without any
    name, client = table
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    order = [7, 2, 9, 0, 4, 10, 1, 8, 3, 6, 5]
    by_deadline: dict[int, str] = {}
    for hours in order:
        envelope = ledger_contract.sample_envelope(timeout=f"PT{hours + 1}H")
        ledger.open(envelope, now=T0)
        by_deadline[hours] = envelope.question_id
    never = ledger_contract.sample_envelope(timeout=None)
    ledger.open(never, now=T0)

    # WHEN open questions are listed three to a page until there is no cursor
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(20):
        page = ledger.page(QuestionStatus.OPEN, limit=3, cursor=cursor)
        assert len(page.records) <= 3
        seen += [r.question_id for r in page.records]
        cursor = page.cursor
        if cursor is None:
            break

    # THEN every question came once, soonest deadline first across pages, `never` last
    assert seen == [by_deadline[h] for h in range(11)] + [never.question_id]

    # AND a deadline bound is applied in every shard
    before = format_rfc3339(T0 + timedelta(hours=3, minutes=30))
    bounded = ledger.page(QuestionStatus.OPEN, limit=10, due_before=before).records
    assert [r.question_id for r in bounded] == [by_deadline[0], by_deadline[1], by_deadline[2]]


def _make_old(client: Any, table: str, envelope: Any) -> None:
    """Rewrite a row as the code before the shards wrote it: unsharded `due`/`open_since`, no `status_shard`."""
    client.update_item(
        TableName=table,
        Key={"pk": {"S": f"THREAD#{envelope.thread_id}"}, "sk": {"S": f"WAIT#{envelope.question_id}"}},
        UpdateExpression="SET #due = :due, open_since = :open REMOVE status_shard",
        ExpressionAttributeNames={"#due": "due"},
        ExpressionAttributeValues={":due": {"S": "due"}, ":open": {"S": "open"}},
    )


def test_rows_written_before_the_shards_are_still_due_and_oldest_and_listed_after_the_upgrade(
    table: tuple[str, Any],
) -> None:
    # GIVEN an open question written by the code before the shards (unsharded keys, no status shard)
    name, client = table
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    old = ledger_contract.sample_envelope(asked_at=T0 - timedelta(days=1), timeout="PT1H")
    ledger.open(old, now=T0 - timedelta(days=1))
    _make_old(client, name, old)

    # THEN the sweep still finds it due and oldest (the unsharded partitions are read too)
    assert [r.question_id for r in ledger.due(T0, limit=10)] == [old.question_id]
    assert ledger.oldest_open().question_id == old.question_id  # type: ignore[union-attr]
    # BUT listing by status needs its status shard
    assert ledger.page(QuestionStatus.OPEN, limit=10).records == []

    # WHEN the documented upgrade step runs (twice: it is safe to repeat)
    changed = ledger.upgrade_index_keys()
    again = ledger.upgrade_index_keys()

    # THEN the row has sharded keys, is listed, and is still due
    assert (changed, again) == (1, 0)
    row = client.get_item(
        TableName=name, Key={"pk": {"S": f"THREAD#{old.thread_id}"}, "sk": {"S": f"WAIT#{old.question_id}"}}
    )["Item"]
    q = old.question_id
    assert (row["due"]["S"], row["open_since"]["S"], row["status_shard"]["S"]) == (
        shard_key("due", q, SHARDS),
        shard_key("open", q, SHARDS),
        shard_key("open", q, SHARDS),
    )
    assert [r.question_id for r in ledger.page(QuestionStatus.OPEN, limit=10).records] == [q]
    assert [r.question_id for r in ledger.due(T0, limit=10)] == [q]


def test_a_table_still_on_the_legacy_indexes_is_served_by_them_during_an_upgrade(moto_server: str) -> None:
    # GIVEN a table with only the indexes from before the shards (and by_question)
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"questions-legacy-{uuid.uuid4().hex[:8]}"
    request = QUESTION_TABLE.create_table_request(name)
    request["GlobalSecondaryIndexes"] = [
        {
            "IndexName": i.name,
            "KeySchema": [
                {"AttributeName": i.partition_key, "KeyType": "HASH"},
                {"AttributeName": i.sort_key, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
        for i in LEGACY_QUESTION_INDEXES
    ] + [i for i in request["GlobalSecondaryIndexes"] if i["IndexName"] == "by_question"]
    keys = {k["AttributeName"] for i in request["GlobalSecondaryIndexes"] for k in i["KeySchema"]} | {"pk", "sk"}
    request["AttributeDefinitions"] = [{"AttributeName": k, "AttributeType": "S"} for k in sorted(keys)]
    client.create_table(**request)
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)

    # WHEN the new code opens, lists and sweeps on it
    envelope = ledger_contract.sample_envelope()
    ledger.open(envelope, now=T0)
    other = ledger_contract.sample_envelope()
    ledger.open(other, now=T0)
    ledger.decide(other.thread_id, other.question_id, Decision(QuestionStatus.ANSWERED, None, "a-1"), now=T0)

    # THEN every query is answered through the legacy index it falls back to
    assert [r.question_id for r in ledger.due(T0 + timedelta(hours=2), limit=10)] == [envelope.question_id]
    assert ledger.oldest_open().question_id == envelope.question_id  # type: ignore[union-attr]
    assert [r.question_id for r in ledger.page(QuestionStatus.OPEN, limit=10).records] == [envelope.question_id]
    assert [r.question_id for r in ledger.page(QuestionStatus.ANSWERED, limit=10).records] == [other.question_id]
    client.delete_table(TableName=name)


def test_a_bad_shard_count_is_refused_with_the_fix() -> None:
    with pytest.raises(ArgumentError, match=re.escape("index_shards must be a whole number from 1 to 1000")):
        DynamoDbLedger("questions", client=object(), index_shards=0)
    with pytest.raises(ConfigurationError, match=re.escape("AGENT_WAIT_INDEX_SHARDS must be a whole number")):
        index_shards_from_env({"AGENT_WAIT_INDEX_SHARDS": "eight"})
    assert index_shards_from_env({}) == 8
    assert index_shards_from_env({"AGENT_WAIT_INDEX_SHARDS": "64"}) == 64


def test_a_warm_ledger_follows_the_upgrade_from_the_legacy_due_index_to_the_sharded_one(moto_server: str) -> None:
    # GIVEN a table with only the legacy by_due (step 0 of the upgrade) and a ledger that has used it
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"questions-step-{uuid.uuid4().hex[:8]}"
    legacy_due = next(i for i in LEGACY_QUESTION_INDEXES if i.name == "by_due")
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("pk", "sk", "due", "due_at")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[_gsi(legacy_due.name, "due", "due_at", {"ProjectionType": "ALL"})],
    )
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    envelope = ledger_contract.sample_envelope()
    ledger.open(envelope, now=T0)
    later = T0 + timedelta(hours=2)
    assert [r.question_id for r in ledger.due(later, limit=10)] == [envelope.question_id]

    # WHEN later deploys add by_due_shard, then delete by_due (the Lambda stays warm through both)
    client.update_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("due", "due_at")],
        GlobalSecondaryIndexUpdates=[
            {"Create": _gsi("by_due_shard", "due", "due_at", {"ProjectionType": "KEYS_ONLY"})}
        ],
    )
    assert [r.question_id for r in ledger.due(later, limit=10)] == [envelope.question_id]
    client.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_due"}}])

    # THEN the same ledger moves to the new index instead of failing on the deleted one
    assert [r.question_id for r in ledger.due(later, limit=10)] == [envelope.question_id]
    client.delete_table(TableName=name)


def _gsi(name: str, partition: str, sort: str, projection: dict[str, Any]) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": partition, "KeyType": "HASH"}, {"AttributeName": sort, "KeyType": "RANGE"}],
        "Projection": projection,
    }


def test_a_warm_ledger_follows_the_rename_from_by_status_shard_to_by_status(moto_server: str) -> None:
    # GIVEN a table deployed before the status index took its name `by_status`: the same sharded keys under
    # `by_status_shard`, and a ledger that has listed through it
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"questions-rename-{uuid.uuid4().hex[:8]}"
    include = {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["tags"]}
    request = QUESTION_TABLE.create_table_request(name)
    request["GlobalSecondaryIndexes"] = [
        _gsi("by_status_shard", "status_shard", "expires_at", include) if i["IndexName"] == "by_status" else i
        for i in request["GlobalSecondaryIndexes"]
    ]
    client.create_table(**request)
    ledger = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    envelope = ledger_contract.sample_envelope()
    ledger.open(envelope, now=T0)
    assert [r.question_id for r in ledger.page(QuestionStatus.OPEN, limit=10).records] == [envelope.question_id]

    # WHEN later deploys add `by_status`, then delete `by_status_shard` (the Lambda stays warm through both)
    client.update_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("status_shard", "expires_at")],
        GlobalSecondaryIndexUpdates=[{"Create": _gsi("by_status", "status_shard", "expires_at", include)}],
    )
    assert [r.question_id for r in ledger.page(QuestionStatus.OPEN, limit=10).records] == [envelope.question_id]
    client.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_status_shard"}}])

    # THEN the same ledger lists through `by_status`, and a cold one does too
    assert [r.question_id for r in ledger.page(QuestionStatus.OPEN, limit=10).records] == [envelope.question_id]
    cold = DynamoDbLedger(name, client=client, index_shards=SHARDS)
    assert [f.thread_id for f in cold.failures()] == []
    assert [r.question_id for r in cold.page(QuestionStatus.OPEN, limit=10).records] == [envelope.question_id]
    client.delete_table(TableName=name)
