"""`RefundAgentStack`: the refund agent on AWS, deployed with `cdk deploy` from the repository root."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Acknowledgment, Aws, CfnOutput, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_wait_cdk import AgentWait, AnswerApiProps, McpProps, RouterProps

from .settings import REFUND_ROUTER_MEMORY_MB, REFUND_TABLE_VARIABLE

__all__ = (
    "APPROVER_GROUP",
    "CALLBACK_URL_CONTEXT",
    "DEFAULT_CALLBACK_URL",
    "REFUND_GRAPH",
    "REFUND_TABLE_VARIABLE",
    "SIGN_IN_DOMAIN_CONTEXT",
    "RefundAgentStack",
)

REFUND_GRAPH = f"{__package__}.graph:build_graph"
"""The refund agent's graph factory: `examples.refund_agent.graph:build_graph` in the repository, and
`agent_wait.examples.refund_agent.graph:build_graph` where the wheel installed it."""
EXAMPLES_DIR = Path(__file__).resolve().parents[1]
"""The package above this one. In the repository that is `examples`, copied whole into the Lambda bundle
so `examples.refund_agent.graph` imports; from the wheel it is `agent_wait.examples`, which the bundle's
copy of the runtime already holds."""
GRAPH_SOURCE = [EXAMPLES_DIR] if (__package__ or "").startswith("examples.") else []
APPROVER_GROUP = "finance"
"""The Cognito group whose members approve refunds (the graph tags its questions `approver_group=finance`)."""
SIGN_IN_DOMAIN_CONTEXT = "agent-wait:sign-in-domain"
"""Context key for the Cognito domain prefix of the sign-in pages (default `agent-wait-refund-<account id>`)."""
CALLBACK_URL_CONTEXT = "agent-wait:callback-url"
"""Context key for the app client's sign-in callback URL: `cdk deploy -c agent-wait:callback-url=https://...`."""
DEFAULT_CALLBACK_URL = "http://localhost:8000/inbox"
"""Where the approvals inbox page runs on a laptop; Cognito allows plain http only for localhost."""


REFUND_MCP_POLICIES = {
    "refund-approval": {
        "timeout": "P3D",
        "default": {"action": "reject", "reason": "no response within P3D"},
        "allowed_actions": ["approve", "reject"],
        "tags": {"approver_group": "finance"},
    },
}
"""The policies an MCP client's `ask_person` may name (`WaitPolicy.to_dict()` form): the refund graph's FINANCE
deadline, default and tags; who may answer is the policy's, never the client's."""


class RefundAgentStack(Stack):
    """The refund-agent demo: `AgentWait` running `examples.refund_agent.graph:build_graph`, answered over HTTPS.

    People in the Cognito group `finance` sign in through the app client and answer on the answer API; the
    SNS announcements carry signed links, so an approver can also answer from an email. Each principal gets
    only what it needs: the caller role may only start refunds, the router alone writes the refunds table,
    and the answer API's role may only read and decide questions and hand the resume to the queue.

    A demo, so `cdk destroy` removes everything it made (`removal_policy=DESTROY`); a real deployment
    keeps the `AgentWait` default, RETAIN.

    Example:
        app = App()
        RefundAgentStack(app, "RefundAgentStack")
        app.synth()

    Args:
        scope: the app.
        id: the stack id.
        removal_policy: for everything the stack creates. Default DESTROY (a demo).
        callback_url: another page that signs in with the inbox's app client besides the deployed inbox
            (whose URL is always a callback), e.g. the page served on a laptop. Default None: the
            `agent-wait:callback-url` context value, else `DEFAULT_CALLBACK_URL`.
        durable_code: also serve the refund agent as an AWS Lambda durable function (`durable.py`) with this code:
            it asks through this stack (`AgentWait.serve_durable_function`, which lets the router complete its
            callbacks) and writes the same refunds table. Default None: no durable function. The local template
            (`local.py`) adds one for the demo's durable scenario, which the durable SDK's local runner plays.
        kwargs: the `Stack`'s own props.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        removal_policy: RemovalPolicy = RemovalPolicy.DESTROY,
        callback_url: str | None = None,
        durable_code: lambda_.Code | None = None,
        **kwargs,
    ) -> None:
        super().__init__(scope, id, description="agent-wait: the refund agent example", **kwargs)
        callback = str(callback_url or self.node.try_get_context(CALLBACK_URL_CONTEXT) or DEFAULT_CALLBACK_URL)
        self.user_pool = self._approvers(removal_policy)
        self.user_pool.add_group("Finance", group_name=APPROVER_GROUP, description="Approves refunds")
        # The hosted sign-in pages the inbox sends people to; a prefix is unique per region across accounts.
        prefix = self.node.try_get_context(SIGN_IN_DOMAIN_CONTEXT) or f"agent-wait-refund-{Aws.ACCOUNT_ID}"
        self.sign_in_domain = self.user_pool.add_domain(
            "SignIn", cognito_domain=cognito.CognitoDomainOptions(domain_prefix=prefix)
        )

        self.agent_wait = AgentWait(
            self,
            "AgentWait",
            graph=REFUND_GRAPH,
            graph_source=GRAPH_SOURCE,
            removal_policy=removal_policy,
            answer_api=True,
            # AnswerApi makes the inbox page's app client (PKCE, no secret, the page's URL as its callback).
            answer_api_props=AnswerApiProps(
                user_pool=self.user_pool, sign_in_domain=self.sign_in_domain, inbox_callback_urls=[callback]
            ),
            # One announcer, the SNS topic, whose envelopes carry signed links; no EventBridge bus beside it (bus=True
            # adds one, paid per envelope: docs/cost.md).
            link_announcers=("sns",),
            # Chosen from the refund lifecycle's measured cost curve (settings.REFUND_ROUTER_MEMORY_MB).
            router=RouterProps(memory_size=REFUND_ROUTER_MEMORY_MB),
            # Any MCP client may ask finance a question (`ask_person`, answered as a task): docs/any-language.md.
            mcp=McpProps(policies=REFUND_MCP_POLICIES, default_policy="refund-approval"),
        )
        # The refund itself: one row per execution, so every scenario can count how often it ran.
        self.refunds = dynamodb.Table(
            self,
            "Refunds",
            partition_key=dynamodb.Attribute(name="order_id", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="refund_id", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=removal_policy,
        )
        router = self.agent_wait.router_function
        router.add_environment(REFUND_TABLE_VARIABLE, self.refunds.table_name)
        self.refunds.grant(router, "dynamodb:PutItem")
        if durable_code is not None:
            self._serve_durably(durable_code)

        # Whoever asks for refunds (a support tool) assumes this role: it may start runs, nothing else.
        self.caller = iam.Role(
            self,
            "RefundCaller",
            assumed_by=iam.AccountRootPrincipal(),  # pyright: ignore[reportArgumentType]
            description="Starts refund runs on the agent-wait entry queue",
        )
        self.agent_wait.grant_send_starts(self.caller)

        answer_api = self.agent_wait.answer_api
        assert answer_api is not None
        assert answer_api.inbox_client is not None
        self.app_client = answer_api.inbox_client
        outputs = {
            "RefundTableName": (self.refunds.table_name, "Refunds, one row per execution"),
            "UserPoolId": (self.user_pool.user_pool_id, f"Approvers sign in here; add them to {APPROVER_GROUP!r}"),
            "UserPoolClientId": (self.app_client.user_pool_client_id, "The inbox page's app client (PKCE, no secret)"),
            "InboxUrl": (answer_api.inbox_url, "The approvals inbox: sign in as a member of the finance group"),
            "RefundCallerRoleArn": (self.caller.role_arn, "Assume this role to start refunds"),
        }
        for output_id, (value, description) in outputs.items():
            CfnOutput(self, output_id, value=value, description=description)

    def _serve_durably(self, code: lambda_.Code) -> None:
        """The refund agent as a durable function: it asks finance through this stack and refunds to the same table."""
        function = lambda_.Function(
            self,
            "DurableRefunds",
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler=f"{__package__}.durable.handler",
            code=code,
            durable_config=lambda_.DurableConfig(execution_timeout=Duration.days(7), retention_period=Duration.days(7)),
            description="agent-wait: the refund agent as a durable function",
        )
        self.agent_wait.serve_durable_function(function)  # pyright: ignore[reportArgumentType] (jsii protocols)
        function.add_environment(REFUND_TABLE_VARIABLE, self.refunds.table_name)
        self.refunds.grant(function, "dynamodb:PutItem")

    def _approvers(self, removal_policy: RemovalPolicy) -> cognito.UserPool:
        """The people who answer: invited by an administrator, never signing themselves up."""
        pool = cognito.UserPool(
            self,
            "Approvers",
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(email=True),
            auto_verify=cognito.AutoVerifiedAttrs(email=True),
            password_policy=cognito.PasswordPolicy(
                min_length=14,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
                temp_password_validity=Duration.days(3),
            ),
            mfa=cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            deletion_protection=removal_policy == RemovalPolicy.RETAIN,
            removal_policy=removal_policy,
        )
        Validations.of(pool).acknowledge(
            Acknowledgment(
                id="AwsSolutions-COG2",
                reason=(
                    "A demo pool: MFA is optional (TOTP offered to every approver) so a first sign-in works "
                    "without an authenticator app; a production pool of approvers should set mfa=Mfa.REQUIRED."
                ),
            ),
            Acknowledgment(
                id="AwsSolutions-COG8",
                reason=(
                    "The demo stays on the Essentials feature plan: the Plus plan's threat protection is billed "
                    "per monthly active user, and self sign-up is off, the password policy strong and every "
                    "approver invited; a production pool should weigh FeaturePlan.PLUS."
                ),
            ),
        )
        return pool
