"""The rules between `AgentWait`'s props: each range under the name the user writes, and what may go together.

The parts check their own props (`RouterFunction.check_props`, `EntryQueue.check_props`, ...) and brought
resources against their shapes (`check_question_table_shape`, `check_max_receive_count`); this module
combines them for `AgentWait`, naming a grouped prop by its group (`router.memory_size`, `sweep.rate`,
`queue.visibility_timeout`), and adds the rules across parts. `AgentWait` puts the props it checks in one
`CheckedProps` and calls `check_every_prop` before it creates anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Duration, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs

from agent_wait_cdk._lambda_function import check_extra_environment, check_log_level
from agent_wait_cdk._names import check_resource_name_prefix
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.a2a import A2aProps
from agent_wait_cdk.alarms import AgentWaitAlarms
from agent_wait_cdk.announce_targets import AnnounceTopic
from agent_wait_cdk.answer_api import LINK_ANNOUNCERS, AnswerApi, AnswerApiProps
from agent_wait_cdk.checkpoint_bucket import check_checkpoint_bucket
from agent_wait_cdk.dashboard import check_metric_tags
from agent_wait_cdk.email import EmailProps, check_email_props
from agent_wait_cdk.entry_queue import EntryQueue, EntryQueueProps, check_max_receive_count
from agent_wait_cdk.functions import RouterFunction, RouterProps, SweepFunction, SweepProps
from agent_wait_cdk.mcp import McpProps, check_mcp_props
from agent_wait_cdk.push import PushProps, check_push_props
from agent_wait_cdk.question_table import check_question_table_shape
from agent_wait_cdk.retention import RetentionProps
from agent_wait_cdk.slack import SlackProps, check_slack_props
from agent_wait_cdk.teams import ShapedWebhookProps, TeamsProps, check_chat_props

__all__ = (
    "VISIBILITY_FACTOR",
    "CheckedProps",
    "check_every_prop",
    "check_router_props",
    "times",
)

_GRAPH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
VISIBILITY_FACTOR = 6
"""The entry queue's visibility timeout is at least this many router timeouts (AWS's advice for SQS sources)."""


@dataclass(frozen=True, kw_only=True)
class CheckedProps:
    """The `AgentWait` props its checks read, each as the user gave it but `topic` and `bus`, resolved from their
    defaults (`announce_targets.announcers_chosen`)."""

    graph: str
    log_level: str
    webhook_url: str | None
    webhook_secret: secretsmanager.ISecret | None
    webhook_url_secret: secretsmanager.ISecret | None
    resource_name_prefix: str | None
    alarms: bool
    alarm_topic: sns.ITopic | None
    router: RouterProps
    sweep: SweepProps
    queue: EntryQueueProps
    index_shards: int | None
    oldest_open_question_threshold: Duration
    metric_tags: Mapping[str, Sequence[str]] | None
    topic: bool
    topic_fifo: bool
    topic_fifo_throughput_scope: sns.FifoThroughputScope | None
    existing_topic: sns.ITopic | None
    bus: bool
    existing_bus: events.IEventBus | None
    answer_api: bool
    answer_api_props: AnswerApiProps | None
    link_announcers: Sequence[str]
    slack: SlackProps | None
    teams: TeamsProps | None
    shaped_webhook: ShapedWebhookProps | None
    email: EmailProps | None
    existing_question_table: dynamodb.ITable | None
    existing_entry_queue: sqs.IQueue | None
    existing_dead_letter_queue: sqs.IQueue | None
    checkpoint_bucket: bool
    existing_checkpoint_bucket: s3.IBucket | None
    retention: RetentionProps
    a2a: A2aProps | None = None
    passkeys: bool = False
    push: PushProps | None = None
    mcp: McpProps | None = None


def check_every_prop(path: str, props: CheckedProps) -> None:
    """Every prop of the `AgentWait` at `path`, checked before anything is created, so one error lists every problem.

    Raises:
        AgentWaitPropsError: every prop out of range, malformed, or contradicting another.
    """
    checks = PropChecks(path)
    _check_ranges_and_formats(checks, props)
    _check_topic_scope(checks, props)
    _check_answer_api_switch(checks, props)
    answer_api_props = props.answer_api_props
    links = answer_api_props is not None and answer_api_props.links
    check_email_props(checks, props.email, answer_api=props.answer_api, links=links)
    check_push_props(checks, props.push, answer_api=props.answer_api)
    _check_existing_resources(checks, props)
    checks.raise_if_any()


def _check_ranges_and_formats(checks: PropChecks, props: CheckedProps) -> None:
    """Every range and format rule, with the parts' own rules under the names the user writes."""
    if not _GRAPH.match(props.graph):
        checks.fail("graph", f"must be 'module:attribute', e.g. 'my_app.graph:build_graph'; got {props.graph!r}")
    check_log_level(checks, props.log_level)
    check_resource_name_prefix(checks, props.resource_name_prefix)
    webhook_url = props.webhook_url
    if (
        webhook_url is not None
        and not Token.is_unresolved(webhook_url)
        and not webhook_url.startswith(("https://", "http://"))
    ):
        checks.fail("webhook_url", f"must start with https:// or http://; got {webhook_url!r}")
    if webhook_url is not None and props.webhook_url_secret is not None:
        checks.fail(
            "webhook_url",
            "cannot go with webhook_url_secret: the URL comes from one place; keep webhook_url_secret and drop "
            "webhook_url",
        )
    if props.webhook_secret is not None and webhook_url is None and props.webhook_url_secret is None:
        checks.fail(
            "webhook_secret",
            "signs webhook deliveries, but there is no webhook to deliver to; pass webhook_url_secret too, or drop it",
        )
    if props.alarm_topic is not None and not props.alarms:
        checks.fail("alarm_topic", "cannot go with alarms=False: there would be no alarm to notify it; drop one")
    check_router_props(checks.prefixed("router."), props.router)
    props.retention.check(checks.prefixed("retention."))
    SweepFunction.check_props(checks.prefixed("sweep."), **props.sweep.as_kwargs())
    checks.int_between("index_shards", props.index_shards, minimum=1, maximum=1000, unit="shards")
    AgentWaitAlarms.check_props(checks, oldest_open_question_threshold=props.oldest_open_question_threshold)
    check_metric_tags(checks, props.metric_tags)
    EntryQueue.check_props(checks.prefixed("queue."), **props.queue.as_kwargs())
    checks.duration_at_least(
        "queue.visibility_timeout",
        props.queue.visibility_timeout,
        minimum=times(props.router.timeout, VISIBILITY_FACTOR),
        why="six times router.timeout, so a retried batch is not seen twice while the first attempt runs",
    )


def check_router_props(checks: PropChecks, router: RouterProps) -> None:
    """`RouterFunction`'s own rules, and extra variables that must not set what AgentWait or Lambda sets (a
    rule of AgentWait's: for `RouterFunction` alone, `environment` is the whole environment)."""
    RouterFunction.check_props(
        checks,
        timeout=router.timeout,
        memory_size=router.memory_size,
        batch_size=router.batch_size,
        reserved_concurrent_executions=router.reserved_concurrent_executions,
        max_concurrency=router.max_concurrency,
        vpc=router.vpc,
        vpc_subnets=router.vpc_subnets,
        security_groups=router.security_groups,
    )
    check_extra_environment(checks, "environment", router.environment)


def _check_topic_scope(checks: PropChecks, props: CheckedProps) -> None:
    """The scope shapes a FIFO topic AgentWait creates: not a brought topic, not a standard one, not none."""
    scope = props.topic_fifo_throughput_scope
    if scope is None:
        return
    if props.existing_topic is not None:
        checks.fail(
            "topic_fifo_throughput_scope",
            "shapes a topic AgentWait creates; with existing_topic, set the scope on your own topic",
        )
    elif not props.topic:
        checks.fail("topic_fifo_throughput_scope", "cannot go with topic=False: there is no topic to shape")
    else:
        AnnounceTopic.check_props(checks.prefixed("topic_"), fifo=props.topic_fifo, fifo_throughput_scope=scope)


def times(duration: Duration, factor: int) -> Duration:
    if duration.is_unresolved():
        return duration
    return Duration.seconds(duration.to_seconds(integral=False) * factor)


def _check_existing_resources(checks: PropChecks, props: CheckedProps) -> None:
    """`existing_X` or the props that shape a created X, never both; brought resources must fit."""
    check_checkpoint_bucket(checks, switch=props.checkpoint_bucket, existing=props.existing_checkpoint_bucket)
    if props.existing_topic is not None and not props.topic:
        checks.fail("existing_topic", "cannot go with topic=False; pass existing_topic to announce on it, or neither")
    if props.existing_topic is not None and props.topic_fifo:
        checks.fail("topic_fifo", "shapes a topic AgentWait creates; with existing_topic, the topic's own kind is used")
    if props.existing_bus is not None and not props.bus:
        checks.fail("existing_bus", "cannot go with bus=False; pass existing_bus to announce on it, or neither")
    entry, dead_letters, queue = props.existing_entry_queue, props.existing_dead_letter_queue, props.queue
    if (entry is None) != (dead_letters is None):
        checks.fail(
            "existing_entry_queue",
            "and existing_dead_letter_queue go together: the router dead-letters malformed messages itself, "
            "so it needs the queue the entry queue's redrive policy sends to",
        )
    if entry is not None:
        for field, value in (
            ("queue.visibility_timeout", queue.visibility_timeout),
            ("queue.retention_period", queue.retention_period),
        ):
            if value is not None:
                checks.fail(field, "shapes an entry queue AgentWait creates; it cannot go with existing_entry_queue")
    for field, brought in (("existing_entry_queue", entry), ("existing_dead_letter_queue", dead_letters)):
        if brought is not None and not brought.fifo:
            checks.fail(
                field,
                "must be a FIFO queue (starts and answers are ordered per thread); if it is, import it with "
                "sqs.Queue.from_queue_attributes(..., fifo=True)",
            )
    if isinstance(props.existing_question_table, dynamodb.Table):
        check_question_table_shape(checks, props.existing_question_table)
    check_max_receive_count(checks.prefixed("queue."), entry, queue.max_receive_count)


def _check_answer_api_switch(checks: PropChecks, props: CheckedProps) -> None:
    """The answer API's switch and props go together; link announcers need links and their announcer; Slack
    and Teams need the API (their buttons open it) and their own props right, as a shaped webhook does."""
    answer_api, answer_api_props, link_announcers = props.answer_api, props.answer_api_props, props.link_announcers
    check_slack_props(checks, props.slack, answer_api=answer_api)
    check_mcp_props(checks, props.mcp, answer_api=answer_api)
    check_chat_props(
        checks,
        teams=props.teams,
        shaped_webhook=props.shaped_webhook,
        answer_api=answer_api,
        link_announcers=link_announcers,
    )
    if props.a2a is not None and not answer_api:
        checks.fail("a2a", "is served by the answer API, which is off; pass answer_api=True too, or drop it")
    if props.passkeys and not answer_api:
        checks.fail("passkeys", "are registered and checked by the answer API, which is off; pass answer_api=True too")
    if answer_api and answer_api_props is None:
        checks.fail(
            "answer_api_props",
            "must say how people sign in when answer_api=True: AnswerApiProps(jwt_issuer=..., jwt_audience=[...]) "
            "for any OIDC issuer, or AnswerApiProps(user_pool=..., user_pool_clients=[...]) for Cognito; got None",
        )
    if answer_api_props is not None and not answer_api:
        checks.fail("answer_api_props", "configures the answer API, which is off; pass answer_api=True too, or drop it")
    if answer_api_props is not None:
        AnswerApi.check_props(checks.prefixed("answer_api_props."), **answer_api_props.as_kwargs())
    if not link_announcers:
        return
    unknown = [name for name in link_announcers if name not in LINK_ANNOUNCERS]
    if unknown:
        checks.fail("link_announcers", f"must name announcers among {', '.join(LINK_ANNOUNCERS)}; got {unknown}")
    if not answer_api or answer_api_props is None or not answer_api_props.links:
        checks.fail(
            "link_announcers",
            "needs answer_api=True with links on (AnswerApiProps.links, the default): links point at the answer "
            f"API and are signed with its keys; got {list(link_announcers)}",
        )
    # An existing topic or bus needs its switch on too (`_check_existing_resources`), so the switches say it all.
    announcers = {
        "sns": props.topic,
        "eventbridge": props.bus,
        "webhook": bool(props.webhook_url or props.webhook_url_secret),
    }
    for name, prop in (("sns", "a topic"), ("eventbridge", "a bus"), ("webhook", "webhook_url")):
        if name in link_announcers and not announcers[name]:
            checks.fail("link_announcers", f"names {name!r}, which needs {prop}; there is none")
