"""A payload kept in its head (issue 46): a checkpoint or a task's writes is one item, not a head and a payload item,
when both fit in one, so a small save costs one write unit, not two; every layout the table may hold is still read."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from tests.support.aws_stack import REGION, HostStack, answer_message, create_checkpoint_table, start_message

from agent_wait.host import HostSettings, build_router
from agent_wait.langgraph.checkpoint.inline import inlined
from agent_wait.langgraph.checkpoint.saver import TaskAtomicDynamoDBSaver

KB = 1024


def _size(item: dict[str, Any]) -> int:
    """DynamoDB's size of an item of string, number and binary attributes."""
    total = 0
    for name, value in item.items():
        (kind, inner), *_ = value.items()
        total += len(name) + (len(inner) if kind == "B" else len(str(inner).encode()))
    return total


def _items(client: Any, table: str) -> list[dict[str, Any]]:
    return client.scan(TableName=table, ConsistentRead=True)["Items"]


@pytest.fixture
def table(moto_server: str, unique: str) -> tuple[Any, str]:
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)
    name = f"inline-{unique}"
    create_checkpoint_table(client, name)
    return client, name


def _saver(moto_server: str, table: str, saver: type[Any] = TaskAtomicDynamoDBSaver) -> Any:
    return saver(table, session=boto3.Session(region_name=REGION), region_name=REGION, endpoint_url=moto_server)


def _saved(saver: Any, thread_id: str, values: Any, writes: list[tuple[str, Any]]) -> dict[str, Any]:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"state": values}
    config = saver.put({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}, checkpoint, {}, {})
    saver.put_writes(config, writes, "task-1")
    return config


def test_a_small_checkpoint_and_its_writes_are_one_item_each_under_a_kb(moto_server: str, table: Any) -> None:
    # GIVEN the router's saver
    client, name = table
    saver = _saver(moto_server, name)
    # WHEN a small checkpoint and one task's two writes are saved
    config = _saved(saver, "t-small", {"order": "o-1"}, [("log", ["a"]), ("amount", 900)])
    # THEN the table holds two items, the checkpoint and the task's packed writes, each holding its own payload
    items = _items(client, name)
    assert sorted(i["PK"]["S"].split("_")[0] for i in items) == ["CHECKPOINT", "WRITES"]
    assert {i["ref_loc"]["S"] for i in items} == {"INLINE"}
    # AND each is under a KB: one write unit each, where a head and a payload item cost two
    assert max(_size(i) for i in items) < KB
    # AND both read back, by the saver's latest read, by id (the library's read) and in the history
    for found in (saver.get_tuple(config), saver.get_tuple({"configurable": {"thread_id": "t-small"}})):
        assert found.checkpoint["channel_values"] == {"state": {"order": "o-1"}}
        assert sorted(found.pending_writes) == [("task-1", "amount", 900), ("task-1", "log", ["a"])]
    (listed,) = saver.list({"configurable": {"thread_id": "t-small"}})
    assert listed.checkpoint["channel_values"] == {"state": {"order": "o-1"}}


def test_a_payload_that_cannot_share_its_heads_item_stays_its_own_item() -> None:
    # GIVEN a head and its payload item as the library builds them
    head = {"PK": {"S": "CHECKPOINT_t"}, "SK": {"S": "#c-1"}, "ref_loc": {"S": "DYNAMODB"}}
    head["ref_key"] = {"S": "CHUNK_t##c-1"}
    payload = {"PK": {"S": "CHUNK_t##c-1"}, "SK": {"S": "CHUNK"}, "payload": {"B": b"x" * 300}}
    # WHEN they would not fit in one item together (a limit below their sum; the table's 400 KB leaves a head room
    # beside the largest payload it keeps, so this is the saver's guard, not a path it takes today)
    kept = inlined([head, payload], limit=_size(head) + 300)
    # THEN they stay two items, as the library lays them out
    assert kept == [head, payload]
    # AND with room for both, the head holds the payload
    (merged,) = inlined([head, payload], limit=_size(head) + 307)
    assert merged == {**head, "ref_loc": {"S": "INLINE"}, "payload": {"B": b"x" * 300}}
    # AND a payload the bucket keeps is never moved
    in_s3 = {**head, "ref_loc": {"S": "S3"}}
    assert inlined([in_s3], limit=400 * KB) == [in_s3]


def test_a_table_the_library_wrote_is_read_and_a_thread_continued_on_it(moto_server: str, table: Any) -> None:
    from langgraph_checkpoint_aws import DynamoDBSaver

    # GIVEN a thread saved by plain DynamoDBSaver (a head and a payload item per save), as earlier deployments wrote
    client, name = table
    old = _saved(_saver(moto_server, name, DynamoDBSaver), "t-old", {"n": 1}, [("log", ["a"])])
    assert any(i["SK"]["S"] == "CHUNK" for i in _items(client, name))
    # WHEN the router's saver reads it and saves the next checkpoint on the same thread
    saver = _saver(moto_server, name)
    assert saver.get_tuple(old).checkpoint["channel_values"] == {"state": {"n": 1}}
    assert saver.get_tuple(old).pending_writes == [("task-1", "log", ["a"])]
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"state": {"n": 2}}
    saver.put(old, checkpoint, {}, {})
    # THEN the history holds both layouts, newest first, each read whole
    history = [c.checkpoint["channel_values"]["state"] for c in saver.list({"configurable": {"thread_id": "t-old"}})]
    assert history == [{"n": 2}, {"n": 1}]
    # AND deleting the thread deletes every item of both layouts
    saver.delete_thread("t-old")
    assert _items(client, name) == []


def test_a_refund_lifecycle_writes_four_checkpoint_items_of_one_write_unit_each(host: HostStack, unique: str) -> None:
    # GIVEN the router on the emulator with the refund graph
    router = build_router(HostSettings.from_env("router"))
    thread_id = f"t-inline-{unique}"
    # WHEN a refund is started, asks finance, and is approved through the entry queue's message
    (question_id,) = router.handle(json.dumps(start_message(thread_id, f"o-{unique}"))).asked
    router.handle(json.dumps(answer_message(thread_id, question_id)))
    # THEN its checkpoints are four items (the checkpoint it parked on, the interrupt, the resumed step, the end),
    # none a separate payload, each under a KB: 4 write units where a head and a payload item each cost 8
    items = [i for i in _items(host.dynamodb, host.checkpoint_table) if thread_id in i["PK"]["S"]]
    assert [i["PK"]["S"].split("_")[0] for i in items if i["SK"]["S"] == "CHUNK"] == []
    assert len(items) == 4, [(i["PK"]["S"], i["SK"]["S"]) for i in items]
    assert max(_size(i) for i in items) < KB
