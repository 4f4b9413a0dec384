"""DynamoDbAnnounce over real HTTP against moto: the contract, the row's shape, lifecycle updates, TTL, GSI."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key

from agent_wait import Question, WaitEnvelope, WaitPolicy, publish
from agent_wait.aws import DynamoDbAnnounce
from agent_wait.aws.dynamodb import CLOSED_AT, envelope_from_row
from agent_wait.common.times import NEVER, format_rfc3339
from agent_wait.contract.schema import QUESTION_TABLE, shard_key
from agent_wait.errors import EnvelopeError
from agent_wait.testing import announce_contract
from agent_wait.testing.announce_contract import AnnounceHarness, sample_envelope

RULES = announce_contract.REQUIRED + announce_contract.OPTIONAL
NOW = datetime(2026, 9, 12, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
@pytest.mark.parametrize("via", ["table", "client"])
def test_dynamodb_announce_conforms(rule: Any, via: str, dynamodb_harness: Callable[..., AnnounceHarness]) -> None:
    rule(lambda delivers=None: dynamodb_harness(delivers, via=via))


def _raw(harness: AnnounceHarness, envelope: WaitEnvelope) -> dict[str, Any]:
    """The item exactly as boto3's Table resource returns it (numbers as Decimal)."""
    table = harness.extra["table"].table
    return table.get_item(Key={"pk": f"THREAD#{envelope.thread_id}", "sk": f"WAIT#{envelope.question_id}"})["Item"]


def test_row_follows_the_question_table_schema_with_every_envelope_field(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN a question whose default is False, with a correlation and a zero in its arguments
    harness = dynamodb_harness()
    policy = WaitPolicy(timeout="P3D", default=False, correlation={"provider": "stripe", "id": "re_1"})
    envelope = sample_envelope(question={"function": "refund", "args": {"amount": 0, "note": ""}}, policy=policy)

    # WHEN it is announced
    assert publish(envelope, harness.announcer).ok

    # THEN the row has the ledger's keys and status, and every envelope field, falsy ones included
    row = _raw(harness, envelope)
    assert row["pk"] == f"THREAD#{envelope.thread_id}"
    assert row["sk"] == f"WAIT#{envelope.question_id}"
    assert row["status"] == "open"
    assert row["expires_at"] == envelope.expires_at == "2026-09-14T09:00:00Z"
    assert row["default"] is False
    assert row["correlation"] == {"provider": "stripe", "id": "re_1"}
    assert row["question"] == {"function": "refund", "args": {"amount": Decimal(0), "note": ""}}
    assert "ttl" not in row
    assert "closed_at" not in row
    assert envelope_from_row(row) == envelope.to_dict()


def test_question_without_deadline_stores_expires_at_never(dynamodb_harness: Callable[..., AnnounceHarness]) -> None:
    # GIVEN a policy with no timeout
    harness = dynamodb_harness()
    envelope = sample_envelope(policy=WaitPolicy())

    # WHEN it is announced
    assert publish(envelope, harness.announcer).ok

    # THEN the GSI sort key exists as "never", and reads back as None
    assert _raw(harness, envelope)["expires_at"] == NEVER
    assert harness.announcer.read(envelope.thread_id, envelope.question_id)["expires_at"] is None  # type: ignore[index]


def test_floats_are_stored_as_exact_decimals_and_read_back_unchanged(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN floats that binary-to-Decimal conversion would smear (Decimal(0.1) has 55 digits)
    harness = dynamodb_harness()
    amounts = [0.1, 410.25, 3e-7, 1e16, 123456789.12345679, -2.5]
    envelope = sample_envelope(question={"amounts": amounts})

    # WHEN it is announced
    assert publish(envelope, harness.announcer).ok

    # THEN each is stored as the decimal text Python prints for it, and reads back as the same float
    stored = _raw(harness, envelope)["question"]["amounts"]
    assert stored == [Decimal(repr(a)) for a in amounts]
    assert harness.announcer.read(envelope.thread_id, envelope.question_id)["question"] == {"amounts": amounts}  # type: ignore[index]


@pytest.mark.parametrize("number", [1e300, 1e-300, 10**40 + 1], ids=["huge", "tiny", "41-digits"])
def test_a_number_dynamodb_cannot_store_never_reaches_an_announcer(number: float) -> None:
    # GIVEN a number beyond what DynamoDB's Number keeps (range, or 38 significant digits)
    # WHEN a question carrying it is made / THEN it is refused there, saying what to do, before any delivery
    with pytest.raises(EnvelopeError, match=re.escape("send it as a string")):
        sample_envelope(question={"huge": number})


def test_republish_never_overwrites_host_status_or_outcome_nor_moves_expires_at(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN an announced question that a host has since decided
    harness = dynamodb_harness()
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok
    assert harness.host_write is not None
    harness.host_write(envelope, {"status": "answered", "outcome": {"action": "approve", "by": "ana"}})

    # WHEN the question is republished, even with a later deadline (a re-run that asked again)
    later = Question(
        envelope.thread_id,
        envelope.question_id,
        envelope.question,
        WaitPolicy(timeout="P3D"),
        asked_at=NOW + timedelta(days=30),
    )
    report = publish(WaitEnvelope.create(later), harness.announcer)

    # THEN the delivery is a successful no-op: the host's status and outcome and the first deadline stand
    assert report.ok
    row = _raw(harness, envelope)
    assert row["status"] == "answered"
    assert row["outcome"] == {"action": "approve", "by": "ana"}
    assert row["expires_at"] == envelope.expires_at
    assert row["event_id"] == envelope.event_id


def test_closing_transition_updates_the_row_and_records_closed_at(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN an open question and a fixed clock
    harness = dynamodb_harness(clock=lambda: NOW)
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok

    # WHEN it is announced as answered
    answered = envelope.for_transition("answered")
    assert publish(answered, harness.announcer).ok

    # THEN the one row now says answered, follows the transition's type and event id, and records when
    rows = harness.read_back()
    assert len(rows) == 1
    row = _raw(harness, envelope)
    assert row["status"] == "answered"
    assert row["type"] == "wait.answered"
    assert row["event_id"] == answered.event_id
    assert row["closed_at"] == format_rfc3339(NOW)
    assert row["question"] == envelope.question


def test_transition_for_a_missing_row_is_a_failed_delivery_and_creates_no_phantom_row(
    dynamodb_harness: Callable[..., AnnounceHarness], caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a table without the question
    harness = dynamodb_harness()
    envelope = sample_envelope()

    # WHEN its answer is announced
    with caplog.at_level(logging.WARNING, logger="agent_wait.channels.announce"):
        report = publish(envelope.for_transition("answered"), harness.announcer)

    # THEN one line says there is no row and why none was created; the table stays empty
    assert not report.ok
    [line] = [r.getMessage() for r in caplog.records if r.name == "agent_wait.channels.announce"]
    assert f"no row for thread_id={envelope.thread_id} question_id={envelope.question_id}" in line
    assert "never creates one" in line
    assert harness.read_back() == []


@pytest.mark.parametrize(
    ("late", "progress"),
    [("expired", None), ("escalated", {"escalation": 1, "of": 1}), ("reminder", {"reminder": 1, "of": 1})],
)
def test_a_late_outcome_or_follow_up_after_a_decision_changes_nothing_and_is_not_a_failure(
    late: str,
    progress: dict[str, int] | None,
    dynamodb_harness: Callable[..., AnnounceHarness],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN an answered question
    harness = dynamodb_harness()
    envelope = sample_envelope()
    for step in ("created", "answered"):
        assert publish(envelope.for_transition(step), harness.announcer).ok
    before = _raw(harness, envelope)

    # WHEN an expiry, or a follow-up that lost the race with the answer, arrives late
    with caplog.at_level(logging.INFO, logger="agent_wait.channels.announce"):
        report = publish(envelope.for_transition(late, progress=progress), harness.announcer)

    # THEN the row is exactly as it was, nothing fails, and one INFO line says which status was kept
    assert report.ok
    assert _raw(harness, envelope) == before
    [line] = [r.getMessage() for r in caplog.records if r.name == "agent_wait.channels.announce.aws"]
    assert f"kept status=answered; wait.{late} arrived after the question was decided" in line


@pytest.mark.parametrize("via", ["table", "client"])
def test_a_follow_up_updates_type_event_id_and_progress_and_never_the_status_or_close_time(
    via: str, dynamodb_harness: Callable[..., AnnounceHarness]
) -> None:
    # GIVEN an open question with a TTL configured
    harness = dynamodb_harness(via=via, ttl_seconds=86400, clock=lambda: NOW)
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok

    # WHEN its first reminder and then a vote (with a float and a null in it) are announced
    reminder = envelope.for_transition("reminder", progress={"reminder": 1, "of": 2})
    assert publish(reminder, harness.announcer).ok
    reminded = _raw(harness, envelope)
    votes = [{"action": "approve", "by": None, "at": "2026-09-12T09:00:00Z", "ratio": 0.1}]
    voted = envelope.for_transition("voted", progress={"votes": votes, "approvals": 1, "needed": 2})
    assert publish(voted, harness.announcer).ok

    # THEN the row is still open, never closed, and reads back as the envelope last announced
    for row in (reminded, _raw(harness, envelope)):
        assert row["status"] == "open"
        assert CLOSED_AT not in row
        assert QUESTION_TABLE.ttl_attribute not in row
    assert (reminded["type"], reminded["event_id"]) == ("wait.reminder", reminder.event_id)
    assert reminded["progress"] == {"reminder": 1, "of": 2}
    assert envelope_from_row(_raw(harness, envelope)) == voted.to_dict()
    assert harness.announcer.stats.failed == 0


def test_a_follow_up_for_a_missing_row_fails_and_creates_nothing(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN a table without the question / WHEN its reminder is announced
    harness = dynamodb_harness()
    envelope = sample_envelope()
    report = publish(envelope.for_transition("reminder", progress={"reminder": 1, "of": 1}), harness.announcer)

    # THEN the delivery failed with its reason and no row appeared
    assert not report.ok
    assert "never creates one" in (report.failed[0].error or "")
    assert harness.read_back() == []


def test_a_quorum_answer_keeps_the_votes_that_decided_it_on_the_row(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN an open question
    harness = dynamodb_harness(clock=lambda: NOW)
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok

    # WHEN it is answered by a quorum (its wait.answered carries the votes)
    votes = {"votes": [{"action": "approve", "by": "ana"}, {"action": "approve", "by": "bo"}], "needed": 2}
    answered = envelope.for_transition("answered", progress=votes)
    assert publish(answered, harness.announcer).ok

    # THEN the row is closed as always, and reads back as that envelope, votes included
    row = _raw(harness, envelope)
    assert (row["status"], row[CLOSED_AT]) == ("answered", format_rfc3339(NOW))
    assert envelope_from_row(row) == answered.to_dict()


def test_ttl_is_set_when_the_row_closes_counted_from_then_and_never_moves(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN a one-week TTL and a clock we move by hand
    clock = {"now": NOW}
    harness = dynamodb_harness(ttl_seconds=7 * 86400, clock=lambda: clock["now"])
    envelope = sample_envelope()

    # WHEN the question opens, then closes a day later, then is resumed a day after that
    assert publish(envelope, harness.announcer).ok
    open_row = _raw(harness, envelope)
    clock["now"] = NOW + timedelta(days=1)
    assert publish(envelope.for_transition("answered"), harness.announcer).ok
    closed_row = _raw(harness, envelope)
    clock["now"] = NOW + timedelta(days=2)
    assert publish(envelope.for_transition("resumed"), harness.announcer).ok
    resumed_row = _raw(harness, envelope)

    # THEN the open row has no TTL; closing sets close time + 7 days; resuming keeps it
    closed_at = NOW + timedelta(days=1)
    assert QUESTION_TABLE.ttl_attribute not in open_row
    assert closed_row["ttl"] == int((closed_at + timedelta(days=7)).timestamp())
    assert resumed_row["ttl"] == closed_row["ttl"]
    assert resumed_row["closed_at"] == format_rfc3339(closed_at)
    assert resumed_row["status"] == "resumed"


def test_status_index_answers_open_and_open_overdue_exactly_across_its_shards(
    make_question_table: Callable[[], Any],
) -> None:
    # GIVEN one table holding: open overdue, open not yet due, open without deadline, answered overdue
    questions = make_question_table()
    announcer = DynamoDbAnnounce(questions.name, table=questions.table)
    now = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)

    def ask(question_id: str, timeout: str | None, asked_at: datetime) -> WaitEnvelope:
        envelope = WaitEnvelope.create(
            Question("t-1", question_id, {"function": "f", "args": {}}, WaitPolicy(timeout=timeout), asked_at=asked_at)
        )
        assert publish(envelope, announcer).ok
        return envelope

    ask("overdue", "PT1H", now - timedelta(days=1))
    ask("not-due", "P3D", now)
    ask("no-deadline", None, now - timedelta(days=90))
    answered = ask("answered", "PT1H", now - timedelta(days=1))
    assert publish(answered.for_transition("answered"), announcer).ok

    # WHEN the two queries a host or UI runs are made on every shard of by_status
    table = questions.table

    def query(status: str, before: str | None = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for shard in range(announcer.index_shards):
            condition = Key("status_shard").eq(f"{status}#{shard}")
            if before is not None:
                condition &= Key("expires_at").lt(before)
            items += table.query(IndexName="by_status", KeyConditionExpression=condition)["Items"]
        return items

    open_rows = query("open")
    overdue_rows = query("open", before=format_rfc3339(now))
    answered_rows = query("answered")

    # THEN open excludes the answered one; overdue also excludes "never" and the not-yet-due; each row sits in
    # its question's shard, and the index holds keys and tags only
    assert sorted(row["sk"].removeprefix("WAIT#") for row in open_rows) == ["no-deadline", "not-due", "overdue"]
    assert [row["sk"] for row in overdue_rows] == ["WAIT#overdue"]
    assert [row["status_shard"] for row in answered_rows] == [shard_key("answered", "answered", 8)]
    assert all(set(row) <= {"pk", "sk", "status_shard", "expires_at", "tags"} for row in open_rows + answered_rows)


def test_constructor_refuses_contradictions_and_a_bad_ttl(make_question_table: Callable[[], Any]) -> None:
    # GIVEN a real table
    questions = make_question_table()

    # WHEN / THEN: a table with a client or region, a table of another name, and a TTL that is not whole seconds
    extras: tuple[dict[str, Any], ...] = ({"client": questions.client}, {"region_name": "us-east-1"})
    for extra in extras:
        with pytest.raises(ValueError, match="pass one of table=, client= or region_name="):
            DynamoDbAnnounce(questions.name, table=questions.table, **extra)
    with pytest.raises(ValueError, match="but table_name is 'other'"):
        DynamoDbAnnounce("other", table=questions.table)
    for bad in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="ttl_seconds must be a positive whole number of seconds"):
            DynamoDbAnnounce(questions.name, client=questions.client, ttl_seconds=bad)  # type: ignore[arg-type]
    for bad in (0, 1001, 2.0, True):
        with pytest.raises(ValueError, match="index_shards must be a whole number from 1 to 1000"):
            DynamoDbAnnounce(questions.name, client=questions.client, index_shards=bad)  # type: ignore[arg-type]


def test_each_status_is_written_to_the_shard_of_its_question(make_question_table: Callable[[], Any]) -> None:
    # GIVEN an announcer with 4 shards and a question that opens, is answered and resumes
    questions = make_question_table()
    announcer = DynamoDbAnnounce(questions.name, client=questions.client, index_shards=4)
    envelope = WaitEnvelope.create(Question("t-9", "q-shards", {"function": "f", "args": {}}, WaitPolicy()))
    shards = []
    for transition in ("created", "answered", "resumed"):
        assert publish(envelope if transition == "created" else envelope.for_transition(transition), announcer).ok
        shards.append(announcer.get_row("t-9", "q-shards")["status_shard"])  # type: ignore[index]

    # THEN the status index key follows the status, always in the question's own shard
    assert shards == [shard_key(status, "q-shards", 4) for status in ("open", "answered", "resumed")]


def test_wait_extended_moves_the_rows_deadline_and_leaves_it_open(
    dynamodb_harness: Callable[..., AnnounceHarness],
) -> None:
    # GIVEN an announced question with a P3D deadline
    harness = dynamodb_harness()
    envelope = sample_envelope(policy=WaitPolicy(timeout="P3D"))
    assert publish(envelope, harness.announcer).ok
    # WHEN its deadline moved a day later
    progress = {"extension": 1, "from": envelope.expires_at, "to": "2026-09-15T09:00:00Z", "by": "ops"}
    moved = replace(envelope, expires_at="2026-09-15T09:00:00Z").for_transition("extended", progress=progress)
    assert publish(moved, harness.announcer).ok
    # THEN the row says so, with the extension's progress, still open
    row = _raw(harness, envelope)
    assert (row["status"], row["type"], row["expires_at"]) == ("open", "wait.extended", "2026-09-15T09:00:00Z")
    assert row["progress"]["by"] == "ops"
