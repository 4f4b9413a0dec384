"""Build a `Router` and a `Sweep` from `HostSettings`: AWS clients, the agent adapter, the announcers."""

from __future__ import annotations

import logging
from typing import Any

from agent_wait.announce.webhook import WebhookAnnounce
from agent_wait.errors import ConfigurationError
from agent_wait.host.settings import HostSettings, load_object
from agent_wait.publish import BaseAnnounce
from agent_wait.schema import Settings

__all__ = ("adapter_for", "announcers_for")

logger = logging.getLogger("agent_wait.host")


def announcers_for(settings: HostSettings, *, session: Any = None) -> list[BaseAnnounce]:
    """The announcers whose variable is set: topic, bus, webhook. Always a log line besides."""
    from agent_wait.announce.log import LogAnnounce

    announcers: list[BaseAnnounce] = [LogAnnounce()]
    if settings.topic_arn:
        from agent_wait.aws import SnsAnnounce

        announcers.append(SnsAnnounce(settings.topic_arn, client=_client(session, "sns")))
    if settings.bus_name:
        from agent_wait.aws import EventBridgeAnnounce

        announcers.append(EventBridgeAnnounce(settings.bus_name, client=_client(session, "events")))
    if settings.webhook_url:
        announcers.append(WebhookAnnounce(settings.webhook_url))
    return announcers


def _client(session: Any, service: str) -> Any:
    import boto3

    return (session or boto3.Session()).client(service)


def adapter_for(target: Any, checkpointer: Any) -> Any:
    """Wrap what `AGENT_WAIT_GRAPH` names in the adapter for its framework.

    A compiled LangGraph graph gets `checkpointer` (the DynamoDB saver); a callable is a factory that
    takes the checkpointer and returns a compiled graph.
    """
    from agent_wait.langgraph import LangGraphAdapter

    graph: Any = target
    if not hasattr(graph, "get_state") and callable(graph):
        graph = graph(checkpointer)
    if not hasattr(graph, "get_state") or not hasattr(graph, "invoke"):
        raise ConfigurationError(
            [
                f"{Settings.GRAPH.value} must name a compiled LangGraph graph or a factory that takes a checkpointer "
                f"and returns one; got {type(target).__name__}"
            ],
            variables=[Settings.GRAPH.value],
        )
    if getattr(graph, "checkpointer", None) is not checkpointer:
        if getattr(graph, "checkpointer", None) not in (None, False):
            logger.warning("replacing the graph's own checkpointer with the DynamoDB checkpoint table")
        graph = graph.copy(update={"checkpointer": checkpointer})
    return LangGraphAdapter(graph)


def load_target(settings: HostSettings) -> Any:
    assert settings.graph is not None
    return load_object(settings.graph)


def build_router(settings: HostSettings, *, session: Any = None, metrics: Any = None, log: Any = None) -> Any:
    """A `Router` on DynamoDB (ledger and checkpoints), the DLQ and the configured announcers."""
    import boto3

    from agent_wait.host._checkpoints import TaskAtomicDynamoDBSaver
    from agent_wait.host._router import Router
    from agent_wait.host.dead_letter import SqsDeadLetter
    from agent_wait.host.ledger.dynamodb import DynamoDbLedger

    session = session or boto3.Session()
    assert settings.checkpoint_table
    assert settings.table
    assert settings.dlq_url
    saver = TaskAtomicDynamoDBSaver(
        settings.checkpoint_table,
        session=session,
        region_name=session.region_name,
        endpoint_url=session.client("dynamodb").meta.endpoint_url if _custom_endpoint(session) else None,
    )
    return Router(
        adapter_for(load_target(settings), saver),
        DynamoDbLedger(settings.table, client=session.client("dynamodb")),
        dead_letter=SqsDeadLetter(settings.dlq_url, client=session.client("sqs")),
        announce=announcers_for(settings, session=session),
        metrics=metrics,
        reply_to={"queue_url": settings.queue_url} if settings.queue_url else None,
        logger=log,
    )


def build_sweep(settings: HostSettings, *, session: Any = None, metrics: Any = None, log: Any = None) -> Any:
    """A `Sweep` on the DynamoDB ledger and the SQS entry queue."""
    import boto3

    from agent_wait.host._sweep import Sweep
    from agent_wait.host.entry_queue import SqsEntryQueue
    from agent_wait.host.ledger.dynamodb import DynamoDbLedger

    session = session or boto3.Session()
    assert settings.table
    assert settings.queue_url
    return Sweep(
        DynamoDbLedger(settings.table, client=session.client("dynamodb")),
        SqsEntryQueue(settings.queue_url, client=session.client("sqs")),
        announce=announcers_for(settings, session=session),
        metrics=metrics,
        limit=settings.sweep_limit,
        logger=log,
    )


def _custom_endpoint(session: Any) -> bool:
    # The local emulator sets AWS_ENDPOINT_URL; boto3 honours it for clients, DynamoDBSaver needs it passed.
    import os

    return bool(os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
