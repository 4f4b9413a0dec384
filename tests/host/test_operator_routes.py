"""The operators' routes: `POST /questions/{id}/cancel` and `POST /questions/answers`, each item decided on its own.

In-process: the answer API's routes (`create_app`, a signed-in person's JWT claims), the real router on a LangGraph
refund graph, one in-memory ledger and entry queue, as deployed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.api_events import Response, call

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryDeadLetter, InMemoryEntryQueue, OutcomeKind, Router
from agent_wait.host.api import ApiContext, _operators, create_app
from agent_wait.host.api._operators import MAX_BULK_ANSWERS
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
ALICE = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com", "email_verified": "true"}


class World:
    def __init__(self) -> None:
        self.ledger, self.queue = InMemoryLedger(), InMemoryEntryQueue()
        self.router = Router(
            LangGraphAdapter(graphs.build_graph(InMemorySaver())),
            self.ledger,
            dead_letter=InMemoryDeadLetter(),
            clock=lambda: T0,
        )
        service = AnswerService(self.ledger, self.queue, clock=lambda: T0)
        self.app = create_app(lambda: ApiContext(ledger=self.ledger, service=service, clock=lambda: T0))

    def ask(self, order_id: str) -> str:
        start = {"thread_id": f"t-{order_id}", "input": {"order_id": order_id, "amount": 900}}
        (question_id,) = self.router.handle(json.dumps(start)).asked
        return question_id

    def post(self, path: str, body: Any, *, claims: dict[str, Any] | None = ALICE, **headers: str) -> Response:
        return call(self.app, "POST", path, body, claims=claims, headers=headers)

    def deliver(self) -> list[Any]:
        outcomes = []
        for message, _, dedup in self.queue.messages:
            outcomes.append(self.router.handle(json.dumps(message), deduplication_id=dedup))
        self.queue.messages.clear()
        return outcomes

    def status(self, order_id: str, question_id: str) -> QuestionStatus:
        record = self.ledger.get(f"t-{order_id}", question_id)
        assert record is not None
        return record.status


def test_a_cancel_decides_once_and_reports_who_and_why() -> None:
    # GIVEN a parked refund
    world = World()
    question_id = world.ask("o-op-cancel")

    # WHEN alice cancels it with a reason, then resends the same request (same Idempotency-Key)
    first = world.post(f"/questions/{question_id}/cancel", {"reason": "customer withdrew"}, **{"idempotency-key": "k"})
    again = world.post(f"/questions/{question_id}/cancel", {"reason": "customer withdrew"}, **{"idempotency-key": "k"})
    outcomes = world.deliver()

    # THEN it won once, says cancelled by alice and why; the repeat changed nothing; the agent took the default once
    assert first.status == 200, first.body
    body = first.json()
    assert (body["result"], body["status"], body["handed_over"]) == ("won", "cancelled", True)
    assert (body["outcome"]["status"], body["outcome"]["answered_by"], body["outcome"]["reason"]) == (
        "cancelled",
        "alice@example.com",
        "customer withdrew",
    )
    assert (again.status, again.json()["result"]) == (200, "repeated")
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    assert world.status("o-op-cancel", question_id) is QuestionStatus.RESUMED
    assert graphs.refunds_paid("o-op-cancel") == 0  # the policy's default is reject
    # AND an answer after the cancel is refused 409 cancelled
    late = world.post(f"/questions/{question_id}/answer", {"answer": {"action": "approve"}})
    assert (late.status, late.json()["reason"]) == (409, "cancelled")


def test_a_cancel_after_an_answer_is_refused_with_409() -> None:
    world = World()
    question_id = world.ask("o-op-answered")
    assert world.post(f"/questions/{question_id}/answer", {"answer": {"action": "approve"}}).status == 200

    late = world.post(f"/questions/{question_id}/cancel", {"reason": "too late"})

    assert late.status == 409, late.body
    assert late.json()["reason"] == "already_decided"
    assert late.json()["question"]["outcome"]["status"] == "answered"


def test_a_bad_cancel_request_is_refused_with_its_reason_and_decides_nothing() -> None:
    world = World()
    question_id = world.ask("o-op-bad-cancel")
    path = f"/questions/{question_id}/cancel"
    cases = [
        (world.post(path, {"reason": "x"}, claims=None), 401, "not_signed_in"),
        (world.post(path, "not json"), 400, "not_json"),
        (world.post(path, ["reason"]), 400, "not_an_object"),
        (world.post(path, {}), 400, "missing_reason"),
        (world.post(path, {"reason": "x", "answer": {"action": "approve"}}), 400, "unknown_field"),
        (world.post(path, {"reason": "  "}), 422, "invalid_answer"),
        (world.post("/questions/no-such-question/cancel", {"reason": "x"}), 404, "unknown_question"),
        (world.post(f"/questions/{'q' * 600}/cancel", {"reason": "x"}), 404, "unknown_question"),
    ]
    assert [(r.status, r.json()["reason"]) for r, _, _ in cases] == [(s, reason) for _, s, reason in cases]
    assert world.status("o-op-bad-cancel", question_id) is QuestionStatus.OPEN
    assert world.queue.messages == []


def test_twenty_five_mixed_answers_are_each_decided_on_their_own_with_their_own_result() -> None:
    # GIVEN 22 parked refunds, one of them decided already
    world = World()
    orders = [f"o-bulk-{n}" for n in range(22)]
    questions = [world.ask(order) for order in orders]
    assert world.post(f"/questions/{questions[20]}/answer", {"answer": {"action": "reject"}}).status == 200
    world.deliver()
    approve = {"action": "approve"}

    # WHEN alice sends 25 answers at once: 19 valid, a duplicate, an action and an edit not allowed, an unknown
    # question, one already decided, and one that is no answer of ours
    items = [{"question_id": q, "answer": approve} for q in questions[:19]]
    items += [
        {"question_id": questions[0], "answer": {"action": "reject"}},
        {"question_id": questions[19], "answer": {"action": "escalate"}},
        {"question_id": questions[19], "answer": {"action": "approve", "args": {"amount": 1}}},
        {"question_id": "no-such-question", "answer": approve},
        {"question_id": questions[20], "answer": approve},
        {"question_id": questions[21], "answer": "yes"},
    ]
    assert len(items) == MAX_BULK_ANSWERS
    reply = world.post("/questions/answers", {"answers": items})
    world.deliver()

    # THEN each item has the single route's own result or problem, in order
    assert reply.status == 200, reply.body
    results = reply.json()["results"]
    assert [r["question_id"] for r in results] == [item["question_id"] for item in items]
    assert [(r["status"], r["body"].get("result") or r["body"]["reason"]) for r in results] == [
        *[(200, "won")] * 19,
        (409, "already_decided"),
        (422, "action_not_allowed"),
        (422, "edit_not_allowed"),
        (404, "unknown_question"),
        (409, "already_decided"),
        (422, "action_not_allowed"),
    ]
    assert reply.json()["summary"] == {"won": 19, "repeated": 0, "voted": 0, "refused": 6}
    # AND each valid one reached its agent once; the refused ones stay as they were
    assert [graphs.refunds_paid(order) for order in orders[:19]] == [1] * 19
    assert world.status(orders[0], questions[0]) is QuestionStatus.RESUMED
    assert world.status(orders[19], questions[19]) is QuestionStatus.OPEN
    assert world.status(orders[21], questions[21]) is QuestionStatus.OPEN
    assert graphs.refunds_paid(orders[20]) == 0


def test_the_same_bulk_request_resent_with_its_key_repeats_each_outcome() -> None:
    world = World()
    questions = [world.ask(f"o-bulk-key-{n}") for n in range(2)]
    body = {"answers": [{"question_id": q, "answer": {"action": "approve"}} for q in questions]}

    first = world.post("/questions/answers", body, **{"idempotency-key": "batch-1"})
    again = world.post("/questions/answers", body, **{"idempotency-key": "batch-1"})

    assert [r["body"]["result"] for r in first.json()["results"]] == ["won", "won"]
    assert [r["body"]["result"] for r in again.json()["results"]] == ["repeated", "repeated"]
    assert len(world.queue.messages) == 2


def test_a_malformed_or_oversized_bulk_request_is_a_400_and_decides_nothing() -> None:
    world = World()
    question_id = world.ask("o-bulk-bad")
    good = {"question_id": question_id, "answer": {"action": "approve"}}
    cases = [
        ({"answers": [good] * (MAX_BULK_ANSWERS + 1)}, "too_many_answers"),
        ({"answers": []}, "missing_answers"),
        ({"answers": good}, "missing_answers"),
        ([good], "not_an_object"),
        ({"answers": [good], "mode": "all"}, "unknown_field"),
        ({"answers": [good, {"question_id": question_id}]}, "bad_answer_item"),
        ({"answers": [good, {"question_id": 7, "answer": {}}]}, "bad_answer_item"),
        ({"answers": [good, {**good, "note": "hi"}]}, "unknown_field"),
        ({"answers": [good, {**good, "valid_until": "tomorrow"}]}, "bad_valid_until"),
    ]
    replies = [world.post("/questions/answers", body) for body, _ in cases]
    assert [(r.status, r.json()["reason"]) for r in replies] == [(400, reason) for _, reason in cases]
    assert replies[0].json()["detail"] == "26 answers in one request; the most is 25: send the rest in another"
    assert replies[5].json()["index"] == 1
    assert world.status("o-bulk-bad", question_id) is QuestionStatus.OPEN
    assert world.queue.messages == []
    assert world.post("/questions/answers", {"answers": [good]}, claims=None).status == 401


def test_cancel_and_every_bulk_item_decide_through_the_one_desk(monkeypatch: Any) -> None:
    """The operators' doors keep no rule of their own: each cancel and each bulk item reaches `AnswerDesk.decide`."""
    from agent_wait.engine import AnswerDesk

    reached: list[tuple[str, bool, str | None]] = []
    decide = AnswerDesk.decide

    def spied(self: AnswerDesk, attempt: Any, thread: Any) -> Any:
        reached.append((attempt.question_id, attempt.cancel, attempt.reason))
        return decide(self, attempt, thread)

    monkeypatch.setattr(AnswerDesk, "decide", spied)
    world = World()
    first, second, third = (world.ask(f"o-desk-{n}") for n in range(3))

    world.post(f"/questions/{first}/cancel", {"reason": "duplicate"})
    items = [{"question_id": q, "answer": {"action": "approve"}} for q in (second, third, first)]
    world.post("/questions/answers", {"answers": items})

    assert reached == [(first, True, "duplicate"), (second, False, None), (third, False, None), (first, False, None)]


def test_busy_threads_share_one_wait_budget_so_a_bulk_request_ends_inside_api_gateways_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN three questions whose threads a router run holds (the fixed clock never lets its lease lapse)
    world = World()
    question_ids = [world.ask(f"o-busy-{i}") for i in range(3)]
    for i in range(3):
        assert world.ledger.acquire_lease(f"t-o-busy-{i}", "a-router-run", now=T0, seconds=900) is not None
    waits: list[float | None] = []
    answer = AnswerService.answer

    def spy(self: AnswerService, *args: Any, lease_wait: float | None = None, **kwargs: Any) -> Any:
        waits.append(lease_wait)
        return answer(self, *args, lease_wait=lease_wait, **kwargs)

    monkeypatch.setattr(AnswerService, "answer", spy)
    monkeypatch.setattr(_operators, "BULK_WAIT_SECONDS", 0.3)

    # WHEN one request answers all three
    items = [{"question_id": question_id, "answer": {"action": "approve"}} for question_id in question_ids]
    response = world.post("/questions/answers", {"answers": items})

    # THEN each is refused thread_busy, and the waiting shared the request's budget: 25 items each waiting the
    # service's full lease wait (3 s) would outlast API Gateway's 30 s
    results = json.loads(response.body)["results"]
    assert [(r["status"], r["body"]["reason"]) for r in results] == [(409, "thread_busy")] * 3
    assert all(wait is not None and wait <= 0.3 for wait in waits), waits
    assert all(wait is not None and wait <= 0 for wait in waits[1:]), waits  # the budget was spent on the first
