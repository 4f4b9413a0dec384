"""One trace across the wait, on the emulator: the router Lambda handler, the DynamoDB ledger and the SQS FIFO
entry queue on moto carry the ask's context on the row and the door's context through the queue (issue 30)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    records_from_queue,
    run_router,
    sqs_record,
    start_message,
)

from agent_wait.contract.messages import group_id_for
from agent_wait.engine import AnswerService, OutcomeKind, SqsEntryQueue, tracing
from agent_wait.engine.checks import Answerer

XRAY_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
FINANCE_USER = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-1", groups=("finance",))


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with tracing.traced_by(provider):
        yield exporter


def _named(spans: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in spans.get_finished_spans() if span.name == name]


def _ids(span: Any) -> tuple[int, int]:
    return span.trace_id, span.span_id


def test_the_three_spans_of_a_question_answered_over_the_api_are_joined_through_the_real_router_and_queue(
    host: HostStack,
    unique: str,
    spans: InMemorySpanExporter,
    outcomes: list[Any],
    lambda_context: FakeLambdaContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a refund parked on a question by the router Lambda, in an X-Ray traced invocation
    monkeypatch.setenv(tracing.XRAY_ENVIRONMENT, XRAY_HEADER)
    thread_id = f"order-{unique}"
    run_router(
        sqs_record(start_message(thread_id, f"o-{unique}"), group_id=group_id_for(thread_id)), context=lambda_context
    )
    (question_id,) = outcomes[-1].asked
    (ask,) = _named(spans, "agent_wait.ask")
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    # the DynamoDB row keeps the ask span's context and the X-Ray header
    assert dict(row.trace or {}) == {
        "traceparent": f"00-{ask.context.trace_id:032x}-{ask.context.span_id:016x}-{int(ask.context.trace_flags):02x}",
        "xray": XRAY_HEADER,
    }

    # WHEN a person approves through the answer API's door, and the Lambda event source delivers the hand-over
    service = AnswerService(host.ledger(), SqsEntryQueue(host.queue_url, client=host.sqs))
    service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id=f"api:{unique}")
    received = host.sqs.receive_message(
        QueueUrl=host.queue_url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageSystemAttributeNames=["All"],
        MessageAttributeNames=["All"],
    )["Messages"]
    records = records_from_queue(received, host.queue_arn)
    run_router(*records, context=lambda_context)

    # THEN SQS carried the traceparent and the X-Ray header
    (record,) = records
    assert record["attributes"]["AWSTraceHeader"] == XRAY_HEADER
    assert set(record["messageAttributes"]) == {"traceparent"}
    assert outcomes[-1].kind is OutcomeKind.APPLIED
    # AND the decision and the resume link to the ask; the resume continues the door's trace through the queue
    (answer,) = _named(spans, "agent_wait.answer")
    (decision,) = [
        s for s in _named(spans, "agent_wait.decision") if s.parent and s.parent.span_id == answer.context.span_id
    ]
    (resume,) = _named(spans, "agent_wait.resume")
    delivery = next(
        s for s in _named(spans, "agent_wait.delivery") if resume.parent and _ids(s.context) == _ids(resume.parent)
    )
    assert delivery.parent is not None
    assert _ids(delivery.parent) == _ids(answer.context)
    assert resume.context.trace_id == decision.context.trace_id
    assert [_ids(link.context) for link in decision.links] == [_ids(ask.context)]
    assert [_ids(link.context) for link in resume.links] == [_ids(ask.context)]
    assert resume.attributes is not None
    assert resume.attributes["agent_wait.ask.xray_trace_id"] == "1-5759e988-bd862e3fe1be46a994272793"
