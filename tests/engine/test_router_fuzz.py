"""Fuzz the router with arbitrary message bodies: nothing escapes, nothing is lost.

Every body — any text, any JSON object, or a near-valid start or answer aimed at a real parked
question — is either applied (a start ran or was replayed, an answer resumed the agent), refused with
a typed reason, or dead-lettered with a reason and its body intact. Nothing raises out of `handle()`
except a start whose input the agent itself rejects (LangGraph's own error, which SQS retries and
then redrives to the DLQ). In-memory backends: the rules, not the stores, are under test here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import tests.agents.graphs as graphs
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import EmptyInputError, InvalidUpdateError

from agent_wait import InMemoryAnnounce
from agent_wait.contract.messages import StartMessage, deadline_answer_id, parse_message
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import InMemoryDeadLetter, OutcomeKind, RecordingMetrics, RefusalReason, Router
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.errors import LedgerUnavailableError
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
PARKED_THREAD = "order-parked"
MISSING = object()

LONG_STRINGS = st.sampled_from(["k" * 129, "k" * 1025, "é" * 513, "k" * 2049, "🙂" * 600, "q" * 70_000])
"""Past a FIFO group id (128), DynamoDB's sort key (1,024 bytes) and partition key (2,048 bytes), and an answer
(64 KiB): as ids they are refused at parse time, as values they are stored or refused, never a store error."""
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # past 2**53, and past 64 bits: what a checkpoint cannot store is refused on sight
    | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**38, 10**40])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | LONG_STRINGS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
message_keys = st.sampled_from(
    [
        "thread_id",
        "input",
        "start_id",
        "question_id",
        "interrupt_id",
        "answer",
        "valid_until",
        "answered_by",
        "answer_id",
        "origin",
        "retry_id",
    ]
)


def valid_start() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "thread_id": st.sampled_from([PARKED_THREAD, "order-new", "order-other"]) | LONG_STRINGS,
            "input": st.fixed_dictionaries(
                {"order_id": st.text(max_size=8), "amount": st.integers(min_value=0, max_value=2000)}
            ),
        },
        optional={"start_id": st.sampled_from(["s-1", "s-2"]) | LONG_STRINGS},
    )


def valid_answer(question_id: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "thread_id": st.sampled_from([PARKED_THREAD, PARKED_THREAD, "order-new"]),
            "question_id": st.sampled_from([question_id, question_id, "0" * 32]) | LONG_STRINGS,
            "answer": st.sampled_from(
                [{"action": "approve"}, {"action": "reject"}, {"action": "escalate"}, None, "approve"]
            ),
        },
        optional={
            "valid_until": st.sampled_from(["2026-09-11T08:00:00Z", "2999-01-01T00:00:00+02:00"]),
            "answered_by": st.sampled_from(["finance@example.com", "ops@example.com"]),
            "answer_id": st.sampled_from(["a-1", "a-2", deadline_answer_id(question_id)]) | LONG_STRINGS,
            "origin": st.just("deadline"),
        },
    )


def valid_retry() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "thread_id": st.sampled_from([PARKED_THREAD, "order-new", "order-other"]),
            "retry_id": st.sampled_from(["r-1", "r-2"]),
        }
    )


def mutated(messages: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A valid message with one field removed, added or replaced by any JSON value."""

    def mutate(message: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        key = st.sampled_from(sorted(message)) | message_keys
        value = st.just(MISSING) | json_values | st.sampled_from(["", "tomorrow", "2026-09-11T09:00:00", "human"])
        return st.tuples(key, value).map(
            lambda kv: {k: v for k, v in {**message, kv[0]: kv[1]}.items() if v is not MISSING}
        )

    return messages.flatmap(mutate)


def bodies(question_id: str) -> st.SearchStrategy[str]:
    near = valid_start() | valid_answer(question_id) | valid_retry()
    return st.one_of(
        st.text(max_size=40),
        json_values.map(json.dumps),
        st.dictionaries(message_keys | st.text(max_size=6), json_values, max_size=5).map(json.dumps),
        valid_start().map(json.dumps),
        valid_answer(question_id).map(json.dumps),
        valid_retry().map(json.dumps),
        mutated(near).map(json.dumps),
    )


def _router() -> tuple[Router, InMemoryDeadLetter, RecordingMetrics, InMemoryLedger, str]:
    ledger, dead_letter, metrics = InMemoryLedger(), InMemoryDeadLetter(), RecordingMetrics()
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())),
        ledger,
        dead_letter=dead_letter,
        announce=InMemoryAnnounce(),
        metrics=metrics,
        clock=lambda: T0,
    )
    started = router.handle(json.dumps({"thread_id": PARKED_THREAD, "input": {"order_id": "fz", "amount": 900}}))
    (question_id,) = started.asked
    return router, dead_letter, metrics, ledger, question_id


def _start_the_agent_rejects(body: str, message_id: str, rejected: set[str]) -> str | None:
    """The start id of a start whose input the agent rejects (not an object, or a start id already rejected)."""
    message = parse_message(body)
    if not isinstance(message, StartMessage):
        return None
    start_id = message.start_id or message_id
    return start_id if not isinstance(message.input, dict) or start_id in rejected else None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_message_is_applied_refused_with_a_reason_or_dead_lettered_and_nothing_escapes(data: Any) -> None:
    # GIVEN a router with one thread parked on a question
    router, dead_letter, metrics, ledger, question_id = _router()
    messages = data.draw(st.lists(bodies(question_id), min_size=1, max_size=4), label="bodies")

    counted = dict.fromkeys(OutcomeKind, 0)
    rejected: set[str] = set()
    for number, body in enumerate(messages):
        # WHEN the router handles each body (each its own SQS message)
        try:
            outcome = router.handle(body, message_id=f"m-{number}")
        except LedgerUnavailableError:  # pragma: no cover - in-memory stores do not fail
            continue
        except (InvalidUpdateError, EmptyInputError):
            # The agent rejected a start's input (a start id names one start: the same id again is that
            # start retried); SQS retries it and then redrives it to the DLQ.
            start_id = _start_the_agent_rejects(body, f"m-{number}", rejected)
            assert start_id is not None, body
            rejected.add(start_id)
            continue

        # THEN it has one of the typed outcomes, with a reason wherever it did not apply
        counted[outcome.kind] += 1
        event(f"{outcome.kind.value}:{outcome.reason}" if outcome.reason else outcome.kind.value)
        if outcome.kind is OutcomeKind.REFUSED:
            assert isinstance(outcome.reason, RefusalReason), outcome
        elif outcome.kind is OutcomeKind.DEAD_LETTERED:
            assert isinstance(outcome.reason, str)
            assert outcome.reason
            last = dead_letter.records[-1]
            assert (last.body, last.reason) == (body, outcome.reason), "the DLQ keeps the body and its reason"
        else:
            assert outcome.ok, outcome

    # ... every refusal and dead letter was counted, nothing more
    assert len(dead_letter.records) == counted[OutcomeKind.DEAD_LETTERED]
    assert metrics.total(METRIC_NAMES["refused"]) == counted[OutcomeKind.REFUSED]
    assert metrics.total(METRIC_NAMES["dead_lettered"]) == counted[OutcomeKind.DEAD_LETTERED]
    # ... and the parked question has at most one outcome, recorded with the answer that won it
    record = ledger.get(PARKED_THREAD, question_id)
    assert record is not None
    if record.status is not QuestionStatus.OPEN:
        assert record.outcome in (QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED)
        assert record.answer_id
    assert graphs.refunds_paid("fz") <= 1
