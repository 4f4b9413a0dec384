"""Edited arguments: opt-in for `@wait`, and checked against the function's annotations before the decision.

Through the real router on the emulator: an edit the body could not take is refused `invalid_answer` with the
question open (never decided, then failing the agent); a function whose policy does not opt in refuses every
edit `edit_not_allowed`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import HostStack, reset_handlers

from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import OutcomeKind, RefusalReason, Router
from agent_wait.host import HostSettings, build_router


def _router(graph: str, monkeypatch: pytest.MonkeyPatch) -> Router:
    monkeypatch.setenv(Settings.GRAPH.value, f"tests.agents.graphs:{graph}")
    reset_handlers()
    return build_router(HostSettings.from_env("router"))


def _answer(router: Router, thread_id: str, question_id: str, answer: Any, answer_id: str) -> Any:
    message = {"thread_id": thread_id, "question_id": question_id, "answer": answer, "answer_id": answer_id}
    return router.handle(json.dumps(message))


@pytest.mark.parametrize(
    ("edits", "where"),
    [
        ({"amount": "lots"}, "$.amount"),  # not a number
        ({"amount": -5}, "$.amount"),  # below the annotation's gt=0
        ({"amount": 10**6}, "$.amount"),  # above its le=10_000
        ({"amount": 12.5}, "$.amount"),  # not a whole number
        ({"order_id": 7}, "$.order_id"),  # not a string
    ],
)
def test_an_edit_that_does_not_fit_the_annotations_is_refused_before_the_decision(
    host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch, edits: dict[str, Any], where: str
) -> None:
    # GIVEN a thread parked on adjust_refund(order_id: str, amount: Annotated[int, Field(gt=0, le=10_000)])
    router = _router("build_editable_graph", monkeypatch)
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    (question_id,) = router.handle(
        json.dumps({"thread_id": thread_id, "input": {"order_id": order_id, "amount": 900}})
    ).asked

    # WHEN an approval edits a value the function's annotation does not allow
    refused = _answer(router, thread_id, question_id, {"action": "approve", "args": edits}, "a-bad")

    # THEN it is refused invalid_answer, naming where, without quoting the value; nothing was decided or run
    assert (refused.kind, refused.reason) == (OutcomeKind.REFUSED, RefusalReason.INVALID_ANSWER), refused
    assert f"edited args do not fit adjust_refund()'s parameters: at {where}" in refused.detail
    assert "lots" not in refused.detail
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.status is QuestionStatus.OPEN
    assert graphs.BODY_RUNS[order_id] == 0

    # AND an edit that fits still wins, and the body runs once with it
    applied = _answer(router, thread_id, question_id, {"action": "approve", "args": {"amount": 450}}, "a-ok")
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert graphs.BODY_RUNS[order_id] == 1
    state = router.adapter.graph.get_state({"configurable": {"thread_id": thread_id}})  # type: ignore[attr-defined]
    assert state.values["hold"] == {"status": "refunded", "order_id": order_id, "amount": 450}


def test_the_envelope_publishes_the_schema_an_edit_must_fit(
    host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    router = _router("build_editable_graph", monkeypatch)
    thread_id = f"order-{unique}"
    (question_id,) = router.handle(
        json.dumps({"thread_id": thread_id, "input": {"order_id": "o-1", "amount": 900}})
    ).asked

    record = host.ledger().get(thread_id, question_id)

    assert record is not None
    assert record.envelope.rules["edits"] is True
    schema = (record.envelope.source or {})["args_schema"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["amount"] == {"exclusiveMinimum": 0, "maximum": 10000, "type": "integer"}
    assert schema["properties"]["order_id"] == {"type": "string"}


def test_a_wait_function_that_does_not_opt_in_refuses_every_edit(
    host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a thread parked on ship_order(order_id), whose @wait policy is the default
    router = _router("build_as_asked_graph", monkeypatch)
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    (question_id,) = router.handle(json.dumps({"thread_id": thread_id, "input": {"order_id": order_id}})).asked
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.envelope.rules["edits"] is False
    assert "args_schema" not in (record.envelope.source or {})

    # WHEN an approval sends the call to someone else's order
    edited = {"action": "approve", "args": {"order_id": "someone-elses-order"}}
    refused = _answer(router, thread_id, question_id, edited, "a-edit")

    # THEN it is refused edit_not_allowed, the question stays open, and a plain approval ships the order asked
    assert (refused.kind, refused.reason) == (OutcomeKind.REFUSED, RefusalReason.EDIT_NOT_ALLOWED), refused
    assert graphs.BODY_RUNS[order_id] == 0
    applied = _answer(router, thread_id, question_id, {"action": "approve"}, "a-ok")
    assert applied.kind is OutcomeKind.APPLIED, applied
    state = router.adapter.graph.get_state({"configurable": {"thread_id": thread_id}})  # type: ignore[attr-defined]
    assert state.values["hold"] == {"status": "shipped", "order_id": order_id}
