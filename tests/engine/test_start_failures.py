"""A start whose agent raises is applied once: recorded as failed, dead-lettered with its reason, never re-run.

A store or network failure is not the agent's: it raises so SQS redelivers, and the start converges.
"""

from __future__ import annotations

import json
import logging
from typing import Any, TypedDict

import pytest
from botocore.exceptions import ClientError
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from agent_wait.aws.errors import is_transient
from agent_wait.engine import InMemoryDeadLetter, OutcomeKind, RecordingMetrics, Router
from agent_wait.errors import LedgerUnavailableError
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

SECRET = "card-4111-1111"


class State(TypedDict, total=False):
    order_id: str
    done: bool


def _router(node: Any, *, transient: Any = is_transient) -> tuple[Router, InMemoryDeadLetter, RecordingMetrics]:
    builder = StateGraph(State)
    builder.add_node("work", node)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    dead_letter, metrics = InMemoryDeadLetter(), RecordingMetrics()
    router = Router(
        LangGraphAdapter(builder.compile(checkpointer=InMemorySaver())),
        InMemoryLedger(),
        dead_letter=dead_letter,
        metrics=metrics,
        transient=transient,  # as the AWS host builds it (build_router)
    )
    return router, dead_letter, metrics


def test_a_start_whose_agent_raises_is_dead_lettered_once_and_never_run_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN an agent whose node raises (with the input in its message, as real errors often do)
    runs: list[str] = []

    def work(state: State) -> State:
        runs.append(state["order_id"])
        raise ValueError(f"cannot refund {SECRET}")

    router, dead_letter, metrics = _router(work)
    body = json.dumps({"thread_id": "t-1", "input": {"order_id": SECRET}, "start_id": "s-1"})
    caplog.set_level(logging.INFO, logger="agent_wait.host")

    # WHEN the start arrives, then is redelivered
    first = router.handle(body, message_id="m-1")
    again = router.handle(body, message_id="m-1")

    # THEN the agent ran once, the start went to the dead-letter queue with its reason, and nothing re-ran
    assert runs == [SECRET]
    assert (first.kind, first.reason) == (OutcomeKind.DEAD_LETTERED, "agent_failed")
    assert "ValueError" in first.detail
    assert (again.kind, again.reason) == (OutcomeKind.START_REPLAYED, "agent_failed")
    (record,) = dead_letter.records
    assert (record.reason, record.body) == ("agent_failed", body)
    assert metrics.counts[("MessagesDeadLettered", "agent_failed")] == 1
    # AND the exception's text (which quotes the input) never reaches an INFO or WARNING line
    assert all(SECRET not in r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)


def test_a_store_failure_inside_the_run_is_retried_not_dead_lettered() -> None:
    # GIVEN an agent whose run hits a throttled AWS call (a checkpoint write, a table the node uses)
    attempts: list[int] = []

    def work(state: State) -> State:
        attempts.append(1)
        if len(attempts) == 1:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "PutItem")
        return {"done": True}

    router, dead_letter, _ = _router(work)
    body = json.dumps({"thread_id": "t-2", "input": {"order_id": "o-2"}, "start_id": "s-2"})

    # WHEN the start arrives / THEN the failure raises, so SQS redelivers it
    with pytest.raises(ClientError):
        router.handle(body, message_id="m-2")
    # AND the redelivery finishes the run instead of dead-lettering it
    assert router.handle(body, message_id="m-2").kind is OutcomeKind.STARTED
    assert dead_letter.records == []
    assert len(attempts) == 2


def test_the_engine_itself_retries_only_agent_waits_own_store_errors() -> None:
    """The engine knows no AWS: a driver error from the agent's code is retried only because the AWS host says it is
    transient (`Router(transient=agent_wait.aws.errors.is_transient)`); agent-wait's own store errors always are."""

    def throttled(state: State) -> State:
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "PutItem")

    def store_down(state: State) -> State:
        raise LedgerUnavailableError("question table t: PutItem failed with ThrottlingException; SQS will retry")

    bare, dead_letter, _ = _router(throttled, transient=None)
    body = json.dumps({"thread_id": "t-3", "input": {"order_id": "o-3"}, "start_id": "s-3"})
    assert bare.handle(body, message_id="m-3").reason == "agent_failed"
    assert [r.reason for r in dead_letter.records] == ["agent_failed"]
    own, dead_letter, _ = _router(store_down, transient=None)
    with pytest.raises(LedgerUnavailableError):
        own.handle(body, message_id="m-4")
    assert dead_letter.records == []


@pytest.mark.parametrize("code", ["AccessDeniedException", "ValidationException", "ResourceNotFoundException"])
def test_an_aws_error_the_agent_cannot_outwait_fails_the_thread_once_and_its_side_effect_runs_once(code: str) -> None:
    # GIVEN an agent whose tool runs a side effect, then makes an AWS call refused for good (issue 25: on main the
    # side effect ran on every one of SQS's five deliveries and the message left as retries_exhausted)
    effects: list[int] = []

    def tool(state: State) -> State:
        effects.append(1)
        raise ClientError({"Error": {"Code": code, "Message": "no"}}, "PutItem")

    router, dead_letter, _ = _router(tool)  # as the AWS host builds it: transient=is_transient
    body = json.dumps({"thread_id": "t-5", "input": {"order_id": "o-5"}, "start_id": "s-5"})

    # WHEN SQS delivers the start, and delivers it again
    first = router.handle(body, message_id="m-5")
    again = router.handle(body, message_id="m-5")

    # THEN the thread failed visibly on the first delivery, once, and nothing ran again
    assert (first.kind, first.reason) == (OutcomeKind.DEAD_LETTERED, "agent_failed")
    assert again.kind is OutcomeKind.START_REPLAYED
    assert effects == [1]
    assert [r.reason for r in dead_letter.records] == ["agent_failed"]
