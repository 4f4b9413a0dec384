"""One thread at a time, enforced: a record outside its thread's FIFO group is refused, and a per-thread
lease in the ledger keeps two deliveries of one thread from interleaving, whatever delivered them.

The races run real Python threads against the moto server, each with its own `Router` built the way
the Lambda handler builds it (its own clients, graph and checkpointer): two concurrent invocations.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    run_router,
    sqs_record,
    start_message,
)

from agent_wait.common.times import utc_now
from agent_wait.contract.messages import group_id_for
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, Router
from agent_wait.engine.dead_letter import REASON_ATTRIBUTE
from agent_wait.host import HostSettings, build_router


def _invocation() -> Router:
    """A router as one Lambda invocation builds it."""
    return build_router(HostSettings.from_env("router"))


def _at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run `calls` on their own threads, released together; their results (or exceptions) in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[index] = call()
        except Exception as exc:  # a loser may be handed back to SQS; the test reads it
            results[index] = exc

    threads = [threading.Thread(target=run, args=(n, call)) for n, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.parametrize("round_number", range(5))
def test_the_same_start_handled_by_two_invocations_at_once_runs_the_agent_once(
    host: HostStack, unique: str, round_number: int
) -> None:
    # GIVEN a start under the auto-approve limit (the refund runs inside the start) and two invocations
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    body = json.dumps(start_message(thread_id, order_id, amount=100, start_id=f"s-{unique}"))
    first, second = _invocation(), _invocation()

    # WHEN both handle it at the same moment
    outcomes = _at_once(lambda: first.handle(body, message_id="m-1"), lambda: second.handle(body, message_id="m-1"))

    # THEN the agent ran once: one run started, the other replayed it; one refund paid
    assert sorted(o.kind.value for o in outcomes) == ["start_replayed", "started"], outcomes
    assert graphs.body_runs(order_id) == 1
    assert graphs.refunds_paid(order_id) == 1


@pytest.mark.parametrize("round_number", range(12))
def test_an_answer_and_a_new_start_at_once_leave_ledger_and_agent_agreeing(
    host: HostStack, unique: str, round_number: int
) -> None:
    # GIVEN a thread parked on finance's question, and two invocations
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    parked = _invocation().handle(json.dumps(start_message(thread_id, order_id, start_id="s-1")))
    (question_id,) = parked.asked
    answering, starting = _invocation(), _invocation()
    answer = json.dumps(answer_message(thread_id, question_id, answer_id="a-1"))
    new_turn = json.dumps(start_message(thread_id, f"{order_id}-next", start_id="s-2"))

    # WHEN the approval and a new turn are handled at the same moment
    applied, started = _at_once(lambda: answering.handle(answer), lambda: starting.handle(new_turn))

    # THEN both were handled, and what the ledger says is what the agent did
    assert started.kind is OutcomeKind.STARTED, started
    assert applied.kind in (OutcomeKind.APPLIED, OutcomeKind.REFUSED), applied
    ledger, adapter = host.ledger(), starting.adapter
    open_rows = {r.question_id for r in ledger.questions(thread_id, status=QuestionStatus.OPEN)}
    parked_on = {q.question_id for q in adapter.pending(thread_id)}
    assert open_rows == parked_on, f"ledger open {open_rows} but the agent waits on {parked_on}"
    row = ledger.get(thread_id, question_id)
    assert row is not None
    if applied.kind is OutcomeKind.APPLIED:
        # an answer reported applied really ran
        assert graphs.body_runs(order_id) == 1
        assert row.status is QuestionStatus.RESUMED
    else:
        # the new turn moved past the question first: it is cancelled, and the approval ran nothing
        assert applied.reason == "cancelled", applied
        assert graphs.body_runs(order_id) == 0
        assert row.status is QuestionStatus.CANCELLED


def test_a_delivery_that_cannot_get_the_lease_is_retried_not_dropped(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a thread whose lease another delivery holds (a manual invoke, another queue, the local runner)
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    assert host.ledger().acquire_lease(thread_id, "someone-else", now=utc_now(), seconds=600) is not None
    from agent_wait.host import router

    router._router().lease_wait = 0.2
    record = sqs_record(start_message(thread_id, order_id, start_id="s-1"), group_id=thread_id)
    other_thread = f"order-{unique}-other"
    other = sqs_record(start_message(other_thread, f"{order_id}-other", start_id="s-2"), group_id=other_thread)

    # WHEN the router's delivery of a start arrives, in a batch with another thread's start
    response = run_router(record, other, context=lambda_context)

    # THEN it is handed back to SQS (a batch item failure), nothing ran and nothing was dead-lettered,
    # while the other thread went on
    assert response == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
    assert graphs.node_runs("prepare", order_id) == 0
    assert graphs.node_runs("prepare", f"{order_id}-other") == 1
    assert host.dead_letters() == []

    # WHEN the lease is still held on the last receive SQS allows
    last = dict(record, attributes={**record["attributes"], "ApproximateReceiveCount": "5"})
    response = run_router(last, context=lambda_context)

    # THEN the router dead-letters it itself, with the reason, rather than SQS moving it without one
    assert response == {"batchItemFailures": []}
    [dead] = host.dead_letters()
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == "thread_busy"

    # WHEN the holder lets go and the message is redriven
    host.ledger().release_lease(thread_id, "someone-else")
    assert run_router(record, context=lambda_context) == {"batchItemFailures": []}

    # THEN it applies
    assert graphs.node_runs("prepare", order_id) == 1


def test_a_record_outside_its_threads_message_group_is_dead_lettered(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a start sent to the entry queue under another thread's message group
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    record = sqs_record(start_message(thread_id, order_id, start_id="s-1"), group_id=f"order-{uuid.uuid4().hex}")

    # WHEN the router handles it
    assert run_router(record, context=lambda_context) == {"batchItemFailures": []}

    # THEN it ran nothing and waits in the dead-letter queue with its reason
    assert graphs.node_runs("prepare", order_id) == 0
    [dead] = host.dead_letters()
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == "group_mismatch"
    assert dead["Attributes"]["MessageGroupId"] == group_id_for(thread_id)


def test_a_thread_id_sqs_refuses_as_a_group_id_runs_in_its_mapped_group(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a thread id with a space and a non-ASCII letter, which SQS refuses as a MessageGroupId
    thread_id, order_id = f"Zoë order {unique}", f"o-{unique}"
    group = group_id_for(thread_id)
    assert group != thread_id
    host.sqs.send_message(
        QueueUrl=host.queue_url,
        MessageBody=json.dumps(start_message(thread_id, order_id, start_id="s-1")),
        MessageGroupId=group,
        MessageDeduplicationId="s-1",
    )
    from tests.support.aws_stack import records_from_queue

    # WHEN the router handles it, then the sweep sends its question's default through the same queue
    assert run_router(*records_from_queue(host.entry_messages(), host.queue_arn), context=lambda_context) == {
        "batchItemFailures": []
    }
    (question,) = host.ledger().questions(thread_id)
    from datetime import timedelta

    from agent_wait.host import build_sweep

    sweep = build_sweep(HostSettings.from_env("sweep"))
    sweep.clock = lambda: utc_now() + timedelta(days=4)
    report = sweep.run()

    # THEN the start applied, and the deadline answer went out in the thread's mapped group
    assert report.expired_sent == (question.question_id,)
    [sent] = host.entry_messages()
    assert sent["Attributes"]["MessageGroupId"] == group
