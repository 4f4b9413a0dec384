"""One trace across the wait: the ask, decision and resume spans of a question, joined however long it waits.

A question may wait days, so its ask and its resume never share a process or a request. They are joined the
way OpenTelemetry joins work that is not a call: the trace context is written down when the question is asked
(on its ledger row, `QuestionRecord.trace`), and the resume span starts with a `Link` to it. In between, every
answer door decides inside an `agent_wait.decision` span that links to the ask too, and whatever a door puts on
the entry queue carries its context as SQS message attributes (`traceparent`, `tracestate`, and the X-Ray header
as the `AWSTraceHeader` system attribute), so the router's delivery, and the resume inside it, continue the
door's trace (docs/tracing.md draws it).

The spans (names and attributes carry ids, never question content):

- `agent_wait.ask`: a question recorded (`AskedQuestions.record`); its context is what the row keeps.
- `agent_wait.answer`: a door that cannot run the agent deciding and handing over (`AnswerService.answer`).
- `agent_wait.decision`: `AnswerDesk.decide`, for every door; linked to the ask.
- `agent_wait.delivery`: the router applying one message (`Router.handle`); a child of the context the message
  carried, so a hand-over's resume is in the door's trace.
- `agent_wait.resume`: the agent resumed with a decision (`Router._resume`); linked to the ask.

OpenTelemetry's API is optional (the `tracing` extra) and imported lazily: without it nothing here creates a
span, and the X-Ray header (`_X_AMZN_TRACE_ID`, set by Lambda) is still captured and carried. agent-wait
configures no SDK and no exporter: spans go wherever the process's tracer provider sends them (an ADOT layer,
an OTLP exporter), and nowhere when none is configured.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_wait.ledger import QuestionRecord

__all__ = (
    "AWS_TRACE_HEADER",
    "TRACEPARENT",
    "TRACER_NAME",
    "TRACESTATE",
    "XRAY",
    "XRAY_ENVIRONMENT",
    "answer_span",
    "ask_span",
    "capture",
    "carrier_from_sqs",
    "continued",
    "decision_span",
    "delivery_span",
    "refresh",
    "resume_span",
    "sqs_send_attributes",
    "traced_by",
    "verdict",
)

TRACER_NAME = "agent_wait"
"""The instrumentation scope of every span agent-wait starts."""
TRACEPARENT = "traceparent"
"""W3C Trace Context's parent header: a carrier key, and the SQS message attribute that carries it."""
TRACESTATE = "tracestate"
"""W3C Trace Context's vendor state: a carrier key and an SQS message attribute, only when not empty."""
XRAY = "xray"
"""The carrier key of the X-Ray trace header (`Root=1-...;Parent=...;Sampled=1`)."""
AWS_TRACE_HEADER = "AWSTraceHeader"
"""SQS's system attribute for the X-Ray header: Lambda's event source continues the X-Ray trace from it."""
XRAY_ENVIRONMENT = "_X_AMZN_TRACE_ID"
"""Where Lambda puts the invocation's X-Ray header (refreshed on every invocation)."""

_MAX_VALUE = 512
"""Longest carrier value kept: `tracestate` may be 512 characters (W3C); anything longer is not a trace header."""
_UNSAMPLED = re.compile(r"(?:^|;)\s*Sampled=0\s*(?:;|$)")
"""An X-Ray header whose trace is not recorded."""
_XRAY_ROOT = re.compile(r"(?:^|;)\s*Root=(1-[0-9a-fA-F]{8}-[0-9a-fA-F]{24})(?:;|$)")

_provider: Any = None
"""A tracer provider `traced_by` installed; None: OpenTelemetry's global one."""


@dataclass(frozen=True, slots=True)
class _Otel:
    trace: Any
    """`opentelemetry.trace`."""
    w3c: Any
    """A W3C Trace Context propagator: `traceparent` whatever propagator the process set globally (X-Ray, B3)."""


@functools.cache
def _otel() -> _Otel | None:
    """OpenTelemetry's API, or None when the `tracing` extra (opentelemetry-api) is not installed."""
    try:
        from opentelemetry import trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError:
        return None
    return _Otel(trace, TraceContextTextMapPropagator())


def refresh() -> None:
    """Look for OpenTelemetry again on the next span: after installing it in a running process, or in a test that
    hides it (`sys.modules["opentelemetry"] = None`)."""
    _otel.cache_clear()


def _tracer() -> Any:
    otel = _otel()
    return otel.trace.get_tracer(TRACER_NAME, tracer_provider=_provider) if otel is not None else None


@contextmanager
def traced_by(provider: Any) -> Iterator[None]:
    """Test hook: spans go to `provider` (an SDK `TracerProvider`) while the block runs, whatever the global one is.

    OpenTelemetry lets a process set its global provider once; tests that read spans back use this instead.
    """
    global _provider  # noqa: PLW0603 - one hook, restored on exit
    previous, _provider = _provider, provider
    try:
        yield
    finally:
        _provider = previous


# -- carriers --------------------------------------------------------------------------------------------------


def _clean(carrier: Mapping[str, Any] | None) -> dict[str, str]:
    """The trace keys of `carrier` that are short strings; anything else (a forged or mangled attribute) dropped."""
    if not carrier:
        return {}
    kept = {}
    for key in (TRACEPARENT, TRACESTATE, XRAY):
        value = carrier.get(key)
        if isinstance(value, str) and 0 < len(value) <= _MAX_VALUE and value.isprintable():
            kept[key] = value
    if XRAY in kept and _XRAY_ROOT.search(kept[XRAY]) is None:
        del kept[XRAY]  # not an X-Ray header: never forwarded to SQS, which would refuse the message for it
    return kept


def capture() -> dict[str, str]:
    """The current trace context as plain strings: `traceparent` and `tracestate` of the current span (when it is
    a valid one) and `xray`, Lambda's X-Ray header, when the process runs in a traced invocation. Empty when
    there is neither."""
    carrier: dict[str, str] = {}
    otel = _otel()
    if otel is not None:
        otel.w3c.inject(carrier)
    xray = os.environ.get(XRAY_ENVIRONMENT)
    # Lambda sets the header on every invocation, traced or not: an unsampled one (`Sampled=0`) records nothing to
    # join, and kept on every question row it would cost bytes (a write unit once a row passes 1 KB) for nothing.
    if xray and not _UNSAMPLED.search(xray):
        carrier[XRAY] = xray
    return _clean(carrier)


def carrier_from_sqs(
    message_attributes: Mapping[str, Any] | None, aws_trace_header: str | None = None
) -> dict[str, str]:
    """The trace context an SQS message carried, from its message attributes (the Lambda event's `stringValue` or
    `ReceiveMessage`'s `StringValue` shape) and its `AWSTraceHeader` system attribute. A malformed, binary or
    oversized attribute is left out: the delivery then starts a trace of its own instead of failing."""
    carrier: dict[str, Any] = {}
    for key in (TRACEPARENT, TRACESTATE):
        attribute = (message_attributes or {}).get(key)
        if isinstance(attribute, Mapping):
            carrier[key] = attribute.get("stringValue", attribute.get("StringValue"))
    if aws_trace_header:
        carrier[XRAY] = aws_trace_header
    return _clean(carrier)


def sqs_send_attributes(carrier: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for an SQS `SendMessage` call (or one `SendMessageBatch` entry) that carry `carrier` (by
    default the current context, `capture()`): `MessageAttributes` with `traceparent` and `tracestate`, and
    `MessageSystemAttributes` with `AWSTraceHeader`. Empty when there is nothing to carry."""
    found = _clean(carrier) if carrier is not None else capture()
    arguments: dict[str, Any] = {}
    attributes = {
        key: {"DataType": "String", "StringValue": found[key]} for key in (TRACEPARENT, TRACESTATE) if key in found
    }
    if attributes:
        arguments["MessageAttributes"] = attributes
    if XRAY in found:
        arguments["MessageSystemAttributes"] = {AWS_TRACE_HEADER: {"DataType": "String", "StringValue": found[XRAY]}}
    return arguments


def _span_context(carrier: Mapping[str, str] | None) -> Any:
    """The W3C span context `carrier` names, or None (no OpenTelemetry, no `traceparent`, or a malformed one)."""
    otel = _otel()
    found = _clean(carrier)
    if otel is None or TRACEPARENT not in found:
        return None
    context = otel.trace.get_current_span(otel.w3c.extract(found)).get_span_context()
    return context if context.is_valid else None


def _xray_trace_id(carrier: Mapping[str, str] | None) -> str | None:
    match = _XRAY_ROOT.search(_clean(carrier).get(XRAY, ""))
    return match.group(1) if match else None


def _ids(thread_id: str, question_id: str | None) -> dict[str, str]:
    ids = {"agent_wait.thread_id": thread_id}
    if question_id:
        ids["agent_wait.question_id"] = question_id
    return ids


def _asked(record: QuestionRecord | None) -> dict[str, Any]:
    """Where the question was asked, for a span about its answer: a `Link` to the ask span, and the X-Ray trace."""
    if record is None:
        return {}
    trace_carrier = getattr(record, "trace", None)
    found: dict[str, Any] = {}
    context = _span_context(trace_carrier)
    otel = _otel()
    if context is not None and otel is not None:
        found["link"] = otel.trace.Link(context, {"agent_wait.link": "ask"})
    xray = _xray_trace_id(trace_carrier)
    if xray is not None:
        found["xray"] = xray
    return found


# -- spans -------------------------------------------------------------------------------------------------------


class _Noted:
    """What a span block may add as it learns it: a no-op without OpenTelemetry, or when nothing records."""

    def __init__(self, span: Any = None) -> None:
        self.span = span if span is not None and span.is_recording() else None
        self.context: dict[str, str] = {}
        """For the ask: the context to keep with the question (`capture()` inside the span)."""

    def set(self, key: str, value: str | bool | int) -> None:
        if self.span is not None:
            self.span.set_attribute(key, value)

    def link_to_ask(self, record: QuestionRecord | None) -> None:
        """Link the span to where `record`'s question was asked (read by this block, so not known at its start)."""
        if self.span is None:
            return
        asked = _asked(record)
        if "link" in asked:
            link = asked["link"]
            self.span.add_link(link.context, link.attributes)
        if "xray" in asked:
            self.span.set_attribute("agent_wait.ask.xray_trace_id", asked["xray"])


@contextmanager
def _span(name: str, attributes: Mapping[str, Any], *, kind: str = "INTERNAL", **options: Any) -> Iterator[_Noted]:
    otel, tracer = _otel(), _tracer()
    if otel is None or tracer is None:
        yield _Noted()
        return
    with tracer.start_as_current_span(
        name, kind=getattr(otel.trace.SpanKind, kind), attributes=dict(attributes), **options
    ) as span:
        yield _Noted(span)


@contextmanager
def continued(headers: Mapping[str, Any] | None) -> Iterator[None]:
    """Make the trace a request's headers carry (`traceparent`, `tracestate`) current while the block runs, so a
    door's spans continue its caller's trace. Only when no span is current already (an instrumented handler's span
    has read the headers itself); a malformed header is ignored."""
    otel = _otel()
    found = _clean({key.lower(): value for key, value in (headers or {}).items() if isinstance(key, str)})
    if otel is None or TRACEPARENT not in found or otel.trace.get_current_span().get_span_context().is_valid:
        yield
        return
    from opentelemetry import context as otel_context

    token = otel_context.attach(otel.w3c.extract(found))
    try:
        yield
    finally:
        otel_context.detach(token)


@contextmanager
def ask_span(thread_id: str, question_id: str) -> Iterator[_Noted]:
    """`agent_wait.ask`, current while the question is recorded; its `context` is what to keep with the question
    (`capture()` inside the span: its own `traceparent`, so the answer's spans link to this one)."""
    with _span("agent_wait.ask", _ids(thread_id, question_id)) as noted:
        noted.context = capture()
        yield noted


@contextmanager
def answer_span(question_id: str, via: str) -> Iterator[_Noted]:
    """`agent_wait.answer`: a door that cannot run the agent decides and hands the resume over; current while the
    hand-over is sent, so the router's delivery of it continues this trace."""
    with _span("agent_wait.answer", {"agent_wait.question_id": question_id, "agent_wait.via": via}) as noted:
        yield noted


@contextmanager
def decision_span(thread_id: str, question_id: str, via: str | None) -> Iterator[_Noted]:
    """`agent_wait.decision`: one answer through `AnswerDesk.decide`; `verdict` records the outcome and links the
    span to the ask."""
    attributes = _ids(thread_id, question_id) | {"agent_wait.via": via or "queue"}
    with _span("agent_wait.decision", attributes) as noted:
        yield noted


def verdict(noted: _Noted, kind: str, reason: str | None, record: QuestionRecord | None) -> None:
    """Record a decision's verdict on its span (kind, refusal reason) and link it to where the question was asked."""
    noted.set("agent_wait.verdict", kind)
    if reason is not None:
        noted.set("agent_wait.refusal_reason", reason)
    noted.link_to_ask(record)


@contextmanager
def delivery_span(carrier: Mapping[str, str] | None, *, message_id: str | None) -> Iterator[_Noted]:
    """`agent_wait.delivery` (kind CONSUMER): the router applying one message, a child of the context the message
    carried (`carrier`), else of the current one. A malformed `traceparent` is ignored: a trace of its own."""
    otel = _otel()
    if otel is None:
        yield _Noted()
        return
    found = _clean(carrier)
    parent = otel.w3c.extract(found) if TRACEPARENT in found else None
    attributes: dict[str, str] = {"messaging.system": "aws_sqs"}
    if message_id:
        attributes["messaging.message.id"] = message_id
    with _span("agent_wait.delivery", attributes, kind="CONSUMER", context=parent) as noted:
        yield noted


@contextmanager
def resume_span(record: QuestionRecord) -> Iterator[_Noted]:
    """`agent_wait.resume`: the agent resumed with `record`'s decision, started with a `Link` to the ask span (and
    the ask's X-Ray trace id as an attribute, to find it in X-Ray)."""
    asked = _asked(record)
    attributes: dict[str, Any] = _ids(record.thread_id, record.question_id)
    if "xray" in asked:
        attributes["agent_wait.ask.xray_trace_id"] = asked["xray"]
    links = [asked["link"]] if "link" in asked else None
    with _span("agent_wait.resume", attributes, links=links) as noted:
        yield noted
