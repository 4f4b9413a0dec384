"""A cancel never approves by accident: without an explicit `on_cancel`, a person's cancel delivers a cancellation
(`{"action": "cancelled", "reason", "by"}`, or the dialect's own refusal) the agent can tell apart from an answer,
never the policy's default, and a `@wait` body never runs on it; on a quorum question too (issue 40).

In process: real LangGraph graphs (a `@wait` node, `HumanInTheLoopMiddleware`, an Agent Inbox graph) on an
in-memory checkpointer, the router and the answer service over one in-memory ledger and entry queue, as the deployed
functions share a table and a queue.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

import pytest
import tests.agents.agent_inbox_graphs as inbox
import tests.agents.hitl_graphs as hitl
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel

from agent_wait import InMemoryAnnounce, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import (
    AnswerService,
    InMemoryDeadLetter,
    InMemoryEntryQueue,
    OutcomeKind,
    RefusalReason,
    Router,
    VerdictKind,
)
from agent_wait.engine.checks import Answerer
from agent_wait.langgraph import LangGraphAdapter, wait
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
APPROVING = WaitPolicy(timeout="P1D", default={"action": "approve"})
APPROVING_QUORUM = WaitPolicy(timeout="P1D", default={"action": "approve"}, quorum=2)
FIN = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-fin", groups=("finance",))
REASON = "the customer withdrew the request"
CANCELLATION = {"action": "cancelled", "reason": REASON, "by": "fin@example.com"}

_lock = threading.Lock()
REFUNDS: list[tuple[str, int]] = []
"""Every refund whose `@wait` body really ran: (order id, amount)."""


class State(TypedDict):
    order_id: str
    amount: int
    quorum: bool
    result: NotRequired[Any]


@wait(APPROVING)
def issue_refund(order_id: str, amount: int) -> str:
    with _lock:
        REFUNDS.append((order_id, amount))
    return f"refunded {amount}"


@wait(APPROVING_QUORUM)
def issue_large_refund(order_id: str, amount: int) -> str:
    with _lock:
        REFUNDS.append((order_id, amount))
    return f"refunded {amount}"


def _refund(state: State) -> dict[str, Any]:
    pay = issue_large_refund if state["quorum"] else issue_refund
    return {"result": pay(state["order_id"], state["amount"])}


def _refund_graph(checkpointer: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("refund", _refund)
    builder.add_edge(START, "refund")
    builder.add_edge("refund", END)
    return builder.compile(checkpointer=checkpointer)


def _approve_only_graph(checkpointer: Any) -> Any:
    """The HITL agent with `issue_refund` gated to approve only: no decision of the middleware's could cancel it."""
    only = {"issue_refund": {"allowed_decisions": ["approve"]}}
    middleware = [HumanInTheLoopMiddleware(interrupt_on=only)]
    model = hitl.ScriptedModel()
    return create_agent(model, tools=[hitl.issue_refund], middleware=middleware, checkpointer=checkpointer)


class Limit(BaseModel):
    """The answer a schema question expects: LangGraph validates the resume against it inside the agent."""

    limit: int


class Asked(TypedDict):
    schema: str
    answer: NotRequired[Any]


SCHEMAS: dict[str, Any] = {"model": Limit, "open": {"type": "object"}}


def _ask_limit(state: Asked) -> dict[str, Any]:
    return {"answer": interrupt({"raise the limit?": 500}, response_schema=SCHEMAS[state["schema"]])}


def _schema_graph(checkpointer: Any) -> Any:
    builder = StateGraph(Asked)
    builder.add_node("ask", _ask_limit)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=checkpointer)


class World:
    """A router over `graph` and the answer service, sharing one ledger and entry queue."""

    def __init__(self, build: Any) -> None:
        self.ledger, self.queue = InMemoryLedger(), InMemoryEntryQueue()
        self.graph = build(InMemorySaver())
        self.router = Router(
            LangGraphAdapter(self.graph),
            self.ledger,
            dead_letter=InMemoryDeadLetter(),
            announce=InMemoryAnnounce(),
            clock=lambda: T0,
        )
        self.service = AnswerService(self.ledger, self.queue, clock=lambda: T0)

    def start(self, thread_id: str, graph_input: dict[str, Any]) -> str:
        started = self.router.handle(json.dumps({"thread_id": thread_id, "input": graph_input}))
        (question_id,) = started.asked
        return question_id

    def cancel(self, question_id: str) -> Any:
        result = self.service.cancel(question_id, REASON, FIN, answer_id=f"api:cancel-{question_id}")
        outcomes = [self.router.handle(json.dumps(m), deduplication_id=d) for m, _, d in self.queue.messages]
        self.queue.messages.clear()
        return result, outcomes

    def values(self, thread_id: str) -> dict[str, Any]:
        return self.graph.get_state({"configurable": {"thread_id": thread_id}}).values

    def row(self, thread_id: str, question_id: str) -> Any:
        record = self.ledger.get(thread_id, question_id)
        assert record is not None
        return record


@pytest.mark.parametrize("quorum", [True, False], ids=["quorum", "plain"])
def test_one_persons_cancel_of_a_question_whose_default_approves_never_runs_the_wait_body(quorum: bool) -> None:
    # GIVEN an agent parked on a @wait refund whose policy's default approves (a two-person quorum, or not)
    world, thread_id = World(_refund_graph), f"t-cancel-approving-{quorum}"
    question_id = world.start(thread_id, {"order_id": thread_id, "amount": 900, "quorum": quorum})

    # WHEN one person cancels it, with a reason, and the router applies the cancel
    result, outcomes = world.cancel(question_id)

    # THEN the cancel decided at once, the body never ran, and the agent received the cancellation in its place
    assert result.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    assert [refund for refund in REFUNDS if refund[0] == thread_id] == []
    assert world.values(thread_id)["result"] == CANCELLATION
    # AND the row says cancelled, by whom and why, with the cancellation as what the agent got, and no vote
    row = world.row(thread_id, question_id)
    assert (row.status, row.outcome, row.answered_by, row.reason) == (
        QuestionStatus.RESUMED,
        QuestionStatus.CANCELLED,
        "fin@example.com",
        REASON,
    )
    assert (row.answer, row.progress.votes, row.approved_args) == (CANCELLATION, (), None)


@pytest.mark.parametrize(
    ("build", "kind", "calls"),
    [(hitl.build_hitl_graph, "both", 2), (hitl.build_hitl_per_call_graph, "refund", 1)],
    ids=["batched", "per-call"],
)
def test_a_cancel_through_the_hitl_middleware_is_a_reject_carrying_the_reason_and_no_tool_runs(
    build: Any, kind: str, calls: int
) -> None:
    # GIVEN a LangChain agent whose HumanInTheLoopMiddleware parked on its tool calls (each allows reject)
    world, thread_id = World(build), f"t-cancel-hitl-{kind}"
    order_id = f"o-cancel-hitl-{kind}"
    question_id = world.start(thread_id, hitl.start_input(kind, order_id))

    # WHEN a person cancels the question
    result, outcomes = world.cancel(question_id)

    # THEN the middleware received a reject per call, carrying the reason; no tool ran; the agent finished
    assert result.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED], outcomes
    assert hitl.runs(order_id) == []
    tool_messages = [m for m in world.values(thread_id)["messages"] if m.type == "tool"]
    assert [m.status for m in tool_messages] == ["error"] * calls
    assert all(f"with reason: Cancelled: {REASON}" in m.content for m in tool_messages), tool_messages
    assert world.row(thread_id, question_id).status is QuestionStatus.RESUMED


def test_a_cancel_of_a_hitl_question_no_decision_could_refuse_is_itself_refused_and_the_question_stays_open() -> None:
    # GIVEN a middleware question whose only tool allows approve alone: nothing but an approval reaches it
    world = World(_approve_only_graph)
    question_id = world.start("t-cancel-approve-only", hitl.start_input("refund", "o-cancel-approve-only"))

    # WHEN a person cancels it
    result, outcomes = world.cancel(question_id)

    # THEN the cancel is refused before the decision (it could only approve or fail the agent); the question is open
    assert (result.verdict.kind, result.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.ACTION_NOT_ALLOWED)
    assert result.verdict.detail == (
        "a cancel reaches HumanInTheLoopMiddleware as a reject (or respond) decision, and ['issue_refund'] allows "
        "neither; answer the question instead"
    )
    assert outcomes == []
    assert world.row("t-cancel-approve-only", question_id).status is QuestionStatus.OPEN
    assert hitl.runs("o-cancel-approve-only") == []


def test_a_cancel_through_agent_inbox_is_an_ignore_and_the_action_never_runs() -> None:
    # GIVEN a graph written for Agent Inbox, parked on its HumanInterrupt (ignore allowed)
    world = World(inbox.build_agent_inbox_graph)
    question_id = world.start("t-cancel-inbox", {"order_id": "o-cancel-inbox", "amount": 900})

    # WHEN a person cancels it
    result, outcomes = world.cancel(question_id)

    # THEN the graph received an ignore: the refund never ran
    assert result.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    assert inbox.actions("o-cancel-inbox") == []
    assert world.values("t-cancel-inbox")["outcome"] == "ignored"


@pytest.mark.parametrize(
    ("build", "graph_input"),
    [
        (_refund_graph, {"order_id": "o-pose", "amount": 900, "quorum": False}),
        (hitl.build_hitl_graph, hitl.start_input("refund", "o-pose")),
        (inbox.build_agent_inbox_graph, {"order_id": "o-pose", "amount": 900}),
    ],
    ids=["wait", "hitl", "agent-inbox"],
)
def test_an_answer_shaped_like_a_cancellation_is_refused_so_only_a_cancel_cancels(build: Any, graph_input: Any) -> None:
    # GIVEN an agent parked on a question (ours, the HITL middleware's, Agent Inbox's)
    world = World(build)
    question_id = world.start(f"t-pose-{build.__name__}", graph_input)

    # WHEN someone answers it with the cancellation's shape, without a cancel's reason rules
    result = world.service.answer(question_id, CANCELLATION, FIN, answer_id="api:pose")

    # THEN it is refused before the decision, and the question stays open for an answer or a cancel
    assert (result.verdict.kind, result.verdict.reason) in {
        (VerdictKind.REFUSED, RefusalReason.ACTION_NOT_ALLOWED),
        (VerdictKind.REFUSED, RefusalReason.INVALID_ANSWER),
    }
    assert world.row(f"t-pose-{build.__name__}", question_id).status is QuestionStatus.OPEN


def test_a_cancel_a_response_schema_refuses_is_itself_refused_and_one_it_admits_reaches_the_agent() -> None:
    # GIVEN two agents parked on interrupt(value, response_schema=...): a model needing `limit`, and any object
    world = World(_schema_graph)
    strict = world.start("t-cancel-schema-model", {"schema": "model"})
    loose = world.start("t-cancel-schema-open", {"schema": "open"})

    # WHEN a person cancels each
    refused, nothing = world.cancel(strict)
    decided, applied = world.cancel(loose)

    # THEN the one whose schema the cancellation does not fit is refused (LangGraph would raise in the agent) and
    # stays open; the other delivers the cancellation itself
    assert (refused.verdict.kind, refused.verdict.reason) == (VerdictKind.REFUSED, RefusalReason.ACTION_NOT_ALLOWED)
    assert refused.verdict.detail == (
        'a cancellation does not fit: at $, a required property is missing (required: ["limit"]); the question\'s '
        "answer schema admits no cancellation: answer it instead, or declare WaitPolicy(on_cancel=...) with a value "
        "that fits"
    )
    assert nothing == []
    assert world.row("t-cancel-schema-model", strict).status is QuestionStatus.OPEN
    assert decided.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in applied] == [OutcomeKind.APPLIED]
    assert world.values("t-cancel-schema-open")["answer"] == CANCELLATION
