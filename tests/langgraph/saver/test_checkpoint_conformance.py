"""LangGraph's own checkpointer conformance suite, on the emulator: our task-atomic saver passes wherever upstream
`DynamoDBSaver` does, with the checkpoint bucket off, and on with every payload stored in S3.

`langgraph-checkpoint-conformance` is a locked dev dependency, so this runs in CI like every other test.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, Callable
from typing import Any

import langgraph.checkpoint.conformance as conformance
import pytest

_names = itertools.count()


def _report(name: str, make: Callable[[str], Any], moto_server: str, unique: str) -> dict[str, Any]:
    import boto3
    from tests.support.aws_stack import create_checkpoint_table

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)

    async def factory() -> AsyncGenerator[Any, None]:
        table = f"conformance-{unique}-{next(_names)}"
        create_checkpoint_table(client, table)
        yield make(table)

    registered = conformance.checkpointer_test(name=name)(factory)
    report = asyncio.run(conformance.validate(registered))
    return {
        capability: (result.passed, [str(f) for f in result.failures])
        for capability, result in report.results.items()
        if result.detected
    }


def test_the_task_atomic_saver_conforms_wherever_upstream_does_with_and_without_the_bucket(
    moto_server: str, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from langgraph_checkpoint_aws import DynamoDBSaver

    from agent_wait.langgraph.checkpoint.saver import TaskAtomicDynamoDBSaver

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    session = boto3.Session(region_name="us-east-1")
    s3 = session.client("s3")
    bucket = f"conformance-{unique}"
    s3.create_bucket(Bucket=bucket)
    endpoint = {"session": session, "region_name": "us-east-1", "endpoint_url": moto_server}

    upstream = _report("DynamoDBSaver", lambda table: DynamoDBSaver(table, **endpoint), moto_server, unique)
    ours = _report("TaskAtomic", lambda table: TaskAtomicDynamoDBSaver(table, **endpoint), moto_server, unique)
    # Every payload to S3, so the suite runs the offload path for every checkpoint and every write.
    offload = {"bucket_name": bucket, "endpoint_url": moto_server}
    offloaded = _report(
        "TaskAtomic+S3",
        lambda table: TaskAtomicDynamoDBSaver(table, **endpoint, s3_offload_config=offload, offload_over=1),
        moto_server,
        unique,
    )
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0) > 0

    upstream_passes = {capability for capability, (passed, _) in upstream.items() if passed}
    assert upstream_passes, upstream
    for report in (ours, offloaded):
        failing = {c: report.get(c) for c in upstream_passes if not report.get(c, (False, []))[0]}
        assert failing == {}, failing


def _every_call_a_delivery(moto_server: str, mismatches: list[str], noted_reads: list[str]) -> Callable[[str], Any]:
    """A saver factory whose every call is its own delivery, as the router makes them, notes included.

    Each call holds its thread's lease (taking the note the call before left), reads the thread's latest root
    checkpoint first (as the router does before it runs the agent: by the note's keys when one is left), and
    leaves a note at the release. Each read by a note is checked against a full read of the table made outside
    the lease; a difference is recorded in `mismatches`, and each delivery that had a note in `noted_reads`.
    """
    import logging

    import boto3

    from agent_wait.common.times import utc_now
    from agent_wait.engine.lease import hold_thread
    from agent_wait.langgraph.checkpoint.saver import TaskAtomicDynamoDBSaver
    from agent_wait.ledger import InMemoryLedger

    ledger = InMemoryLedger()
    log = logging.getLogger("tests.conformance")

    class EveryCallADelivery(TaskAtomicDynamoDBSaver):
        def _delivery(self, config: Any, call: Callable[[], Any]) -> Any:
            thread_id = (config or {}).get("configurable", {}).get("thread_id")
            if thread_id is None:
                return call()
            with hold_thread(
                ledger, str(thread_id), clock=utc_now, seconds=60, wait=5, on_busy=lambda: None, log=log
            ) as lease:
                if lease.note is not None:
                    noted_reads.append(str(thread_id))
                root = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
                noted = super().get_tuple(root)
                full = self._read_latest(root)[0]
                if noted != full:
                    mismatches.append(f"thread {thread_id}: by the note {noted!r}, in full {full!r}")
                return call()

        def get_tuple(self, config: Any) -> Any:
            return self._delivery(config, lambda: super(EveryCallADelivery, self).get_tuple(config))

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return self._delivery(
                config, lambda: super(EveryCallADelivery, self).put(config, checkpoint, metadata, new_versions)
            )

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            self._delivery(
                config, lambda: super(EveryCallADelivery, self).put_writes(config, writes, task_id, task_path)
            )

    session = boto3.Session(region_name="us-east-1")
    return lambda table: EveryCallADelivery(table, session=session, region_name="us-east-1", endpoint_url=moto_server)


def test_the_saver_conforms_with_every_call_a_delivery_that_reads_by_the_last_ones_note(
    moto_server: str, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    from langgraph_checkpoint_aws import DynamoDBSaver

    upstream = _report(
        "DynamoDBSaver",
        lambda table: DynamoDBSaver(table, region_name="us-east-1", endpoint_url=moto_server),
        moto_server,
        unique,
    )
    mismatches: list[str] = []
    noted_reads: list[str] = []
    noted = _report(
        "TaskAtomic+notes", _every_call_a_delivery(moto_server, mismatches, noted_reads), moto_server, unique
    )
    upstream_passes = {capability for capability, (passed, _) in upstream.items() if passed}
    failing = {c: noted.get(c) for c in upstream_passes if not noted.get(c, (False, []))[0]}
    assert failing == {}, failing
    assert mismatches == [], mismatches[:3]
    assert len(noted_reads) > 50, f"only {len(noted_reads)} deliveries read by a note"
