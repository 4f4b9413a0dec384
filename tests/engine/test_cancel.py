"""A person cancels an open question: decided once through the one desk, the agent resumed once with the policy's
cancellation answer, the row saying cancelled, who and why; rivals refused either way.

In-process: a real LangGraph graph on an in-memory checkpointer, the router, the answer service and the sweep over
one in-memory ledger and entry queue, as the deployed functions share a table and a queue.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, NotRequired, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from tests.support.entry_queues import FailingOnce

from agent_wait import InMemoryAnnounce, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import (
    AnswerService,
    InMemoryDeadLetter,
    InMemoryEntryQueue,
    Metric,
    OutcomeKind,
    RecordingMetrics,
    RefusalReason,
    Router,
    Sweep,
    VerdictKind,
)
from agent_wait.engine.audit import audit_row
from agent_wait.engine.cancelling import MAX_REASON_LENGTH
from agent_wait.engine.checks import Answerer
from agent_wait.langgraph import LangGraphAdapter, ask
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
CANCELLED_ANSWER = {"action": "reject", "reason": "cancelled by an operator"}
DECLARED = WaitPolicy(timeout="P1D", default={"action": "reject"}, on_cancel=CANCELLED_ANSWER)
UNDECLARED = WaitPolicy(timeout="P1D", default={"action": "reject", "reason": "timeout"})
FINANCE_ONLY = WaitPolicy(timeout="P1D", default={"action": "reject"}, answerer_groups=("finance",))
QUORUM = WaitPolicy(timeout="P1D", default={"action": "reject"}, quorum=2, on_cancel={"action": "reject"})
POLICIES = {"declared": DECLARED, "undeclared": UNDECLARED, "finance": FINANCE_ONLY, "quorum": QUORUM}
FIN = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-fin", groups=("finance",))
OPS = Answerer(answered_by="ops@example.com", via="api", sender="https://issuer#u-ops", groups=("ops",))

RECEIVED: dict[str, list[Any]] = {}
"""What each run's question returned to the agent, by order id: one entry per resume that got past `ask`."""


class State(TypedDict):
    order_id: str
    policy: str
    answer: NotRequired[Any]


def _review(state: State) -> dict[str, Any]:
    answer = ask({"refund": state["order_id"]}, policy=POLICIES[state["policy"]])
    RECEIVED.setdefault(state["order_id"], []).append(answer)
    return {"answer": answer}


def _graph() -> Any:
    builder = StateGraph(State)
    builder.add_node("review", _review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=InMemorySaver())


class World:
    """One ledger and entry queue shared by the router, the answer service and the sweep."""

    def __init__(self, queue: InMemoryEntryQueue | None = None) -> None:
        self.ledger, self.announce, self.metrics = InMemoryLedger(), InMemoryAnnounce(), RecordingMetrics()
        self.queue = queue if queue is not None else InMemoryEntryQueue()
        self.router = Router(
            LangGraphAdapter(_graph()),
            self.ledger,
            dead_letter=InMemoryDeadLetter(),
            announce=self.announce,
            metrics=self.metrics,
            clock=lambda: T0,
        )
        self.service = AnswerService(self.ledger, self.queue, clock=lambda: T0)

    def ask(self, thread_id: str, policy: str) -> str:
        start = {"thread_id": thread_id, "input": {"order_id": thread_id, "policy": policy}}
        (question_id,) = self.router.handle(json.dumps(start)).asked
        return question_id

    def deliver(self, *, twice: bool = False) -> list[Any]:
        """Hand every queued message to the router, in order (each twice, as SQS may redeliver)."""
        outcomes = []
        for message, _, dedup in self.queue.messages:
            for _ in range(2 if twice else 1):
                outcomes.append(self.router.handle(json.dumps(message), deduplication_id=dedup))
        self.queue.messages.clear()
        return outcomes

    def row(self, thread_id: str, question_id: str) -> Any:
        record = self.ledger.get(thread_id, question_id)
        assert record is not None
        return record

    def told(self) -> list[str]:
        return [step.value for step, _ in self.announce.events]


def test_a_cancel_resumes_the_agent_once_with_the_declared_answer_and_the_row_says_who_and_why() -> None:
    # GIVEN an agent waiting on a question whose policy declares its cancellation answer
    world, thread_id = World(), "t-cancel-declared"
    question_id = world.ask(thread_id, "declared")

    # WHEN finance cancels it with a reason, and the hand-over reaches the router twice (as SQS may)
    result = world.service.cancel(question_id, "the customer withdrew the request", FIN, answer_id="api:c1")
    outcomes = world.deliver(twice=True)

    # THEN the cancel decided, the agent resumed once with the declared answer, and nothing else ran
    assert (result.verdict.kind, result.handed_over) == (VerdictKind.DECIDED, True)
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED, OutcomeKind.REFUSED]
    assert RECEIVED[thread_id] == [CANCELLED_ANSWER]
    # AND the row says cancelled, by whom, through which door and why; then resumed
    row = world.row(thread_id, question_id)
    assert (row.status, row.outcome, row.answered_by, row.via, row.sender, row.reason) == (
        QuestionStatus.RESUMED,
        QuestionStatus.CANCELLED,
        "fin@example.com",
        "api",
        "https://issuer#u-fin",
        "the customer withdrew the request",
    )
    assert row.answer == CANCELLED_ANSWER
    # AND it was announced cancelled then resumed, once each, and counted as a cancel
    assert world.told() == ["created", "cancelled", "resumed"]
    assert world.metrics.total(Metric.CANCELLED) == 1
    assert world.metrics.total(Metric.ACCEPTED) == 0
    # AND the audit trail shows who and why
    audited = audit_row(row)
    assert (audited["outcome"], audited["answered_by"], audited["reason"]) == (
        "cancelled",
        "fin@example.com",
        "the customer withdrew the request",
    )


def test_without_a_declared_cancellation_answer_the_agent_receives_a_cancellation_never_the_default() -> None:
    # GIVEN a question whose policy declares no on_cancel (its default is a reject with a reason of its own)
    world, thread_id = World(), "t-cancel-default"
    question_id = world.ask(thread_id, "undeclared")

    # WHEN finance cancels it
    world.service.cancel(question_id, "duplicate request", FIN, answer_id="api:c1")
    world.deliver()

    # THEN the agent receives the cancellation, with why and who, not the default (issue 40: a default may approve)
    cancellation = {"action": "cancelled", "reason": "duplicate request", "by": "fin@example.com"}
    assert RECEIVED[thread_id] == [cancellation]
    row = world.row(thread_id, question_id)
    assert (row.outcome, row.answer) == (QuestionStatus.CANCELLED, cancellation)


def test_a_rival_answer_after_a_cancel_is_refused_through_every_door() -> None:
    # GIVEN a question cancelled through the API, not yet handed to the router
    world, thread_id = World(), "t-cancel-rival"
    question_id = world.ask(thread_id, "declared")
    world.service.cancel(question_id, "wrong customer", FIN, answer_id="api:c1")

    # WHEN another person approves through the API, and a system approves on the queue
    late = world.service.answer(question_id, {"action": "approve"}, FIN, answer_id="api:a1")
    rival = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}, "answer_id": "q1"}
    by_queue = world.router.handle(json.dumps(rival))
    world.deliver()

    # THEN both are refused as cancelled, and the agent received only the cancellation answer, once
    assert (late.verdict.kind, late.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.CANCELLED)
    assert (by_queue.kind, by_queue.reason) == (OutcomeKind.REFUSED, RefusalReason.CANCELLED)
    assert RECEIVED[thread_id] == [CANCELLED_ANSWER]
    # AND the same cancel again (its idempotency key resent) repeats its outcome, a second one is refused
    again = world.service.cancel(question_id, "wrong customer", FIN, answer_id="api:c1")
    other = world.service.cancel(question_id, "another reason", FIN, answer_id="api:c2")
    assert again.verdict.kind is VerdictKind.REPEATED
    assert (other.verdict.kind, other.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.CANCELLED)
    assert world.row(thread_id, question_id).reason == "wrong customer"


def test_a_cancel_after_an_answer_is_refused_and_changes_nothing() -> None:
    world, thread_id = World(), "t-cancel-late"
    question_id = world.ask(thread_id, "declared")
    world.service.answer(question_id, {"action": "approve"}, FIN, answer_id="api:a1")

    late = world.service.cancel(question_id, "too late", OPS, answer_id="api:c1")
    world.deliver()

    assert (late.verdict.kind, late.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.ALREADY_DECIDED)
    row = world.row(thread_id, question_id)
    assert (row.outcome, row.answered_by, row.reason) == (QuestionStatus.ANSWERED, "fin@example.com", None)
    assert RECEIVED[thread_id] == [{"action": "approve"}]


def test_only_those_who_may_answer_may_cancel_and_a_cancel_needs_a_reason() -> None:
    # GIVEN a question only finance may answer
    world, thread_id = World(), "t-cancel-who"
    question_id = world.ask(thread_id, "finance")

    # WHEN ops cancels it, and finance tries without a reason and with a far too long one
    cases = [
        world.service.cancel(question_id, "not mine", OPS, answer_id="api:c1"),
        world.service.cancel(question_id, "   ", FIN, answer_id="api:c2"),
        world.service.cancel(question_id, "x" * (MAX_REASON_LENGTH + 1), FIN, answer_id="api:c3"),
        world.service.cancel("no-such-question", "why", FIN, answer_id="api:c4"),
    ]

    # THEN each is refused with its reason and detail, nothing was decided or handed over
    assert [(r.verdict.kind, r.verdict.reason) for r in cases] == [
        (VerdictKind.REFUSED, RefusalReason.ANSWERER_NOT_ALLOWED),
        (VerdictKind.REFUSED, RefusalReason.INVALID_ANSWER),
        (VerdictKind.REFUSED, RefusalReason.INVALID_ANSWER),
        (VerdictKind.REFUSED, RefusalReason.UNKNOWN_QUESTION),
    ]
    assert cases[0].verdict.detail == ("only members of finance may cancel this question; ops@example.com is not one")
    assert "needs a reason" in cases[1].verdict.detail
    assert f"the most is {MAX_REASON_LENGTH}" in cases[2].verdict.detail
    assert world.row(thread_id, question_id).status is QuestionStatus.OPEN
    assert world.queue.messages == []


def test_a_cancel_of_a_quorum_question_decides_at_once_without_counting_as_a_vote() -> None:
    world, thread_id = World(), "t-cancel-quorum"
    question_id = world.ask(thread_id, "quorum")

    result = world.service.cancel(question_id, "superseded", FIN, answer_id="api:c1")
    world.deliver()

    assert result.verdict.kind is VerdictKind.DECIDED
    row = world.row(thread_id, question_id)
    assert (row.status, row.outcome, row.progress.votes) == (QuestionStatus.RESUMED, QuestionStatus.CANCELLED, ())
    assert RECEIVED[thread_id] == [{"action": "reject"}]


def test_a_cancel_whose_resume_was_not_queued_is_handed_over_by_the_sweep() -> None:
    # GIVEN a cancel decided while the entry queue was unreachable
    world, thread_id = World(FailingOnce()), "t-cancel-sweep"
    question_id = world.ask(thread_id, "declared")
    result = world.service.cancel(question_id, "vendor refunded", FIN, answer_id="api:c1")
    assert (result.verdict.kind, result.handed_over) == (VerdictKind.DECIDED, False)

    # WHEN the sweep runs a little later
    report = Sweep(world.ledger, world.queue, clock=lambda: T0 + timedelta(minutes=2)).run()

    # THEN it handed the cancel over, and the agent received the cancellation answer once
    assert report.handed_over == (question_id,)
    assert [o.kind for o in world.deliver()] == [OutcomeKind.APPLIED]
    assert RECEIVED[thread_id] == [CANCELLED_ANSWER]
    assert Sweep(world.ledger, world.queue, clock=lambda: T0 + timedelta(minutes=5)).run().handed_over == ()
