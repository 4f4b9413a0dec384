"""LogAnnounce: one JSON line per envelope with ids, actions, expiry and tags; the question only at DEBUG."""

from __future__ import annotations

import json
import logging
import uuid
from datetime import UTC, datetime

import pytest

from agent_wait import LogAnnounce, Question, WaitEnvelope, WaitPolicy, publish

PERSONAL = "Zoë Secretname"


@pytest.fixture
def logger(caplog: pytest.LogCaptureFixture) -> logging.Logger:
    name = f"tests.log_announce.{uuid.uuid4().hex[:8]}"
    caplog.set_level(logging.DEBUG, logger=name)
    return logging.getLogger(name)


def make_envelope() -> WaitEnvelope:
    return WaitEnvelope.create(
        Question(
            "order-4471",
            "q-4471",
            {"function": "issue_refund", "args": {"customer": PERSONAL, "amount": 41000}},
            WaitPolicy(timeout="P3D", allowed_actions=["approve", "reject"], tags={"approver_group": "finance"}),
            asked_at=datetime(2026, 9, 11, 9, 0, tzinfo=UTC),
        )
    )


def lines(caplog: pytest.LogCaptureFixture, logger: logging.Logger) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == logger.name]


def test_one_json_line_per_envelope_with_ids_actions_expiry_and_tags(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
):
    # GIVEN a log announcer at INFO
    envelope = make_envelope()
    # WHEN one envelope is published
    report = publish(envelope, LogAnnounce(logger))
    # THEN exactly one INFO line, valid JSON, with the ids, actions, expiry and tags
    assert report.ok
    (record,) = lines(caplog, logger)
    assert record.levelno == logging.INFO
    assert json.loads(record.getMessage()) == {
        "event": "wait.created",
        "event_id": envelope.event_id,
        "thread_id": "order-4471",
        "question_id": "q-4471",
        "allowed_actions": ["approve", "reject"],
        "expires_at": "2026-09-14T09:00:00Z",
        "tags": {"approver_group": "finance"},
    }


def test_the_question_is_never_in_the_line_at_info(logger: logging.Logger, caplog: pytest.LogCaptureFixture):
    publish(make_envelope(), LogAnnounce(logger))
    assert PERSONAL not in caplog.text
    assert "41000" not in caplog.text
    assert "question" not in json.loads(lines(caplog, logger)[0].getMessage())


def test_the_question_is_in_the_line_at_debug(logger: logging.Logger, caplog: pytest.LogCaptureFixture):
    # GIVEN an explicit opt-in: level=DEBUG
    envelope = make_envelope()
    publish(envelope, LogAnnounce(logger, level=logging.DEBUG))
    # THEN the line is at DEBUG and carries the question
    (record,) = lines(caplog, logger)
    assert record.levelno == logging.DEBUG
    assert json.loads(record.getMessage())["question"] == envelope.question


def test_a_warning_level_line_also_omits_the_question(logger: logging.Logger, caplog: pytest.LogCaptureFixture):
    publish(make_envelope(), LogAnnounce(logger, level=logging.WARNING))
    (record,) = lines(caplog, logger)
    assert record.levelno == logging.WARNING
    assert PERSONAL not in caplog.text


def test_each_envelope_and_transition_is_its_own_line(logger: logging.Logger, caplog: pytest.LogCaptureFixture):
    announcer = LogAnnounce(logger)
    envelope = make_envelope()
    publish(envelope, announcer)
    publish(envelope.for_transition("answered"), announcer)
    events = [json.loads(r.getMessage())["event"] for r in lines(caplog, logger)]
    assert events == ["wait.created", "wait.answered"]


def test_a_disabled_level_writes_nothing_and_is_not_a_failure(caplog: pytest.LogCaptureFixture):
    quiet = logging.getLogger(f"tests.quiet.{uuid.uuid4().hex[:8]}")
    quiet.setLevel(logging.ERROR)
    delivery = LogAnnounce(quiet).announce(make_envelope())
    assert delivery.status == "delivered"
    assert [r for r in caplog.records if r.name == quiet.name] == []


def test_no_timeout_logs_a_null_expiry(logger: logging.Logger, caplog: pytest.LogCaptureFixture):
    publish(WaitEnvelope.create(Question("t", "q", "go?")), LogAnnounce(logger))
    assert json.loads(lines(caplog, logger)[0].getMessage())["expires_at"] is None


def test_default_logger_is_agent_wait_announce(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="agent_wait.channels.announce")
    publish(make_envelope(), LogAnnounce())
    assert [r.name for r in caplog.records] == ["agent_wait.channels.announce"]


def test_delivers_filter_skips_other_transitions(logger: logging.Logger, caplog: pytest.LogCaptureFixture):
    announcer = LogAnnounce(logger, delivers={"created"})
    assert announcer.announce(make_envelope().for_transition("resumed")).status == "skipped"
    assert lines(caplog, logger) == []


def test_a_vote_line_carries_its_counts_but_never_who_voted_or_what_they_wrote(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
):
    votes = [{"action": "approve", "note": "fine by me", "by": "alice@example.com", "at": "2026-09-11T09:00:00Z"}]
    progress = {"votes": votes, "approvals": 1, "needed": 2, "remaining": 1, "veto": ["reject"]}
    publish(make_envelope().for_transition("voted", progress=progress), LogAnnounce(logger))
    (record,) = caplog.records
    line = json.loads(record.getMessage())
    assert line["progress"] == {"approvals": 1, "needed": 2, "remaining": 1}
    assert "alice" not in record.getMessage()
    assert "fine by me" not in record.getMessage()
