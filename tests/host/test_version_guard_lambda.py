"""The version guard through the real router Lambda handler on the emulator (moto: DynamoDB ledger and checkpoints,
FIFO entry queue and DLQ, SNS announcements) and the operator's CLI: a graph redeployed without the node a
question waits in fails the thread visibly (`version_changed`), and `agent-wait retry` resumes it once a
migration is deployed (docs/versions.md). One test, one emulated stack."""

from __future__ import annotations

from typing import Any

import pytest
import tests.agents.versioned_graphs as versioned_graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    records_from_queue,
    reset_handlers,
    run_router,
    sqs_record,
)

from agent_wait.asking.versions import stamped_version
from agent_wait.cli import main
from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine.dead_letter import DETAIL_ATTRIBUTE, REASON_ATTRIBUTE


def _deploy(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A (re)deploy: the router's next cold start loads `name` from tests.agents.versioned_graphs."""
    monkeypatch.setenv(Settings.GRAPH.value, f"tests.agents.versioned_graphs:{name}")
    reset_handlers()


def _route(context: FakeLambdaContext, body: dict[str, Any], thread_id: str) -> None:
    assert run_router(sqs_record(body, group_id=thread_id), context=context) == {"batchItemFailures": []}


def test_a_removed_node_fails_visibly_and_resumes_after_retry_under_a_migration(
    host: HostStack,
    lambda_context: FakeLambdaContext,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    outcomes: list[Any],
    unique: str,
) -> None:
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    # GIVEN version 1 asked finance about a refund, and the stamp came back from the DynamoDB ledger
    _deploy(monkeypatch, "v1")
    _route(lambda_context, {"thread_id": thread_id, "input": {"order_id": order_id, "amount": 900}}, thread_id)
    (row,) = host.ledger().questions(thread_id)
    stamp = stamped_version(row.envelope.source)
    assert stamp is not None
    assert (stamp.user, stamp.function) == ("1", "issue_refund")
    assert stamp.signature is not None

    # WHEN version 2, which renamed `approve` to `review`, is deployed and finance approves
    _deploy(monkeypatch, "v2")
    answer = {"thread_id": thread_id, "question_id": row.question_id, "answer": {"action": "approve"}}
    _route(lambda_context, {**answer, "answer_id": f"a-{unique}"}, thread_id)

    # THEN nothing was paid, and the thread is failed visibly: a dead letter, the row, wait.failed, the CLI
    assert versioned_graphs.PAID[order_id] == 0
    assert outcomes[-1].reason == "version_changed"
    (dead,) = host.dead_letters()
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == "version_changed"
    detail = dead["MessageAttributes"][DETAIL_ATTRIBUTE]["StringValue"]
    assert "the node approve it waits in is not in the graph running now" in detail
    assert f"agent-wait retry {thread_id}" in detail
    assert host.ledger().get(thread_id, row.question_id).status is QuestionStatus.FAILED  # type: ignore[union-attr]
    failed = [e for e in host.announcements() if e["type"] == "wait.failed"]
    assert [e["question_id"] for e in failed] == [row.question_id]
    capsys.readouterr()
    assert main(["failures"]) == 0
    assert f"thread={thread_id}  answer={row.question_id}  error=VersionChangedError" in capsys.readouterr().out

    # WHEN version 2 is deployed again with a migration, and the operator retries the thread
    _deploy(monkeypatch, "migrated")
    assert main(["retry", thread_id, "--retry-id", f"fix-{unique}"]) == 0
    records = records_from_queue(host.entry_messages(), host.queue_arn)
    assert run_router(*records, context=lambda_context) == {"batchItemFailures": []}

    # THEN the migration received both versions and the answer, the refund was paid once, and the thread is well
    assert outcomes[-1].kind == "retried"
    change = versioned_graphs.MIGRATIONS[-1]
    assert (change.thread_id, change.old.user, change.old.node, change.new.user, change.answer) == (
        thread_id,
        "1",
        "approve",
        "2",
        {"action": "approve"},
    )
    assert versioned_graphs.PAID[order_id] == 1
    assert host.ledger().thread_failure(thread_id) is None
    assert host.ledger().get(thread_id, row.question_id).status is QuestionStatus.RESUMED  # type: ignore[union-attr]
    assert [e["type"] for e in host.announcements() if e["question_id"] == row.question_id][-1] == "wait.resumed"
