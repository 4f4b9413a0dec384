"""One trace across the wait (issue 30): the ask, decision and resume spans of one question, joined.

The question's trace context is kept on its row when it is asked; the decision and the resume link to it; the
hand-over a door puts on the entry queue carries the door's context as SQS message attributes, so the router's
delivery (and the resume inside it) continues the door's trace. In process here: a real LangGraph graph, the
InMemoryLedger, the real `Router` and `AnswerService`, and `SqsEntryQueue` over a client that records its calls.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_wait.contract.messages import group_id_for
from agent_wait.engine import (
    AnswerService,
    EntryMessage,
    InMemoryDeadLetter,
    OutcomeKind,
    Router,
    SqsEntryQueue,
    tracing,
)
from agent_wait.engine.checks import Answerer
from agent_wait.engine.entry_queue import MAX_BATCH_BYTES, batch_chunks
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger, QuestionRecord

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
FINANCE_USER = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-1", groups=("finance",))
XRAY_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
SENDER_TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class RecordingSqs:
    """A boto3 SQS client stand-in that keeps each `SendMessage` / `SendMessageBatch` call's arguments."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send_message(self, **kwargs: Any) -> dict[str, Any]:
        self.sent.append(kwargs)
        return {"MessageId": f"m-{len(self.sent)}"}

    def send_message_batch(self, **kwargs: Any) -> dict[str, Any]:
        self.sent.extend(kwargs["Entries"])
        return {"Successful": [{"Id": entry["Id"]} for entry in kwargs["Entries"]], "Failed": []}


@pytest.fixture
def traced() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """An SDK provider that keeps every finished span in memory, the one agent-wait's spans go to meanwhile."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with tracing.traced_by(provider):
        yield provider, exporter


@pytest.fixture
def spans(traced: tuple[TracerProvider, InMemorySpanExporter]) -> InMemorySpanExporter:
    return traced[1]


@pytest.fixture
def no_xray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(tracing.XRAY_ENVIRONMENT, raising=False)


def _world() -> tuple[Router, AnswerService, InMemoryLedger, RecordingSqs]:
    ledger, sqs = InMemoryLedger(), RecordingSqs()
    clock = lambda: T0  # noqa: E731
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())), ledger, dead_letter=InMemoryDeadLetter(), clock=clock
    )
    service = AnswerService(ledger, SqsEntryQueue("https://sqs.test/entry.fifo", client=sqs), clock=clock)
    return router, service, ledger, sqs


def _ask(router: Router, thread_id: str) -> str:
    start = {"thread_id": thread_id, "input": {"order_id": f"o-{thread_id}", "amount": 900}}
    (question_id,) = router.handle(json.dumps(start), message_id=f"start-{thread_id}").asked
    return question_id


def _lambda_attributes(sent: dict[str, Any]) -> dict[str, Any]:
    """A sent message's attributes as the Lambda event source delivers them (`stringValue`)."""
    return {
        name: {"stringValue": value["StringValue"], "dataType": value["DataType"]}
        for name, value in sent.get("MessageAttributes", {}).items()
    }


def _one(spans: InMemorySpanExporter, name: str, **attributes: str) -> ReadableSpan:
    found = [
        span
        for span in spans.get_finished_spans()
        if span.name == name and all((span.attributes or {}).get(k) == v for k, v in attributes.items())
    ]
    assert len(found) == 1, f"expected one {name} span with {attributes}, got {[s.name for s in found]}"
    return found[0]


def _ids(span: ReadableSpan) -> tuple[int, int]:
    assert span.context is not None
    return span.context.trace_id, span.context.span_id


def _traceparent(context: Any) -> str:
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def _linked_to(span: ReadableSpan) -> list[tuple[int, int]]:
    return [(link.context.trace_id, link.context.span_id) for link in span.links]


def test_ask_decision_and_resume_of_one_question_answered_over_the_api_are_joined(
    spans: InMemorySpanExporter, no_xray: None
) -> None:
    # GIVEN a refund parked on a question (asked inside the router's delivery of its start)
    router, service, ledger, sqs = _world()
    question_id = _ask(router, "t-trace-api")
    ask = _one(spans, "agent_wait.ask", **{"agent_wait.question_id": question_id})
    assert ask.attributes is not None
    assert ask.attributes["agent_wait.republished"] is False
    row = ledger.get("t-trace-api", question_id)
    assert row is not None
    assert row.trace is not None
    # the row keeps the ask span's own context
    assert row.trace[tracing.TRACEPARENT] == _traceparent(ask.context)

    # WHEN a person approves through the answer service (the API's door), and the router receives the hand-over
    service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:trace-1")
    (handed_over,) = sqs.sent
    carried = tracing.carrier_from_sqs(_lambda_attributes(handed_over))
    outcome = router.handle(handed_over["MessageBody"], message_id="resume-1", trace=carried)
    assert outcome.kind is OutcomeKind.APPLIED

    # THEN the door's span decided, linked to the ask
    answer = _one(spans, "agent_wait.answer", **{"agent_wait.question_id": question_id})
    decision = _one(spans, "agent_wait.decision", **{"agent_wait.verdict": "decided", "agent_wait.via": "api"})
    assert decision.parent is not None
    assert decision.parent.span_id == answer.context.span_id
    assert _linked_to(decision) == [_ids(ask)]
    # AND the hand-over carried the door's context, so the router's delivery continues the door's trace
    assert carried[tracing.TRACEPARENT].split("-")[1:3] == [
        f"{answer.context.trace_id:032x}",
        f"{_ids(answer)[1]:016x}",
    ]
    delivery = _one(spans, "agent_wait.delivery", **{"messaging.message.id": "resume-1"})
    assert delivery.parent is not None
    assert delivery.parent.span_id == answer.context.span_id
    # AND the resume is a child of that delivery, in the decision's trace, with a link to the ask span
    resume = _one(spans, "agent_wait.resume", **{"agent_wait.question_id": question_id})
    assert resume.parent is not None
    assert resume.parent.span_id == delivery.context.span_id
    assert resume.context.trace_id == decision.context.trace_id == answer.context.trace_id
    assert _linked_to(resume) == [_ids(ask)]
    assert ask.context.trace_id != resume.context.trace_id  # days apart: linked, never one long trace
    # AND no span carries question content
    for span in spans.get_finished_spans():
        assert "approve" not in json.dumps(dict(span.attributes or {}))


def test_an_answer_on_the_queue_is_decided_and_resumed_in_its_senders_trace(
    spans: InMemorySpanExporter, no_xray: None
) -> None:
    # GIVEN a parked question and a system that answers on the entry queue from a traced request
    router, _, _, _ = _world()
    question_id = _ask(router, "t-trace-queue")
    ask = _one(spans, "agent_wait.ask", **{"agent_wait.question_id": question_id})
    answer = {"thread_id": "t-trace-queue", "question_id": question_id, "answer": {"action": "approve"}}

    # WHEN the router delivers it with the sender's traceparent
    outcome = router.handle(json.dumps(answer), message_id="answer-1", trace={"traceparent": SENDER_TRACEPARENT})

    # THEN delivery, decision and resume are in the sender's trace, and decision and resume link to the ask
    assert outcome.kind is OutcomeKind.APPLIED
    sender_trace, sender_span = int(SENDER_TRACEPARENT.split("-")[1], 16), int(SENDER_TRACEPARENT.split("-")[2], 16)
    delivery = _one(spans, "agent_wait.delivery", **{"messaging.message.id": "answer-1"})
    assert delivery.parent is not None
    assert (delivery.parent.trace_id, delivery.parent.span_id) == (
        sender_trace,
        sender_span,
    )
    decision = _one(spans, "agent_wait.decision", **{"agent_wait.question_id": question_id})
    resume = _one(spans, "agent_wait.resume", **{"agent_wait.question_id": question_id})
    for span in (decision, resume):
        assert span.parent is not None
        assert span.parent.span_id == delivery.context.span_id
        assert span.context.trace_id == sender_trace
        assert _linked_to(span) == [_ids(ask)]


@pytest.mark.parametrize(
    "traceparent",
    [
        "garbage",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",  # an all-zero trace id is invalid
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" + "x" * 600,  # oversized
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71\n69203331-01",  # not printable
    ],
)
def test_a_malformed_traceparent_is_ignored_and_the_message_still_applies(
    spans: InMemorySpanExporter, no_xray: None, traceparent: str
) -> None:
    # GIVEN a start whose traceparent attribute is malformed
    router, _, _, _ = _world()
    start = {"thread_id": "t-bad-trace", "input": {"order_id": "o-bad-trace", "amount": 900}}
    carried = tracing.carrier_from_sqs({"traceparent": {"stringValue": traceparent, "dataType": "String"}})

    # WHEN the router delivers it
    outcome = router.handle(json.dumps(start), message_id="bad-1", trace=carried)

    # THEN it is applied, in a trace of its own (the delivery has no parent)
    assert outcome.kind is OutcomeKind.STARTED
    delivery = _one(spans, "agent_wait.delivery", **{"messaging.message.id": "bad-1"})
    assert delivery.parent is None
    assert _one(spans, "agent_wait.ask").parent.span_id == delivery.context.span_id  # type: ignore[union-attr]


def test_carriers_keep_only_well_formed_trace_headers() -> None:
    # A binary attribute, an attribute of another name, and an X-Ray header without a root are left out.
    attributes = {
        "traceparent": {"binaryValue": "AAEC", "dataType": "Binary"},
        "tracestate": {"StringValue": "vendor=1", "DataType": "String"},  # ReceiveMessage's shape is read too
        "order": {"stringValue": "o-1", "dataType": "String"},
    }
    assert tracing.carrier_from_sqs(attributes, "Parent=53995c3f42cd8ad8") == {"tracestate": "vendor=1"}
    assert tracing.carrier_from_sqs(None, XRAY_HEADER) == {"xray": XRAY_HEADER}
    assert tracing.sqs_send_attributes({"traceparent": "x" * 600, "xray": "Sampled=1"}) == {}


def test_the_entry_queue_carries_the_senders_context_and_the_xray_header(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a sender inside a span, in a traced Lambda invocation (X-Ray header in the environment)
    monkeypatch.setenv(tracing.XRAY_ENVIRONMENT, XRAY_HEADER)
    sqs = RecordingSqs()
    queue = SqsEntryQueue("https://sqs.test/entry.fifo", client=sqs)
    provider = TracerProvider()

    # WHEN it sends one message and a batch (the sweep's deadline answers)
    with (
        tracing.traced_by(provider),
        provider.get_tracer("a sender").start_as_current_span("sender") as sender,
    ):
        queue.send({"thread_id": "t-1"}, group_id=group_id_for("t-1"), deduplication_id="d-1")
        queue.send_batch([EntryMessage({"thread_id": f"t-{n}"}, group_id_for(f"t-{n}"), f"d-{n}") for n in (2, 3)])

    # THEN every message carries its traceparent and the X-Ray header as AWSTraceHeader
    expected = _traceparent(sender.get_span_context())
    assert len(sqs.sent) == 3
    for sent in sqs.sent:
        assert sent["MessageAttributes"] == {"traceparent": {"DataType": "String", "StringValue": expected}}
        assert sent["MessageSystemAttributes"] == {"AWSTraceHeader": {"DataType": "String", "StringValue": XRAY_HEADER}}


def test_an_untraced_sender_sends_no_trace_attributes(no_xray: None) -> None:
    # GIVEN no current span and no X-Ray header / WHEN a message is sent / THEN it carries no attributes at all
    sqs = RecordingSqs()
    SqsEntryQueue("https://sqs.test/entry.fifo", client=sqs).send(
        {"thread_id": "t"}, group_id="g", deduplication_id="d"
    )
    assert "MessageAttributes" not in sqs.sent[0]
    assert "MessageSystemAttributes" not in sqs.sent[0]


def test_without_opentelemetry_everything_works_no_span_is_made_and_the_xray_header_is_still_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the `tracing` extra missing (opentelemetry unimportable) in a traced Lambda invocation
    for name in [m for m in sys.modules if m == "opentelemetry" or m.startswith("opentelemetry.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.setenv(tracing.XRAY_ENVIRONMENT, XRAY_HEADER)
    tracing.refresh()
    try:
        router, service, ledger, sqs = _world()
        # WHEN a question is asked, answered over the API and resumed through the queue with a traceparent
        question_id = _ask(router, "t-no-otel")
        service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:no-otel")
        (handed_over,) = sqs.sent
        outcome = router.handle(handed_over["MessageBody"], trace={"traceparent": SENDER_TRACEPARENT})
        row = ledger.get("t-no-otel", question_id)
    finally:
        monkeypatch.undo()
        tracing.refresh()
    # THEN it resumed; the row and the hand-over kept the X-Ray header only
    assert outcome.kind is OutcomeKind.APPLIED
    assert isinstance(row, QuestionRecord)
    assert dict(row.trace or {}) == {"xray": XRAY_HEADER}
    assert "MessageAttributes" not in handed_over
    assert handed_over["MessageSystemAttributes"]["AWSTraceHeader"]["StringValue"] == XRAY_HEADER


def test_a_row_keeps_its_first_trace_and_reads_back_only_strings(spans: InMemorySpanExporter) -> None:
    # GIVEN a question opened with a trace, then opened again (a republish) with another
    router, _, ledger, _ = _world()
    question_id = _ask(router, "t-row")
    row = ledger.get("t-row", question_id)
    assert row is not None
    assert row.trace is not None
    again = ledger.open(row.envelope, now=T0, trace={"traceparent": SENDER_TRACEPARENT})
    # THEN the first is kept; and a stored trace holding a non-string (a row written by hand) reads back without it
    assert again.record.trace == row.trace
    item = {**row.to_item(), "trace": {"traceparent": SENDER_TRACEPARENT, "xray": 7}}
    assert dict(QuestionRecord.from_item(item).trace or {}) == {"traceparent": SENDER_TRACEPARENT}


def test_a_door_continues_the_trace_its_callers_request_headers_carry(
    traced: tuple[TracerProvider, InMemorySpanExporter], no_xray: None
) -> None:
    # GIVEN a parked question, and API requests with a caller's traceparent header, a malformed one, and one whose
    # handler already runs in a span of its own (an instrumented Lambda)
    provider, spans = traced
    router, service, _, _ = _world()
    question_id = _ask(router, "t-http")
    sender_trace, sender_span = int(SENDER_TRACEPARENT.split("-")[1], 16), int(SENDER_TRACEPARENT.split("-")[2], 16)

    # WHEN the answer door runs inside each request's headers
    with tracing.continued({"Traceparent": SENDER_TRACEPARENT, "content-type": "application/json"}):
        service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:http-1")
    with tracing.continued({"traceparent": "00-garbage"}):
        service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:http-2")
    with (
        provider.get_tracer("lambda").start_as_current_span("handler") as handler,
        tracing.continued({"traceparent": SENDER_TRACEPARENT}),
    ):
        service.answer(question_id, {"action": "approve"}, FINANCE_USER, answer_id="api:http-3")

    # THEN the first door span is the caller's child, the second starts its own trace, the third stays the handler's
    first, second, third = [span for span in spans.get_finished_spans() if span.name == "agent_wait.answer"]
    assert first.parent is not None
    assert (first.parent.trace_id, first.parent.span_id) == (sender_trace, sender_span)
    assert second.parent is None
    assert third.parent is not None
    assert third.parent.span_id == handler.get_span_context().span_id


def test_a_batch_counts_each_messages_trace_attributes_toward_the_payload_limit() -> None:
    # GIVEN two bodies that just fit one SendMessageBatch call together
    bodies = ["x" * (MAX_BATCH_BYTES // 2 - 10)] * 2
    # WHEN each also carries ~70 bytes of trace attributes / THEN they go in two calls, not one SQS refuses
    assert list(batch_chunks(bodies)) == [[0, 1]]
    assert list(batch_chunks(bodies, overhead=len("traceparentString" + SENDER_TRACEPARENT))) == [[0], [1]]


def test_the_local_stack_hands_the_router_the_trace_a_message_carries() -> None:
    # GIVEN a message received from the emulated entry queue with a traceparent and an X-Ray header
    from agent_wait.local.events import event_record

    received = {
        "MessageId": "m-1",
        "ReceiptHandle": "r-1",
        "Body": "{}",
        "Attributes": {"SentTimestamp": "1767225600000", "AWSTraceHeader": XRAY_HEADER},
        "MessageAttributes": {"traceparent": {"StringValue": SENDER_TRACEPARENT, "DataType": "String"}},
    }
    # WHEN `agent-wait dev` shapes it as the Lambda event source would / THEN the router's handler reads the trace
    record = event_record(received, "arn:aws:sqs:us-east-1:000000000000:entry.fifo")
    carried = tracing.carrier_from_sqs(record["messageAttributes"], record["attributes"]["AWSTraceHeader"])
    assert carried == {"traceparent": SENDER_TRACEPARENT, "xray": XRAY_HEADER}


def test_an_unsampled_xray_header_is_not_kept_with_the_question(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lambda sets _X_AMZN_TRACE_ID on every invocation; one that is not sampled records nothing to join, and kept
    # on every row it would only make rows larger (a write unit more once a row passes 1 KB).
    monkeypatch.setenv(tracing.XRAY_ENVIRONMENT, XRAY_HEADER.replace("Sampled=1", "Sampled=0"))
    assert tracing.XRAY not in tracing.capture()
    monkeypatch.setenv(tracing.XRAY_ENVIRONMENT, XRAY_HEADER)
    assert tracing.capture()[tracing.XRAY] == XRAY_HEADER
