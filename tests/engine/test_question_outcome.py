"""One vocabulary of outcomes (`agent_wait.ledger.outcome`): what decided a question, and, apart from it, what the
agent did with the decision, read the same way for every ledger row whatever its status has moved on to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import Decision, InMemoryLedger, QuestionRecord
from agent_wait.ledger.outcome import (
    MOVED_ON,
    AgentProgress,
    QuestionOutcome,
    agent_progress,
    question_outcome,
    statuses_holding,
)
from agent_wait.ledger.records import FailureKind, ThreadFailure

NOW = datetime(2030, 1, 31, 15, 0, tzinfo=UTC)


def _asked(ledger: InMemoryLedger, name: str) -> WaitEnvelope:
    policy = WaitPolicy(timeout="PT1H", default={"action": "reject"}, allowed_actions=("approve", "reject"))
    envelope = WaitEnvelope.create(Question(f"t-{name}", f"q-{name}", "refund?", policy, asked_at=NOW))
    ledger.open(envelope, now=NOW, unannounced=False)
    return envelope


def _decided(decision: Decision, then: str | None) -> QuestionRecord:
    ledger = InMemoryLedger()
    envelope = _asked(ledger, decision.answer_id)
    later = NOW + timedelta(minutes=5)
    ledger.decide(envelope.thread_id, envelope.question_id, decision, now=later)
    if then == "resumed":
        ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=later)
    elif then == "failed":
        failure = ThreadFailure(
            envelope.thread_id, FailureKind.ANSWER, envelope.question_id, decision.answer_id, "RuntimeError", "2030"
        )
        ledger.mark_failed(failure)
    record = ledger.find(envelope.question_id)
    assert record is not None
    return record


ANSWER = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a", "ana@example.com", via="api")
DEADLINE = Decision(QuestionStatus.EXPIRED, {"action": "reject"}, "d", "agent-wait:deadline", via="deadline")
CANCEL = Decision(QuestionStatus.CANCELLED, {"action": "cancelled"}, "c", "ops@example.com", via="api", reason="dup")
WITHDRAW = Decision(QuestionStatus.CANCELLED, None, "w", MOVED_ON)


@pytest.mark.parametrize(
    ("decision", "then", "outcome", "agent"),
    [
        (ANSWER, None, QuestionOutcome.ANSWERED, AgentProgress.PENDING),
        (ANSWER, "resumed", QuestionOutcome.ANSWERED, AgentProgress.RESUMED),
        (ANSWER, "failed", QuestionOutcome.ANSWERED, AgentProgress.FAILED),
        (DEADLINE, "resumed", QuestionOutcome.EXPIRED, AgentProgress.RESUMED),
        (CANCEL, None, QuestionOutcome.CANCELLED, AgentProgress.PENDING),
        (CANCEL, "resumed", QuestionOutcome.CANCELLED, AgentProgress.RESUMED),
        (WITHDRAW, None, QuestionOutcome.WITHDRAWN, AgentProgress.MOVED_ON),
    ],
)
def test_what_decided_a_question_outlives_the_agent_resuming_and_is_read_apart_from_it(
    decision: Decision, then: str | None, outcome: QuestionOutcome, agent: AgentProgress
) -> None:
    # GIVEN a question decided so, then resumed, failed or neither
    record = _decided(decision, then)
    # WHEN its outcome and the agent's progress are read
    # THEN the outcome is what decided it, whatever its status moved on to, and the agent's part is apart
    assert (question_outcome(record), agent_progress(record)) == (outcome, agent)
    # AND a listing by that outcome reads the status the row is under
    assert record.status in statuses_holding(outcome)


def test_an_open_question_has_no_outcome_and_its_agent_waits() -> None:
    # GIVEN an open question; WHEN read; THEN nothing decided it and the agent waits
    ledger = InMemoryLedger()
    record = ledger.find(_asked(ledger, "open").question_id)
    assert record is not None
    assert (question_outcome(record), agent_progress(record)) == (None, AgentProgress.WAITING)
