"""How `AgentWait` wires its parts to each other once they exist: what the router and the sweep are told and may
call, the answer API's place among them, the alarms and dashboard that watch them, and the stack outputs.

`AgentWait` creates the parts in order (`agent_wait.py`); the functions here read them from `Parts` (whatever was
created or brought) and add variables, grants and outputs. Only `watch` creates constructs: the alarms and the
dashboard, under the ids they always had.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import CfnOutput, Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk import question_table as questions
from agent_wait_cdk._agent_wait_channels import AgentWaitChannels
from agent_wait_cdk._lambda_function import powertools_environment
from agent_wait_cdk._senders import SenderLists
from agent_wait_cdk.a2a import A2aProps
from agent_wait_cdk.alarms import AgentWaitAlarms
from agent_wait_cdk.answer_api import AnswerApi
from agent_wait_cdk.checkpoint_bucket import grant_checkpoint_bucket
from agent_wait_cdk.dashboard import AgentWaitDashboard
from agent_wait_cdk.mcp import McpProps
from agent_wait_cdk.precise_deadlines import PreciseDeadlines

__all__ = (
    "Parts",
    "add_outputs",
    "grant_functions",
    "router_variables",
    "serve_durable_function",
    "shared_environment",
    "watch",
    "wire_answer_api",
)


@dataclass(frozen=True)
class Parts:
    """What the functions are wired to, created or brought: the ledger, checkpoints, queues, announcers, channels."""

    question_table: dynamodb.ITable
    checkpoint_table: dynamodb.ITable
    checkpoint_bucket: s3.IBucket | None
    entry_queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    topic: sns.ITopic | None
    bus: events.IEventBus | None
    channels: AgentWaitChannels


def shared_environment(
    parts: Parts,
    *,
    graph: str,
    webhook_url: str | None,
    webhook_secret: secretsmanager.ISecret | None,
    webhook_url_secret: secretsmanager.ISecret | None,
    log_level: str,
    tracing: lambda_.Tracing | None,
    index_shards: int | None,
) -> dict[str, str]:
    """The variables both functions get; the router adds its own (`router_variables`), the sweep its limit."""
    environment = {
        shapes.ENV_GRAPH: graph,
        shapes.ENV_TABLE: parts.question_table.table_name,
        shapes.ENV_CHECKPOINT_TABLE: parts.checkpoint_table.table_name,
        shapes.ENV_QUEUE_URL: parts.entry_queue.queue_url,
        shapes.ENV_DLQ_URL: parts.dead_letter_queue.queue_url,
        **powertools_environment(log_level=log_level, tracing=tracing),
    }
    if parts.topic is not None:
        environment[shapes.ENV_TOPIC_ARN] = parts.topic.topic_arn
    if parts.bus is not None:
        environment[shapes.ENV_BUS_NAME] = parts.bus.event_bus_name
    if webhook_url is not None:
        environment[shapes.ENV_WEBHOOK_URL] = webhook_url
    if webhook_url_secret is not None:
        environment[shapes.ENV_WEBHOOK_URL_SECRET_ARN] = webhook_url_secret.secret_arn
    if webhook_secret is not None:
        environment[shapes.ENV_WEBHOOK_SECRET_ARN] = webhook_secret.secret_arn
    if index_shards is not None:  # every function that reads the ledger must shard alike
        environment[shapes.ENV_INDEX_SHARDS] = str(index_shards)
    environment.update(parts.channels.environment())
    return environment


def router_variables(
    environment: dict[str, str],
    *,
    router_timeout: Duration,
    max_receive_count: int,
    checkpoint_bucket: s3.IBucket | None = None,
) -> dict[str, str]:
    """The router's variables: the shared ones, its thread lease, the entry queue's receive count, and the
    checkpoint bucket when there is one (the router alone checkpoints)."""
    router = {**environment, shapes.ENV_MAX_RECEIVE_COUNT: str(max_receive_count)}
    if checkpoint_bucket is not None:
        router[shapes.ENV_CHECKPOINT_BUCKET] = checkpoint_bucket.bucket_name
    if not router_timeout.is_unresolved():  # a token: the runtime's default lease (900 s) outlasts any timeout
        lease = int(router_timeout.to_seconds(integral=False)) + shapes.LEASE_MARGIN_SECONDS
        router[shapes.ENV_LEASE_SECONDS] = str(lease)
    return router


def grant_functions(
    parts: Parts,
    router: lambda_.Function,
    sweep: lambda_.Function,
    *,
    webhook_secrets: Sequence[secretsmanager.ISecret | None],
) -> None:
    """What the router and the sweep may call: each only what its runtime calls, on these parts only."""
    questions.grant_router(router, parts.question_table)
    questions.grant_sweep(sweep, parts.question_table)
    _grants.grant_table(router, parts.checkpoint_table, _perms.CHECKPOINT_READ_WRITE, kms_actions=_perms.KMS_READ_WRITE)
    if parts.checkpoint_bucket is not None:
        grant_checkpoint_bucket(router, parts.checkpoint_bucket)
    # Receiving from the entry queue is granted by the router's event source. The router sends only
    # dead letters; the sweep sends default answers into the entry queue.
    _grants.grant_send(router, parts.dead_letter_queue)
    _grants.grant_send(sweep, parts.entry_queue)
    for function in (router, sweep):
        if parts.topic is not None:
            _grants.grant_publish(function, parts.topic)
        if parts.bus is not None:
            parts.bus.grant_put_events_to(function)
        for secret in webhook_secrets:
            if secret is not None:
                # secretsmanager:GetSecretValue and DescribeSecret on the secret, and decrypt on its key if any.
                secret.grant_read(function)
        parts.channels.grant(function)
        if parts.channels.read_questions:
            questions.grant_find_question(function, parts.question_table)


def wire_answer_api(
    api: AnswerApi,
    parts: Parts,
    *,
    router: lambda_.Function,
    sweep: lambda_.Function,
    senders: SenderLists,
    precise_deadlines: PreciseDeadlines | None,
    link_announcers: Sequence[str],
    index_shards: int | None,
    a2a: A2aProps | None = None,
    mcp: McpProps | None = None,
    passkeys: bool = False,
) -> None:
    """The router learns the API's URL and trusts its role; with link announcers (or email, or Teams), it and the
    sweep sign links. The API shards the question table's index keys as the router and the sweep do, moves a
    deadline's schedules when it extends one, and takes the channels' routes (Slack's interactions)."""
    if index_shards is not None:
        api.function.add_environment(shapes.ENV_INDEX_SHARDS, str(index_shards))
    if precise_deadlines is not None:
        precise_deadlines.grant_keep_schedules(api.function)
    senders.add(shapes.ENV_TRUSTED_SENDERS, [api.role_id])
    router.add_environment(shapes.ENV_API_URL, api.url)
    if a2a is not None:  # the card's routes and endpoint (the router got the card with its own variables)
        api.add_a2a(a2a)
    if passkeys:  # the relying party is the API's own origin, where the inbox is served
        api.function.add_environment(shapes.ENV_PASSKEY_ORIGIN, api.origin)
    if (link_announcers or parts.channels.sign_links) and api.link_keys is not None:
        # The sweep re-announces a question whose first announcement failed: with the same links.
        for announcing in (router, sweep):
            announcing.add_environment(shapes.ENV_API_URL, api.url)
            announcing.add_environment(shapes.ENV_LINK_KEYS_ARN, api.link_keys.secret_arn)
            if link_announcers:
                announcing.add_environment(shapes.ENV_LINK_ANNOUNCERS, ",".join(dict.fromkeys(link_announcers)))
            _grants.grant_secret_value(announcing, api.link_keys)
    parts.channels.add_to_answer_api(api)
    if mcp is not None:  # the MCP server's routes and its right to open question rows
        api.add_mcp(mcp)


def serve_durable_function(
    parts: Parts, router: lambda_.Function, function: lambda_.IFunction, *, index_shards: int | None
) -> iam.Grant:
    """What a durable function that asks may call and is told, and the router's right to complete its callbacks
    (`AgentWait.serve_durable_function` says each). Returns the function's grant on the question table."""
    grant = _grants.grant_table(
        function, parts.question_table, _perms.QUESTION_DURABLE_ASK, kms_actions=_perms.KMS_READ_WRITE
    )
    if parts.topic is not None:
        _grants.grant_publish(function, parts.topic)
    if parts.bus is not None:
        parts.bus.grant_put_events_to(function)
    iam.Grant.add_to_principal(
        grantee=router,
        actions=list(_perms.DURABLE_CALLBACK),
        resource_arns=[f"{function.function_arn}:*"],
    )
    if isinstance(function, lambda_.Function):
        function.add_environment(shapes.ENV_TABLE, parts.question_table.table_name)
        if parts.topic is not None:
            function.add_environment(shapes.ENV_TOPIC_ARN, parts.topic.topic_arn)
        if parts.bus is not None:
            function.add_environment(shapes.ENV_BUS_NAME, parts.bus.event_bus_name)
        if index_shards is not None:
            function.add_environment(shapes.ENV_INDEX_SHARDS, str(index_shards))
    return grant


def watch(
    scope: Construct,
    parts: Parts,
    *,
    router: lambda_.Function,
    sweep: lambda_.Function,
    answer_api: AnswerApi | None,
    oldest_open_question_threshold: Duration,
    alarm_topic: sns.ITopic | None,
    alarms: bool,
    dashboard: bool,
    metric_tags: Mapping[str, Sequence[str]] | None,
) -> tuple[AgentWaitAlarms | None, AgentWaitDashboard | None]:
    """The alarms (`alarms`), and the dashboard (`dashboard`) that shows their states beside the metrics."""
    made = None
    if alarms:
        configuration_set = parts.channels.email_configuration_set
        made = AgentWaitAlarms(
            scope,
            "Alarms",
            dead_letter_queue=parts.dead_letter_queue,
            router_function=router,  # pyright: ignore[reportArgumentType]
            sweep_function=sweep,  # pyright: ignore[reportArgumentType]
            oldest_open_question_threshold=oldest_open_question_threshold,
            alarm_topic=alarm_topic,
            email_configuration_set_name=configuration_set.configuration_set_name if configuration_set else None,
        )
    if not dashboard:
        return made, None
    return made, AgentWaitDashboard(
        scope,
        "Dashboard",
        router_function=router,  # pyright: ignore[reportArgumentType]
        sweep_function=sweep,  # pyright: ignore[reportArgumentType]
        answer_api_function=answer_api.function if answer_api is not None else None,  # pyright: ignore[reportArgumentType]
        dead_letter_queue=parts.dead_letter_queue,
        alarms=made.alarms if made is not None else (),
        metric_tags=metric_tags,
    )


def add_outputs(scope: Construct, parts: Parts, answer_api: AnswerApi | None) -> None:
    """A `CfnOutput` for each queue URL, table name, the topic, the bus, the answer API and the channels' parts."""
    values = {
        "EntryQueueUrl": (parts.entry_queue.queue_url, "Send starts and answers here (FIFO; group by thread)"),
        "DeadLetterQueueUrl": (parts.dead_letter_queue.queue_url, "Messages the router could not apply"),
        "QuestionTableName": (parts.question_table.table_name, "The question ledger"),
        "CheckpointTableName": (parts.checkpoint_table.table_name, "LangGraph checkpoints"),
    }
    if parts.topic is not None:
        values["TopicArn"] = (parts.topic.topic_arn, "Subscribe here for announcements")
    if parts.bus is not None:
        values["BusName"] = (parts.bus.event_bus_name, "Add rules here for announcements")
    if answer_api is not None:
        values["AnswerApiUrl"] = (answer_api.url, "The answer API (people answer here, signed in or by link)")
    values.update(parts.channels.outputs())
    for output_id, (value, description) in values.items():
        CfnOutput(scope, output_id, value=value, description=f"agent-wait: {description}")
