"""A person's cancel of a question a durable function waits on, under a policy whose default approves and that
declares no `on_cancel`: the router completes the callback with the cancellation, never the approving default, so
the handler's `answer.get("action") != "approve"` branch runs (issue 40)."""

from __future__ import annotations

import json

import pytest

from agent_wait import WaitPolicy
from agent_wait.asking.callbacks import CallbacksOnly, callback_question_id, callback_source
from agent_wait.contract.envelope import Question
from agent_wait.contract.schema import QuestionStatus
from agent_wait.durable import record_question
from agent_wait.engine import AnswerService, InMemoryDeadLetter, InMemoryEntryQueue, OutcomeKind, Router, VerdictKind
from agent_wait.engine.checks import Answerer
from agent_wait.ledger import InMemoryLedger
from hosted_router import T0

FIN = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-fin")
CALLBACK = "cb-cancel-1"


class Completed:
    """A callback completer that keeps what it was given, as JSON."""

    def __init__(self) -> None:
        self.results: list[tuple[str, object]] = []

    def succeed(self, callback_id: str, result: str, *, execution: str | None = None) -> None:
        self.results.append((callback_id, json.loads(result)))


@pytest.mark.parametrize("quorum", [None, 2], ids=["plain", "quorum"])
def test_a_cancel_completes_the_callback_with_the_cancellation_not_the_default(quorum: int | None) -> None:
    # GIVEN a durable execution waiting on a question whose policy's default approves
    ledger, queue, completed = InMemoryLedger(), InMemoryEntryQueue(), Completed()
    policy = WaitPolicy(timeout="PT1H", default={"action": "approve"}, quorum=quorum)
    question_id = callback_question_id(CALLBACK)
    asked = Question("arn:execution:1", question_id, {"refund": 900}, policy, source=callback_source(CALLBACK))
    record_question(ledger, asked, now=T0)

    # WHEN one person cancels it and the router applies the cancel
    result = AnswerService(ledger, queue, clock=lambda: T0).cancel(question_id, "duplicate", FIN, answer_id="api:c1")
    router = Router(CallbacksOnly(), ledger, dead_letter=InMemoryDeadLetter(), callbacks=completed, clock=lambda: T0)
    outcomes = [router.handle(json.dumps(m), deduplication_id=d) for m, _, d in queue.messages]

    # THEN the callback got the cancellation, once; the row is cancelled and resumed
    assert result.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    assert completed.results == [(CALLBACK, {"action": "cancelled", "reason": "duplicate", "by": "fin@example.com"})]
    record = ledger.find(question_id)
    assert record is not None
    assert (record.outcome, record.status) == (QuestionStatus.CANCELLED, QuestionStatus.RESUMED)
