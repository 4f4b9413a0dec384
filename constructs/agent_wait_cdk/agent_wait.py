"""`AgentWait`: the whole of agent-wait on AWS in one construct."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from aws_cdk import Annotations, CfnOutput, Duration, RemovalPolicy, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk import question_table as questions
from agent_wait_cdk._bundling import BUNDLE_CONTEXT, LambdaBundle
from agent_wait_cdk._defaults import ONE_DAY, ONE_MINUTE
from agent_wait_cdk._senders import SenderLists, role_id, sender_id
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.alarms import AgentWaitAlarms
from agent_wait_cdk.announce_targets import AnnounceBus, AnnounceTopic, _FifoSubscriptionCheck, check_queue_subscription
from agent_wait_cdk.answer_api import AnswerApi, AnswerApiProps
from agent_wait_cdk.checkpoint_table import CheckpointTable
from agent_wait_cdk.entry_queue import EntryQueue
from agent_wait_cdk.functions import (
    RouterFunction,
    SweepFunction,
    check_extra_environment,
    check_log_level,
    check_network,
    powertools_environment,
)
from agent_wait_cdk.question_table import QuestionTable

__all__ = ("AgentWait",)

_GRAPH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_VISIBILITY_FACTOR = 6
LINK_ANNOUNCERS = ("eventbridge", "sns", "webhook")
"""The announcers `AgentWait` configures, by the name `link_announcers` takes: the bus, the topic, the webhook.
Never the log announcer: a link is a capability, and logs are read by more people than approvers are."""


class AgentWait(Construct):
    """agent-wait on AWS: question ledger, checkpoints, entry queue, announcers, router, sweep and alarms.

    Starts and answers go to one FIFO entry queue (`grant_send_starts`, `grant_send_answers`); the router
    applies them and resumes the graph named by `graph`; questions are announced on the SNS topic, the
    EventBridge bus and/or a webhook; the sweep expires overdue questions on a schedule. With `answer_api`,
    people answer over HTTPS too (`AnswerApi`), signed in or through signed links. Bring your own question
    table, topic, bus or entry queue with the `existing_*` props.

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
        topic: announce on an SNS topic. Default True: the broadest fan-out (email, HTTPS, SQS, Lambda).
        topic_fifo: create the topic as FIFO. Default False: a standard topic reaches every kind of
            subscriber; FIFO only if FIFO queues must subscribe. Not with `existing_topic`.
        existing_topic: announce on this topic instead of creating one.
        bus: announce on an EventBridge bus. Default True: rules route envelopes by `detail-type` to any
            target without changing agent-wait.
        existing_bus: announce on this bus instead of creating one (for example the default bus).
        webhook_url: also POST each envelope here (`AGENT_WAIT_WEBHOOK_URL`). Default None: off. It is
            stored in plain text in the functions' configuration: put no secret in it.
        webhook_secret: the Secrets Manager secret whose value signs the webhook deliveries; its ARN is set
            as `AGENT_WAIT_WEBHOOK_SECRET_ARN` on both functions, which may read it (`secret.grant_read`,
            with its KMS key). Default None: deliveries are unsigned. Needs `webhook_url`.
        answer_api: create the HTTPS answer API (`AnswerApi`) on the same table, queue and code; its URL is set
            as the router's `AGENT_WAIT_API_URL` (envelopes carry it in `reply_to`), its role becomes a trusted
            sender, and `AnswerApiUrl` is an output. Default False: it needs a sign-in (an OIDC issuer or a
            Cognito user pool) that only you can name. Needs `answer_api_props`.
        answer_api_props: the `AnswerApi` props AgentWait does not already know (`AnswerApiProps`: how people
            sign in, links and their keys, groups claim, CORS, throttling, the function's timeout and memory).
            One object rather than a dozen `answer_api_*` props, so the API's props read the same here and
            on `AnswerApi`. Default None. Only with `answer_api=True`.
        link_announcers: announcers whose envelopes carry signed answer links: any of `eventbridge`, `sns`,
            `webhook`, the ones AgentWait configures (never the log). Sets the router's
            `AGENT_WAIT_LINK_ANNOUNCERS` and `AGENT_WAIT_LINK_KEYS_ARN`, and lets it read the link keys.
            Default (): no envelope carries a link (a link is a capability: choose where it goes). Needs
            `answer_api` with links on; `sns`, `eventbridge` and `webhook` need that announcer.
        existing_question_table: use this table as the question ledger; it must have the shape of
            `agent_wait.schema.QUESTION_TABLE` (`pk`/`sk` strings; GSIs `by_status` on `status`/`expires_at`,
            `by_announce_due` on `announce_due`/`asked_at` and `open_by_age` on `open_since`/`asked_at`, all
            projecting all attributes, and `by_question` on `question_id`/`pk`, keys only). A `dynamodb.Table`
            defined in this app is checked; an imported one is trusted.
        existing_entry_queue: consume this FIFO queue instead of creating one; needs
            `existing_dead_letter_queue`, and its visibility timeout must be at least six times `router_timeout`.
        existing_dead_letter_queue: the FIFO dead-letter queue of `existing_entry_queue`.
        existing_queue_max_receive_count: the `maxReceiveCount` of `existing_entry_queue`'s redrive policy,
            set as `AGENT_WAIT_MAX_RECEIVE_COUNT` so the router dead-letters a message it still cannot apply on
            its last receive, with its reason. Default None: read from the queue when it is defined in this
            app (an `sqs.Queue` with `dead_letter_queue`), else 5, the SQS console's and AgentWait's own.
            Only with `existing_entry_queue`; a queue AgentWait creates uses 5.
        encryption_key: a customer managed KMS key for the tables, queues and topic AgentWait creates.
            Default None: AWS managed encryption (`aws/dynamodb`, SSE-SQS, `aws/sns`), which needs no key
            policy; the bus is always encrypted by EventBridge.
        removal_policy: for the tables, queues and log groups AgentWait creates. Default RETAIN: the
            ledger, checkpoints and pending messages outlive an accidental `cdk destroy`.
        router_timeout: Default 1 minute (see `RouterFunction`).
        router_memory_size: Default 1024 MB (see `RouterFunction`).
        router_batch_size: Default 10, the FIFO maximum.
        router_reserved_concurrent_executions: Default None (unreserved).
        router_environment: extra variables for the router, where the graph runs (a model id, a secret's
            ARN: never a secret's value, which anyone who may read the function's configuration could read).
            Default None: only AgentWait's own. A key AgentWait or Lambda sets (`AGENT_WAIT_*`, `LOG_LEVEL`,
            `POWERTOOLS_SERVICE_NAME`, `AWS_REGION`, ...) is refused, by name.
        router_layers: Lambda layers for the router. Default (): the bundle holds everything.
        vpc: run the router in this VPC, for a graph that calls private resources. Default None: no VPC. In
            a VPC the router needs egress to DynamoDB, SQS, SNS and EventBridge (and the webhook, whatever the graph
            calls): a NAT gateway or VPC endpoints, which AgentWait does not create. Router only: the graph
            runs there; the sweep and the answer API stay outside the VPC.
        vpc_subnets: the router's subnets in `vpc`. Default None: the VPC's private subnets. Needs `vpc`.
        security_groups: the router's security groups. Default None: one CDK creates, all egress allowed.
            Needs `vpc`.
        sweep_rate: Default 1 minute: questions expire at most a minute late.
        sweep_timeout: Default 1 minute.
        sweep_memory_size: Default 512 MB.
        sweep_limit: the most overdue questions one sweep run handles (`AGENT_WAIT_SWEEP_LIMIT`). Default
            None: the runtime's default (100).
        architecture: for both functions and the bundle. Default x86_64; arm64 is cheaper.
        queue_visibility_timeout: the entry queue's. Default None: six times `router_timeout`, the AWS
            recommendation for a Lambda-consumed queue; a smaller value is refused. Not with `existing_entry_queue`.
        queue_retention_period: the entry queue's. Default None: 4 days. Not with `existing_entry_queue`.
        log_retention: both functions' logs. Default one month.
        log_level: `LOG_LEVEL` for Powertools. Default "INFO": ids only, never question content.
        tracing: X-Ray tracing for both functions. Default None: off, with `POWERTOOLS_TRACE_DISABLED=true`,
            so there are no traces to pay for and no X-Ray permissions; `Tracing.ACTIVE` traces every
            invocation (and the AWS calls in it) with Powertools' Tracer.
        alarms: create the alarms of `AgentWaitAlarms` (dead letters, router and sweep errors, the oldest
            open question). Default True.
        alarm_topic: notify this SNS topic when an alarm fires and when it is OK again. Default None: the
            alarms have no actions (add some with `alarms.add_alarm_action`). Needs `alarms`.
        oldest_open_question_threshold: Default 1 day (see `AgentWaitAlarms`).
        outputs: add CfnOutputs for the queue URLs, topic ARN, bus name and table names. Default True.
        code: Lambda code to use instead of bundling (e.g. built by your CI). Default None: bundle
            `agent_wait`, `graph_source` and `requirements_file` on this machine, without Docker.
        requirements_file: the complete pinned requirements installed into the bundle as they are
            (`--no-deps`). Default None: found the way `PythonFunction` finds them, in each `graph_source`
            folder and then the working directory: `requirements.txt`, else `uv.lock` (exported with
            `uv export --frozen --no-dev --no-hashes --no-emit-project`), else `pyproject.toml`'s
            `[project] dependencies`; the first found is installed with its dependencies resolved, on top of
            the runtime's pins for whatever it does not name. None found: the runtime's own pins
            (`agent_wait_cdk/requirements-lambda.txt`). The synth output says which was used.
        runtime_source: the `agent_wait` directory to bundle. Default None: found beside the constructs.

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
        topic: bool = True,
        topic_fifo: bool = False,
        existing_topic: sns.ITopic | None = None,
        bus: bool = True,
        existing_bus: events.IEventBus | None = None,
        webhook_url: str | None = None,
        webhook_secret: secretsmanager.ISecret | None = None,
        answer_api: bool = False,
        answer_api_props: AnswerApiProps | None = None,
        link_announcers: Sequence[str] = (),
        existing_question_table: dynamodb.ITable | None = None,
        existing_entry_queue: sqs.IQueue | None = None,
        existing_dead_letter_queue: sqs.IQueue | None = None,
        existing_queue_max_receive_count: int | None = None,
        encryption_key: kms.IKey | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        router_timeout: Duration = ONE_MINUTE,
        router_memory_size: int = 1024,
        router_batch_size: int = 10,
        router_reserved_concurrent_executions: int | None = None,
        router_environment: Mapping[str, str] | None = None,
        router_layers: Sequence[lambda_.ILayerVersion] = (),
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        sweep_rate: Duration = ONE_MINUTE,
        sweep_timeout: Duration = ONE_MINUTE,
        sweep_memory_size: int = 512,
        sweep_limit: int | None = None,
        architecture: lambda_.Architecture = lambda_.Architecture.X86_64,
        queue_visibility_timeout: Duration | None = None,
        queue_retention_period: Duration | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        log_level: str = "INFO",
        tracing: lambda_.Tracing | None = None,
        alarms: bool = True,
        alarm_topic: sns.ITopic | None = None,
        oldest_open_question_threshold: Duration = ONE_DAY,
        outputs: bool = True,
        code: lambda_.Code | None = None,
        requirements_file: str | os.PathLike[str] | None = None,
        runtime_source: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(scope, id)
        visibility = queue_visibility_timeout or _times(router_timeout, _VISIBILITY_FACTOR)

        # Every prop is checked before anything is created, so one error lists every problem.
        checks = PropChecks(self.node.path)
        _check_props(
            checks,
            graph=graph,
            log_level=log_level,
            webhook_url=webhook_url,
            webhook_secret=webhook_secret,
            alarms=alarms,
            alarm_topic=alarm_topic,
            router_timeout=router_timeout,
            router_memory_size=router_memory_size,
            router_batch_size=router_batch_size,
            router_reserved_concurrent_executions=router_reserved_concurrent_executions,
            sweep_rate=sweep_rate,
            sweep_timeout=sweep_timeout,
            sweep_memory_size=sweep_memory_size,
            sweep_limit=sweep_limit,
            oldest_open_question_threshold=oldest_open_question_threshold,
            queue_visibility_timeout=queue_visibility_timeout,
            queue_retention_period=queue_retention_period,
        )
        check_extra_environment(checks, "router_environment", router_environment)
        check_network(checks, vpc=vpc, vpc_subnets=vpc_subnets, security_groups=security_groups)
        _check_answer_api(
            checks,
            answer_api=answer_api,
            answer_api_props=answer_api_props,
            link_announcers=link_announcers,
            # An existing topic or bus needs its switch on too (`_check_existing`), so the switches say it all.
            announcers={"sns": topic, "eventbridge": bus, "webhook": bool(webhook_url)},
        )
        _check_existing(
            checks,
            topic=topic,
            topic_fifo=topic_fifo,
            existing_topic=existing_topic,
            bus=bus,
            existing_bus=existing_bus,
            existing_question_table=existing_question_table,
            existing_entry_queue=existing_entry_queue,
            existing_dead_letter_queue=existing_dead_letter_queue,
            existing_queue_max_receive_count=existing_queue_max_receive_count,
            queue_visibility_timeout=queue_visibility_timeout,
            queue_retention_period=queue_retention_period,
        )
        checks.raise_if_any()

        # Storage.
        self.question_table: dynamodb.ITable = (
            existing_question_table
            or QuestionTable(self, "QuestionTable", removal_policy=removal_policy, encryption_key=encryption_key).table
        )
        self.checkpoint_table: dynamodb.ITable = CheckpointTable(
            self, "CheckpointTable", removal_policy=removal_policy, encryption_key=encryption_key
        ).table

        # The entry queue.
        max_receive_count = shapes.ENTRY_QUEUE_MAX_RECEIVE_COUNT
        if existing_entry_queue is not None and existing_dead_letter_queue is not None:
            self.entry_queue: sqs.IQueue = existing_entry_queue
            self.dead_letter_queue: sqs.IQueue = existing_dead_letter_queue
            max_receive_count = (
                existing_queue_max_receive_count or _redrive_count(existing_entry_queue) or max_receive_count
            )
        else:
            entry = EntryQueue(
                self,
                "EntryQueue",
                visibility_timeout=visibility,
                retention_period=queue_retention_period or Duration.days(4),
                encryption_key=encryption_key,
                removal_policy=removal_policy,
            )
            self.entry_queue, self.dead_letter_queue = entry.queue, entry.dead_letter_queue

        # Announcers.
        self.topic: sns.ITopic | None = self._topic(topic, topic_fifo, existing_topic, encryption_key)
        self.bus: events.IEventBus | None = existing_bus or (AnnounceBus(self, "Bus").bus if bus else None)

        # Functions.
        environment = self._environment(
            graph=graph, webhook_url=webhook_url, webhook_secret=webhook_secret, log_level=log_level, tracing=tracing
        )
        router_variables = _router_environment(
            environment, router_timeout=router_timeout, max_receive_count=max_receive_count
        )
        router_variables = {**(router_environment or {}), **router_variables}
        self.bundle: LambdaBundle | None = None
        if code is None:
            self.bundle = LambdaBundle.for_architecture(
                architecture,
                graph_source=graph_source,
                runtime_source=runtime_source,
                requirements_file=requirements_file,
            )
            code = self._bundle_code(self.bundle, graph)
        router = RouterFunction(
            self,
            "Router",
            code=code,
            entry_queue=self.entry_queue,
            environment=router_variables,
            timeout=router_timeout,
            memory_size=router_memory_size,
            architecture=architecture,
            batch_size=router_batch_size,
            reserved_concurrent_executions=router_reserved_concurrent_executions,
            log_retention=log_retention,
            removal_policy=removal_policy,
            tracing=tracing,
            vpc=vpc,
            vpc_subnets=vpc_subnets,
            security_groups=security_groups,
            layers=router_layers,
        )
        sweep_environment = dict(environment)
        if sweep_limit is not None:
            sweep_environment[shapes.ENV_SWEEP_LIMIT] = str(sweep_limit)
        sweep = SweepFunction(
            self,
            "Sweep",
            code=code,
            environment=sweep_environment,
            rate=sweep_rate,
            timeout=sweep_timeout,
            memory_size=sweep_memory_size,
            architecture=architecture,
            log_retention=log_retention,
            removal_policy=removal_policy,
            tracing=tracing,
        )
        self.router_function: lambda_.Function = router.function
        self.sweep_function: lambda_.Function = sweep.function
        self.sweep_schedule: events.Rule = sweep.schedule
        self.webhook_secret: secretsmanager.ISecret | None = webhook_secret
        self._grant_functions()
        self._senders = SenderLists(self.router_function)
        self._senders.add(shapes.ENV_TRUSTED_SENDERS, [role_id(sweep.role)])
        self.answer_api: AnswerApi | None = None
        if answer_api and answer_api_props is not None:
            self.answer_api = AnswerApi(
                self,
                "AnswerApi",
                question_table=self.question_table,
                entry_queue=self.entry_queue,
                code=code,
                architecture=architecture,
                log_retention=log_retention,
                log_level=log_level,
                tracing=tracing,
                encryption_key=encryption_key,
                removal_policy=removal_policy,
                **answer_api_props.as_kwargs(),
            )
            self._wire_answer_api(self.answer_api, link_announcers)

        self.alarms: AgentWaitAlarms | None = None
        if alarms:
            self.alarms = AgentWaitAlarms(
                self,
                "Alarms",
                dead_letter_queue=self.dead_letter_queue,
                router_function=self.router_function,  # pyright: ignore[reportArgumentType]
                sweep_function=self.sweep_function,  # pyright: ignore[reportArgumentType]
                oldest_open_question_threshold=oldest_open_question_threshold,
                alarm_topic=alarm_topic,
            )
        if outputs:
            self._outputs()

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

    # Wiring.

    def _bundle_code(self, bundle: LambdaBundle, graph: str) -> lambda_.Code:
        """The bundle's asset, saying in the synth output where its dependencies came from."""
        # `-c agent-wait:bundle=false` skips building in any app (the same asset hash; never deploy it).
        skip = str(self.node.try_get_context(BUNDLE_CONTEXT)).lower() == "false"
        _warn_if_graph_missing(self, graph, bundle)
        Annotations.of(self).add_info(f"agent-wait: the Lambda bundle's dependencies: {bundle.origin}")
        return bundle.code(bundled=not skip)

    def _topic(
        self, topic: bool, topic_fifo: bool, existing_topic: sns.ITopic | None, encryption_key: kms.IKey | None
    ) -> sns.ITopic | None:
        if existing_topic is not None:
            self.node.add_validation(_FifoSubscriptionCheck(existing_topic))
            return existing_topic
        if topic:
            return AnnounceTopic(self, "Topic", fifo=topic_fifo, master_key=encryption_key).topic  # pyright: ignore[reportReturnType]
        return None

    def _environment(
        self,
        *,
        graph: str,
        webhook_url: str | None,
        webhook_secret: secretsmanager.ISecret | None,
        log_level: str,
        tracing: lambda_.Tracing | None,
    ) -> dict[str, str]:
        """The variables both functions get; the router adds its lease and receive count, the sweep its limit."""
        environment = {
            shapes.ENV_GRAPH: graph,
            shapes.ENV_TABLE: self.question_table.table_name,
            shapes.ENV_CHECKPOINT_TABLE: self.checkpoint_table.table_name,
            shapes.ENV_QUEUE_URL: self.entry_queue.queue_url,
            shapes.ENV_DLQ_URL: self.dead_letter_queue.queue_url,
            **powertools_environment(log_level=log_level, tracing=tracing),
        }
        if self.topic is not None:
            environment[shapes.ENV_TOPIC_ARN] = self.topic.topic_arn
        if self.bus is not None:
            environment[shapes.ENV_BUS_NAME] = self.bus.event_bus_name
        if webhook_url is not None:
            environment[shapes.ENV_WEBHOOK_URL] = webhook_url
        if webhook_secret is not None:
            environment[shapes.ENV_WEBHOOK_SECRET_ARN] = webhook_secret.secret_arn
        return environment

    def _grant_functions(self) -> None:
        router, sweep = self.router_function, self.sweep_function
        questions.grant_router(router, self.question_table)
        questions.grant_sweep(sweep, self.question_table)
        _grants.grant_table(
            router, self.checkpoint_table, _perms.CHECKPOINT_READ_WRITE, kms_actions=_perms.KMS_READ_WRITE
        )
        # Receiving from the entry queue is granted by the router's event source. The router sends only
        # dead letters; the sweep sends default answers into the entry queue.
        _grants.grant_send(router, self.dead_letter_queue)
        _grants.grant_send(sweep, self.entry_queue)
        for function in (router, sweep):
            if self.topic is not None:
                _grants.grant_publish(function, self.topic)
            if self.bus is not None:
                self.bus.grant_put_events_to(function)
            if self.webhook_secret is not None:
                # secretsmanager:GetSecretValue and DescribeSecret on this secret, and decrypt on its key if any.
                self.webhook_secret.grant_read(function)

    def _grant_sender(self, grantee: iam.IGrantable, principal_id: str | None, variable: str, method: str) -> iam.Grant:
        """Send on the entry queue, and the grantee's IAM unique id in the router's `variable` sender list."""
        sender = sender_id(grantee, principal_id, construct=self.node.path, method=method)
        grant = _grants.grant_send(grantee, self.entry_queue)
        self._senders.add(variable, [sender])
        return grant

    def _wire_answer_api(self, api: AnswerApi, link_announcers: Sequence[str]) -> None:
        """The router learns the API's URL and trusts its role; with link announcers, it signs links."""
        self._senders.add(shapes.ENV_TRUSTED_SENDERS, [api.role_id])
        router = self.router_function
        router.add_environment(shapes.ENV_API_URL, api.url)
        if link_announcers and api.link_keys is not None:
            router.add_environment(shapes.ENV_LINK_KEYS_ARN, api.link_keys.secret_arn)
            router.add_environment(shapes.ENV_LINK_ANNOUNCERS, ",".join(dict.fromkeys(link_announcers)))
            _grants.grant_secret_value(router, api.link_keys)

    def _outputs(self) -> None:
        values = {
            "EntryQueueUrl": (self.entry_queue.queue_url, "Send starts and answers here (FIFO; group by thread)"),
            "DeadLetterQueueUrl": (self.dead_letter_queue.queue_url, "Messages the router could not apply"),
            "QuestionTableName": (self.question_table.table_name, "The question ledger"),
            "CheckpointTableName": (self.checkpoint_table.table_name, "LangGraph checkpoints"),
        }
        if self.topic is not None:
            values["TopicArn"] = (self.topic.topic_arn, "Subscribe here for announcements")
        if self.bus is not None:
            values["BusName"] = (self.bus.event_bus_name, "Add rules here for announcements")
        if self.answer_api is not None:
            values["AnswerApiUrl"] = (self.answer_api.url, "The answer API (people answer here, signed in or by link)")
        for output_id, (value, description) in values.items():
            CfnOutput(self, output_id, value=value, description=f"agent-wait: {description}")


def _router_environment(
    environment: dict[str, str], *, router_timeout: Duration, max_receive_count: int
) -> dict[str, str]:
    """The router's variables: the shared ones, its thread lease and the entry queue's receive count."""
    router = {**environment, shapes.ENV_MAX_RECEIVE_COUNT: str(max_receive_count)}
    if not router_timeout.is_unresolved():  # a token: the runtime's default lease (900 s) outlasts any timeout
        lease = int(router_timeout.to_seconds(integral=False)) + shapes.LEASE_MARGIN_SECONDS
        router[shapes.ENV_LEASE_SECONDS] = str(lease)
    return router


def _times(duration: Duration, factor: int) -> Duration:
    if duration.is_unresolved():
        return duration
    return Duration.seconds(duration.to_seconds(integral=False) * factor)


def _check_props(
    checks: PropChecks,
    *,
    graph: str,
    log_level: str,
    webhook_url: str | None,
    webhook_secret: secretsmanager.ISecret | None,
    alarms: bool,
    alarm_topic: sns.ITopic | None,
    router_timeout: Duration,
    router_memory_size: int,
    router_batch_size: int,
    router_reserved_concurrent_executions: int | None,
    sweep_rate: Duration,
    sweep_timeout: Duration,
    sweep_memory_size: int,
    sweep_limit: int | None,
    oldest_open_question_threshold: Duration,
    queue_visibility_timeout: Duration | None,
    queue_retention_period: Duration | None,
) -> None:
    """Every range and format rule, with the parts' own rules under AgentWait's field names."""
    if not _GRAPH.match(graph):
        checks.fail("graph", f"must be 'module:attribute', e.g. 'my_app.graph:build_graph'; got {graph!r}")
    check_log_level(checks, log_level)
    if (
        webhook_url is not None
        and not Token.is_unresolved(webhook_url)
        and not webhook_url.startswith(("https://", "http://"))
    ):
        checks.fail("webhook_url", f"must start with https:// or http://; got {webhook_url!r}")
    if webhook_secret is not None and webhook_url is None:
        checks.fail(
            "webhook_secret",
            "signs webhook deliveries, but there is no webhook_url to deliver to; pass webhook_url too, or drop it",
        )
    if alarm_topic is not None and not alarms:
        checks.fail("alarm_topic", "cannot go with alarms=False: there would be no alarm to notify it; drop one")
    RouterFunction.check_props(
        checks.prefixed("router_"),
        timeout=router_timeout,
        memory_size=router_memory_size,
        batch_size=router_batch_size,
        reserved_concurrent_executions=router_reserved_concurrent_executions,
    )
    SweepFunction.check_props(
        checks.prefixed("sweep_"), rate=sweep_rate, timeout=sweep_timeout, memory_size=sweep_memory_size
    )
    checks.int_between("sweep_limit", sweep_limit, minimum=1, maximum=10000, unit="questions")
    AgentWaitAlarms.check_props(checks, oldest_open_question_threshold=oldest_open_question_threshold)
    EntryQueue.check_props(
        checks.prefixed("queue_"), visibility_timeout=queue_visibility_timeout, retention_period=queue_retention_period
    )
    checks.duration_at_least(
        "queue_visibility_timeout",
        queue_visibility_timeout,
        minimum=_times(router_timeout, _VISIBILITY_FACTOR),
        why="six times router_timeout, so a retried batch is not seen twice while the first attempt runs",
    )


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"AgentWait.{old} is deprecated; use AgentWait.{new}", DeprecationWarning, stacklevel=3)


def _check_answer_api(
    checks: PropChecks,
    *,
    answer_api: bool,
    answer_api_props: AnswerApiProps | None,
    link_announcers: Sequence[str],
    announcers: dict[str, bool],
) -> None:
    """The answer API's switch and props go together; link announcers need links and their announcer."""
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
    for name, prop in (("sns", "a topic"), ("eventbridge", "a bus"), ("webhook", "webhook_url")):
        if name in link_announcers and not announcers[name]:
            checks.fail("link_announcers", f"names {name!r}, which needs {prop}; there is none")


def _check_existing(
    checks: PropChecks,
    *,
    topic: bool,
    topic_fifo: bool,
    existing_topic: sns.ITopic | None,
    bus: bool,
    existing_bus: events.IEventBus | None,
    existing_question_table: dynamodb.ITable | None,
    existing_entry_queue: sqs.IQueue | None,
    existing_dead_letter_queue: sqs.IQueue | None,
    existing_queue_max_receive_count: int | None,
    queue_visibility_timeout: Duration | None,
    queue_retention_period: Duration | None,
) -> None:
    """`existing_X` or the props that shape a created X, never both; brought resources must fit."""
    if existing_topic is not None and not topic:
        checks.fail("existing_topic", "cannot go with topic=False; pass existing_topic to announce on it, or neither")
    if existing_topic is not None and topic_fifo:
        checks.fail("topic_fifo", "shapes a topic AgentWait creates; with existing_topic, the topic's own kind is used")
    if existing_bus is not None and not bus:
        checks.fail("existing_bus", "cannot go with bus=False; pass existing_bus to announce on it, or neither")
    if (existing_entry_queue is None) != (existing_dead_letter_queue is None):
        checks.fail(
            "existing_entry_queue",
            "and existing_dead_letter_queue go together: the router dead-letters malformed messages itself, "
            "so it needs the queue the entry queue's redrive policy sends to",
        )
    if existing_entry_queue is not None:
        for field, value in (
            ("queue_visibility_timeout", queue_visibility_timeout),
            ("queue_retention_period", queue_retention_period),
        ):
            if value is not None:
                checks.fail(field, "shapes an entry queue AgentWait creates; it cannot go with existing_entry_queue")
    for field, queue in (
        ("existing_entry_queue", existing_entry_queue),
        ("existing_dead_letter_queue", existing_dead_letter_queue),
    ):
        if queue is not None and not queue.fifo:
            checks.fail(
                field,
                "must be a FIFO queue (starts and answers are ordered per thread); if it is, import it with "
                "sqs.Queue.from_queue_attributes(..., fifo=True)",
            )
    if isinstance(existing_question_table, dynamodb.Table):
        _check_table_shape(checks, existing_question_table)
    _check_max_receive_count(checks, existing_entry_queue, existing_queue_max_receive_count)


def _check_max_receive_count(checks: PropChecks, queue: sqs.IQueue | None, count: int | None) -> None:
    """A receive count describes a brought queue, and must be the one its redrive policy says, when known."""
    if count is None:
        return
    if queue is None:
        checks.fail(
            "existing_queue_max_receive_count",
            f"describes existing_entry_queue, which is not given; the queue AgentWait creates uses "
            f"{shapes.ENTRY_QUEUE_MAX_RECEIVE_COUNT}",
        )
        return
    checks.int_between("existing_queue_max_receive_count", count, minimum=1, maximum=1000, unit="receives")
    known = _redrive_count(queue)
    if known is not None and not Token.is_unresolved(count) and count != known:
        checks.fail(
            "existing_queue_max_receive_count",
            f"must match existing_entry_queue's redrive policy, whose maxReceiveCount is {known}; got {count}",
        )


def _redrive_count(queue: sqs.IQueue) -> int | None:
    """The `maxReceiveCount` of a queue defined in this app with a dead-letter queue; None when unknown."""
    redrive = queue.dead_letter_queue if isinstance(queue, sqs.Queue) else None
    if redrive is None or Token.is_unresolved(redrive.max_receive_count):
        return None
    return int(redrive.max_receive_count)


def _check_table_shape(checks: PropChecks, table: dynamodb.Table) -> None:
    """A table defined in this app can be checked against the question table's shape; an imported one cannot."""
    want = "the shape of agent_wait.schema.QUESTION_TABLE"
    keys = _key_names(table.schema())
    if keys != (shapes.QUESTION_PARTITION_KEY, shapes.QUESTION_SORT_KEY):
        checks.fail("existing_question_table", f"must have {want}: keys ('pk', 'sk'); its keys are {keys}")
        return
    for name, wanted in (
        (shapes.STATUS_INDEX_NAME, (shapes.STATUS_INDEX_PARTITION_KEY, shapes.STATUS_INDEX_SORT_KEY)),
        (shapes.ANNOUNCE_INDEX_NAME, (shapes.ANNOUNCE_INDEX_PARTITION_KEY, shapes.ANNOUNCE_INDEX_SORT_KEY)),
        (shapes.OPEN_AGE_INDEX_NAME, (shapes.OPEN_AGE_INDEX_PARTITION_KEY, shapes.OPEN_AGE_INDEX_SORT_KEY)),
        (shapes.QUESTION_INDEX_NAME, (shapes.QUESTION_INDEX_PARTITION_KEY, shapes.QUESTION_INDEX_SORT_KEY)),
    ):
        try:
            index_keys = _key_names(table.schema(name))
        except RuntimeError:
            checks.fail("existing_question_table", f"must have {want}: it has no index {name!r} on {wanted}")
            continue
        if index_keys != wanted:
            checks.fail("existing_question_table", f"must have {want}: index {name!r} is on {index_keys}, not {wanted}")


def _key_names(schema: dynamodb.SchemaOptions) -> tuple[str | None, str | None]:
    partition, sort = schema.partition_key, schema.sort_key
    return (partition.name if partition else None, sort.name if sort else None)


def _warn_if_graph_missing(scope: Construct, graph: str, bundle: LambdaBundle) -> None:
    """Warn at synth time when no graph source holds the graph's module (the router could not import it)."""
    if len(bundle.sources) == 1:
        return  # no graph_source: the module may come from requirements_file
    module = graph.split(":", 1)[0].split(".")
    for source, dest in bundle.sources[1:]:
        if source.is_file():
            if [dest.removesuffix(".py")] == module:
                return
            continue
        if module[0] != dest:
            continue
        base = Path(source, *module[1:])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return
    Annotations.of(scope).add_warning_v2(
        "agent-wait:graph-not-found",
        f"graph module {'.'.join(module)!r} is not in graph_source; the router will fail to import it",
    )
