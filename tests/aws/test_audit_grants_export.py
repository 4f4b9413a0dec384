"""`agent-wait audit export` and `agent-wait audit grants` on a DynamoDB question table (the embedded emulator) where
a standing grant was made and decided three refunds through the router (`tests/support/granted_refunds.py`): the
grants file lists the grant with the three questions it decided, and the trail's rows name it, as JSON lines and as
CSV. The same on the in-memory ledger, and `GET /audit`: tests/engine/test_grants_audit_insights.py and
tests/host/test_grant_audit_insights_routes.py."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.support.aws_stack import create_question_table
from tests.support.granted_refunds import GRANTER, GrantedRun, grant_and_use

from agent_wait.aws import DynamoDbLedger
from agent_wait.cli import main
from agent_wait.contract.schema import Settings
from agent_wait.engine.audit import GRANT_COLUMNS

NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)


@pytest.fixture(scope="module")
def stack(moto_server: str) -> tuple[str, GrantedRun]:
    """A fresh question table where the grant was made and used; (table name, what the run did)."""
    import uuid

    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"grants-{uuid.uuid4().hex[:8]}"
    create_question_table(client, name)
    return name, grant_and_use(DynamoDbLedger(name, client=client, closed_ttl=timedelta(days=400)), NOW)


@pytest.fixture
def on_the_table(
    stack: tuple[str, GrantedRun], moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(Settings.TABLE.value, stack[0])
    monkeypatch.setenv(Settings.QUEUE_URL.value, f"{moto_server}/123456789012/unused.fifo")
    return ["--endpoint-url", moto_server, "--region", "us-east-1"]


def test_the_cli_exports_the_grant_with_the_three_questions_it_decided(
    stack: tuple[str, GrantedRun], on_the_table: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN Ana's grant, which decided three refunds on the table
    _, run = stack
    since = (NOW - timedelta(days=1)).date().isoformat()

    # WHEN the trail and the grants are exported as JSON lines
    assert main(["audit", "export", "--since", since, "--out", "trail.jsonl", *on_the_table]) == 0
    assert main(["audit", "grants", "--since", since, "--out", "grants.jsonl", *on_the_table]) == 0
    assert "1 grants written to grants.jsonl" in capsys.readouterr().out

    # THEN the grants file holds the grant, in Ana's name, with the three questions it decided, in order
    (grant,) = [json.loads(line) for line in (tmp_path / "grants.jsonl").read_text().splitlines()]
    assert (grant["grant_id"], grant["granted_by"], grant["decided"]) == (run.grant_id, GRANTER, list(run.decided))
    assert (grant["uses"], grant["uses_left"], grant["question_id"]) == (3, 0, run.made_on)
    # ... and in the trail those three name it, decided `via` grant, and nothing else does
    rows = [json.loads(line) for line in (tmp_path / "trail.jsonl").read_text().splitlines()]
    assert sorted(r["question_id"] for r in rows if r["grant_id"] == run.grant_id) == sorted(run.decided)
    assert {r["via"] for r in rows if r["grant_id"]} == {"grant"}
    assert {r["question_id"] for r in rows if r["grant_id"] is None} == {run.made_on, run.asked}


def test_the_grants_export_as_csv_has_grant_views_fields(
    stack: tuple[str, GrantedRun], on_the_table: list[str], tmp_path: Path
) -> None:
    _, run = stack
    since = (NOW - timedelta(days=1)).date().isoformat()
    assert main(["audit", "grants", "--since", since, "--format", "csv", "--out", "grants.csv", *on_the_table]) == 0
    with (tmp_path / "grants.csv").open(newline="") as stream:
        (cells,) = list(csv.DictReader(stream))
    assert tuple(cells) == GRANT_COLUMNS
    assert (cells["grant_id"], json.loads(cells["decided"])) == (run.grant_id, list(run.decided))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--since", "yesterday"], "--since: since must be an RFC 3339 time"),
        (["--since", "2026-01-01", "--format", "xml"], "--format must be one of jsonl, csv; got 'xml'"),
    ],
)
def test_bad_grants_export_inputs_are_one_line_errors(
    on_the_table: list[str], capsys: pytest.CaptureFixture[str], argv: list[str], says: Any
) -> None:
    assert main(["audit", "grants", *argv, *on_the_table]) != 0
    assert says in capsys.readouterr().err
