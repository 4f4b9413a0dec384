"""One outcome per question: every answer that cannot apply is refused with its typed reason, counted,
and runs nothing (the graph's checkpoint does not move, no node runs, the ledger row is unchanged but for the
refusal it keeps: a queue answers its sender nothing, so the row says why, for `questions show` and the API).

A `Router` built by `build_router` on the moto stack (the real DynamoDB ledger and checkpointer), with
`RecordingMetrics` so each refusal's metric can be read back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import HostStack, answer_message, start_message

from agent_wait.contract.messages import deadline_answer_id
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, RecordingMetrics, RefusalReason, Router
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.engine.senders import SenderPolicy
from agent_wait.host import HostSettings, build_router
from agent_wait.ledger import Refusal

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)


@dataclass
class Parked:
    router: Router
    metrics: RecordingMetrics
    thread_id: str
    order_id: str
    question_id: str

    def handle(self, message: dict[str, Any], *, sender: str | None = None) -> Any:
        return self.router.handle(json.dumps(message), sender=sender)

    def answer(self, action: str = "approve", *, sender: str | None = None, **fields: Any) -> Any:
        return self.handle(answer_message(self.thread_id, self.question_id, action, **fields), sender=sender)

    def footprint(self) -> tuple[Any, ...]:
        """Everything a refused answer must leave untouched: the agent's checkpoint, its nodes, the ledger row (all
        but the last refusal it keeps)."""
        row = self.router.ledger.get(self.thread_id, self.question_id)
        return (
            self.router.adapter.progress(self.thread_id),
            graphs.node_runs("review", self.order_id),
            graphs.node_runs("finish", self.order_id),
            graphs.body_runs(self.order_id),
            replace(row, last_refusal=None) if row is not None else None,
        )

    def last_refusal(self) -> Refusal | None:
        row = self.router.ledger.get(self.thread_id, self.question_id)
        return row.last_refusal if row is not None else None


@pytest.fixture
def parked(host: HostStack, unique: str) -> Parked:
    metrics = RecordingMetrics()
    router = build_router(HostSettings.from_env("router"), metrics=metrics)
    router.clock = lambda: T0
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    started = router.handle(json.dumps(start_message(thread_id, order_id, start_id=f"s-{unique}")))
    (question_id,) = started.asked
    return Parked(router, metrics, thread_id, order_id, question_id)


def _unknown_thread(p: Parked) -> Any:
    return p.handle(answer_message(f"{p.thread_id}-never", p.question_id))


def _unknown_question(p: Parked) -> Any:
    return p.handle(answer_message(p.thread_id, "0" * 32))


def _already_decided(p: Parked) -> Any:
    assert p.answer("approve", answer_id="first").kind is OutcomeKind.APPLIED
    return p.answer("reject", answer_id="second")


def _duplicate(p: Parked) -> Any:
    assert p.answer("approve", answer_id="same").kind is OutcomeKind.APPLIED
    return p.answer("approve", answer_id="same")


def _action_not_allowed(p: Parked) -> Any:
    return p.answer("escalate")


def _answer_stale(p: Parked) -> Any:
    return p.answer("approve", valid_until="2026-09-11T08:59:59Z")


def _expired(p: Parked) -> Any:
    p.router.clock = lambda: T0 + timedelta(days=3, seconds=1)
    return p.answer("approve", answered_by="finance@example.com")


def _not_due(p: Parked) -> Any:
    p.router.clock = lambda: T0 + timedelta(days=3) - timedelta(seconds=1)
    return p.answer("reject", origin="deadline", answer_id=deadline_answer_id(p.question_id))


def _not_parked(p: Parked) -> Any:
    # A new turn on the thread dies with its host before it can close the question it moved past, and an
    # answer to that question is handled before the turn's redelivery.
    graphs.CRASH_ORDERS.add(f"{p.order_id}-turn-2")
    try:
        with pytest.raises(graphs.SimulatedCrashError):
            p.handle(start_message(p.thread_id, f"{p.order_id}-turn-2", start_id="dying-turn"))
    finally:
        graphs.CRASH_ORDERS.discard(f"{p.order_id}-turn-2")
    return p.answer("approve")


def _cancelled(p: Parked) -> Any:
    new_turn = p.handle(start_message(p.thread_id, p.order_id, amount=990, start_id="next-turn"))
    assert new_turn.kind is OutcomeKind.STARTED
    return p.answer("approve")


def _thread_failed(p: Parked) -> Any:
    # The approval's resume raises after the refund: the thread is failed and holds the decision.
    graphs.FAIL_AFTER_REFUND.add(p.order_id)
    try:
        failed = p.answer("approve", answer_id="first")
        assert (failed.kind, failed.reason) == (OutcomeKind.DEAD_LETTERED, "agent_failed")
    finally:
        graphs.FAIL_AFTER_REFUND.discard(p.order_id)
    return p.answer("reject", answer_id="second")


def _nothing_to_retry(p: Parked) -> Any:
    return p.handle({"thread_id": p.thread_id, "retry_id": "retry-1"})


def _already_voted(p: Parked) -> Any:
    # A two-person quorum question on the same stack: alice's second vote, in a new message, changes nothing.
    import tests.agents.followup_graphs as followup_graphs
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_wait.langgraph import LangGraphAdapter

    adapter = LangGraphAdapter(followup_graphs.build_quorum_graph(InMemorySaver()))
    p.router = Router(adapter, p.router.ledger, dead_letter=p.router.dead_letter, metrics=p.metrics, clock=lambda: T0)
    p.thread_id, p.order_id = f"{p.thread_id}-quorum", f"{p.order_id}-quorum"
    (p.question_id,) = p.handle(start_message(p.thread_id, p.order_id)).asked
    assert p.answer("approve", answered_by="alice@example.com", answer_id="alice-1").kind is OutcomeKind.VOTED
    return p.answer("reject", answered_by="alice@example.com", answer_id="alice-2")


def _passkey_required(p: Parked) -> Any:
    # A question whose policy needs a passkey, on the same stack: the queue cannot carry a WebAuthn assertion.
    import tests.agents.passkey_graphs as passkey_graphs
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_wait.langgraph import LangGraphAdapter

    adapter = LangGraphAdapter(passkey_graphs.build_passkey_graph(InMemorySaver()))
    p.router = Router(adapter, p.router.ledger, dead_letter=p.router.dead_letter, metrics=p.metrics, clock=lambda: T0)
    p.thread_id, p.order_id = f"{p.thread_id}-passkey", f"{p.order_id}-passkey"
    (p.question_id,) = p.handle(start_message(p.thread_id, p.order_id)).asked
    return p.answer("approve", answered_by="alice@example.com")


# The deployment trusts the sweep's role and lets finance's role answer; anyone else only writes to the queue.
SENDERS = SenderPolicy(trusted=frozenset({"AROASWEEP"}), answer_senders=frozenset({"AROAFINANCE"}))


def _answerer_not_allowed(p: Parked) -> Any:
    p.router.senders = SENDERS
    return p.answer("approve", sender="AROAINTERN:laptop", answered_by="cfo@example.com")


def _edit_not_allowed(p: Parked) -> Any:
    message = answer_message(p.thread_id, p.question_id)
    message["answer"]["args"] = {"order_id": p.order_id, "amount": 1_000_000_000}
    return p.handle(message)


def _invalid_answer(p: Parked) -> Any:
    message = answer_message(p.thread_id, p.question_id)
    message["answer"]["args"] = {"amount_cents": 100}  # issue_refund has no such parameter
    return p.handle(message)


def _grant_refused(p: Parked) -> Any:
    message = answer_message(p.thread_id, p.question_id)
    message["answer"]["grant"] = {"ttl": "PT1H", "uses": 3}  # the refund policy allows no grants
    return p.handle(message)


def _not_trusted(p: Parked) -> Any:
    p.router.senders = SENDERS
    p.router.clock = lambda: T0 + timedelta(days=4)
    return p.answer("reject", sender="AROAFINANCE:alice", origin="deadline")


REFUSALS: dict[RefusalReason, Callable[[Parked], Any]] = {
    RefusalReason.UNKNOWN_THREAD: _unknown_thread,
    RefusalReason.UNKNOWN_QUESTION: _unknown_question,
    RefusalReason.ALREADY_DECIDED: _already_decided,
    RefusalReason.DUPLICATE: _duplicate,
    RefusalReason.ACTION_NOT_ALLOWED: _action_not_allowed,
    RefusalReason.ANSWER_STALE: _answer_stale,
    RefusalReason.EXPIRED: _expired,
    RefusalReason.NOT_DUE: _not_due,
    RefusalReason.CANCELLED: _cancelled,
    RefusalReason.NOT_PARKED: _not_parked,
    RefusalReason.THREAD_FAILED: _thread_failed,
    RefusalReason.NOTHING_TO_RETRY: _nothing_to_retry,
    RefusalReason.ANSWERER_NOT_ALLOWED: _answerer_not_allowed,
    RefusalReason.EDIT_NOT_ALLOWED: _edit_not_allowed,
    RefusalReason.NOT_TRUSTED: _not_trusted,
    RefusalReason.INVALID_ANSWER: _invalid_answer,
    RefusalReason.ALREADY_VOTED: _already_voted,
    RefusalReason.GRANT_REFUSED: _grant_refused,
    RefusalReason.PASSKEY_REQUIRED: _passkey_required,
}


@pytest.mark.parametrize("reason", list(REFUSALS), ids=str)
def test_an_answer_that_cannot_apply_is_refused_with_its_reason_counted_and_runs_nothing(
    parked: Parked, reason: RefusalReason
) -> None:
    # GIVEN a thread parked on finance's question (and whatever the case needs first)
    # WHEN the answer that cannot apply arrives — the footprint is taken just before it
    footprints: list[tuple[Any, ...]] = []
    original = parked.handle

    def handle_and_remember(message: dict[str, Any], *, sender: str | None = None) -> Any:
        footprints.append(parked.footprint())
        return original(message, sender=sender)

    parked.handle = handle_and_remember  # type: ignore[method-assign]
    outcome = REFUSALS[reason](parked)
    after = parked.footprint()

    # THEN it is refused with its typed reason, counted once under that reason, and nothing ran
    assert outcome.kind is OutcomeKind.REFUSED, outcome
    assert outcome.reason is reason, outcome
    assert outcome.detail
    assert parked.metrics.counts[(METRIC_NAMES["refused"], reason.value)] == 1
    assert parked.metrics.total(METRIC_NAMES["refused"]) == 1
    if reason is RefusalReason.NOT_PARKED:
        # ... except that a question nothing can resume any more is closed as cancelled
        (before_row, after_row) = (footprints[-1][-1], after[-1])
        assert before_row.status is QuestionStatus.OPEN
        assert after_row.status is QuestionStatus.CANCELLED
        assert parked.metrics.counts[(METRIC_NAMES["cancelled"], None)] == 1
        footprints[-1], after = footprints[-1][:-1], after[:-1]
    assert after == footprints[-1], f"a refused answer changed {footprints[-1]} into {after}"
    # ... and the row keeps why, where there is a row and a person's answer met the refusal
    kept = parked.last_refusal()
    if reason in NOT_KEPT:
        assert kept is None, f"{reason} is not kept on the row, got {kept!r}"
    else:
        assert kept is not None, f"the row keeps the refusal {reason}"
        assert (kept.reason, kept.detail, kept.at) == (reason.value, outcome.detail, kept.at), kept
        assert kept.via == "queue", kept


NOT_KEPT = {
    RefusalReason.UNKNOWN_THREAD: "no row to keep it on",
    RefusalReason.UNKNOWN_QUESTION: "no row to keep it on",
    RefusalReason.DUPLICATE: "the answer was applied: the row says so",
    RefusalReason.NOT_DUE: "the deadline's own early message, not a person's answer",
    RefusalReason.NOT_TRUSTED: "a deadline message from a sender that may not send one",
    # This case's sender may not answer at all: refused before anything is written (a policy's answerers refusing a
    # sender that may answer is kept, as `action_not_allowed` is).
    RefusalReason.ANSWERER_NOT_ALLOWED: "a sender the deployment does not let answer writes nothing",
    RefusalReason.NOTHING_TO_RETRY: "a retry, not an answer (agent-wait retry says why)",
}


DOORS_THAT_CANNOT_WAIT = {RefusalReason.THREAD_BUSY}
"""Refused only by the answer API and links, which cannot hold a person's request while the agent runs (the router
waits, or hands the message back to SQS): `tests/engine/test_one_decision_path.py` has their case."""


ONLY_WITH_AN_ASSERTION = {RefusalReason.PASSKEY_REFUSED}
"""Refused only where an answer carries a passkey assertion, which the queue never does (the answer API):
`tests/host/test_passkey_decisions.py` and `tests/engine/test_passkey_proof.py` have its cases."""


def test_every_refusal_reason_has_a_case() -> None:
    assert set(REFUSALS) | DOORS_THAT_CANNOT_WAIT | ONLY_WITH_AN_ASSERTION == set(RefusalReason)
