"""agent-wait's CDK constructs: the `AgentWait` construct and the small constructs it composes.

The constructs name the runtime's Lambda handlers by string and never import `agent_wait`: the runtime
is bundled into the functions' code, not loaded beside CDK.

Example:
    from agent_wait_cdk import AgentWait, SweepProps

    agent = AgentWait(
        self, "AgentWait", graph="my_app.graph:build_graph", graph_source=["src/my_app"], sweep=SweepProps(limit=600)
    )
    agent.grant_send_answers(approvals_api_role)
"""

from agent_wait_cdk._inbox import InboxSignIn
from agent_wait_cdk._shapes import (
    API_HANDLER,
    METRICS_NAMESPACE,
    OLDEST_OPEN_QUESTION_METRIC,
    ROUTER_ERRORS_METRIC,
    ROUTER_HANDLER,
    SERVICE_NAME,
    SWEEP_ERRORS_METRIC,
    SWEEP_HANDLER,
)
from agent_wait_cdk._validate import AgentWaitPropsError
from agent_wait_cdk.a2a import A2aProps
from agent_wait_cdk.agent_wait import AgentWait
from agent_wait_cdk.alarms import (
    AgentWaitAlarms,
    email_bounces_metric,
    oldest_open_question_metric,
    router_errors_metric,
    sweep_errors_metric,
)
from agent_wait_cdk.announce_targets import AnnounceBus, AnnounceTopic, FifoSubscriptionError, check_queue_subscription
from agent_wait_cdk.answer_api import LINK_ANNOUNCERS, AnswerApi, AnswerApiProps
from agent_wait_cdk.bundling import LAMBDA_PYTHON_VERSION, BundleError, LambdaBundle
from agent_wait_cdk.channel_records import ChannelRecordTable
from agent_wait_cdk.checkpoint_bucket import CheckpointBucket
from agent_wait_cdk.checkpoint_table import CheckpointTable
from agent_wait_cdk.dashboard import AgentWaitDashboard
from agent_wait_cdk.email import EmailConfigurationSet, EmailProps, EmailSendsTable
from agent_wait_cdk.entry_queue import EntryQueue, EntryQueueProps
from agent_wait_cdk.functions import LAMBDA_RUNTIME, RouterFunction, RouterProps, SweepFunction, SweepProps
from agent_wait_cdk.mcp import McpProps
from agent_wait_cdk.push import PushProps, PushSendsTable, PushSubscriptionsTable
from agent_wait_cdk.question_table import QuestionTable
from agent_wait_cdk.retention import RetentionProps
from agent_wait_cdk.slack import SLACK_BOT_SCOPES, SlackMessagesTable, SlackProps, slack_app_manifest
from agent_wait_cdk.teams import ShapedWebhookProps, TeamsProps, TeamsSendsTable

__all__ = (
    "API_HANDLER",
    "LAMBDA_PYTHON_VERSION",
    "LAMBDA_RUNTIME",
    "LINK_ANNOUNCERS",
    "METRICS_NAMESPACE",
    "OLDEST_OPEN_QUESTION_METRIC",
    "ROUTER_ERRORS_METRIC",
    "ROUTER_HANDLER",
    "SERVICE_NAME",
    "SLACK_BOT_SCOPES",
    "SWEEP_ERRORS_METRIC",
    "SWEEP_HANDLER",
    "A2aProps",
    "AgentWait",
    "AgentWaitAlarms",
    "AgentWaitDashboard",
    "AgentWaitPropsError",
    "AnnounceBus",
    "AnnounceTopic",
    "AnswerApi",
    "AnswerApiProps",
    "BundleError",
    "ChannelRecordTable",
    "CheckpointBucket",
    "CheckpointTable",
    "EmailConfigurationSet",
    "EmailProps",
    "EmailSendsTable",
    "EntryQueue",
    "EntryQueueProps",
    "FifoSubscriptionError",
    "InboxSignIn",
    "LambdaBundle",
    "McpProps",
    "PushProps",
    "PushSendsTable",
    "PushSubscriptionsTable",
    "QuestionTable",
    "RetentionProps",
    "RouterFunction",
    "RouterProps",
    "ShapedWebhookProps",
    "SlackMessagesTable",
    "SlackProps",
    "SweepFunction",
    "SweepProps",
    "TeamsProps",
    "TeamsSendsTable",
    "check_queue_subscription",
    "email_bounces_metric",
    "oldest_open_question_metric",
    "router_errors_metric",
    "slack_app_manifest",
    "sweep_errors_metric",
)
