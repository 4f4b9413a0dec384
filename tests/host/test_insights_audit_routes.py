"""`GET /insights` and `GET /audit` through `create_app` over an in-memory ledger holding 200 questions of mixed
outcomes (`tests/support/mixed_questions.py`); the figures are checked against what the seeding says each question
became, not against a second reading of the ledger. The same figures in Chromium: tests/browser/test_insights.py;
the audit export on DynamoDB: tests/aws/test_audit_export.py."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.api_events import call
from tests.support.mixed_questions import Seeded, seed_questions

from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.engine.audit import AUDIT_COLUMNS, audit_page, audit_rows, audit_window, parse_moment, write_audit
from agent_wait.engine.insights import percentile, read_insights
from agent_wait.errors import ArgumentError, ConfigurationError, LedgerCursorError
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.settings import HostSettings
from agent_wait.ledger import InMemoryLedger

NOW = datetime(2030, 1, 31, 15, 0, tzinfo=UTC)
AUDITOR = {"sub": "u-9", "iss": "https://issuer.example", "email": "ann@example.com", "groups": ["auditors"]}
PERSON = {"sub": "u-1", "iss": "https://issuer.example", "email": "alice@example.com", "groups": ["finance"]}


@pytest.fixture(scope="module")
def seeded() -> tuple[InMemoryLedger, list[Seeded]]:
    ledger = InMemoryLedger()
    return ledger, seed_questions(ledger, NOW)


def _app(ledger: InMemoryLedger, *, audit_group: str | None = "auditors") -> Any:
    context = ApiContext(
        ledger=ledger,
        service=AnswerService(ledger, InMemoryEntryQueue()),
        clock=lambda: NOW,
        audit_group=audit_group,
    )
    return create_app(lambda: context)


def _since(days: int) -> datetime:
    return (NOW - timedelta(days=days - 1)).replace(hour=0, minute=0)


# -- insights -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("days", [7, 30])
def test_insights_count_what_the_seeding_did(seeded: tuple[InMemoryLedger, list[Seeded]], days: int) -> None:
    ledger, questions = seeded
    since = _since(days)
    body = call(_app(ledger), "GET", "/insights", query={"days": str(days)}, claims=PERSON).json()

    in_window = [q for q in questions if q.decided_at is not None and since <= q.decided_at <= NOW]
    answered = [q for q in in_window if q.outcome is QuestionStatus.ANSWERED]
    seconds = [(q.decided_at - q.asked_at).total_seconds() for q in answered if q.decided_at]
    assert body["asked"] == sum(1 for q in questions if since <= q.asked_at <= NOW)
    assert body["outcomes"] == {
        outcome: sum(1 for q in in_window if q.said == outcome)
        for outcome in ("answered", "expired", "cancelled", "withdrawn")
    }
    assert body["outcomes"]["cancelled"] > 0
    assert body["outcomes"]["withdrawn"] > 0
    assert body["open_now"] == sum(1 for q in questions if q.status is QuestionStatus.OPEN) == 20
    assert body["failed_now"] == 20
    assert body["time_to_answer"] == {
        "count": len(answered),
        "p50_seconds": percentile(seconds, 0.5),
        "p90_seconds": percentile(seconds, 0.9),
    }
    assert len(body["daily"]) == days
    assert sum(day["asked"] for day in body["daily"]) == body["asked"]
    assert sum(day["answered"] for day in body["daily"]) == body["outcomes"]["answered"]
    # Grouped by the tag key every question has, most used first; each group's own percentiles.
    assert body["group_by"] == "approver_group"
    assert body["tag_keys"] == ["approver_group", "team"]
    by_group = {g["group"]: g for g in body["groups"]}
    finance = [s for q, s in zip(answered, seconds, strict=True) if _group(questions, q) == "finance"]
    assert by_group["finance"]["count"] == len(finance)
    assert by_group["finance"]["p90_seconds"] == percentile(finance, 0.9)
    # Who answers most: people's decisions (never the deadline's) and votes.
    decisions = Counter(q.answered_by for q in answered)
    assert {a["who"]: a["decisions"] for a in body["answerers"]} == dict(decisions)
    assert "agent-wait" not in {a["who"] for a in body["answerers"]}
    # The longest-open questions, oldest first, as the API shows a question.
    oldest = sorted((q for q in questions if q.status is QuestionStatus.OPEN), key=lambda q: q.asked_at)[:5]
    assert [view["question_id"] for view in body["slowest_open"]] == [q.question_id for q in oldest]
    assert body["read"] == {"rows": 200, "per_status": 1000, "capped": []}


def _group(questions: list[Seeded], wanted: Seeded) -> str:
    from tests.support.mixed_questions import GROUPS

    return GROUPS[questions.index(wanted) % len(GROUPS)]


def test_insights_group_by_another_tag_key(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, _ = seeded
    body = call(_app(ledger), "GET", "/insights", query={"days": "30", "by": "team"}, claims=PERSON).json()
    assert body["group_by"] == "team"
    assert [g["group"] for g in body["groups"]] == ["refunds"]
    assert body["groups"][0]["count"] == body["time_to_answer"]["count"]


def test_insights_read_at_most_the_cap_per_status_and_say_so(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, _ = seeded
    found = read_insights(ledger, now=NOW, days=30, per_status=10)
    # answered (60 left after resumes and failures), resumed, cancelled, open, failed and expired all hold more.
    assert found.rows_read == 60
    assert sorted(found.capped) == sorted(s.value for s in QuestionStatus)


def test_insights_refuse_what_they_cannot_read(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, _ = seeded
    assert call(_app(ledger), "GET", "/insights").status == 401
    bad = call(_app(ledger), "GET", "/insights", query={"days": "14"}, claims=PERSON)
    assert (bad.status, bad.json()["reason"]) == (400, "bad_days")
    with pytest.raises(ArgumentError, match=r"days must be one of \[7, 30\]; got 14"):
        read_insights(ledger, now=NOW, days=14)
    with pytest.raises(ArgumentError, match="per_status must be from 1 to 1000; got 0"):
        read_insights(ledger, now=NOW, days=7, per_status=0)


# -- the audit trail --------------------------------------------------------------------------------------------------


def test_audit_pages_hold_every_question_in_the_window_once(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, questions = seeded
    app = _app(ledger)
    rows: list[dict[str, Any]] = []
    cursor: str | None = None
    pages = 0
    while True:
        query = {"since": "2029-12-01", "until": "2030-02-01T00:00:00Z", "limit": "40"}
        body = call(
            app, "GET", "/audit", query={**query, **({"cursor": cursor} if cursor else {})}, claims=AUDITOR
        ).json()
        rows += body["questions"]
        cursor, pages = body["next"], pages + 1
        if cursor is None:
            break
    assert pages >= 200 // 40
    assert sorted(r["question_id"] for r in rows) == sorted(q.question_id for q in questions)
    by_id = {r["question_id"]: r for r in rows}
    for question in questions:
        row = by_id[question.question_id]
        assert (row["answered_by"], row["via"], row["outcome"]) == (
            question.answered_by,
            question.via,
            question.said,
        )
        assert row["answer"] == question.answer
        assert [vote["by"] for vote in row["votes"]] == question.votes
        assert (row["resumed_at"] is not None, row["failed"] is not None) == (question.resumed, question.failed)
    # Edited arguments are their own field; a vote keeps its note (the trail is for auditors, unlike the inbox).
    edited = next(r for r in rows if r["args"] is not None)
    assert edited["args"] == edited["answer"]["args"]
    voted = next(r for r in rows if r["votes"])
    assert voted["votes"][0]["answer"] == {"action": "approve", "note": "ok"}


def test_the_window_is_when_a_question_was_asked_or_decided(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, questions = seeded
    since, until = NOW - timedelta(days=3), NOW - timedelta(days=1)
    window = audit_window(since.isoformat(), until.isoformat(), now=NOW)
    found = {row["question_id"] for row in audit_rows(ledger, window, page_size=25)}
    expected = {
        q.question_id
        for q in questions
        if since <= q.asked_at < until or (q.decided_at is not None and since <= q.decided_at < until)
    }
    assert found == expected
    assert 0 < len(found) < 200


def test_audit_is_for_the_audit_group_only(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, _ = seeded
    query = {"since": "2030-01-01"}
    assert call(_app(ledger), "GET", "/audit", query=query).status == 401
    off = call(_app(ledger, audit_group=None), "GET", "/audit", query=query, claims=AUDITOR)
    assert (off.status, off.json()["reason"], off.headers["content-type"]) == (
        403,
        "audit_not_enabled",
        "application/problem+json",
    )
    assert Settings.AUDIT_GROUP.value in off.json()["detail"]
    other = call(_app(ledger), "GET", "/audit", query=query, claims=PERSON)
    assert (other.status, other.json()["reason"]) == (403, "not_an_auditor")
    assert "auditors" in other.json()["detail"]


@pytest.mark.parametrize(
    ("query", "reason", "detail"),
    [
        ({}, "bad_since", "since is required"),
        ({"since": "last tuesday"}, "bad_since", "since must be an RFC 3339 time"),
        ({"since": "2030-01-02T10:00:00"}, "bad_since", "must say its time zone"),
        ({"since": "2030-01-02", "until": "2030-13-01"}, "bad_until", "until must be an RFC 3339 time"),
        ({"since": "2030-01-05", "until": "2030-01-02"}, "bad_since", "must be before until (2030-01-02T00:00:00Z)"),
        ({"since": "2030-01-05", "until": "2030-01-05"}, "bad_since", "must be before until"),
        ({"since": "2030-01-01", "limit": "0"}, "bad_limit", "limit must be a whole number from 1 to 500"),
        ({"since": "2030-01-01", "limit": "501"}, "bad_limit", "limit must be a whole number from 1 to 500"),
        ({"since": "2030-01-01", "cursor": "not-a-cursor"}, "bad_cursor", "not one this export made"),
    ],
)
def test_bad_audit_queries_are_400_problems_that_say_what_to_fix(
    seeded: tuple[InMemoryLedger, list[Seeded]], query: dict[str, str], reason: str, detail: str
) -> None:
    ledger, _ = seeded
    bad = call(_app(ledger), "GET", "/audit", query=query, claims=AUDITOR)
    assert (bad.status, bad.json()["reason"]) == (400, reason)
    assert detail in bad.json()["detail"]


def test_the_engine_refuses_bad_input_with_typed_errors(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, _ = seeded
    window = audit_window("2030-01-01", None, now=NOW)
    assert window.until == "2030-01-31T15:00:00Z"
    assert parse_moment("2030-01-02T10:00:00+02:00", "since") == datetime(2030, 1, 2, 8, tzinfo=UTC)
    with pytest.raises(ArgumentError, match=r"format must be one of \['jsonl', 'csv'\]; got 'xml'") as raised:
        write_audit([], io.StringIO(), format="xml")
    assert raised.value.argument == "format"
    with pytest.raises(ArgumentError, match="limit must be from 1 to 500"):
        audit_page(ledger, window, limit=0)
    with pytest.raises(LedgerCursorError):
        audit_page(ledger, window, cursor="eyJzIjogOTl9")  # {"s": 99}


def test_csv_and_jsonl_hold_the_same_rows(seeded: tuple[InMemoryLedger, list[Seeded]]) -> None:
    ledger, _ = seeded
    rows = list(audit_rows(ledger, audit_window("2029-12-01", None, now=NOW)))
    jsonl, table = io.StringIO(), io.StringIO()
    assert write_audit(rows, jsonl, format="jsonl") == write_audit(rows, table, format="csv") == 200
    lines = [json.loads(line) for line in jsonl.getvalue().splitlines()]
    read = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert tuple(read[0]) == AUDIT_COLUMNS
    for line, cell in zip(lines, read, strict=True):
        assert set(line) == set(AUDIT_COLUMNS)
        assert (cell["question_id"], cell["answered_by"] or None, cell["via"] or None) == (
            line["question_id"],
            line["answered_by"],
            line["via"],
        )
        assert json.loads(cell["votes"]) == line["votes"]
        assert (json.loads(cell["answer"]) if cell["answer"] else None) == line["answer"]


# -- settings -----------------------------------------------------------------------------------------------------


BASE = {Settings.TABLE.value: "questions", Settings.QUEUE_URL.value: "https://sqs.example/entry.fifo"}


def test_the_audit_settings_are_read_and_default_to_no_group_and_a_400_day_retention() -> None:
    unset = HostSettings.from_env("api", BASE)
    assert (unset.audit_group, unset.decided_retention) == (None, timedelta(days=400))
    env = {**BASE, Settings.AUDIT_GROUP.value: "auditors", Settings.DECIDED_RETENTION.value: "P400D"}
    given = HostSettings.from_env("api", env)
    assert (given.audit_group, given.decided_retention) == ("auditors", timedelta(days=400))


@pytest.mark.parametrize(
    ("value", "says"),
    [("forever", "must be an ISO 8601 duration"), ("PT1H", "from 1 day"), ("P4000D", "from 1 day"), ("P1Y", "years")],
)
def test_a_bad_retention_is_a_configuration_error_naming_the_variable(value: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says) as raised:
        HostSettings.from_env("router", {**BASE, Settings.DECIDED_RETENTION.value: value, "AGENT_WAIT_GRAPH": "m:g"})
    assert Settings.DECIDED_RETENTION.value in str(raised.value)
