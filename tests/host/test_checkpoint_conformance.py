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
    from tests.host.conftest import create_checkpoint_table

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
    from langgraph_checkpoint_aws.checkpoint.dynamodb import storage_strategy

    from agent_wait.host._checkpoints import TaskAtomicDynamoDBSaver

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    session = boto3.Session(region_name="us-east-1")
    s3 = session.client("s3")
    bucket = f"conformance-{unique}"
    s3.create_bucket(Bucket=bucket)
    endpoint = {"session": session, "region_name": "us-east-1", "endpoint_url": moto_server}

    upstream = _report("DynamoDBSaver", lambda table: DynamoDBSaver(table, **endpoint), moto_server, unique)
    ours = _report("TaskAtomic", lambda table: TaskAtomicDynamoDBSaver(table, **endpoint), moto_server, unique)
    # Every payload to S3, so the suite runs the offload path for every checkpoint and every write.
    monkeypatch.setattr(storage_strategy, "S3_OFFLOAD_THRESHOLD", 0)
    offload = {"bucket_name": bucket, "endpoint_url": moto_server}
    offloaded = _report(
        "TaskAtomic+S3",
        lambda table: TaskAtomicDynamoDBSaver(table, **endpoint, s3_offload_config=offload),
        moto_server,
        unique,
    )
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0) > 0

    upstream_passes = {capability for capability, (passed, _) in upstream.items() if passed}
    assert upstream_passes, upstream
    for report in (ours, offloaded):
        failing = {c: report.get(c) for c in upstream_passes if not report.get(c, (False, []))[0]}
        assert failing == {}, failing
