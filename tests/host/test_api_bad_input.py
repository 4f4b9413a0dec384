"""What the answer API refuses before it touches anything: an answer no store can hold (422), a question id no table
could hold a key for (404, never a store error). On the DynamoDB ledger over the emulator, as deployed."""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from tests.support.api_events import call

from agent_wait.aws import DynamoDbLedger
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.policy import WaitPolicy
from agent_wait.testing.ledger_contract import T0

ALICE = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com", "email_verified": "true"}


@pytest.fixture
def api(question_table: tuple[str, Any], unique: str) -> Any:
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    question = Question(f"t-{unique}", f"q-{unique}", {"function": "refund"}, policy=WaitPolicy(timeout="P3D"))
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0)
    queue = InMemoryEntryQueue()
    context = ApiContext(ledger=ledger, service=AnswerService(ledger, queue, clock=lambda: T0), clock=lambda: T0)
    return create_app(lambda: context), ledger, question, queue


def test_an_answer_holding_an_integer_no_store_can_hold_is_422_and_decides_nothing(api: Any) -> None:
    app, ledger, question, queue = api
    reply = call(
        app,
        "POST",
        f"/questions/{question.question_id}/answer",
        {"answer": {"action": "approve", "n": 10**40}},
        claims=ALICE,
    )
    assert reply.status == 422, reply.body
    assert reply.json()["reason"] == "bad_answer"
    assert "integer of 133 bits" in reply.json()["detail"]
    assert str(10**40) not in reply.body, "the value itself may be personal data"
    record = ledger.find(question.question_id)
    assert record is not None
    assert record.status is QuestionStatus.OPEN
    assert queue.messages == []


@pytest.mark.parametrize("length", [1_100, 3_000])
def test_a_question_id_longer_than_any_key_is_404_not_a_store_error(
    api: Any, length: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DynamoDB refuses a key over 1 KiB (sort) or 2 KiB (index) with ValidationException, a 500 here; moto does
    # not, so the test asks that the store is never asked at all for an id no question can have.
    app, ledger, *_ = api
    asked: list[str] = []
    find = ledger.find
    monkeypatch.setattr(ledger, "find", lambda question_id: asked.append(question_id) or find(question_id))
    question_id = "q" * length
    path = f"/questions/{urllib.parse.quote(question_id)}"
    for method, route, body in (("GET", path, None), ("POST", f"{path}/answer", {"answer": {"action": "approve"}})):
        reply = call(app, method, route, body, claims=ALICE)
        assert reply.status == 404, (method, reply.status, reply.body[:200])
        assert reply.json()["reason"] == "unknown_question"
    assert asked == []
