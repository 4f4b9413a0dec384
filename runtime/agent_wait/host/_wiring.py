"""Build a `Router` and a `Sweep` from `HostSettings`: AWS clients, the agent adapter, the announcers (each channel's
through its declaration, `host/_channels.py`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError, require_extra
from agent_wait.host._channels import channel_announcers
from agent_wait.host._clients import client
from agent_wait.host._precise import deadline_schedules
from agent_wait.host.settings import HostSettings, load_object, required

if TYPE_CHECKING:
    from agent_wait.engine.router import Router
    from agent_wait.engine.sweep import Sweep

__all__ = ("adapter_for", "announcers_for", "build_router", "build_sweep", "checkpoint_saver")

logger = logging.getLogger("agent_wait.host")


def announcers_for(settings: HostSettings, *, session: Any = None) -> list[BaseAnnounce]:
    """The announcers whose settings are set: every channel's (the log line always, then the webhook, Slack, Teams,
    a shaped webhook, email; `host/_channels.py`), then the AWS targets (topic, bus).

    Each channel is built through its declaration (`agent_wait.channels.CHANNELS`), which reads its own settings
    and secrets once, here (at cold start, since the handlers build their router or sweep once): see
    `agent_wait.channels.announce.channel.build_webhook` for the webhook's URL and signing secrets.

    Raises:
        ConfigurationError: a channel's secret cannot be read, or is not in a form it can use.
    """
    announcers = channel_announcers(settings, session=session)
    if settings.topic_arn:
        from agent_wait.aws import SnsAnnounce

        announcers.append(SnsAnnounce(settings.topic_arn, client=client(session, "sns")))
    if settings.bus_name:
        from agent_wait.aws import EventBridgeAnnounce

        announcers.append(EventBridgeAnnounce(settings.bus_name, client=client(session, "events")))
    return announcers


def adapter_for(
    target: Any,
    checkpointer: Any,
    *,
    checkpoint_table: str | None = None,
    client: Any = None,
    make_checkpointer: Callable[[], Any] | None = None,
) -> Any:
    """Wrap what `AGENT_WAIT_GRAPH` names in the adapter for its framework.

    - a compiled LangGraph graph gets `checkpointer` (the DynamoDB saver), or, when that is None, what
      `make_checkpointer()` builds; a callable that is none of the below is a factory that takes the
      checkpointer and returns a compiled graph;
    - a Pydantic AI agent, or `agent_wait.pydantic_ai.hosted(agent, ...)`: its message histories are
      kept in `checkpoint_table` (`DynamoDbHistoryStore`);
    - `agent_wait.strands.hosted(factory)`: a fresh Strands agent per message over the thread's
      session in `checkpoint_table` (`DynamoDbSessionRepository`). A Strands `Agent` instance is refused.

    Each framework is imported only when the target is its own: a Pydantic AI or Strands agent never
    imports LangGraph nor builds a checkpoint saver (`make_checkpointer` is called for a graph only).
    """
    if callable(getattr(target, "agent_wait_adapter", None)):  # what pydantic_ai.hosted / strands.hosted return
        return target.agent_wait_adapter(checkpoint_table=_needs_table(checkpoint_table), client=client)
    if _instance_of(target, "pydantic_ai.agent", "AbstractAgent"):
        from agent_wait.pydantic_ai import hosted

        return hosted(target).agent_wait_adapter(checkpoint_table=_needs_table(checkpoint_table), client=client)
    if _instance_of(target, "strands.agent.agent", "Agent"):
        raise ConfigurationError(
            [
                f"{Settings.GRAPH.value} names a Strands Agent instance, but one instance holds one conversation and "
                "the router builds one agent per thread: name agent_wait.strands.hosted(factory), where "
                "factory(session_manager) returns Agent(..., session_manager=session_manager)"
            ],
            variables=[Settings.GRAPH.value],
        )
    if checkpointer is None and make_checkpointer is not None:
        checkpointer = make_checkpointer()
    return _langgraph_adapter(target, checkpointer)


def _instance_of(target: Any, module: str, name: str) -> bool:
    # Only a framework the user's module already imported can have made `target`: never import one here.
    loaded = sys.modules.get(module)
    kind = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(kind, type) and isinstance(target, kind)


def _needs_table(checkpoint_table: str | None) -> str:
    if not checkpoint_table:
        raise ConfigurationError(
            [f"{Settings.CHECKPOINT_TABLE.value} is not set; a Pydantic AI or Strands agent keeps its threads there"],
            variables=[Settings.CHECKPOINT_TABLE.value],
        )
    return checkpoint_table


def _langgraph_adapter(target: Any, checkpointer: Any) -> Any:
    from agent_wait.langgraph import LangGraphAdapter, VersionedGraph

    options: dict[str, Any] = {}
    if isinstance(target, VersionedGraph):  # agent_wait.langgraph.versioned(graph, version=..., migration=...)
        options, target = {"version": target.version, "migration": target.migration}, target.graph
    graph: Any = target
    if not hasattr(graph, "get_state") and callable(graph):
        try:
            graph = graph(checkpointer)
        except Exception as exc:  # a callable that is not a factory (or a factory that fails): a setting at fault
            raise ConfigurationError(
                [
                    f"{Settings.GRAPH.value} names a callable that raised {type(exc).__name__} when called with the "
                    f"checkpointer ({exc}); name a compiled LangGraph graph, or a factory that takes a checkpointer "
                    "and returns one"
                ],
                variables=[Settings.GRAPH.value],
            ) from exc
    if not hasattr(graph, "get_state") or not hasattr(graph, "invoke"):
        raise ConfigurationError(
            [
                f"{Settings.GRAPH.value} must name a compiled LangGraph graph or a factory that takes a checkpointer "
                "and returns one, a Pydantic AI agent (or agent_wait.pydantic_ai.hosted(agent)), or "
                f"agent_wait.strands.hosted(factory); got {type(target).__name__}"
            ],
            variables=[Settings.GRAPH.value],
        )
    if getattr(graph, "checkpointer", None) is not checkpointer:
        if getattr(graph, "checkpointer", None) not in (None, False):
            logger.warning("replacing the graph's own checkpointer with the DynamoDB checkpoint table")
        graph = graph.copy(update={"checkpointer": checkpointer})
    return LangGraphAdapter(graph, **options)


def load_target(settings: HostSettings) -> Any:
    return load_object(required(settings.graph, Settings.GRAPH))


def build_router(settings: HostSettings, *, session: Any = None, metrics: Any = None, log: Any = None) -> Router:
    """A `Router` on DynamoDB (ledger and checkpoints), the DLQ and the configured announcers."""
    import boto3

    from agent_wait.aws import DynamoDbLedger
    from agent_wait.aws.callbacks import LambdaCallbacks
    from agent_wait.aws.errors import is_transient
    from agent_wait.engine import SqsDeadLetter
    from agent_wait.engine.router import Router

    checkpoint_table = required(settings.checkpoint_table, Settings.CHECKPOINT_TABLE)
    table = required(settings.table, Settings.TABLE)
    dlq_url = required(settings.dlq_url, Settings.DLQ_URL)
    session = session or boto3.Session()
    # One client for the ledger and for a Pydantic AI or Strands agent's store: each client costs cold start.
    dynamodb = session.client("dynamodb")
    router = Router(
        adapter_for(
            load_target(settings),
            None,
            checkpoint_table=checkpoint_table,
            client=dynamodb,
            make_checkpointer=lambda: checkpoint_saver(
                checkpoint_table,
                session,
                bucket=settings.checkpoint_bucket,
                offload_over=settings.checkpoint_offload_bytes,
                retention=settings.checkpoint_retention,
            ),
        ),
        DynamoDbLedger(table, client=dynamodb, closed_ttl=settings.decided_retention),
        dead_letter=SqsDeadLetter(dlq_url, client=session.client("sqs")),
        announce=announcers_for(settings, session=session),
        metrics=metrics,
        reply_to=reply_to_for(settings),
        logger=log,
        lease_seconds=settings.lease_seconds,
        senders=sender_policy(settings, log=log),
        link_maker=link_maker_for(settings, session=session),
        link_announcers=settings.link_announcers,
        transient=is_transient,  # a throttled AWS call in the agent's own code is retried, as the stores' are
        callbacks=LambdaCallbacks(),  # durable functions' questions; its Lambda client is built on first use
        metric_tags=settings.metric_tags,
        on_new_version=settings.on_new_version,
    )
    router.questions.schedules = deadline_schedules(settings, session=session, metrics=metrics, log=log)
    return router


def checkpoint_saver(
    table: str,
    session: Any,
    *,
    bucket: str | None = None,
    offload_over: int | None = None,
    retention: timedelta | None = None,
) -> Any:
    """The LangGraph checkpoint saver on `table` (`TaskAtomicDynamoDBSaver`); imports LangGraph, so only for a graph.

    With `bucket` (`AGENT_WAIT_CHECKPOINT_BUCKET`), a checkpoint or a step's writes over `offload_over` bytes
    (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`; None: the saver's default) is stored in that S3 bucket (the saver's
    `s3_offload_config`); without it, one over DynamoDB's item limit fails its thread. With `retention`
    (`AGENT_WAIT_CHECKPOINT_RETENTION`), what it writes expires that long after, but what a thread waits on.

    Raises:
        MissingExtraError: the `langgraph-host` extra (LangGraph's checkpoint saver on DynamoDB) is not installed.
    """
    require_extra("agent_wait.host (for a LangGraph agent)", "langgraph_checkpoint_aws", "langgraph-host")
    from agent_wait.langgraph.checkpoint.saver import OFFLOAD_OVER, TaskAtomicDynamoDBSaver

    # No endpoint is passed: the saver's clients come from the session, which finds an emulator's endpoint
    # (AWS_ENDPOINT_URL) itself, as every other client of the router does.
    offload = {"bucket_name": bucket} if bucket else None
    return TaskAtomicDynamoDBSaver(
        table,
        session=session,
        region_name=session.region_name,
        s3_offload_config=offload,
        offload_over=OFFLOAD_OVER if offload_over is None else offload_over,
        retention=retention,
    )


def link_maker_for(settings: HostSettings, *, session: Any = None) -> Any:
    """Signed answer links for the announcers that carry them, signed with the keyring's active key."""
    if not settings.link_announcers or not settings.link_keys_arn or not settings.api_url:
        return None
    import boto3

    from agent_wait.common.times import utc_now
    from agent_wait.host.links import answer_links, link_keyring

    ring = link_keyring(settings.link_keys_arn, client=(session or boto3.Session()).client("secretsmanager"))
    api_url = settings.api_url
    return lambda envelope: answer_links(ring.keys(), api_url, envelope, now=utc_now())


def reply_to_for(settings: HostSettings) -> dict[str, str] | None:
    """Where an envelope says answers go: the entry queue, and the answer API when there is one."""
    reply_to = {"queue_url": settings.queue_url} if settings.queue_url else {}
    if settings.api_url:
        reply_to["api_url"] = settings.api_url
    return reply_to or None


def sender_policy(settings: HostSettings, *, log: Any = None) -> Any:
    """The router's `SenderPolicy` from the settings; warns once when no sender is named as trusted."""
    from agent_wait.engine.senders import SenderPolicy

    if settings.trusted_senders is None:
        (log or logger).warning(
            "AGENT_WAIT_TRUSTED_SENDERS is not set: every queue sender may claim answered_by and send deadline "
            "answers; the AgentWait construct sets it to the answer API's and the sweep's roles"
        )
    return SenderPolicy(settings.trusted_senders, settings.start_senders, settings.answer_senders)


def build_sweep(settings: HostSettings, *, session: Any = None, metrics: Any = None, log: Any = None) -> Sweep:
    """A `Sweep` on the DynamoDB ledger and the SQS entry queue."""
    import boto3

    from agent_wait.aws.ledger import DynamoDbLedger
    from agent_wait.engine import SqsEntryQueue
    from agent_wait.engine.sweep import Sweep

    table = required(settings.table, Settings.TABLE)
    queue_url = required(settings.queue_url, Settings.QUEUE_URL)
    session = session or boto3.Session()
    return Sweep(
        DynamoDbLedger(table, client=session.client("dynamodb"), closed_ttl=settings.decided_retention),
        SqsEntryQueue(queue_url, client=session.client("sqs")),
        announce=announcers_for(settings, session=session),
        link_maker=link_maker_for(settings, session=session),
        link_announcers=settings.link_announcers,
        metrics=metrics,
        limit=settings.sweep_limit,
        logger=log,
        schedules=deadline_schedules(settings, session=session, metrics=metrics, log=log),
    )
