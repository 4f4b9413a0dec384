"""The answer API's decision path: decide at once with the router's rules, hand the resume to the router,
and never lose a decision whose resume could not be queued (the sweep hands it over again)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.entry_queues import FailingOnce

from agent_wait import InMemoryAnnounce
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import (
    AnswerService,
    InMemoryDeadLetter,
    InMemoryEntryQueue,
    OutcomeKind,
    RefusalReason,
    Router,
    Sweep,
    VerdictKind,
)
from agent_wait.engine.checks import Answerer
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
FINANCE_USER = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-1", groups=("finance",))


def _world(queue: InMemoryEntryQueue) -> tuple[Router, AnswerService, InMemoryAnnounce, str, str]:
    ledger, announce = InMemoryLedger(), InMemoryAnnounce()
    clock = lambda: T0  # noqa: E731
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=announce,
        clock=clock,
    )
    order = f"o-api-{id(queue)}"
    (question_id,) = router.handle(
        json.dumps({"thread_id": "t-api", "input": {"order_id": order, "amount": 900}})
    ).asked
    return router, AnswerService(ledger, queue, clock=clock), announce, question_id, order


def _deliver(router: Router, queue: InMemoryEntryQueue) -> list[Any]:
    outcomes = [router.handle(json.dumps(message), deduplication_id=dedup) for message, _, dedup in queue.messages]
    queue.messages.clear()
    return outcomes


def test_a_person_decides_at_once_and_the_router_carries_on_from_that_decision() -> None:
    # GIVEN a parked refund and finance's API user
    queue = InMemoryEntryQueue()
    router, service, announce, question_id, order = _world(queue)

    # WHEN they approve through the answer service, then the resume reaches the router (twice, as SQS may)
    result = service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:k1")
    assert (result.verdict.kind, result.handed_over) == (VerdictKind.DECIDED, True)
    queue.messages.append(queue.messages[0])
    outcomes = _deliver(router, queue)

    # THEN the decision is the person's, the agent resumed once, and the decision was announced once
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED, OutcomeKind.REFUSED]
    row = router.ledger.get("t-api", question_id)
    assert row is not None
    assert (row.status, row.answered_by, row.via, row.sender) == (
        QuestionStatus.RESUMED,
        "fin@example.com",
        "api",
        "https://issuer#u-1",
    )
    assert graphs.refunds_paid(order) == 1
    assert [step.value for step, _ in announce.events].count("answered") == 1
    # AND the same idempotency key again repeats the outcome; another answer learns who won
    again = service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:k1")
    late = service.answer(question_id, {"action": "reject"}, FINANCE_USER, answer_id="api:k2")
    assert (again.verdict.kind, late.verdict.kind) == (VerdictKind.REPEATED, VerdictKind.REFUSED)
    assert late.verdict.reason is RefusalReason.ALREADY_DECIDED
    assert late.verdict.record is not None
    assert late.verdict.record.answered_by == "fin@example.com"


def test_a_decision_whose_resume_was_not_queued_is_handed_over_by_the_sweep() -> None:
    # GIVEN a decision made while the entry queue was unreachable
    queue = FailingOnce()
    router, service, _, question_id, order = _world(queue)
    result = service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:k1")
    assert (result.verdict.kind, result.handed_over) == (VerdictKind.DECIDED, False)
    assert queue.messages == []

    # WHEN the sweep runs a little later
    sweep = Sweep(router.ledger, queue, clock=lambda: T0 + timedelta(minutes=2))
    report = sweep.run()

    # THEN it handed the decision over, and the router applied it once
    assert report.handed_over == (question_id,)
    assert [o.kind for o in _deliver(router, queue)] == [OutcomeKind.APPLIED]
    assert graphs.refunds_paid(order) == 1
    assert Sweep(router.ledger, queue, clock=lambda: T0 + timedelta(minutes=5)).run().handed_over == ()


def test_the_service_refuses_with_the_routers_reasons_and_the_question_stays_open() -> None:
    queue = InMemoryEntryQueue()
    router, service, _, question_id, _ = _world(queue)
    edit = {"action": "approve", "args": {"amount": 1}}
    cases = [
        (service.answer(question_id, {"action": "escalate"}, FINANCE_USER, answer_id="a"), "action_not_allowed"),
        (service.answer(question_id, edit, FINANCE_USER, answer_id="b"), "edit_not_allowed"),
        (service.answer("no-such-question", {"action": "approve"}, FINANCE_USER, answer_id="c"), None),
    ]
    assert [(r.verdict.kind.value, r.verdict.reason) for r, _ in cases] == [
        ("refused", RefusalReason.ACTION_NOT_ALLOWED),
        ("refused", RefusalReason.EDIT_NOT_ALLOWED),
        ("refused", RefusalReason.UNKNOWN_QUESTION),
    ]
    row = router.ledger.get("t-api", question_id)
    assert row is not None
    assert row.status is QuestionStatus.OPEN
    assert queue.messages == []
