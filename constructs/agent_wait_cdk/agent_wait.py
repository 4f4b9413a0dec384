"""`AgentWait`: the whole of agent-wait on AWS in one construct.

It composes the parts, in order: storage and the channels' records, the entry queue, the announcers, the router
and the sweep, the answer API, the alarms and the outputs. Its props are checked first, all together
(`_agent_wait_checks.py`); each part is made by its own module; the answer channels are `_agent_wait_channels.py`,
and the variables, grants and outputs that join the parts are `_agent_wait_wiring.py`.

Long on purpose: about 270 of its lines document its 44 props and its grants, which users read here, and
the constructor spells out each part's props as it makes it, in the order the template lists them.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Annotations, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk import _grants
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk import question_table as questions
from agent_wait_cdk._agent_wait_channels import AgentWaitChannels
from agent_wait_cdk._agent_wait_checks import VISIBILITY_FACTOR, CheckedProps, check_every_prop, times
from agent_wait_cdk._agent_wait_wiring import (
    Parts,
    add_outputs,
    grant_functions,
    router_variables,
    serve_durable_function,
    shared_environment,
    watch,
    wire_answer_api,
)
from agent_wait_cdk._defaults import FOUR_DAYS, ONE_DAY
from agent_wait_cdk._names import ResourceNames
from agent_wait_cdk._senders import SenderLists, role_id, sender_id
from agent_wait_cdk.a2a import A2aProps
from agent_wait_cdk.announce_targets import (
    AnnounceBus,
    AnnounceTopic,
    _FifoSubscriptionCheck,
    announcers_chosen,
    check_queue_subscription,
)
from agent_wait_cdk.answer_api import AnswerApi, AnswerApiProps
from agent_wait_cdk.bundling.bundle import BUNDLE_CONTEXT, LambdaBundle, warn_if_graph_missing
from agent_wait_cdk.checkpoint_bucket import CheckpointBucket
from agent_wait_cdk.checkpoint_table import CheckpointTable
from agent_wait_cdk.dashboard import metric_tags_variable
from agent_wait_cdk.email import EmailConfigurationSet, EmailProps
from agent_wait_cdk.entry_queue import EntryQueue, EntryQueueProps, redrive_count
from agent_wait_cdk.functions import RouterFunction, RouterProps, SweepFunction, SweepProps
from agent_wait_cdk.mcp import McpProps
from agent_wait_cdk.precise_deadlines import PreciseDeadlines, precise_sweep_name
from agent_wait_cdk.push import PushProps
from agent_wait_cdk.question_table import QuestionTable
from agent_wait_cdk.retention import RetentionProps
from agent_wait_cdk.slack import SlackProps
from agent_wait_cdk.teams import ShapedWebhookProps, TeamsProps

__all__ = ("AgentWait",)


class AgentWait(Construct):
    """agent-wait on AWS: question ledger, checkpoints, entry queue, announcers, router, sweep and alarms.

    Starts and answers go to one FIFO entry queue (`grant_send_starts`, `grant_send_answers`); the router
    applies them and resumes the graph named by `graph`; questions are announced on the SNS topic, the
    EventBridge bus and/or a webhook; the sweep, on a schedule, expires overdue questions and sends the
    policies' reminders and escalation steps. With `answer_api`, people answer over HTTPS too (`AnswerApi`),
    signed in or through signed links; with `slack` too, in Slack (`SlackProps`). Bring your own question table,
    topic, bus or entry queue with the `existing_*` props.

    The router, the sweep and the entry queue each take their own props object (`router=RouterProps(...)`,
    `sweep=SweepProps(...)`, `queue=EntryQueueProps(...)`, like `answer_api_props=AnswerApiProps(...)`),
    passed through whole to the construct that makes them. What every function shares stays flat here:
    `architecture` (which the bundle must match), `log_retention`, `log_level`, `tracing`, `code`,
    `requirements_file`, `runtime_source`, `index_shards` (every function must shard alike), and
    `encryption_key` and `removal_policy` (every resource): set once, they cannot disagree between functions.

    The router trusts the sweep's role and the answer API's role (`AGENT_WAIT_TRUSTED_SENDERS`): only they
    may say who answered or send a deadline answer. Each `grant_send_starts` / `grant_send_answers` adds its
    grantee to the router's `AGENT_WAIT_START_SENDERS` / `AGENT_WAIT_ANSWER_SENDERS`; once one is made, only
    those (and the trusted roles) may send that kind of message, whoever else the queue policy lets in.

    Example:
        agent = AgentWait(
            self,
            "AgentWait",
            graph="my_app.graph:build_graph",
            graph_source=["src/my_app"],
            router=RouterProps(timeout=Duration.minutes(2)),
        )
        agent.grant_send_answers(approvals_api_role)
        agent.subscribe_queue(approvals_queue)

    Args:
        scope: the parent construct.
        id: the construct id.
        graph: `module:attribute` of a compiled graph, or of a factory that takes a checkpointer; the
            router imports it (`AGENT_WAIT_GRAPH`). Required: there is no sensible default graph.
        graph_source: paths (directories or files) copied into the Lambda bundle under their own names,
            so `graph` can be imported. Default (): the graph comes from `requirements_file`.
        topic: announce on an SNS topic. Default None: True, the broadest fan-out (email, HTTPS, SQS, Lambda),
            unless a bus is chosen (`bus=True` or `existing_bus`): then the bus is the fan-out and no topic is
            created unless `topic=True` (or `existing_topic`, `topic_fifo`) asks for one too. One announcer by
            default, so a deployment pays for the one it chose (docs/cost.md, "Choosing announcers").
        topic_fifo: create the topic as FIFO. Default False: a standard topic reaches every kind of
            subscriber; FIFO only if FIFO queues must subscribe. Not with `existing_topic`.
        topic_fifo_throughput_scope: the FIFO topic's throughput scope (`AnnounceTopic`'s `fifo_throughput_scope`).
            Default None: `FifoThroughputScope.MESSAGE_GROUP`, where the quota applies per message group and
            the SNS announcer publishes each thread in its own group; `FifoThroughputScope.TOPIC` caps the whole
            topic at 3,000 messages a second. Only with `topic_fifo=True`; not with `existing_topic`.
        existing_topic: announce on this topic instead of creating one.
        bus: announce on an EventBridge bus too, so rules route envelopes by `detail-type` to any target without
            changing agent-wait. Default None: False, unless `existing_bus` is given: a bus beside the topic is a
            second announcer every envelope pays for (a `PutEvents` entry per envelope), so it is opt-in. Before
            issue 46 the default was True; pass `bus=True` to keep a bus deployed then (same logical id, nothing
            replaced). With `bus=True` and `topic` unset, the bus is the only announcer.
        existing_bus: announce on this bus instead of creating one (for example the default bus).
        webhook_url_secret: also POST each envelope to the webhook whose URL is this Secrets Manager secret's
            value (its text, such as `https://hooks.slack.com/services/...`); its ARN is set as
            `AGENT_WAIT_WEBHOOK_URL_SECRET_ARN` on the router and the sweep, which may read it
            (`secret.grant_read`, with its KMS key) and read it once at cold start. Default None: no webhook.
            A webhook URL is a secret (Slack and Teams incoming webhooks carry their token in it), so it never
            goes into the functions' configuration in plain text.
        webhook_url: deprecated; use `webhook_url_secret`. The webhook URL in plain text, set as
            `AGENT_WAIT_WEBHOOK_URL` in both functions' environment, where anyone who may read their
            configuration sees it; the synth warns (`agent-wait:webhook-url-plain-text`). Default None. Not
            with `webhook_url_secret`.
        webhook_secret: the Secrets Manager secret whose value signs the webhook deliveries; its ARN is set
            as `AGENT_WAIT_WEBHOOK_SECRET_ARN` on both functions, which may read it (`secret.grant_read`,
            with its KMS key). Default None: deliveries are unsigned. Needs `webhook_url_secret` (or
            `webhook_url`).
        answer_api: create the HTTPS answer API (`AnswerApi`) on the same table, queue and code; its URL is set
            as the router's `AGENT_WAIT_API_URL` (envelopes carry it in `reply_to`), its role becomes a trusted
            sender, and `AnswerApiUrl` is an output. Default False: it needs a sign-in (an OIDC issuer or a
            Cognito user pool) that only you can name. Needs `answer_api_props`.
        answer_api_props: the `AnswerApi` props AgentWait does not already know (`AnswerApiProps`: how people
            sign in, links and their keys, groups claim, CORS, throttling, the function's timeout and memory).
            One object rather than a dozen `answer_api_*` props, so the API's props read the same here and
            on `AnswerApi`. Default None. Only with `answer_api=True`.
        link_announcers: announcers whose envelopes carry signed answer links: any of `eventbridge`, `sns`,
            `webhook`, the ones AgentWait configures (never the log). Sets the router's and the sweep's
            `AGENT_WAIT_LINK_ANNOUNCERS` and `AGENT_WAIT_LINK_KEYS_ARN`, and lets them read the link keys.
            Default (): no envelope carries a link (a link is a capability: choose where it goes). Needs
            `answer_api` with links on; `sns`, `eventbridge` and `webhook` need that announcer.
        slack: post each question to Slack and take its buttons and modals (`SlackProps`: the bot token and signing
            secret, channels by policy tag, user groups, the messages table). The router and the sweep post and
            update messages (`AGENT_WAIT_SLACK_BOT_TOKEN_ARN`, `_CHANNELS`, `_GROUPS`, `_MESSAGES_TABLE`; they may
            read the bot token, and `GetItem`/`UpdateItem` the messages table, created unless brought); the answer
            API takes `POST /slack/interactions` without an authorizer (Slack signs each request) and may read both
            secrets; the `SlackAppManifest` output is the Slack app's manifest with that URL. Default None: no
            Slack. Needs `answer_api=True`.
        mcp: serve agent-wait as an MCP server on the answer API (`McpProps`: the named policies `ask_person` may ask
            under): `POST /mcp` behind the JWT authorizer, `POST /mcp/iam` behind an IAM authorizer; the function gets
            `AGENT_WAIT_MCP_POLICIES` and may open question rows; the API's bundle keeps the `mcp` package. Default
            None: no MCP server. Needs `answer_api=True`.
        teams: post each question, its reminders and escalations and its outcome to a Teams Workflows webhook as
            Adaptive Cards (`TeamsProps`: the webhook URL's secret, the mode, who gets the cards). The router and the
            sweep get `AGENT_WAIT_TEAMS_*`, may read the URL's secret, and sign the cards' links with the answer API's
            link keys (`AGENT_WAIT_LINK_KEYS_ARN`, `AGENT_WAIT_API_URL`). Default None: no Teams. Needs
            `answer_api=True` with links on.
        shaped_webhook: POST each envelope as the JSON a template per transition renders (`ShapedWebhookProps`: the
            URL's secret and the templates); the router and the sweep get `AGENT_WAIT_SHAPED_WEBHOOK_*` and may read
            the secret. `link_announcers` may name it `shaped`. Default None.
        email: email each question to the people who may answer it, through SES (`EmailProps`: the sender and its
            identity, recipients by answerer group and policy tag, reply-to, the configuration set's name, the sends
            table). Creates `EmailSendsTable` (unless brought) and an SES configuration set whose CloudWatch event
            destination counts bounces and complaints (the `EmailBounces` alarm). The router and the sweep get the
            `AGENT_WAIT_EMAIL_*` settings, the answer API's URL and the link keys (each recipient's buttons are their
            own signed links), `ses:SendEmail`/`SendRawEmail` on the identity and the configuration set only, and
            `GetItem`/`UpdateItem` on the sends table. Default None: no email. Needs `answer_api=True` with links.
        push: web push to the inbox installed as an app (`PushProps`: the VAPID key pair's secret, made with
            `agent-wait push keys`, and the VAPID subject). Creates `PushSubscriptionsTable` and `PushSendsTable`;
            every function gets the `AGENT_WAIT_PUSH_*` settings and may read the secret; the answer API keeps
            subscriptions (`PutItem`, `DeleteItem`, `Query`), the router and the sweep read them (`Scan`), remove gone
            ones and claim each push (docs/phone.md). Default None: no push. Needs `answer_api=True`.
        existing_question_table: use this table as the question ledger; it must have the shape of
            `agent_wait.contract.schema.QUESTION_TABLE` (`pk`/`sk` strings; GSIs `by_status` on
            `status_shard`/`expires_at` with keys and `tags`, `by_due_shard` on `due`/`due_at` and
            `open_by_age_shard` on `open_since`/`asked_at`, keys only, and `by_question` on `question_id`/`pk`,
            keys only). A `dynamodb.Table`
            defined in this app is checked; an imported one is trusted.
        checkpoint_bucket: create an S3 bucket (`CheckpointBucket`) for checkpoints over 12 KB, set as the
            router's `AGENT_WAIT_CHECKPOINT_BUCKET`; only the router may use it. Default True: without it a
            thread whose state passes DynamoDB's 400 KB item limit (a long chat) fails (`checkpoint_too_large`).
            False: no bucket (the router's graph keeps its state small).
        existing_checkpoint_bucket: offload to this bucket instead of creating one; its keys start with the
            thread id, so give it to one AgentWait only. The router gets the same grant. Needs `checkpoint_bucket`.
            Give it the lifecycle rule `CheckpointBucket` has, or its objects are kept for ever.
        retention: how long what AgentWait stores is kept (`RetentionProps`): checkpoints 30 days after a thread
            last wrote them (never while it waits on them), decided rows 400 days, channel records 90 days. Default
            `RetentionProps()`; a field set to None keeps that store for ever (docs/operate.md, "What is kept, and
            for how long").
        existing_entry_queue: consume this FIFO queue instead of creating one; needs
            `existing_dead_letter_queue`, and its visibility timeout must be at least six times `router.timeout`.
            Its `maxReceiveCount`, when AgentWait cannot read it: `queue.max_receive_count`.
        existing_dead_letter_queue: the FIFO dead-letter queue of `existing_entry_queue`.
        encryption_key: a customer managed KMS key for the tables, queues, topic and checkpoint bucket
            AgentWait creates. Default None: AWS managed encryption (`aws/dynamodb`, SSE-SQS, `aws/sns`, SSE-S3),
            which needs no key policy; the bus is always encrypted by EventBridge.
        removal_policy: for the tables, queues, checkpoint bucket and log groups AgentWait creates. Default RETAIN: the
            ledger, checkpoints and pending messages outlive an accidental `cdk destroy`.
        router: the router's own props (`RouterProps`: timeout, memory, batch size, concurrency, extra
            variables, layers, VPC placement), passed through to `RouterFunction`. Default `RouterProps()`,
            whose fields say why. One object rather than a `router_*` prop each, so the router's props read the
            same here and on `RouterFunction`; its checks are reported as `router.<field>`.
        sweep: the sweep's own props (`SweepProps`: rate, timeout, memory, limit), passed through to
            `SweepFunction`. Default `SweepProps()`: every minute, for a minute, 512 MB, the runtime's limit.
        queue: the entry queue's props (`EntryQueueProps`: visibility timeout and retention for the queue
            AgentWait creates, the receive count of one you bring). Default `EntryQueueProps()`: six router
            timeouts, 4 days, 5 receives.
        index_shards: shards per shared key of the question table's indexes (`AGENT_WAIT_INDEX_SHARDS`), set
            alike on the router, the sweep and the answer API, 1 to 1000. Default None: the runtime's 8, about
            2,000 lifecycles a second (docs/scaling.md: at least 4 x lifecycles a second / 1,000,
            with room). Only ever raise it: questions in a dropped shard are no longer found.
        architecture: for every function and the bundle. Default x86_64; arm64 is cheaper.
        log_retention: every function's logs. Default one month.
        log_level: `LOG_LEVEL` for Powertools. Default "INFO": ids only, never question content.
        tracing: X-Ray tracing for both functions. Default None: off, with `POWERTOOLS_TRACE_DISABLED=true`,
            so there are no traces to pay for and no X-Ray permissions; `Tracing.ACTIVE` traces every
            invocation (and the AWS calls in it) with Powertools' Tracer.
        alarms: create the alarms of `AgentWaitAlarms` (dead letters, router and sweep errors, the oldest
            open question). Default True.
        alarm_topic: notify this SNS topic when an alarm fires and when it is OK again. Default None: the
            alarms have no actions (add some with `alarms.add_alarm_action`). Needs `alarms`.
        oldest_open_question_threshold: Default 1 day (see `AgentWaitAlarms`).
        dashboard: create an `AgentWaitDashboard` (CloudWatch) of the metrics and the alarms' states. Default False:
            a dashboard costs $3 a month past CloudWatch's free three.
        metric_tags: policy tag keys, each with the values time to answer is also drawn for (the router's
            `AGENT_WAIT_METRIC_TAGS`, and a graph per key on the dashboard), e.g. `{"team": ["payments",
            "support"]}`: at most 3 keys of 10 values; any other value is drawn as `other`, no tag as `none`.
            Default None: time to answer by outcome only.
        outputs: add CfnOutputs for the queue URLs, topic ARN, bus name and table names. Default True.
        code: Lambda code to use instead of bundling (e.g. built by your CI). Default None: bundle
            `agent_wait`, `graph_source` and `requirements_file` on this machine, without Docker.
        requirements_file: the complete pinned requirements installed into the bundle as they are
            (`--no-deps`). Default None: found the way `PythonFunction` finds them, in the folder of
            `graph`'s module, each `graph_source` folder, then the working directory: `requirements.txt`,
            else `uv.lock` (exported with `uv export --frozen --no-dev --no-hashes --no-emit-project`), else
            `pyproject.toml`'s `[project] dependencies`, passing over any that names `aws-cdk-lib` (the CDK
            app's own, such as the root `requirements.txt` of `cdk init`: never bundled); the first found is
            installed with its dependencies resolved, on top of the runtime's pins for whatever it does not
            name. None found: the runtime's own pins (`agent_wait_cdk/requirements-lambda.txt`). The synth
            output, and every bundle error, says which was used.
        runtime_source: the `agent_wait` directory to bundle. Default None: found beside the constructs.
        resource_name_prefix: name what AgentWait creates `<prefix>-<role>`: the tables `-questions`,
            `-checkpoints`, `-slack-messages` (with `slack`), `-email-sends` (with `email`; its SES
            configuration set `-email`) and `-teams-sends` (with `teams`), the queues `-entry.fifo` and
            `-entry-dlq.fifo`, the topic and the bus `-announcements` (`.fifo` for a FIFO topic), the functions
            `-router` and `-sweep` (log groups `/aws/lambda/<name>`), the bucket `-checkpoints-<account>-<region>`.
            1 to 20 lowercase letters, digits and hyphens. Default None: CloudFormation generates every name, so
            two stacks (or a replacement) never collide. Fixed names cannot be replaced in place: a change that
            replaces a named resource fails until the name changes too.
        precise_deadlines: also wake the sweep for one question at its deadline and at each reminder and escalation
            step, with EventBridge Scheduler one-time schedules (`PreciseDeadlines`: a schedule group, the role
            Scheduler assumes, and the router's, the sweep's and the answer API's right to keep its schedules), so
            they happen within seconds instead of at the sweep's next minute. The sweep's schedule stays as the
            safety net. It names the sweep function (`<prefix>-sweep`, or one unique to this construct), as a
            schedule's target is named by ARN. Default False: the minute sweep alone (about $1 per million
            schedules more when on; docs/scaling.md, "Deadline lateness and cost").
        a2a: call the hosted agent over A2A v1.0 (`A2aProps`: its card's name, description and skills): the answer
            API serves its card and `POST /a2a`, and the router tells each task's push configs of its state changes
            (docs/a2a.md). Needs `answer_api=True`. Default None: off.
        passkeys: people register passkeys in the inbox and confirm answers to `require_passkey` questions with them
            (docs/proving.md): the answer API's origin (its default endpoint, `https://<id>.execute-api...`) is the
            WebAuthn relying party, and its asset keeps `webauthn`. Needs `answer_api=True`. Default False: a
            `require_passkey` question refuses every answer `passkey_required`.

    Raises:
        AgentWaitPropsError: one error listing every prop that is out of range or contradicts another.
        BundleError: a `graph_source` path does not exist or clashes with another (names must differ), the
            runtime cannot be found, or the dependencies cannot be read (a malformed `pyproject.toml`, a
            `uv.lock` without uv to export it); when bundling runs, the installer failed.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        graph: str,
        graph_source: Sequence[str | os.PathLike[str]] = (),
        topic: bool | None = None,
        topic_fifo: bool = False,
        topic_fifo_throughput_scope: sns.FifoThroughputScope | None = None,
        existing_topic: sns.ITopic | None = None,
        bus: bool | None = None,
        existing_bus: events.IEventBus | None = None,
        webhook_url: str | None = None,
        webhook_secret: secretsmanager.ISecret | None = None,
        webhook_url_secret: secretsmanager.ISecret | None = None,
        answer_api: bool = False,
        answer_api_props: AnswerApiProps | None = None,
        link_announcers: Sequence[str] = (),
        slack: SlackProps | None = None,
        mcp: McpProps | None = None,
        teams: TeamsProps | None = None,
        shaped_webhook: ShapedWebhookProps | None = None,
        email: EmailProps | None = None,
        push: PushProps | None = None,
        existing_question_table: dynamodb.ITable | None = None,
        checkpoint_bucket: bool = True,
        existing_checkpoint_bucket: s3.IBucket | None = None,
        retention: RetentionProps = RetentionProps(),
        existing_entry_queue: sqs.IQueue | None = None,
        existing_dead_letter_queue: sqs.IQueue | None = None,
        encryption_key: kms.IKey | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        router: RouterProps = RouterProps(),
        sweep: SweepProps = SweepProps(),
        queue: EntryQueueProps = EntryQueueProps(),
        index_shards: int | None = None,
        architecture: lambda_.Architecture = lambda_.Architecture.X86_64,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        log_level: str = "INFO",
        tracing: lambda_.Tracing | None = None,
        alarms: bool = True,
        alarm_topic: sns.ITopic | None = None,
        oldest_open_question_threshold: Duration = ONE_DAY,
        dashboard: bool = False,
        metric_tags: Mapping[str, Sequence[str]] | None = None,
        outputs: bool = True,
        code: lambda_.Code | None = None,
        requirements_file: str | os.PathLike[str] | None = None,
        runtime_source: str | os.PathLike[str] | None = None,
        resource_name_prefix: str | None = None,
        precise_deadlines: bool = False,
        a2a: A2aProps | None = None,
        passkeys: bool = False,
    ) -> None:
        super().__init__(scope, id)
        # One announcer unless more are asked for: the topic, or the bus when one is chosen instead.
        bus, topic = announcers_chosen(
            topic=topic, bus=bus, existing_topic=existing_topic, existing_bus=existing_bus, topic_fifo=topic_fifo
        )
        names = ResourceNames(resource_name_prefix)
        # Every prop is checked before anything is created, so one error lists every problem.
        check_every_prop(
            self.node.path,
            CheckedProps(
                graph=graph,
                log_level=log_level,
                webhook_url=webhook_url,
                webhook_secret=webhook_secret,
                webhook_url_secret=webhook_url_secret,
                resource_name_prefix=resource_name_prefix,
                alarms=alarms,
                alarm_topic=alarm_topic,
                router=router,
                sweep=sweep,
                queue=queue,
                index_shards=index_shards,
                oldest_open_question_threshold=oldest_open_question_threshold,
                metric_tags=metric_tags,
                topic=topic,
                topic_fifo=topic_fifo,
                topic_fifo_throughput_scope=topic_fifo_throughput_scope,
                existing_topic=existing_topic,
                bus=bus,
                existing_bus=existing_bus,
                answer_api=answer_api,
                answer_api_props=answer_api_props,
                link_announcers=link_announcers,
                slack=slack,
                teams=teams,
                shaped_webhook=shaped_webhook,
                email=email,
                push=push,
                existing_question_table=existing_question_table,
                existing_entry_queue=existing_entry_queue,
                existing_dead_letter_queue=existing_dead_letter_queue,
                checkpoint_bucket=checkpoint_bucket,
                existing_checkpoint_bucket=existing_checkpoint_bucket,
                retention=retention,
                a2a=a2a,
                mcp=mcp,
                passkeys=passkeys,
            ),
        )

        # Storage, and the channels' records.
        self.question_table: dynamodb.ITable = (
            existing_question_table
            or QuestionTable(
                self,
                "QuestionTable",
                table_name=names.question_table,
                removal_policy=removal_policy,
                encryption_key=encryption_key,
            ).table
        )
        self.checkpoint_table: dynamodb.ITable = CheckpointTable(
            self,
            "CheckpointTable",
            table_name=names.checkpoint_table,
            removal_policy=removal_policy,
            encryption_key=encryption_key,
        ).table
        self.retention = retention
        """How long each store keeps what it holds (the `retention` prop)."""
        self.checkpoint_bucket: s3.IBucket | None = self._checkpoint_bucket(
            checkpoint_bucket, existing_checkpoint_bucket, removal_policy, encryption_key, name=names.checkpoint_bucket
        )
        self._keep_channels(
            AgentWaitChannels(
                self,
                slack=slack,
                teams=teams,
                shaped_webhook=shaped_webhook,
                email=email,
                names=names,
                push=push,
                removal_policy=removal_policy,
                encryption_key=encryption_key,
            )
        )

        # The entry queue.
        self.entry_queue, self.dead_letter_queue, max_receive_count = self._entry_queue(
            queue,
            existing=existing_entry_queue,
            existing_dead_letters=existing_dead_letter_queue,
            router_timeout=router.timeout,
            key=encryption_key,
            removal_policy=removal_policy,
            name=names.entry_queue,
        )

        # Announcers.
        self.topic: sns.ITopic | None = self._topic(
            topic,
            topic_fifo,
            topic_fifo_throughput_scope,
            existing_topic,
            encryption_key,
            topic_name=names.topic(topic_fifo),
        )
        self.bus: events.IEventBus | None = existing_bus or (
            AnnounceBus(self, "Bus", event_bus_name=names.bus).bus if bus else None
        )
        self._parts = parts = Parts(
            question_table=self.question_table,
            checkpoint_table=self.checkpoint_table,
            checkpoint_bucket=self.checkpoint_bucket,
            entry_queue=self.entry_queue,
            dead_letter_queue=self.dead_letter_queue,
            topic=self.topic,
            bus=self.bus,
            channels=self._channels,
        )

        # Functions.
        self._index_shards = index_shards  # a durable function that asks (`serve_durable_function`) shards alike
        environment = shared_environment(
            parts,
            graph=graph,
            webhook_url=webhook_url,
            webhook_secret=webhook_secret,
            webhook_url_secret=webhook_url_secret,
            log_level=log_level,
            tracing=tracing,
            index_shards=index_shards,
        )
        ours = (
            router_variables(
                environment,
                router_timeout=router.timeout,
                max_receive_count=max_receive_count,
                checkpoint_bucket=self.checkpoint_bucket,
            )
            | metric_tags_variable(metric_tags)
            | retention.router_variables()
            | (a2a.environment() if a2a is not None else {})  # the router tells A2A push configs
        )
        self.bundle: LambdaBundle | None = None
        api_code = code
        if code is None:
            self.bundle = LambdaBundle.for_architecture(
                architecture,
                graph_source=graph_source,
                runtime_source=runtime_source,
                requirements_file=requirements_file,
                graph=graph,
            )
            # A bundle per function, from one install: the router and the sweep share one that leaves out what only
            # the answer API, or a channel this stack does not turn on, imports; the answer API has its own.
            code = self._bundle_code(self.bundle, graph, function="router", a2a=a2a)
            api_code = (
                self._bundle_code(self.bundle, graph, function="api", a2a=a2a, mcp=mcp, passkeys=passkeys)
                if answer_api
                else None
            )
        # What every function shares; each function's own props are passed through whole.
        shared: dict[str, Any] = {
            "architecture": architecture,
            "log_retention": log_retention,
            "removal_policy": removal_policy,
            "tracing": tracing,
        }
        router_props = router.as_kwargs()
        router_props["environment"] = {**(router.environment or {}), **ours}  # a clash was refused above
        router_function = RouterFunction(
            self,
            "Router",
            code=code,
            entry_queue=self.entry_queue,
            function_name=names.router,
            **shared,
            **router_props,
        )
        # Precise deadlines name the sweep, so its own environment can name its ARN (a reference would be a cycle).
        sweep_name = names.sweep or (precise_sweep_name(self) if precise_deadlines else None)
        sweep_function = SweepFunction(
            self,
            "Sweep",
            code=code,
            environment=environment | retention.sweep_variables(),
            function_name=sweep_name,
            **shared,
            **sweep.as_kwargs(),
        )
        self.router_function: lambda_.Function = router_function.function
        self.sweep_function: lambda_.Function = sweep_function.function
        self.sweep_schedule: events.Rule = sweep_function.schedule
        self._keep_webhook(webhook_url, webhook_url_secret, webhook_secret)
        self.precise_deadlines: PreciseDeadlines | None = None
        """The schedule group and the role Scheduler assumes (`precise_deadlines=True`); None when off. The router
        and the sweep keep its schedules, and the answer API when there is one."""
        if precise_deadlines and sweep_name is not None:
            self.precise_deadlines = PreciseDeadlines(self, "PreciseDeadlines", sweep_function_name=sweep_name)
            for function in (self.router_function, self.sweep_function):
                self.precise_deadlines.grant_keep_schedules(function)  # pyright: ignore[reportArgumentType]
        grant_functions(
            parts,
            self.router_function,
            self.sweep_function,
            webhook_secrets=(self.webhook_url_secret, self.webhook_secret),
        )
        self._senders = SenderLists(self.router_function)
        self._senders.add(shapes.ENV_TRUSTED_SENDERS, [role_id(sweep_function.role)])

        # People answer.
        self.answer_api: AnswerApi | None = None
        if answer_api and answer_api_props is not None and api_code is not None:
            self.answer_api = AnswerApi(
                self,
                "AnswerApi",
                code=api_code,
                question_table=self.question_table,
                entry_queue=self.entry_queue,
                log_level=log_level,
                encryption_key=encryption_key,
                **shared,
                **answer_api_props.as_kwargs(),
            )
            for name, value in retention.answer_api_variables().items():
                self.answer_api.function.add_environment(name, value)
            wire_answer_api(
                self.answer_api,
                parts,
                router=self.router_function,
                sweep=self.sweep_function,
                senders=self._senders,
                precise_deadlines=self.precise_deadlines,
                link_announcers=link_announcers,
                index_shards=index_shards,
                a2a=a2a,
                mcp=mcp,
                passkeys=passkeys,
            )
            self.slack_app_manifest = self._channels.slack_app_manifest

        # Watching, and the outputs.
        self.alarms, self.dashboard = watch(
            self,
            parts,
            router=self.router_function,
            sweep=self.sweep_function,
            answer_api=self.answer_api,
            oldest_open_question_threshold=oldest_open_question_threshold,
            alarm_topic=alarm_topic,
            alarms=alarms,
            dashboard=dashboard,
            metric_tags=metric_tags,
        )
        if outputs:
            add_outputs(self, parts, self.answer_api)

    # Grants for callers.

    def grant_send_starts(self, grantee: iam.IGrantable, *, principal_id: str | None = None) -> iam.Grant:
        """Let `grantee` start runs: send to the entry queue, and be named in the router's start senders.

        Grants `sqs:SendMessage`, `GetQueueAttributes` and `GetQueueUrl` on the entry queue (with
        `kms:GenerateDataKey` and `kms:Decrypt` on its customer managed key, if any), and adds the grantee's
        IAM unique id to the router's `AGENT_WAIT_START_SENDERS`. Once any start grant is made, the router
        refuses starts from every other sender but the trusted ones (the sweep, the answer API); without
        one, any sender the queue lets in may start. SQS cannot tell a start from an answer, so the grantee
        can also put an answer on the queue: the router records it as answered by the grantee itself (it is
        not trusted), and refuses it once answers are restricted too (`grant_send_answers`).

        Args:
            grantee: a role created in this app (or a function, whose role is used), or any principal with
                `principal_id`.
            principal_id: the grantee's IAM unique id (`AROA...` for a role, `AIDA...` for a user), as SQS
                stamps it in `SenderId`. Default None: read from a role created in this app (its
                CloudFormation `RoleId`); required for an imported role or a user.

        Raises:
            AgentWaitPropsError: `principal_id` is needed and missing, or malformed.
        """
        return self._grant_sender(grantee, principal_id, shapes.ENV_START_SENDERS, "grant_send_starts")

    def grant_send_answers(self, grantee: iam.IGrantable, *, principal_id: str | None = None) -> iam.Grant:
        """Let `grantee` answer questions (and retry failed threads) through the entry queue.

        The same sends as `grant_send_starts`, on the same queue (answers and starts share it, grouped by
        thread, so each thread's messages stay in order); the grantee's id goes to the router's
        `AGENT_WAIT_ANSWER_SENDERS`, with the same rule: once one answer grant is made, only those and the
        trusted roles may answer. An answer it sends is recorded as answered by the grantee itself; only
        trusted senders may claim someone else (`answered_by`).

        Args:
            grantee: as for `grant_send_starts`.
            principal_id: as for `grant_send_starts`.

        Raises:
            AgentWaitPropsError: `principal_id` is needed and missing, or malformed.
        """
        return self._grant_sender(grantee, principal_id, shapes.ENV_ANSWER_SENDERS, "grant_send_answers")

    def grant_start(self, grantee: iam.IGrantable, *, principal_id: str | None = None) -> iam.Grant:
        """Deprecated: use `grant_send_starts` (the same grant and the same `AGENT_WAIT_START_SENDERS` entry).

        Unlike the `grant_start` of earlier versions, it also restricts starts to the senders granted them.
        """
        _deprecated("grant_start", "grant_send_starts")
        return self.grant_send_starts(grantee, principal_id=principal_id)

    def grant_answer(self, grantee: iam.IGrantable, *, principal_id: str | None = None) -> iam.Grant:
        """Deprecated: use `grant_send_answers` (the same grant and the same `AGENT_WAIT_ANSWER_SENDERS` entry).

        Unlike the `grant_answer` of earlier versions, it also restricts answers to the senders granted them.
        """
        _deprecated("grant_answer", "grant_send_answers")
        return self.grant_send_answers(grantee, principal_id=principal_id)

    def grant_read_questions(self, grantee: iam.IGrantable) -> iam.Grant:
        """`dynamodb:GetItem`, `BatchGetItem` and `Query` on the question table and its `by_status` and
        `by_question` indexes."""
        return questions.grant_read_questions(grantee, self.question_table)

    def serve_durable_function(self, function: lambda_.IFunction) -> iam.Grant:
        """Let an AWS Lambda durable function ask through agent-wait (`agent_wait.durable.ask`), and the router
        complete its callbacks with the decisions.

        The durable function's role gets what `ask`'s submitter calls: `dynamodb:PutItem`, `UpdateItem` and `GetItem`
        on the question table (and its customer managed key, if any), `sns:Publish` on the topic and
        `events:PutEvents` on the bus, when there are. A `lambda_.Function` also gets `AGENT_WAIT_TABLE`,
        `AGENT_WAIT_TOPIC_ARN` and `AGENT_WAIT_BUS_NAME` (when there are) and `AGENT_WAIT_INDEX_SHARDS` (when set),
        so its `DynamoDbLedger` keys rows as the router's does. The router's role gets
        `lambda:SendDurableExecutionCallbackSuccess` and `lambda:GetDurableExecutionHistory` (to tell a completion it
        made before it died from a refusal) on the function's durable executions, `<function ARN>:*` (Lambda
        authorizes a callback on its execution's ARN, which the unqualified function ARN never matches).

        Returns:
            The durable function's grant on the question table.
        """
        return serve_durable_function(self._parts, self.router_function, function, index_shards=self._index_shards)

    def subscribe_queue(self, queue: sqs.IQueue, *, raw_message_delivery: bool = True) -> None:
        """Subscribe `queue` to the announcement topic, refusing a FIFO queue on a standard topic.

        Raises:
            FifoSubscriptionError: `queue` is FIFO and the topic is standard.
            ValueError: there is no topic (`topic=False` and no `existing_topic`).
        """
        if self.topic is None:
            raise ValueError(f"{self.node.path}: there is no topic to subscribe to; pass topic=True or existing_topic=")
        check_queue_subscription(self.topic, queue)
        self.topic.add_subscription(subscriptions.SqsSubscription(queue, raw_message_delivery=raw_message_delivery))

    # Parts.

    def _bundle_code(
        self,
        bundle: LambdaBundle,
        graph: str,
        *,
        function: str,
        a2a: A2aProps | None = None,
        mcp: McpProps | None = None,
        passkeys: bool = False,
    ) -> lambda_.Code:
        """`function`'s asset (`LambdaBundle.for_function`: the router's is also the sweep's), keeping the libraries of
        the channels this stack turns on; the first says in the synth output where the dependencies came from."""
        # `-c agent-wait:bundle=false` skips building in any app (the same asset hash; never deploy it).
        skip = str(self.node.try_get_context(BUNDLE_CONTEXT)).lower() == "false"
        if function == "router":
            warn_if_graph_missing(self, graph, bundle)
            Annotations.of(self).add_info(f"agent-wait: the Lambda bundle's dependencies: {bundle.origin}")
        on = {
            "slack": self.slack,
            "teams": self.teams,
            "shaped": self.shaped_webhook,
            "email": self.email,
            "push": self.push,
        }
        channels = [name for name, props in on.items() if props is not None]
        if a2a is not None:  # bundled as a channel is: kept only when the stack turns it on
            channels.append("a2a")
        channels += ["mcp"] if mcp is not None else []  # the MCP server's `mcp` package, in the API's asset
        channels += ["passkey"] if passkeys else []  # `webauthn`, in the API's asset
        return bundle.for_function(function, channels=channels).code(bundled=not skip)

    def _keep_webhook(
        self,
        webhook_url: str | None,
        webhook_url_secret: secretsmanager.ISecret | None,
        webhook_secret: secretsmanager.ISecret | None,
    ) -> None:
        """The webhook's secrets, which the functions may read; the deprecated `webhook_url` still works, with a
        warning that says how to move it."""
        self.webhook_secret: secretsmanager.ISecret | None = webhook_secret
        self.webhook_url_secret: secretsmanager.ISecret | None = webhook_url_secret
        if webhook_url is not None:
            Annotations.of(self).add_warning_v2(
                "agent-wait:webhook-url-plain-text",
                "webhook_url is deprecated: it is stored in plain text in the router's and the sweep's environment, "
                "and a webhook URL carries a token (Slack, Teams). Store the URL as a Secrets Manager secret and "
                'pass webhook_url_secret= instead (docs/constructs.md, "Moving a webhook URL into Secrets Manager")',
            )

    def _checkpoint_bucket(
        self,
        switch: bool,
        existing: s3.IBucket | None,
        removal_policy: RemovalPolicy,
        key: kms.IKey | None,
        *,
        name: str | None,
    ) -> s3.IBucket | None:
        if existing is not None or not switch:
            return existing
        return CheckpointBucket(
            self,
            "CheckpointBucket",
            bucket_name=name,
            removal_policy=removal_policy,
            encryption_key=key,
            retention=self.retention.checkpoints,
        ).bucket

    def _entry_queue(
        self,
        props: EntryQueueProps,
        *,
        existing: sqs.IQueue | None,
        existing_dead_letters: sqs.IQueue | None,
        router_timeout: Duration,
        key: kms.IKey | None,
        removal_policy: RemovalPolicy,
        name: str | None,
    ) -> tuple[sqs.IQueue, sqs.IQueue, int]:
        """The entry queue and its dead-letter queue, brought or created, and the receives before a dead letter."""
        if existing is not None and existing_dead_letters is not None:
            count = props.max_receive_count or redrive_count(existing) or shapes.ENTRY_QUEUE_MAX_RECEIVE_COUNT
            return existing, existing_dead_letters, count
        entry = EntryQueue(
            self,
            "EntryQueue",
            visibility_timeout=props.visibility_timeout or times(router_timeout, VISIBILITY_FACTOR),
            retention_period=props.retention_period or FOUR_DAYS,
            encryption_key=key,
            queue_name=name,
            removal_policy=removal_policy,
        )
        return entry.queue, entry.dead_letter_queue, shapes.ENTRY_QUEUE_MAX_RECEIVE_COUNT

    def _keep_channels(self, channels: AgentWaitChannels) -> None:
        """The channels' props and record tables, as attributes; the Slack app's manifest is set with the API."""
        self._channels = channels
        self.slack: SlackProps | None = channels.slack
        self.teams: TeamsProps | None = channels.teams
        self.shaped_webhook: ShapedWebhookProps | None = channels.shaped_webhook
        self.email: EmailProps | None = channels.email
        self.push: PushProps | None = channels.push
        self.push_subscriptions_table: dynamodb.ITable | None = channels.push_subscriptions_table
        """The inbox's push subscriptions (`PushSubscriptionsTable`); None without push."""
        self.push_sends_table: dynamodb.ITable | None = channels.push_sends_table
        """Where each push is claimed and marked sent (`PushSendsTable`); None without push."""
        self.slack_messages_table: dynamodb.ITable | None = channels.slack_messages_table
        """Where each question's Slack messages are remembered (created, or `SlackProps.messages_table`)."""
        self.teams_sends_table: dynamodb.ITable | None = channels.teams_sends_table
        """Where each Teams card is claimed and marked accepted (`TeamsSendsTable`); None without Teams."""
        self.email_sends_table: dynamodb.ITable | None = channels.email_sends_table
        """Where each email is claimed and marked sent (created, or `EmailProps.sends_table`); None without email."""
        self.email_configuration_set: EmailConfigurationSet | None = channels.email_configuration_set
        # The Slack app's manifest as JSON, with the answer API's URL (a token until deploy); set with the API.
        self.slack_app_manifest: str | None = None

    def _topic(
        self,
        topic: bool,
        topic_fifo: bool,
        scope: sns.FifoThroughputScope | None,
        existing_topic: sns.ITopic | None,
        encryption_key: kms.IKey | None,
        *,
        topic_name: str | None,
    ) -> sns.ITopic | None:
        if existing_topic is not None:
            self.node.add_validation(_FifoSubscriptionCheck(existing_topic))
            return existing_topic
        if topic:
            return AnnounceTopic(
                self,
                "Topic",
                fifo=topic_fifo,
                fifo_throughput_scope=scope,
                master_key=encryption_key,
                topic_name=topic_name,
            ).topic  # pyright: ignore[reportReturnType]
        return None

    def _grant_sender(self, grantee: iam.IGrantable, principal_id: str | None, variable: str, method: str) -> iam.Grant:
        """Send on the entry queue, and the grantee's IAM unique id in the router's `variable` sender list."""
        sender = sender_id(grantee, principal_id, construct=self.node.path, method=method)
        grant = _grants.grant_send(grantee, self.entry_queue)
        self._senders.add(variable, [sender])
        return grant


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"AgentWait.{old} is deprecated; use AgentWait.{new}", DeprecationWarning, stacklevel=3)
