"""`agent-wait audit export` on a DynamoDB question table (the embedded emulator) holding 30 questions of mixed
outcomes written through `DynamoDbLedger`: the file round-trips (every decision in the ledger is in it with who made
it and through which door, and nothing else, as JSON lines and as CSV), its bad inputs are one-line errors, and a
decided row carries the TTL `AGENT_WAIT_DECIDED_RETENTION` asks for (400 days unset, none with `never`). The 200
questions of issue 31 are exported in tests/browser/test_insights.py, on the stack the insights page reads (the
emulator takes about 75 ms a question to seed)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.support.aws_stack import create_question_table
from tests.support.mixed_questions import Seeded, seed_questions

from agent_wait.aws import DynamoDbLedger
from agent_wait.cli import main
from agent_wait.contract.schema import QUESTION_TABLE, QuestionStatus, Settings, question_key, thread_key

NOW = datetime.now(UTC).replace(microsecond=0)
RETENTION = timedelta(days=400)
COUNT = 30


@pytest.fixture(scope="module")
def stack(moto_server: str) -> tuple[str, Any, list[Seeded]]:
    """A fresh question table with the questions; (table name, client, what each question became)."""
    import uuid

    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"audit-{uuid.uuid4().hex[:8]}"
    create_question_table(client, name)
    ledger = DynamoDbLedger(name, client=client, closed_ttl=RETENTION)
    return name, client, seed_questions(ledger, NOW, COUNT)


@pytest.fixture
def on_the_table(
    stack: tuple[str, Any, list[Seeded]], moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[str]:
    """The CLI's options that point it at the table (as `AGENT_WAIT_TABLE` and `--endpoint-url` do)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(Settings.TABLE.value, stack[0])
    monkeypatch.setenv(Settings.QUEUE_URL.value, f"{moto_server}/123456789012/unused.fifo")
    return ["--endpoint-url", moto_server, "--region", "us-east-1"]


def _decisions(seeded: list[Seeded]) -> dict[str, tuple[str | None, str | None, str]]:
    return {
        q.question_id: (q.answered_by, q.via, q.said) for q in seeded if q.outcome is not None
    }  # fmt: skip


def test_a_jsonl_export_round_trips_every_decision(
    stack: tuple[str, Any, list[Seeded]], on_the_table: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeded = stack[2]
    since = (NOW - timedelta(days=31)).date().isoformat()
    assert main(["audit", "export", "--since", since, "--out", "trail.jsonl", *on_the_table]) == 0
    assert capsys.readouterr().out.strip() == f"{COUNT} questions written to trail.jsonl"
    rows = [json.loads(line) for line in (tmp_path / "trail.jsonl").read_text().splitlines()]

    assert sorted(r["question_id"] for r in rows) == sorted(q.question_id for q in seeded)
    decided = {r["question_id"]: (r["answered_by"], r["via"], r["outcome"]) for r in rows if r["outcome"]}
    assert decided == _decisions(seeded)
    assert len(decided) == COUNT - COUNT // 10  # every tenth is open
    by_id = {r["question_id"]: r for r in rows}
    for question in seeded:
        row = by_id[question.question_id]
        assert row["answer"] == question.answer
        assert [vote["by"] for vote in row["votes"]] == question.votes
        assert row["thread_id"] == question.thread_id
        assert (row["resumed_at"] is not None, row["failed"]) == (
            question.resumed,
            "RuntimeError" if question.failed else None,
        )


def test_a_csv_export_holds_the_same_decisions(
    stack: tuple[str, Any, list[Seeded]], on_the_table: list[str], tmp_path: Path
) -> None:
    since = (NOW - timedelta(days=31)).isoformat()
    assert main(["audit", "export", "--since", since, "--format", "csv", "--out", "trail.csv", *on_the_table]) == 0
    with (tmp_path / "trail.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    decided = {
        r["question_id"]: (r["answered_by"] or None, r["via"] or None, r["outcome"]) for r in rows if r["outcome"]
    }
    assert len(rows) == COUNT
    assert decided == _decisions(stack[2])


def test_a_narrow_window_holds_only_what_was_asked_or_decided_in_it(
    stack: tuple[str, Any, list[Seeded]], on_the_table: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    since, until = NOW - timedelta(days=2), NOW - timedelta(days=1)
    window = ["--since", since.isoformat(), "--until", until.isoformat()]
    assert main(["audit", "export", *window, *on_the_table]) == 0
    found = {json.loads(line)["question_id"] for line in capsys.readouterr().out.splitlines()}
    expected = {
        q.question_id
        for q in stack[2]
        if since <= q.asked_at < until or (q.decided_at is not None and since <= q.decided_at < until)
    }
    assert found == expected
    assert found


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--since", "yesterday"], "--since: since must be an RFC 3339 time such as 2026-03-01T09:00:00Z"),
        (["--since", "2030-01-02", "--until", "2030-01-01"], "since (2030-01-02T00:00:00Z) must be before until"),
        (["--since", "2030-01-01", "--until", "2030-01-01T10:00"], "--until: until must say its time zone"),
        (["--since", "2030-01-01", "--format", "xml"], "--format must be one of jsonl, csv; got 'xml'"),
    ],
)
def test_bad_inputs_are_one_line_errors(
    on_the_table: list[str], options: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "export", *options, *on_the_table]) == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-wait: ")
    assert says in err
    assert err.count("\n") == 1


def test_decided_rows_get_the_retention_as_their_ttl(stack: tuple[str, Any, list[Seeded]]) -> None:
    name, client, seeded = stack
    for question in (next(q for q in seeded if q.outcome is not None), next(q for q in seeded if q.outcome is None)):
        key = {
            QUESTION_TABLE.partition_key: {"S": thread_key(question.thread_id)},
            QUESTION_TABLE.sort_key: {"S": question_key(question.question_id)},
        }
        item = client.get_item(TableName=name, Key=key)["Item"]
        if question.status is QuestionStatus.OPEN:
            assert QUESTION_TABLE.ttl_attribute not in item
        else:
            assert question.decided_at is not None
            assert int(item[QUESTION_TABLE.ttl_attribute]["N"]) == int((question.decided_at + RETENTION).timestamp())


@pytest.mark.parametrize(("retention", "kept_days"), [("P30D", 30), (None, 400), ("never", None)])
def test_the_router_keeps_a_decided_row_for_the_retention_setting(
    host: Any,
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
    unique: str,
    retention: str | None,
    kept_days: int | None,
) -> None:
    from tests.support.aws_stack import answer_message, reset_handlers, sqs_event, sqs_record, start_message

    from agent_wait.host import router

    # GIVEN the router with AGENT_WAIT_DECIDED_RETENTION set, left unset (400 days), or `never` (kept for ever)
    if retention:
        monkeypatch.setenv(Settings.DECIDED_RETENTION.value, retention)
    reset_handlers()
    thread = f"order-{unique}"
    router.handler(sqs_event(sqs_record(start_message(thread, f"o-{unique}"), group_id=thread)), lambda_context)
    (record,) = host.ledger().questions(thread)
    # WHEN finance approves on the entry queue
    answer = answer_message(thread, record.question_id, answered_by="finance@example.com", answer_id=f"a-{unique}")
    router.handler(sqs_event(sqs_record(answer, group_id=thread)), lambda_context)
    # THEN the decided row's TTL is its decision time plus the retention; with `never` it has none
    decided = host.ledger().get(thread, record.question_id)
    assert decided is not None
    assert decided.decided_at is not None
    key = {"pk": {"S": thread_key(thread)}, "sk": {"S": question_key(record.question_id)}}
    item = host.dynamodb.get_item(TableName=host.table, Key=key)["Item"]
    if kept_days is None:
        assert QUESTION_TABLE.ttl_attribute not in item
    else:
        expected = datetime.fromisoformat(decided.decided_at) + timedelta(days=kept_days)
        assert int(item[QUESTION_TABLE.ttl_attribute]["N"]) == int(expected.timestamp())
