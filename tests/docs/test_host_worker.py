"""docs/host.md, "Without Lambda": the worker loop and the sweep the page shows run a lifecycle on the emulator.

The page's snippets run in order in one namespace (as `test_readme` runs them); then its `run_worker` applies a
start and an answer taken from a real FIFO entry queue on moto, and its `sweep_once` runs the sweep, with the
variables the `AgentWait` construct would set (the `host` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
import tests.agents.graphs as graphs
from tests.docs.test_readme import run_snippets
from tests.support import aws_stack as host_fixtures
from tests.support.aws_stack import HostStack, answer_message, start_message

from agent_wait.contract.messages import group_id_for
from agent_wait.contract.schema import QuestionStatus

DOC = Path(__file__).resolve().parents[2] / "docs" / "host.md"

host = host_fixtures.host
"""The tables, queues and topic of tests/support/aws_stack.py on moto, with the router's variables pointing at them."""


@pytest.fixture(scope="module")
def page() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "host"}
    run_snippets(DOC, namespace)
    return namespace


def _send(stack: HostStack, message: dict[str, Any], deduplication_id: str) -> None:
    stack.sqs.send_message(
        QueueUrl=stack.queue_url,
        MessageBody=json.dumps(message),
        MessageGroupId=group_id_for(message["thread_id"]),
        MessageDeduplicationId=deduplication_id,
    )


def test_the_pages_worker_applies_a_start_and_an_answer_from_the_entry_queue(
    page: dict[str, Any],
    host: HostStack,
    unique: str,
) -> None:
    # GIVEN the page's worker, on the stack's own variables, and a start on the entry queue
    session = boto3.Session(region_name="us-east-1")
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    _send(host, start_message(thread_id, order_id), f"start-{unique}")
    # WHEN the worker takes one receive
    page["run_worker"](host.queue_url, session=session, receives=1)
    # THEN the agent asked, and the question is open in the ledger; the entry queue is empty
    [question] = host.ledger().questions(thread_id)
    assert question.status is QuestionStatus.OPEN
    assert host.entry_messages() == []

    # WHEN an answer arrives and the worker takes another receive
    _send(host, answer_message(thread_id, question.question_id), f"answer-{unique}")
    page["run_worker"](host.queue_url, session=session, receives=1)
    # THEN the agent received it: the refund ran once and the row says resumed
    answered = host.ledger().get(thread_id, question.question_id)
    assert answered is not None
    assert answered.status is QuestionStatus.RESUMED
    assert graphs.refunds_paid(order_id) == 1

    # AND the page's sweep runs on the same stack, with nothing left to do
    report = page["sweep_once"](session)
    assert report.ok
    assert question.question_id not in report.expired_sent
