"""The router Lambda: an SQS FIFO event in, a partial batch response out.

Handler: `agent_wait.host.router.handler`. Settings come from the environment (`agent_wait.contract.schema.Settings`)
and are checked on the first invocation. The logic is `Router`, usable from any host.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from agent_wait.engine import tracing
from agent_wait.engine.outcomes import Outcome
from agent_wait.engine.router import Router
from agent_wait.host import _powertools
from agent_wait.host._a2a import a2a_follower
from agent_wait.host._wiring import build_router
from agent_wait.host.settings import HostSettings

__all__ = ("OUTCOME_LISTENERS", "handler", "record_handler", "reset")

logger = _powertools.logger()
metrics = _powertools.metrics()
tracer = _powertools.tracer()
# skip_group_on_error: a failing message holds back only its own thread; other threads go on.
processor = SqsFifoPartialProcessor(skip_group_on_error=True)

OUTCOME_LISTENERS: list[Callable[[Outcome], None]] = []
"""Called with every message's outcome (the local runner narrates from these); empty on Lambda."""


@functools.cache
def _settings() -> HostSettings:
    return HostSettings.from_env("router")


@functools.cache
def _router() -> Router:
    router = build_router(_settings(), metrics=_powertools.PowertoolsMetrics(metrics), log=logger)
    _a2a_tasks(router)
    return router


@functools.cache
def _a2a_tasks(router: Router) -> Any:
    """The A2A tasks' follower when A2A is on (`AGENT_WAIT_AGENT_CARD`), its run watcher on `router`; else None."""
    return a2a_follower(_settings(), router, log=logger)


def reset() -> None:
    """Forget the cold-start state (settings, clients, the loaded graph): the next invocation builds it again
    from the environment. For hosts that change the environment between invocations, as the local runner does."""
    _router.cache_clear()
    _a2a_tasks.cache_clear()
    _settings.cache_clear()


def record_handler(record: SQSRecord) -> None:
    """Apply one record; raising fails it (and the rest of its thread's group in this batch)."""
    attributes = record.attributes
    router = _router()
    logger.append_keys(message_id=record.message_id)
    # OpenTelemetry: the delivery's span continues the trace the message carried (`agent_wait.engine.tracing`).
    carried = tracing.carrier_from_sqs(record.raw_event.get("messageAttributes"), attributes.aws_trace_header)
    try:
        # X-Ray (Powertools): a subsegment per record, searchable by its ids (annotations), never its content.
        with tracer.provider.in_subsegment("## agent_wait.delivery") as subsegment:
            subsegment.put_annotation("message_id", record.message_id)
            outcome = router.handle(
                record.body,
                message_id=record.message_id,
                deduplication_id=attributes.message_deduplication_id,
                group_id=attributes.message_group_id,
                sent_at=_sent_at(attributes.sent_timestamp),
                sender=attributes.sender_id or None,
                final_attempt=int(attributes.approximate_receive_count) >= _settings().max_receive_count,
                redelivered=int(attributes.approximate_receive_count) > 1,
                trace=carried,
            )
            for key in ("thread_id", "question_id"):
                if getattr(outcome, key):
                    subsegment.put_annotation(key, getattr(outcome, key))
            subsegment.put_annotation("outcome", outcome.kind.value)
        follower = _a2a_tasks(router)
        if follower is not None:  # the thread is let go: tell its A2A task what changed (never raises)
            follower.after(outcome)
        for listener in OUTCOME_LISTENERS:
            listener(outcome)  # the router logged the message's one INFO line (`agent_wait.engine.outcomes`)
    finally:
        logger.remove_keys(["message_id"])


def _sent_at(sent_timestamp: str | None) -> datetime | None:
    """SQS's `SentTimestamp` (epoch milliseconds) as an aware UTC datetime."""
    if not sent_timestamp or not sent_timestamp.isdigit():
        return None
    return datetime.fromtimestamp(int(sent_timestamp) / 1000, tz=UTC)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)  # the response lists message ids only, but keep traces lean
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    """Lambda entry point for the entry queue's event source (ReportBatchItemFailures on).

    Raises:
        ConfigurationError: on the cold-start call, when a setting is missing or wrong (names each one).
    """
    # Build the router before the batch: a bad setting fails the invocation with its own message,
    # rather than failing every record with it inside a BatchProcessingError.
    _router()
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
