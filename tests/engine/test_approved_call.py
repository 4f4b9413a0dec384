"""An approval is bound to the exact call it approved (issue 30; OWASP AISVS 9.2.3).

LangGraph runs the interrupted node again on resume, so code before the question runs twice. Through the real
router on the emulator: the decision records the approved arguments (as asked, or as edited); a re-run that
computes the same call runs the body with exactly those; a re-run that computes other arguments runs nothing
and fails the thread visibly (`arguments_changed`), and a retry once the code is deterministic again applies
the same approval to the same call.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import HostStack, reset_handlers

from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import OutcomeKind, Router
from agent_wait.host import HostSettings, build_router


@pytest.fixture
def router(host: HostStack, monkeypatch: pytest.MonkeyPatch) -> Router:
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:build_drifting_graph")
    reset_handlers()
    return build_router(HostSettings.from_env("router"))


def _ask(router: Router, unique: str, amount: int = 900) -> tuple[str, str, str]:
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    start = {"thread_id": thread_id, "input": {"order_id": order_id, "amount": amount}}
    (question_id,) = router.handle(json.dumps(start)).asked
    return thread_id, order_id, question_id


def _answer(router: Router, thread_id: str, question_id: str, answer: Any, answer_id: str) -> Any:
    message = {"thread_id": thread_id, "question_id": question_id, "answer": answer, "answer_id": answer_id}
    return router.handle(json.dumps(message))


def _state(router: Router, thread_id: str) -> dict[str, Any]:
    graph = router.adapter.graph  # type: ignore[attr-defined]
    return graph.get_state({"configurable": {"thread_id": thread_id}}).values


def test_an_edited_approval_records_its_arguments_and_runs_exactly_them(
    router: Router, host: HostStack, unique: str
) -> None:
    thread_id, order_id, question_id = _ask(router, unique)

    applied = _answer(router, thread_id, question_id, {"action": "approve", "args": {"amount": 450}}, "a-1")

    assert applied.kind is OutcomeKind.APPLIED, applied
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.approved_args == {"order_id": order_id, "amount": 450}  # as edited, kept with the decision
    assert _state(router, thread_id)["hold"] == {"status": "refunded", "order_id": order_id, "amount": 450}
    assert graphs.BODY_RUNS[order_id] == 1


def test_a_rerun_that_computes_other_arguments_runs_nothing_and_fails_visibly(
    router: Router, host: HostStack, unique: str
) -> None:
    # GIVEN a refund of 900 asked, then the code before the question drifts (a fresh quote says 905)
    thread_id, order_id, question_id = _ask(router, unique)
    graphs.DRIFT[order_id] = 5

    # WHEN the 900 is approved
    failed = _answer(router, thread_id, question_id, {"action": "approve"}, "a-1")

    # THEN the 905 the re-run computed is never refunded: the thread fails with arguments_changed, naming the
    # parameter but never its value
    assert (failed.kind, failed.reason) == (OutcomeKind.DEAD_LETTERED, "arguments_changed"), failed
    assert "changed: amount" in failed.detail
    assert not re.search(r"\b905\b", failed.detail)  # the value, not a digit run inside a random id
    assert graphs.BODY_RUNS[order_id] == 0
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.status is QuestionStatus.FAILED
    assert record.approved_args == {"order_id": order_id, "amount": 900}
    failure = host.ledger().thread_failure(thread_id)
    assert failure is not None
    assert failure.error == "ArgumentsChangedError"

    # AND once the code is deterministic again, a retry applies the same approval to the same call, once
    graphs.DRIFT[order_id] = 0
    retried = router.handle(json.dumps({"thread_id": thread_id, "retry_id": "r-1"}))
    assert retried.kind is OutcomeKind.RETRIED, retried
    assert _state(router, thread_id)["hold"] == {"status": "refunded", "order_id": order_id, "amount": 900}
    assert graphs.BODY_RUNS[order_id] == 1


def test_a_rejection_of_a_drifted_call_is_delivered_since_nothing_runs(
    router: Router, host: HostStack, unique: str
) -> None:
    thread_id, order_id, question_id = _ask(router, unique)
    graphs.DRIFT[order_id] = 5  # the body does not run on a rejection: the drift changes nothing that runs

    applied = _answer(router, thread_id, question_id, {"action": "reject"}, "a-1")

    assert applied.kind is OutcomeKind.APPLIED, applied
    record = host.ledger().get(thread_id, question_id)
    assert record is not None
    assert record.approved_args is None  # nothing was approved
    assert _state(router, thread_id)["hold"] == {"action": "reject"}
    assert graphs.BODY_RUNS[order_id] == 0
