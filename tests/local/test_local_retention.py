"""Retention on the emulator, which expires what AWS would (`EmulatedStack.expire()`, by the stack's clock): a finished
thread's checkpoint and its offloaded objects are gone once the retention (30 days, the construct's default) has
passed, and not before; a thread waiting on a question without a deadline keeps its checkpoint however long it waits,
resumes from it when answered, and then expires like any other.

The refund template as `agent-wait dev` deploys it, running `tests.agents.retention_graphs` (over 500 it asks with no
deadline) with every checkpoint payload offloaded (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES=1`), so each thread has
objects in the checkpoint bucket. The clock is real time plus an offset the test moves; nothing sleeps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import tests.agents.retention_graphs as graphs

from agent_wait.contract.schema import Settings


@pytest.fixture(scope="module")
def world(refund_template: dict[str, Any]) -> Iterator[Any]:
    import io

    from examples.refund_agent.demo import MovableClock, World

    from agent_wait.cli._dev import Observer
    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(
        refund_template,
        clock=clock,
        stack_name=f"retention-{id(clock)}",
        extra_environment={
            Settings.GRAPH.value: "tests.agents.retention_graphs:build_graph",
            Settings.CHECKPOINT_OFFLOAD_BYTES.value: "1",
        },
    )
    local.start()
    try:
        yield World(local, clock, Observer(local), io.StringIO())
    finally:
        local.stop()


def _stored(world: Any, thread: str) -> tuple[list[str], list[str]]:
    """The checkpoint table's items (their partition keys) and the bucket's objects of `thread`."""
    local = world.local
    items = local.client("dynamodb").scan(TableName=local.environment[Settings.CHECKPOINT_TABLE.value])["Items"]
    mine = [i["PK"]["S"] for i in items if i["PK"]["S"] == f"CHECKPOINT_{thread}" or f"_{thread}#" in i["PK"]["S"]]
    bucket = local.environment[Settings.CHECKPOINT_BUCKET.value]
    listed = local.client("s3").list_objects_v2(Bucket=bucket, Prefix=f"{thread}/").get("Contents", [])
    return mine, [o["Key"] for o in listed]


def test_a_finished_threads_checkpoint_expires_after_the_retention_and_a_waiting_ones_never_does(world: Any) -> None:
    # GIVEN the default retention (the template's, 30 days), one thread that finished and one waiting on a question
    # without a deadline, both at the clock's start
    assert world.local.environment[Settings.CHECKPOINT_RETENTION.value] == "P30D"
    finished, waiting = f"done-{uuid.uuid4().hex[:8]}", f"wait-{uuid.uuid4().hex[:8]}"
    world.start(finished, 100)
    world.start(waiting, 900)
    for thread in (finished, waiting):
        items, objects = _stored(world, thread)
        assert items, thread
        assert objects, thread
    waited_on = _stored(world, waiting)

    # WHEN 29 days pass: nothing has expired yet
    world.clock.offset = timedelta(days=29)
    world.local.expire()
    assert _stored(world, finished) != ([], [])

    # WHEN the retention has passed, with the bucket's extra day and S3's count to midnight
    world.clock.offset = timedelta(days=33)
    expired = world.local.expire()
    # THEN every item and object of the finished thread is gone
    assert _stored(world, finished) == ([], [])
    assert expired.items > 0
    assert expired.objects > 0
    # and the waiting thread keeps the checkpoint it waits on, items and objects: only what it moved past went
    items, objects = _stored(world, waiting)
    assert items
    assert objects
    assert set(items) <= set(waited_on[0])
    assert set(objects) <= set(waited_on[1])

    # WHEN finance answers, past the retention
    world.answer(waiting, _open_question(world, waiting), "approve")
    # THEN the agent goes on from where it waited, and finishes
    assert (graphs.PREPARED[waiting], graphs.FINISHED[waiting]) == (1, 1)

    # WHEN another retention passes after the answer
    world.clock.offset = timedelta(days=33 + 33)
    world.local.expire()
    # THEN the thread it finished expires like any other, the checkpoint it had waited on included
    assert _stored(world, waiting) == ([], [])


def _open_question(world: Any, thread: str) -> str:
    from agent_wait.aws import DynamoDbLedger

    ledger = DynamoDbLedger(world.local.table, client=world.local.client("dynamodb"))
    (record,) = ledger.questions(thread)
    return record.question_id
