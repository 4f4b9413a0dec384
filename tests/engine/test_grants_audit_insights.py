"""Standing grants in the audit trail and in insights: the export lists each grant in force in the window with the
questions it decided, and every question a grant decided names it; insights count the share of the window's
decisions that grants made, grant by grant. Both read no grant per question: a row's grant is in its answer id, and
the grants are one query.

The grant is made and used through the router (`tests/support/granted_refunds.py`): Ana approves a refund with a
three-use grant, which then decides refunds of 200, 300 and 500 as they are asked; a 600 refund is asked and Bob
approves it. The routes: tests/host/test_grant_audit_insights_routes.py; the page:
tests/browser/test_insights_grants.py.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from tests.agents import grant_graphs
from tests.support.granted_refunds import GRANTER, GrantedRun, grant_and_use

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.audit import (
    AUDIT_COLUMNS,
    GRANT_COLUMNS,
    MAX_AUDIT_GRANTS,
    audit_grants,
    audit_rows,
    audit_window,
    write_audit,
)
from agent_wait.engine.grant_book import grant_view
from agent_wait.engine.grants import grant_answer_id, grant_id_of
from agent_wait.engine.insights import read_insights
from agent_wait.errors import ArgumentError
from agent_wait.ledger import Decision, Grant, InMemoryLedger, Ledger, QuestionRecord, new_grant
from agent_wait.policy import GrantRequest, grant_terms
from agent_wait.policy.pins import Pin

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


@pytest.fixture
def granted() -> tuple[InMemoryLedger, GrantedRun]:
    ledger = InMemoryLedger()
    return ledger, grant_and_use(ledger, NOW)


# -- the Done-when line ---------------------------------------------------------------------------------------------


def test_the_audit_export_lists_the_grant_and_the_three_questions_it_decided(
    granted: tuple[InMemoryLedger, GrantedRun],
) -> None:
    # GIVEN Ana's grant, which decided three refunds as they were asked, beside a refund Bob approved
    ledger, run = granted
    window = audit_window("2026-12-07", "2026-12-08", now=NOW)

    # WHEN the trail and its grants are exported
    rows = {row["question_id"]: row for row in audit_rows(ledger, window)}
    grants = audit_grants(ledger, window, now=NOW)

    # THEN the grant is listed, in Ana's name, with the three questions it decided, in order, and no use left
    (grant,) = grants.grants
    assert grant == grant_view(_kept(ledger, run.grant_id), now=NOW)
    assert (grant["grant_id"], grant["granted_by"], grant["question_id"]) == (run.grant_id, GRANTER, run.made_on)
    assert (grant["function"], grant["pins"], grant["uses_left"]) == ("issue_refund", {"amount": {"at_most": 500}}, 0)
    assert grant["decided"] == list(run.decided)
    assert grants.capped is False
    # ... and each of the three questions names it, decided in Ana's name through `grant`, the agent resumed
    for question_id in run.decided:
        row = rows[question_id]
        assert (row["grant_id"], row["via"], row["answered_by"], row["status"]) == (
            run.grant_id,
            "grant",
            GRANTER,
            "resumed",
        )
        assert row["approved_args"]["amount"] in (200, 300, 500)
    # ... while the approval that made it, and Bob's, were decided by people and name no grant
    for person_decided in (run.made_on, run.asked):
        assert rows[person_decided]["grant_id"] is None
        assert rows[person_decided]["via"] == "queue"
    assert len(rows) == 5


def test_insights_count_the_share_the_grant_decided_and_leave_it_out_of_peoples_times(
    granted: tuple[InMemoryLedger, GrantedRun],
) -> None:
    # GIVEN the same five refunds: three decided by Ana's grant, two by people
    ledger, run = granted

    # WHEN the week's insights are read
    found = read_insights(ledger, now=NOW + timedelta(minutes=5), days=7)

    # THEN three of the five decisions were the grant's, all by Ana's one grant, its terms attached
    assert (found.granted, found.decided, found.granted_share) == (3, 5, 0.6)
    (share,) = found.by_grant
    assert (share.grant_id, share.decided, share.granted_by) == (run.grant_id, 3, GRANTER)
    assert share.function == "issue_refund"
    assert share.grant is not None
    assert share.grant.terms.pins == {"amount": Pin("at_most", 500)}
    # ... the grant's decisions count as answered, but not as anyone's answer: nobody was asked them
    assert found.outcomes["answered"] == 5
    assert len(found.answer_seconds) == 2
    assert {who: decisions for who, decisions, _ in found.answerers} == {GRANTER: 1, "bob@example.com": 1}


def test_without_a_grant_deciding_anything_insights_read_no_grants(granted: tuple[InMemoryLedger, GrantedRun]) -> None:
    # GIVEN a ledger whose grants query would fail
    ledger, _ = granted
    counting = _CountingGrants(ledger)

    # WHEN insights read a week in which no grant decided anything (the refunds were a month ago)
    found = read_insights(counting, now=NOW + timedelta(days=30), days=7)

    # THEN there is no share, and the grants were not read at all
    assert (found.granted, found.by_grant, found.granted_share) == (0, [], None)
    assert counting.reads == 0
    # ... while a week holding them reads the grants once
    read_insights(counting, now=NOW, days=7)
    assert counting.reads == 1


# -- a question's grant, from its answer id ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("via", "answer_id", "expected"),
    [
        ("grant", grant_answer_id("issue_refund~q:first", "q:9"), "issue_refund~q:first"),
        ("grant", "agent-wait:grant::q:9", None),
        ("grant", "agent-wait:grant:issue_refund~q-1:q-other", None),
        ("grant", "someone-else:grant:issue_refund~q-1:q:9", None),
        ("api", grant_answer_id("issue_refund~q-1", "q:9"), None),
    ],
    ids=["colons-in-ids", "no-grant-id", "another-question", "not-ours", "a-person-decided"],
)
def test_a_questions_grant_is_read_from_its_answer_id_only_when_a_grant_decided_it(
    via: str, answer_id: str, expected: str | None
) -> None:
    # GIVEN a question decided through `via` under `answer_id`
    record = _decided("q:9", via=via, answer_id=answer_id)
    # WHEN its grant is read, THEN it is the id inside the answer id, or none
    assert grant_id_of(record) == expected


# -- which grants the export lists ------------------------------------------------------------------------------------


def test_the_export_lists_the_grants_in_force_in_the_window_and_no_others() -> None:
    # GIVEN grants made at nine: one for an hour, one revoked at 9:10, and one made the next day
    ledger = InMemoryLedger()
    hour = _grant(ledger, "q-hour", NOW)
    revoked = _grant(ledger, "q-revoked", NOW)
    ledger.revoke_grant(revoked.grant_id, by="ops@example.com", now=NOW + timedelta(minutes=10))
    later = _grant(ledger, "q-later", NOW + timedelta(days=1))

    def listed(since: datetime, until: datetime) -> list[str]:
        window = audit_window(since.isoformat(), until.isoformat(), now=NOW + timedelta(days=2))
        return sorted(g["grant_id"] for g in audit_grants(ledger, window, now=NOW + timedelta(days=2)).grants)

    # WHEN windows are exported, THEN each lists the grants that could decide in it
    assert listed(NOW + timedelta(minutes=30), NOW + timedelta(hours=2)) == [hour.grant_id]  # made before, in force
    assert listed(NOW - timedelta(hours=1), NOW + timedelta(minutes=5)) == sorted([hour.grant_id, revoked.grant_id])
    assert listed(NOW + timedelta(hours=1), NOW + timedelta(hours=3)) == []  # the hour's ended: not in force
    assert listed(NOW + timedelta(hours=20), NOW + timedelta(days=2)) == [later.grant_id]
    assert listed(NOW - timedelta(days=2), NOW - timedelta(days=1)) == []  # before any was made


def test_the_grants_read_is_bounded_and_says_when_it_stopped_at_its_limit() -> None:
    # GIVEN three grants
    ledger = InMemoryLedger()
    for n in range(3):
        _grant(ledger, f"q-{n}", NOW + timedelta(minutes=n))
    window = audit_window("2026-12-07", "2026-12-08", now=NOW)
    # WHEN read with a limit of two, THEN the newest two, and it says it stopped
    found = audit_grants(ledger, window, now=NOW, limit=2)
    assert ([g["question_id"] for g in found.grants], found.capped) == (["q-2", "q-1"], True)
    # AND a limit outside 1 to MAX_AUDIT_GRANTS is refused, naming it
    for limit in (0, MAX_AUDIT_GRANTS + 1):
        with pytest.raises(ArgumentError, match=rf"limit must be from 1 to {MAX_AUDIT_GRANTS}; got {limit}"):
            audit_grants(ledger, window, now=NOW, limit=limit)


def test_a_ledger_that_keeps_no_grants_lists_none() -> None:
    window = audit_window("2026-12-07", "2026-12-08", now=NOW)
    no_grants = cast(Ledger, object())  # only the capability's absence matters: nothing of it is called
    assert audit_grants(no_grants, window, now=NOW).grants == []


# -- the files --------------------------------------------------------------------------------------------------------


def test_grants_write_as_json_lines_and_as_csv_with_every_field_of_grant_view(
    granted: tuple[InMemoryLedger, GrantedRun],
) -> None:
    # GIVEN the exported grant
    ledger, run = granted
    window = audit_window("2026-12-07", None, now=NOW + timedelta(minutes=1))
    (grant,) = audit_grants(ledger, window, now=NOW).grants
    assert tuple(grant) == GRANT_COLUMNS

    # WHEN written as JSON lines and as CSV
    lines, table = io.StringIO(), io.StringIO()
    assert write_audit([grant], lines, format="jsonl", columns=GRANT_COLUMNS) == 1
    assert write_audit([grant], table, format="csv", columns=GRANT_COLUMNS) == 1

    # THEN the line is the grant exactly; the CSV has GRANT_COLUMNS, structured cells as JSON text
    assert json.loads(lines.getvalue()) == grant
    (cells,) = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert tuple(cells) == GRANT_COLUMNS
    assert json.loads(cells["decided"]) == list(run.decided)
    assert json.loads(cells["pins"]) == {"amount": {"at_most": 500}}
    assert (cells["live"], cells["exact"], cells["granted_by"]) == ("false", "false", GRANTER)

    assert AUDIT_COLUMNS.index("grant_id") > AUDIT_COLUMNS.index("reason")  # only ever added, at the end
    ledger, run = granted
    rows = list(audit_rows(ledger, audit_window("2026-12-07", None, now=NOW + timedelta(minutes=1))))
    table = io.StringIO()
    write_audit(rows, table, format="csv")
    read = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert tuple(read[0]) == AUDIT_COLUMNS
    assert AUDIT_COLUMNS.index("grant_id") > AUDIT_COLUMNS.index("reason")  # columns are only ever added, at the end
    assert sorted(cell["question_id"] for cell in read if cell["grant_id"] == run.grant_id) == sorted(run.decided)


# -- pins in words ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pin", "words"),
    [
        (Pin("equals", "o-1"), 'order_id is "o-1"'),
        (Pin("at_most", 500), "order_id at most 500"),
        (Pin("at_least", 10), "order_id at least 10"),
        (Pin("prefix", "A-"), 'order_id starts with "A-"'),
        (Pin("glob", "A-*"), 'order_id matches "A-*"'),
        (Pin("one_of", ["eu", 3]), 'order_id is one of "eu", 3'),
    ],
)
def test_every_pin_kind_reads_in_words(pin: Pin, words: str) -> None:
    assert pin.describe("order_id") == words


# -- helpers ----------------------------------------------------------------------------------------------------------


def _kept(ledger: InMemoryLedger, grant_id: str) -> Grant:
    grant = ledger.grant(grant_id)
    assert grant is not None
    return grant


def _grant(ledger: InMemoryLedger, question_id: str, at: datetime) -> Grant:
    terms = grant_terms(
        GrantRequest.parse({"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}}),
        call=("issue_refund", {"order_id": "o-1", "amount": 200}),
        thread_id="t-1",
        policy=grant_graphs.GRANTING,
        answer={"action": "approve"},
        names=[GRANTER],
    )
    return ledger.add_grant(new_grant(terms, question_id=question_id, granted_by=GRANTER, via="api", now=at))


def _decided(question_id: str, *, via: str, answer_id: str) -> QuestionRecord:
    ledger = InMemoryLedger()
    question = Question("t-1", question_id, {"function": "f", "args": {}}, WaitPolicy(), source={"function": "f"})
    ledger.open(WaitEnvelope.create(question, now=NOW), now=NOW)
    decision = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, answer_id, answered_by=GRANTER, via=via)
    return ledger.decide("t-1", question_id, decision, now=NOW).record


class _CountingGrants(InMemoryLedger):
    """The rows of `source`, counting the reads of its grants."""

    def __init__(self, source: InMemoryLedger) -> None:
        super().__init__()
        self.source = source
        self.reads = 0

    def page(self, *args: Any, **kwargs: Any) -> Any:
        return self.source.page(*args, **kwargs)

    def grants(self, *, now: datetime, live_only: bool = False, limit: int = 100) -> list[Grant]:
        self.reads += 1
        return self.source.grants(now=now, live_only=live_only, limit=limit)
