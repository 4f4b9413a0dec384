"""Each stack variant is synthesized once per session; tests read the template, the report and the stack.

Bundling is skipped (`aws:cdk:bundling-stacks: []`) except in the one bundling test, and CDK's built-in
CloudFormation validation is off here (it adds ~20 s per app; cfn-lint and cdk-nag run instead). Every
variant's app runs cdk-nag's AwsSolutions pack as a validation plugin, so a finding fails its synthesis.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Acknowledgment, App, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from agent_wait_cdk import (
    AgentWait,
    AnswerApiProps,
    EntryQueueProps,
    InboxSignIn,
    RetentionProps,
    RouterProps,
    SlackProps,
    SweepProps,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SKIP_BUNDLING = {"aws:cdk:bundling-stacks": []}


def new_app(**context: Any) -> App:
    """An app that skips bundling and CDK's built-in template validation (see the module docstring)."""
    return App(context={**SKIP_BUNDLING, **context}, builtin_cloud_formation_validation=False)


def inline_code() -> lambda_.Code:
    """Stand-in Lambda code for tests that only construct (no bundle planning, no hashing)."""
    return lambda_.Code.from_inline("def handler(event, context):\n    return None\n")


def refund_agent(stack: Stack, **props: Any) -> Any:
    """The refund example's `AgentWait` in `stack`, code inline (nothing bundled), no topic and no bus, with `props`."""
    return AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        code=inline_code(),
        topic=False,
        bus=False,
        **props,
    )


def lone_router_function(**props: Any) -> Any:
    """A `RouterFunction` on its own (construct id `S/Router`), on a FIFO queue, with `props` added."""
    from agent_wait_cdk import RouterFunction

    stack = Stack(new_app(), "S")
    queue = sqs.Queue(stack, "Queue", fifo=True)
    return RouterFunction(stack, "Router", code=inline_code(), entry_queue=queue, environment={}, **props)


@dataclass(frozen=True)
class Synth:
    """One synthesized stack: its template (assertions and raw JSON), its stack object, its assembly dir."""

    stack: Stack
    template: Template
    json: dict[str, Any]
    outdir: Path

    def resources(self, type_: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.json["Resources"].items() if v["Type"] == type_}

    def one(self, type_: str, **where: Any) -> tuple[str, dict[str, Any]]:
        """The single resource of `type_` whose Properties contain `where` (top-level keys)."""
        found = [
            (k, v)
            for k, v in self.resources(type_).items()
            if all(v.get("Properties", {}).get(key) == value for key, value in where.items())
        ]
        assert len(found) == 1, f"expected one {type_} with {where}, found {[k for k, _ in found]}"
        return found[0]

    def logical_id(self, construct: Any) -> str:
        return self.stack.resolve(construct.node.default_child.logical_id)

    def resolve(self, value: Any) -> Any:
        return self.stack.resolve(value)


def synth(app: App, stack: Stack) -> Synth:
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assembly = app.synth()
    template = Template.from_stack(stack)
    return Synth(stack=stack, template=template, json=template.to_json(), outdir=Path(assembly.directory))


@pytest.fixture(scope="session")
def refund() -> Synth:
    """The refund-agent stack exactly as `app.py` builds it (defaults everywhere but removal policy)."""
    import app as app_module

    app = app_module.build(new_app())
    return synth(app, app.node.find_child("RefundAgentStack"))  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def features() -> Synth:
    """Every switch away from its default: FIFO topic, customer key, arm64, signed webhook, no bus, limits,
    X-Ray tracing, an on-call topic for the alarms, retention (90-day checkpoints, decisions kept for ever,
    7-day channel records)."""
    app = new_app()
    stack = Stack(app, "Features")
    key = kms.Key(stack, "Key", enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY)
    # CloudWatch publishes to an encrypted topic only if the key lets it (aws/sns cannot: use your own key).
    key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],  # type: ignore[list-item]
            actions=["kms:Decrypt", "kms:GenerateDataKey"],
            resources=["*"],
        )
    )
    oncall = sns.Topic(stack, "Oncall", master_key=key, enforce_ssl=True)  # type: ignore[arg-type]
    secret = secretsmanager.Secret(stack, "WebhookSecret", encryption_key=key)  # type: ignore[arg-type]
    Validations.of(secret).acknowledge(
        Acknowledgment(
            id="AwsSolutions-SMG4",
            reason="A test webhook signing secret; rotating it is the webhook owner's schedule, not the stack's.",
        )
    )
    url = secretsmanager.Secret(stack, "WebhookUrl", encryption_key=key)  # type: ignore[arg-type]
    Validations.of(url).acknowledge(
        Acknowledgment(
            id="AwsSolutions-SMG4",
            reason="A test webhook URL; a new URL comes from the webhook's owner, on their schedule, not the stack's.",
        )
    )
    agent = AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        topic_fifo=True,
        bus=False,
        webhook_url_secret=url,  # type: ignore[arg-type]
        webhook_secret=secret,  # type: ignore[arg-type]
        encryption_key=key,
        removal_policy=RemovalPolicy.DESTROY,
        router=RouterProps(
            timeout=Duration.minutes(2), memory_size=2048, batch_size=5, reserved_concurrent_executions=5
        ),
        sweep=SweepProps(rate=Duration.minutes(5), timeout=Duration.seconds(90), memory_size=256, limit=50),
        queue=EntryQueueProps(retention_period=Duration.days(7)),
        architecture=lambda_.Architecture.ARM_64,
        log_retention=logs.RetentionDays.ONE_WEEK,
        log_level="DEBUG",
        tracing=lambda_.Tracing.ACTIVE,
        alarm_topic=oncall,  # type: ignore[arg-type]
        oldest_open_question_threshold=Duration.hours(4),
        retention=RetentionProps(checkpoints=Duration.days(90), decisions=None, channel_records=Duration.days(7)),
    )
    subscriber = sqs.Queue(
        stack,
        "ApprovalsQueue",
        fifo=True,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
    )
    Validations.of(subscriber).acknowledge(
        Acknowledgment(id="AwsSolutions-SQS3", reason="A test subscriber; its consumer owns the dead letters.")
    )
    agent.subscribe_queue(subscriber)
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    agent.grant_send_starts(caller)
    reader = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    agent.grant_read_questions(reader)
    return synth(app, stack)


@pytest.fixture(scope="session")
def quiet() -> Synth:
    """No topic, no bus, no alarms, no outputs; the caller brings the entry queue (3 receives before its
    dead-letter queue) and its dead-letter queue."""
    app = new_app()
    stack = Stack(app, "Quiet")
    dlq = sqs.Queue(stack, "OwnDlq", fifo=True, enforce_ssl=True, encryption=sqs.QueueEncryption.SQS_MANAGED)
    Validations.of(dlq).acknowledge(
        Acknowledgment(
            id="AwsSolutions-SQS3", reason="It is the dead-letter queue itself; a DLQ for a DLQ only moves the problem."
        )
    )
    queue = sqs.Queue(
        stack,
        "OwnQueue",
        fifo=True,
        content_based_deduplication=True,
        visibility_timeout=Duration.minutes(6),
        enforce_ssl=True,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=3),
    )
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        topic=False,
        bus=False,
        alarms=False,
        outputs=False,
        existing_entry_queue=queue,
        existing_dead_letter_queue=dlq,
    )
    return synth(app, stack)


EMBEDDED_GRAPH = "refunds_service.agent:graph"


@pytest.fixture(scope="session")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    """An existing service stack with its own question table and topic embeds AgentWait around its own graph."""
    source = tmp_path_factory.mktemp("service") / "refunds_service"
    source.mkdir()
    (source / "__init__.py").write_text("")
    (source / "agent.py").write_text("graph = None  # the service's compiled graph\n")

    app = new_app()
    stack = Stack(app, "RefundsService")
    string = dynamodb.AttributeType.STRING
    table = dynamodb.Table(
        stack,
        "Questions",
        partition_key=dynamodb.Attribute(name="pk", type=string),
        sort_key=dynamodb.Attribute(name="sk", type=string),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        time_to_live_attribute="ttl",
    )
    table.add_global_secondary_index(
        index_name="by_status",
        partition_key=dynamodb.Attribute(name="status_shard", type=string),
        sort_key=dynamodb.Attribute(name="expires_at", type=string),
        projection_type=dynamodb.ProjectionType.INCLUDE,
        non_key_attributes=["tags"],
    )
    table.add_global_secondary_index(
        index_name="by_due_shard",
        partition_key=dynamodb.Attribute(name="due", type=string),
        sort_key=dynamodb.Attribute(name="due_at", type=string),
        projection_type=dynamodb.ProjectionType.KEYS_ONLY,
    )
    table.add_global_secondary_index(
        index_name="open_by_age_shard",
        partition_key=dynamodb.Attribute(name="open_since", type=string),
        sort_key=dynamodb.Attribute(name="asked_at", type=string),
        projection_type=dynamodb.ProjectionType.KEYS_ONLY,
    )
    table.add_global_secondary_index(
        index_name="by_question",
        partition_key=dynamodb.Attribute(name="question_id", type=string),
        sort_key=dynamodb.Attribute(name="pk", type=string),
        projection_type=dynamodb.ProjectionType.KEYS_ONLY,
    )
    topic = sns.Topic(
        stack,
        "Announcements",
        master_key=kms.Alias.from_alias_name(stack, "SnsKey", "alias/aws/sns"),
        enforce_ssl=True,
    )
    agent = AgentWait(
        stack,
        "AgentWait",
        graph=EMBEDDED_GRAPH,
        graph_source=[source],
        existing_question_table=table,
        existing_topic=topic,
    )
    api = iam.Role(stack, "ApiRole", assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"))  # type: ignore[arg-type]
    agent.grant_send_answers(api)
    return synth(app, stack)


ISSUER = "https://login.example.com"
IMPORTED_ROLE_ID = "AROAEXAMPLEIMPORTED01"


@pytest.fixture(scope="session")
def answering() -> Synth:
    """The answer API behind any OIDC issuer, every API prop away from its default, a customer key, signed
    links on the topic and the webhook, precise deadlines; senders granted after construction: starts to one role,
    answers to another, to the same one twice, and to an imported role with its unique id."""
    app = new_app()
    stack = Stack(app, "Answering")
    key = kms.Key(stack, "Key", enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY)
    agent = AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        webhook_url="https://hooks.example.com/agent-wait",
        encryption_key=key,
        removal_policy=RemovalPolicy.DESTROY,
        answer_api=True,
        answer_api_props=AnswerApiProps(
            jwt_issuer=ISSUER,
            jwt_audience=["approvals", "inbox"],
            inbox_sign_in=InboxSignIn(
                authorize_url="https://login.example.com/authorize",
                token_url="https://login.example.com/token",
                client_id="inbox",
                scopes=("openid", "email"),
            ),
            groups_claim="groups",
            cors_allowed_origins=["https://approvals.example.com", "http://localhost:5173"],
            throttle_rate_limit=20,
            throttle_burst_limit=40,
            timeout=Duration.seconds(15),
            memory_size=512,
        ),
        link_announcers=("sns", "webhook"),
        precise_deadlines=True,
    )
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    agent.grant_send_starts(caller)
    ops = iam.Role(stack, "Ops", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    agent.grant_send_answers(ops)
    agent.grant_send_answers(ops)  # twice: one entry
    imported = iam.Role.from_role_arn(stack, "Imported", "arn:aws:iam::123456789012:role/approvals")
    agent.grant_send_answers(imported, principal_id=IMPORTED_ROLE_ID)
    return synth(app, stack)


@pytest.fixture(scope="session")
def cognito_api() -> Synth:
    """The answer API behind a Cognito user pool (MFA required, Plus plan: cdk-nag has nothing to say), with
    a domain the inbox signs in at and one more app client; links on but carried by no announcer; no topic,
    no bus."""
    app = new_app()
    stack = Stack(app, "CognitoApi")
    pool = cognito.UserPool(
        stack,
        "Pool",
        self_sign_up_enabled=False,
        feature_plan=cognito.FeaturePlan.PLUS,
        mfa=cognito.Mfa.REQUIRED,
        mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
        password_policy=cognito.PasswordPolicy(
            min_length=12, require_digits=True, require_lowercase=True, require_uppercase=True, require_symbols=True
        ),
        removal_policy=RemovalPolicy.DESTROY,
    )
    client = pool.add_client("Inbox", generate_secret=False)
    domain = pool.add_domain("SignIn", cognito_domain=cognito.CognitoDomainOptions(domain_prefix="approvals-test"))
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        topic=False,
        bus=False,
        removal_policy=RemovalPolicy.DESTROY,
        answer_api=True,
        answer_api_props=AnswerApiProps(
            user_pool=pool,
            user_pool_clients=[client],
            sign_in_domain=domain,
            inbox_callback_urls=["http://localhost:8000/inbox"],
        ),
    )
    return synth(app, stack)


SLACK_CHANNELS = {"approver_group:finance": "C0123ABCD", "*": "C0456EFGH"}
SLACK_GROUPS = {"finance": "S0123ABCD"}


@pytest.fixture(scope="session")
def slack() -> Synth:
    """Slack as an answer channel: a bot token secret created under a customer key (as a test stand-in; a real
    one is made outside the stack), a signing secret imported by name, channels by tag, a user group, named
    resources, the answer API behind an OIDC issuer."""
    app = new_app()
    stack = Stack(app, "Slack")
    key = kms.Key(stack, "Key", enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY)
    token = secretsmanager.Secret(stack, "SlackBotToken", encryption_key=key)  # type: ignore[arg-type]
    Validations.of(token).acknowledge(
        Acknowledgment(
            id="AwsSolutions-SMG4",
            reason="A test Slack bot token; Slack issues a new one when the app is reinstalled, not on a schedule.",
        )
    )
    signing = secretsmanager.Secret.from_secret_name_v2(stack, "SlackSigningSecret", "agent-wait/slack-signing-secret")
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        topic=False,
        bus=False,
        encryption_key=key,
        removal_policy=RemovalPolicy.DESTROY,
        resource_name_prefix="refunds-slack",
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        slack=SlackProps(
            bot_token=token, signing_secret=signing, channels=SLACK_CHANNELS, groups=SLACK_GROUPS, app_name="Refunds"
        ),
    )
    return synth(app, stack)


VARIANTS = ("refund", "features", "quiet", "embedded", "answering", "cognito_api", "slack")


@pytest.fixture(params=VARIANTS)
def variant(request: pytest.FixtureRequest) -> Synth:
    return request.getfixturevalue(request.param)


def statements(synth: Synth, role_logical_id_prefix: str) -> list[dict[str, Any]]:
    """Every statement of the IAM policies attached to roles whose logical id starts with the prefix (an
    imported role is named by its role name)."""
    found: list[dict[str, Any]] = []
    for policy in synth.resources("AWS::IAM::Policy").values():
        roles = [role["Ref"] if isinstance(role, dict) else role for role in policy["Properties"]["Roles"]]
        if any(role.startswith(role_logical_id_prefix) for role in roles):
            found.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return found


def actions_on(stmts: list[dict[str, Any]]) -> dict[str, set[str]]:
    """{resource (as JSON): {actions}} for the given statements."""
    out: dict[str, set[str]] = {}
    for stmt in stmts:
        actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
        resources = stmt["Resource"] if isinstance(stmt["Resource"], list) else [stmt["Resource"]]
        for resource in resources:
            out.setdefault(json.dumps(resource, sort_keys=True), set()).update(actions)
    return out


KMS_READ_WRITE = {
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
}
"""What a role that reads and writes a table encrypted with a customer managed key gets on the key."""


def getatt(logical_id: str) -> str:
    """The key `actions_on` uses for `{"Fn::GetAtt": [logical_id, "Arn"]}`."""
    return json.dumps({"Fn::GetAtt": [logical_id, "Arn"]}, sort_keys=True)


def ref(logical_id: str) -> str:
    """The key `actions_on` uses for `{"Ref": logical_id}`."""
    return json.dumps({"Ref": logical_id}, sort_keys=True)
