"""What the contract's rules share: a clock, sample questions, decisions, votes and failures."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import (
    AdvanceResult,
    Decision,
    FailureKind,
    Ledger,
    QuestionRecord,
    ThreadFailure,
    Vote,
)
from agent_wait.policy.wait_policy import WaitPolicy

LedgerFactory = Callable[[], Any]
"""Returns the ledger under test (a fresh one, or the same store every time)."""

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)


def make_decision(status: QuestionStatus, answer: Any, answer_id: str | None = None) -> Decision:
    return Decision(status, answer, answer_id or f"a-{uuid.uuid4().hex}", "tester")


def sample_envelope(
    *,
    thread_id: str | None = None,
    timeout: str | None = "PT1H",
    asked_at: datetime = T0,
    question: Any = None,
    tags: dict[str, str] | None = None,
    reminders: tuple[str, ...] = (),
    quorum: int | None = None,
) -> WaitEnvelope:
    """A fresh question with unique ids, asked at `asked_at` (with `reminders` and a `quorum` when given)."""
    policy = WaitPolicy(
        timeout=timeout,
        default={"action": "reject", "flag": False, "n": 0},
        tags=tags,
        reminders=reminders,
        quorum=quorum,
    )
    return WaitEnvelope.create(
        Question(
            thread_id or f"thread-{uuid.uuid4().hex[:12]}",
            f"q-{uuid.uuid4().hex}",
            question if question is not None else {"function": "issue_refund", "args": {"amount": 410.25}},
            policy,
            source={"function": "issue_refund"},
            asked_at=asked_at,
        )
    )


def race(racers: int, run: Callable[[int], bool]) -> list[int]:
    """Run `run(index)` in `racers` threads released at once; the indexes whose call returned True."""
    barrier = threading.Barrier(racers)
    winners: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def race(index: int) -> None:
        try:
            barrier.wait(timeout=60)
            won = run(index)
        except BaseException as exc:  # reported below: a thread's failure must not look like a lost race
            with lock:
                errors.append(exc)
            return
        if won:
            with lock:
                winners.append(index)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, f"racers raised: {errors!r}"
    return winners


def row_of(ledger: Ledger, thread_id: str, question_id: str) -> QuestionRecord:
    record = ledger.get(thread_id, question_id)
    assert record is not None, f"question {question_id} must be readable"
    return record


def advanced(result: AdvanceResult) -> QuestionRecord:
    assert result.record is not None, f"advance must return the question's row, got {result!r}"
    return result.record


def make_vote(voter: str, action: str, answer_id: str | None = None, **extra: Any) -> Vote:
    return Vote(
        voter=f"issuer|{voter}",
        by=voter,
        answer={"action": action, **extra},
        answer_id=answer_id or f"a-{uuid.uuid4().hex}",
        at=format_rfc3339(T0),
        via="api",
        sender=f"sub-{voter}",
    )


def make_failure(thread_id: str, kind: str, target_id: str, message_id: str) -> ThreadFailure:
    return ThreadFailure(thread_id, FailureKind(kind), target_id, message_id, "ValueError", "2026-09-11T09:00:00Z")


__all__ = (
    "T0",
    "LedgerFactory",
    "advanced",
    "make_decision",
    "make_failure",
    "make_vote",
    "race",
    "row_of",
    "sample_envelope",
)
