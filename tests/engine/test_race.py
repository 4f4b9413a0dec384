"""One outcome per question under concurrency: two different answers from two concurrent invocations."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import HostStack, answer_message, start_message

from agent_wait.engine import OutcomeKind, RefusalReason
from agent_wait.host import HostSettings, build_router


@pytest.mark.parametrize("round_", range(3))
def test_two_different_answers_racing_for_one_question_have_exactly_one_winner(
    host: HostStack, unique: str, round_: int
) -> None:
    # GIVEN a parked question and two routers (two Lambda invocations) sharing the ledger and checkpoints
    settings = HostSettings.from_env("router")
    routers = [build_router(settings), build_router(settings)]
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    (question_id,) = routers[0].handle(json.dumps(start_message(thread_id, order_id))).asked
    answers = [
        answer_message(thread_id, question_id, "approve", answer_id="slack-1", answered_by="alice@example.com"),
        answer_message(thread_id, question_id, "reject", answer_id="email-2", answered_by="bob@example.com"),
    ]
    barrier = threading.Barrier(2)
    outcomes: list[Any] = [None, None]

    def invoke(i: int) -> None:
        barrier.wait()
        outcomes[i] = routers[i].handle(json.dumps(answers[i]))

    # WHEN both answers are handled at the same moment
    threads = [threading.Thread(target=invoke, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    # THEN exactly one was applied and the other refused as already decided
    kinds = sorted(o.kind for o in outcomes)
    assert kinds == sorted([OutcomeKind.APPLIED, OutcomeKind.REFUSED]), outcomes
    winner = next(i for i, o in enumerate(outcomes) if o.kind is OutcomeKind.APPLIED)
    loser = outcomes[1 - winner]
    assert loser.reason is RefusalReason.ALREADY_DECIDED
    # ... the ledger holds the winner's answer, and the graph resumed once, with it
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert row.answer_id == answers[winner]["answer_id"]
    assert row.answer == answers[winner]["answer"]
    assert graphs.node_runs("review", order_id) == 2  # parked once, resumed once
    assert graphs.node_runs("finish", order_id) == 1
    assert graphs.body_runs(order_id) == (1 if answers[winner]["answer"]["action"] == "approve" else 0)
