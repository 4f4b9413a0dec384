"""No answer can burn a question: one the agent could not apply is refused `invalid_answer` before the decision.

An edit that names a parameter the `@wait` function does not have used to win the question and leave the
body unrun (the agent got an `edit_refused` value instead); a middleware answer of the wrong shape used to
win and then make the agent raise. Now both are refused, the question stays open, and a correct answer
still wins. The fuzz tests send arbitrary answers to a parked `@wait` question and a parked
`HumanInTheLoopMiddleware` question (batched and per-call), an Agent Inbox question and
`interrupt(response_schema=...)` questions: every answer is either refused (nothing decided) or applied
with the agent resumed past the question; never decided with the agent failed or still parked on it.
"""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

import tests.agents.agent_inbox_graphs as agent_inbox
import tests.agents.graphs as graphs
import tests.agents.hitl_graphs as hitl
import tests.agents.schema_graphs as schema_graphs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from agent_wait import InMemoryAnnounce, WaitEnvelope, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import (
    AnswerService,
    InMemoryDeadLetter,
    InMemoryEntryQueue,
    OutcomeKind,
    RecordingMetrics,
    RefusalReason,
    Router,
    VerdictKind,
)
from agent_wait.engine.checks import Answerer
from agent_wait.host.api._questions import answer_response
from agent_wait.langgraph import LangGraphAdapter, wait
from agent_wait.langgraph._interrupts import question_from_interrupt
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)


def _router(graph: Any) -> Router:
    return Router(
        LangGraphAdapter(graph),
        InMemoryLedger(),
        dead_letter=InMemoryDeadLetter(),
        announce=InMemoryAnnounce(),
        metrics=RecordingMetrics(),
        clock=lambda: T0,
    )


def _park(router: Router, thread_id: str, value: Any) -> str:
    started = router.handle(json.dumps({"thread_id": thread_id, "input": value, "start_id": f"s-{thread_id}"}))
    (question_id,) = started.asked
    return question_id


def _answer(router: Router, thread_id: str, question_id: str, answer: Any, answer_id: str) -> Any:
    message = {"thread_id": thread_id, "question_id": question_id, "answer": answer, "answer_id": answer_id}
    return router.handle(json.dumps(message))


def test_an_edit_naming_an_unknown_parameter_is_refused_and_a_correct_answer_still_wins() -> None:
    # GIVEN a thread parked on hold_order(order_id), whose policy allows edits
    router = _router(graphs.build_no_default_graph(InMemorySaver()))
    question_id = _park(router, "order-edit", {"order_id": "o-edit", "amount": 900})

    # WHEN an approval edits a parameter hold_order does not have
    refused = _answer(router, "order-edit", question_id, {"action": "approve", "args": {"reason": "x"}}, "a-1")

    # THEN it is refused with what was expected, and the question stays open
    assert refused.kind is OutcomeKind.REFUSED, refused
    assert refused.reason is RefusalReason.INVALID_ANSWER
    assert "hold_order(): ['order_id']; unknown: ['reason']" in refused.detail
    record = router.ledger.get("order-edit", question_id)
    assert record is not None
    assert record.status is QuestionStatus.OPEN

    # AND a correct edit still wins and runs the body with it
    applied = _answer(router, "order-edit", question_id, {"action": "approve", "args": {"order_id": "o-9"}}, "a-2")
    assert applied.kind is OutcomeKind.APPLIED, applied
    state = router.adapter.graph.get_state(LangGraphAdapter.config("order-edit"))  # type: ignore[attr-defined]
    assert state.values["hold"] == {"status": "released", "order_id": "o-9"}


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6), _containers, max_leaves=8
)
decision = st.fixed_dictionaries(
    {"type": st.sampled_from(["approve", "edit", "reject", "respond", "accept"])},
    optional={
        "message": st.text(max_size=5) | st.integers(),
        "edited_action": st.fixed_dictionaries(
            {"name": st.sampled_from(["issue_refund", "close_case", "nope"])},
            optional={"args": st.dictionaries(st.sampled_from(["order_id", "amount"]), json_values, max_size=2)},
        ),
    },
)
ours = st.fixed_dictionaries(
    {"action": st.sampled_from(["approve", "reject", "edit", "respond", "ignore"])},
    optional={"note": st.text(max_size=5) | st.integers(), "args": json_values},
)
hitl_answers = (
    st.fixed_dictionaries({"decisions": st.lists(decision, max_size=3)}, optional={"note": st.text(max_size=3)})
    | ours
    | json_values
)
wait_answers = (
    st.fixed_dictionaries(
        {"action": st.sampled_from(["approve", "reject"])},
        optional={
            "args": st.dictionaries(st.sampled_from(["order_id", "amount", "reason"]), json_values) | json_values
        },
    )
    | json_values
)


def _never_burnt(router: Router, thread_id: str, question_id: str, outcome: Any) -> None:
    record = router.ledger.get(thread_id, question_id)
    assert record is not None
    if outcome.kind is OutcomeKind.REFUSED or (outcome.kind, outcome.reason) == (
        OutcomeKind.DEAD_LETTERED,
        "bad_answer",
    ):
        # refused, or not an answer at all (an integer the checkpoint cannot store): the question stays open
        assert record.status is QuestionStatus.OPEN, (outcome, record.status)
        return
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    assert record.status is QuestionStatus.RESUMED, record.status
    assert question_id not in {q.question_id for q in router.adapter.pending(thread_id)}


THREADS = itertools.count()
"""A fresh thread per example: hypothesis replays examples, and a replayed start would not park again."""
HITL_ROUTER = _router(hitl.build_hitl_graph(InMemorySaver()))
WAIT_ROUTER = _router(graphs.build_no_default_graph(InMemorySaver()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["refund", "close", "both"]), answer=hitl_answers)
def test_no_answer_to_a_middleware_question_is_decided_without_the_agent_moving_on(kind: str, answer: Any) -> None:
    thread_id = f"hitl-fuzz-{next(THREADS)}"
    question_id = _park(HITL_ROUTER, thread_id, hitl.start_input(kind, thread_id))
    outcome = _answer(HITL_ROUTER, thread_id, question_id, answer, "fuzz")
    _never_burnt(HITL_ROUTER, thread_id, question_id, outcome)


PER_CALL_ROUTER = _router(hitl.build_hitl_per_call_graph(InMemorySaver()))
AGENT_INBOX_ROUTER = _router(agent_inbox.build_agent_inbox_graph(InMemorySaver()))
SCHEMA_ROUTER = _router(schema_graphs.build_schema_graph(InMemorySaver()))

human_response = st.fixed_dictionaries(
    {"type": st.sampled_from(["accept", "edit", "response", "ignore", "approve"])},
    optional={
        "args": st.none()
        | st.text(max_size=5)
        | st.fixed_dictionaries(
            {"action": st.sampled_from(["issue_refund", "other"])},
            optional={"args": st.dictionaries(st.sampled_from(["order_id", "amount"]), json_values, max_size=2)},
        )
        | json_values
    },
)
agent_inbox_answers = st.lists(human_response, max_size=2) | human_response | ours | json_values
per_call_answers = decision | st.fixed_dictionaries({"decisions": st.lists(decision, max_size=2)}) | ours | json_values
schema_answers = (
    st.fixed_dictionaries(
        {},
        optional={
            "limit": st.integers(-3, 3) | json_values,
            "channel": st.sampled_from(["email", "phone", "fax"]) | json_values,
            "reason": json_values,
            "action": st.sampled_from(["ship", "hold", "approve"]) | json_values,
            "note": json_values,
        },
    )
    | json_values
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["refund", "close"]), answer=per_call_answers)
def test_no_answer_to_a_per_call_approval_is_decided_without_the_agent_moving_on(kind: str, answer: Any) -> None:
    thread_id = f"per-call-fuzz-{next(THREADS)}"
    question_id = _park(PER_CALL_ROUTER, thread_id, hitl.start_input(kind, thread_id))
    outcome = _answer(PER_CALL_ROUTER, thread_id, question_id, answer, "fuzz")
    _never_burnt(PER_CALL_ROUTER, thread_id, question_id, outcome)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=agent_inbox_answers)
def test_no_answer_to_an_agent_inbox_question_is_decided_without_the_graph_moving_on(answer: Any) -> None:
    thread_id = f"agent-inbox-fuzz-{next(THREADS)}"
    question_id = _park(AGENT_INBOX_ROUTER, thread_id, {"order_id": thread_id, "amount": 900})
    outcome = _answer(AGENT_INBOX_ROUTER, thread_id, question_id, answer, "fuzz")
    _never_burnt(AGENT_INBOX_ROUTER, thread_id, question_id, outcome)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["model", "json", "choice"]), answer=schema_answers)
def test_no_answer_to_a_response_schema_question_is_decided_without_the_graph_moving_on(kind: str, answer: Any) -> None:
    thread_id = f"schema-fuzz-{next(THREADS)}"
    question_id = _park(SCHEMA_ROUTER, thread_id, {"order_id": thread_id, "kind": kind})
    outcome = _answer(SCHEMA_ROUTER, thread_id, question_id, answer, "fuzz")
    _never_burnt(SCHEMA_ROUTER, thread_id, question_id, outcome)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=wait_answers)
def test_no_answer_to_a_wait_question_is_decided_without_its_body_running_or_it_refusing(answer: Any) -> None:
    thread_id = f"wait-fuzz-{next(THREADS)}"
    question_id = _park(WAIT_ROUTER, thread_id, {"order_id": thread_id, "amount": 900})
    outcome = _answer(WAIT_ROUTER, thread_id, question_id, answer, "fuzz")
    _never_burnt(WAIT_ROUTER, thread_id, question_id, outcome)
    if outcome.kind is OutcomeKind.APPLIED and isinstance(answer, dict) and answer.get("action") == "approve":
        state = WAIT_ROUTER.adapter.graph.get_state(LangGraphAdapter.config(thread_id))  # type: ignore[attr-defined]
        assert state.values["hold"].get("status") == "released", "an approval ran the body"


def test_the_answer_api_refuses_an_answer_that_cannot_apply_with_422_and_keeps_the_question_open() -> None:
    # GIVEN a middleware question in the API's ledger
    ledger, queue = InMemoryLedger(), InMemoryEntryQueue()
    result = hitl.build_hitl_graph(InMemorySaver()).invoke(
        hitl.start_input("refund", "o-api"), {"configurable": {"thread_id": "t-api"}}
    )
    (item,) = result["__interrupt__"]
    ledger.open(WaitEnvelope.create(question_from_interrupt(item, "t-api"), now=T0), now=T0)
    service = AnswerService(ledger, queue, clock=lambda: T0)
    person = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-1")

    # WHEN a person sends decisions of the wrong count, then a correct native answer
    wrong = service.answer(item.id, {"decisions": []}, person, answer_id="api:1")
    right = service.answer(item.id, {"decisions": [{"type": "approve"}]}, person, answer_id="api:2")

    # THEN the first is a 422 invalid_answer that decided nothing, and the second wins
    response = answer_response(wrong)
    assert response.status_code == 422
    assert json.loads(str(response.body))["reason"] == "invalid_answer"
    assert "1 decision(s), one per action request ['issue_refund']; got 0" in wrong.verdict.detail
    assert right.verdict.kind is VerdictKind.DECIDED
    assert [message["answer_id"] for message, _, _ in queue.messages] == ["api:2"]


class _NoteState(TypedDict):
    order_id: str
    out: NotRequired[Any]


@wait(WaitPolicy(allow_edits=True))
def annotate(order_id: str, /, note: str = "", **labels: str) -> dict[str, Any]:
    return {"order_id": order_id, "note": note, "labels": labels}


def _annotate_node(state: _NoteState) -> dict[str, Any]:
    return {"out": annotate(state["order_id"], note="n")}


def test_published_parameters_that_cannot_be_edited_are_refused_before_the_decision() -> None:
    # GIVEN a @wait function whose positional-only and variadic parameters are published but not editable
    builder = StateGraph(_NoteState)
    builder.add_node("annotate", _annotate_node)
    builder.add_edge(START, "annotate")
    builder.add_edge("annotate", END)
    router = _router(builder.compile(checkpointer=InMemorySaver()))
    question_id = _park(router, "order-note", {"order_id": "o-note"})
    record = router.ledger.get("order-note", question_id)
    assert record is not None
    assert {k: v for k, v in (record.envelope.source or {}).items() if k != "version"} == {  # docs/versions.md
        "function": "annotate",
        "editable": ["note"],
        "args_schema": {"type": "object", "properties": {"note": {"type": "string"}}, "additionalProperties": False},
    }

    # WHEN approvals edit each of them, then the editable one
    refused = [
        _answer(router, "order-note", question_id, {"action": "approve", "args": {name: "x"}}, f"a-{name}")
        for name in ("order_id", "labels")
    ]
    applied = _answer(router, "order-note", question_id, {"action": "approve", "args": {"note": "edited"}}, "a-ok")

    # THEN the first two are refused invalid_answer with the question open, and the last runs the body with it
    assert [(o.kind, o.reason) for o in refused] == [(OutcomeKind.REFUSED, RefusalReason.INVALID_ANSWER)] * 2
    assert applied.kind is OutcomeKind.APPLIED, applied
    state = router.adapter.graph.get_state(LangGraphAdapter.config("order-note"))  # type: ignore[attr-defined]
    assert state.values["out"] == {"order_id": "o-note", "note": "edited", "labels": {}}
