"""No question content at INFO: the router's and sweep's log lines carry ids, never what was asked."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from tests.support.aws_stack import FakeLambdaContext, HostStack, answer_message, sqs_event, sqs_record, start_message

MARKER_AMOUNT = 7_654_321


@pytest.fixture
def lambda_stdout() -> Iterator[io.StringIO]:
    """What the handlers' Powertools Logger writes (Lambda's stdout), captured at its own handler."""
    from agent_wait.host import router, sweep

    buffer = io.StringIO()
    handlers = {id(h): h for h in (router.logger.registered_handler, sweep.logger.registered_handler)}.values()
    # Swap the stream without setStream(): that flushes the old one, which may be an earlier test's
    # captured stdout, already closed (the handler bound sys.stdout when the module was imported).
    previous = [(handler, handler.stream) for handler in handlers]  # type: ignore[attr-defined]
    for handler, _ in previous:
        handler.stream = buffer  # type: ignore[attr-defined]
    try:
        yield buffer
    finally:
        for handler, stream in previous:
            handler.stream = stream  # type: ignore[attr-defined]


def test_a_full_lifecycle_at_info_logs_ids_and_never_the_question(
    host: HostStack,
    lambda_context: FakeLambdaContext,
    unique: str,
    lambda_stdout: io.StringIO,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN a refund whose question arguments hold values that must never reach a log at INFO
    from agent_wait.host import router

    caplog.set_level(logging.INFO)
    thread_id, order_id = f"order-{unique}", f"Jane-Doe-IBAN-DE89-{unique}"
    start = sqs_record(start_message(thread_id, order_id, amount=MARKER_AMOUNT), group_id=thread_id)

    # WHEN the whole lifecycle runs at INFO: start, redelivery, a refused answer, a malformed one, the approve
    router.handler(sqs_event(start), lambda_context)
    router.handler(sqs_event(start), lambda_context)
    (record,) = host.ledger().questions(thread_id)
    refused = sqs_record(answer_message(thread_id, record.question_id, "escalate"), group_id=thread_id)
    malformed = sqs_record(json.dumps({"thread_id": thread_id, "question_id": order_id}), group_id=thread_id)
    approve = sqs_record(answer_message(thread_id, record.question_id), group_id=thread_id)
    router.handler(sqs_event(refused, malformed, approve), lambda_context)
    assert host.ledger().get(thread_id, record.question_id).answer == {"action": "approve"}  # type: ignore[union-attr]

    # THEN the Powertools JSON lines, the metrics (stdout) and every stdlib log record carry the ids ...
    out, err = capsys.readouterr()
    powertools = lambda_stdout.getvalue()
    logged = "\n".join(
        [powertools, out, err, *(r.getMessage() + json.dumps(r.__dict__, default=str) for r in caplog.records)]
    )
    lines = [json.loads(line) for line in powertools.splitlines()]
    assert len([line for line in lines if line["level"] == "INFO"]) == 5, "one INFO line per message, no more"
    assert all(line["level"] in ("INFO", "WARNING") for line in lines)
    assert any(line.get("question_id") == record.question_id for line in lines)
    assert any(line.get("thread_id") == thread_id for line in lines)
    # ... and never the question's content
    assert order_id not in logged
    assert str(MARKER_AMOUNT) not in logged
