"""`AnswerApi`: the HTTPS answer API (API Gateway HTTP API, a JWT authorizer, one Lambda) and its signed links.

The construct has 25 props, each documented on it (16 again on `AnswerApiProps`), and 27 routes (28 with Slack; 2
more with A2A). Its prop rules are in `_answer_api_checks.py`, its stage, access log and CORS in `_answer_api_http.py`,
the link keys' secret in `_link_keys.py`, the inbox's sign-in in `_inbox.py`.

Signed-in people list, read and answer questions, and read the insights and (the audit group only) the audit
trail, cancel questions and answer many at once, see, revoke and dry-run standing grants, and register passkeys and
confirm answers with them, on eighteen routes behind the JWT authorizer. With `links` (the default), four more routes
carry no authorizer, because the capability is the signed token itself (HMAC under a key id, for one question): the
page a link opens only shows, and only a POST carrying the token acts. The access log format holds no query string,
header or body, so a token is never logged:

    GET  /questions                                   signed in: list questions (status, tag, due time)
    GET  /questions/{question_id}                     signed in: one question, its policy and outcome
    POST /questions/{question_id}/answer              signed in: decide it at once
    GET  /agui/interrupts                             signed in: open questions as AG-UI interrupts
    POST /agui/resume                                 signed in: answer them with AG-UI resume entries
    GET  /insights                                    signed in: counts, time to answer, who answers (the inbox's)
    GET  /audit                                       signed in, the audit group only: the audit trail, paged
    POST /questions/{question_id}/cancel              signed in: cancel it with a reason (as one who may answer)
    POST /questions/answers                           signed in: up to 25 answers, each decided on its own
    GET  /grants                                      signed in: the standing grants this person may see
    GET  /grants/{grant_id}                           signed in: one of them
    DELETE /grants/{grant_id}                         signed in: revoke it, for every ask after this
    POST /grants/dry-run                              signed in: which past questions a grant would have decided
    GET  /passkeys, POST /passkeys/registration[/options]  signed in: the person's passkeys; register one
    POST /questions/{question_id}/passkey             signed in: the options that confirm an answer with a passkey
    GET  /questions/{question_id}/confirm             link: the confirmation page (shows, never acts)
    GET  /questions/{question_id}/confirm/{asset}     link: that page's script and style files
    POST /questions/{question_id}/link                link: the page reads the question the token names
    POST /questions/{question_id}/link/answer         link: the page posts the person's answer and the token
    GET  /inbox                                       the approvals inbox page (it signs people in itself)
    GET  /inbox/{asset}                               its script, style and sign-in configuration
    POST /slack/interactions                          Slack's button clicks and modals, signed by Slack
                                                      (only after `add_slack`)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, cast

from aws_cdk import Acknowledgment, Duration, Names, RemovalPolicy, Validations
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._answer_api_checks import check_answer_api_props
from agent_wait_cdk._answer_api_http import ACCESS_LOG_FORMAT, cors_preflight, default_stage
from agent_wait_cdk._defaults import TEN_SECONDS
from agent_wait_cdk._inbox import INBOX_ROUTES, INBOX_ROUTES_OPEN, InboxSignIn, inbox_client
from agent_wait_cdk._lambda_function import lambda_function, powertools_environment
from agent_wait_cdk._link_keys import link_keys_secret
from agent_wait_cdk._senders import role_id
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.a2a import A2aProps
from agent_wait_cdk.mcp import MCP_IAM_ROUTES, MCP_POLICIES_VARIABLE, MCP_SIGNED_IN_ROUTES, McpProps, grant_mcp_asks
from agent_wait_cdk.question_table import grant_answer_api
from agent_wait_cdk.slack import SLACK_ROUTES, SLACK_ROUTES_OPEN, SlackProps, slack_environment

LINK_ANNOUNCERS = ("eventbridge", "sns", "webhook", "shaped")
"""The announcers `AgentWait` configures, by the name `link_announcers` takes: the bus, the topic, the webhook, the
shaped webhook.
Never the log announcer: a link is a capability, and logs are read by more people than approvers are."""

__all__ = (
    "A2A_OPEN_ROUTES",
    "A2A_ROUTES",
    "ACCESS_LOG_FORMAT",
    "LINK_ROUTES",
    "SIGNED_IN_ROUTES",
    "AnswerApi",
    "AnswerApiProps",
)

SIGNED_IN_ROUTES = (
    ("GET", "/questions"),
    ("GET", "/questions/{question_id}"),
    ("POST", "/questions/{question_id}/answer"),
    ("GET", "/agui/interrupts"),
    ("POST", "/agui/resume"),
    ("GET", "/insights"),
    ("GET", "/audit"),
    ("POST", "/questions/{question_id}/extend"),
    ("POST", "/questions/{question_id}/cancel"),
    ("POST", "/questions/answers"),
    ("GET", "/grants"),
    ("GET", "/grants/{grant_id}"),
    ("DELETE", "/grants/{grant_id}"),
    ("POST", "/grants/dry-run"),
    ("GET", "/passkeys"),
    ("POST", "/passkeys/registration/options"),
    ("POST", "/passkeys/registration"),
    ("POST", "/questions/{question_id}/passkey"),
    ("GET", "/push/key"),
    ("POST", "/push/subscriptions"),
    ("DELETE", "/push/subscriptions/{device}"),
)
"""Routes behind the JWT authorizer: who answers is the person API Gateway verified."""
A2A_ROUTES = (("POST", "/a2a"),)
"""With `AgentWait(a2a=...)` (`AnswerApi.add_a2a`), behind the JWT authorizer: the hosted agent's A2A JSON-RPC
endpoint; the caller answers by message as the person API Gateway verified."""
A2A_OPEN_ROUTES = (("GET", "/.well-known/agent-card.json"),)
"""With `AgentWait(a2a=...)`, without an authorizer: the agent card, which A2A clients read before they sign in."""
A2A_ROUTES_OPEN = (
    "An A2A agent card is public by design (A2A v1.0, 'Agent Discovery'): clients read it to learn the endpoint and "
    "how to sign in. It holds the agent's name, description and skills, never question data."
)
LINK_ROUTES = (
    ("GET", "/questions/{question_id}/confirm"),
    ("GET", "/questions/{question_id}/confirm/{asset}"),
    ("POST", "/questions/{question_id}/link"),
    ("POST", "/questions/{question_id}/link/answer"),
)
"""Routes without an authorizer, only with `links`: the signed token in the POST body is the capability."""
_LINK_ROUTES_OPEN = (
    "Signed answer links need no sign-in by design: a person answers from an email. The link's HMAC token for "
    "this one question is the capability, checked by the function on every POST; GET only serves the "
    "confirmation page and its static script and style, which hold no question data. The stage is throttled "
    "and its access log never records a query string or a body."
)


@dataclass(frozen=True, kw_only=True)
class AnswerApiProps:
    """The answer API's own props, as `AgentWait(answer_api=True, answer_api_props=...)` takes them.

    `AgentWait` supplies the rest (table, queue, code, architecture, log retention and level, tracing,
    encryption key, removal policy) from its own props. Each field is the `AnswerApi` prop of that name.

    Example:
        AnswerApiProps(jwt_issuer="https://login.example.com", jwt_audience=["approvals"], groups_claim="groups")
    """

    jwt_issuer: str | None = None
    """Any OIDC issuer's https URL; with `jwt_audience`. Not with `user_pool`."""
    jwt_audience: Sequence[str] = ()
    """The client ids a token must be issued to (its `aud`)."""
    user_pool: cognito.IUserPool | None = None
    """A Cognito user pool; with `user_pool_clients`. Not with `jwt_issuer`."""
    user_pool_clients: Sequence[cognito.IUserPoolClient] = ()
    """The app clients whose tokens the API accepts."""
    sign_in_domain: cognito.UserPoolDomain | None = None
    """The user pool's domain: the inbox page signs in there, with an app client made for it."""
    inbox_callback_urls: Sequence[str] = ()
    """More pages that sign in with that app client (e.g. the inbox served locally)."""
    inbox_sign_in: InboxSignIn | None = None
    """How the inbox page signs in at an issuer other than Cognito."""
    inbox: bool = True
    """The approvals inbox page and its two unauthenticated routes."""
    links: bool = True
    """Signed per-question links and their four unauthenticated routes."""
    link_keys: secretsmanager.ISecret | None = None
    """The link keys secret; None: created (with `links`)."""
    groups_claim: str | None = None
    """The JWT claim listing a person's groups (`AGENT_WAIT_GROUPS_CLAIM`)."""
    audit_group: str | None = None
    """The group whose members may read the audit trail, `GET /audit` (`AGENT_WAIT_AUDIT_GROUP`)."""
    cors_allowed_origins: Sequence[str] = ()
    """Origins of web pages that call the API; none: CORS off."""
    throttle_rate_limit: float = 50
    """Steady requests per second for the whole stage."""
    throttle_burst_limit: int = 100
    """Requests in a burst for the whole stage."""
    timeout: Duration = TEN_SECONDS
    """The function's timeout (at most 30 seconds, API Gateway's limit)."""
    memory_size: int = 640
    """The function's memory in MB. Default 640: the smallest whose slowest measured cold answer leaves Slack's 3 s a
    second to spare (docs/scaling.md, "The answer API's memory")."""

    def as_kwargs(self) -> dict[str, Any]:
        """These props as keyword arguments of `AnswerApi` (and of `AnswerApi.check_props`)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


class AnswerApi(Construct):
    """People answer questions over HTTPS: signed in with a JWT, or through a signed link from an email.

    An API Gateway HTTP API (payload format 2.0) in front of one function, `agent_wait.host.api.handler`,
    which decides each answer at once with the router's checks and conditional write, then hands the resume
    to the entry queue. The function may read questions (`GetItem`, `BatchGetItem`; `Query` on the table,
    `by_status` and `by_question`), decide them (`UpdateItem` on the table), send to the entry queue
    and, with links, read the link keys: nothing else. The default stage is throttled and logs each request
    as one JSON line without the query string or the body. The routes are in the module docstring.

    Example:
        api = AnswerApi(
            self,
            "AnswerApi",
            question_table=agent.question_table,
            entry_queue=agent.entry_queue,
            code=code,
            jwt_issuer="https://login.example.com",
            jwt_audience=["approvals"],
        )

    Args:
        scope: the parent construct.
        id: the construct id.
        question_table: the question ledger (`QuestionTable.table`, or a table of its shape).
        entry_queue: the router's FIFO entry queue; resumes go there.
        code: the Lambda code: the answer API's own asset (`LambdaBundle.for_function("api").code()`).
        jwt_issuer: any OIDC issuer's https URL; API Gateway verifies tokens against its published keys.
            Default None. Give `jwt_issuer` and `jwt_audience`, or `user_pool` and `user_pool_clients`:
            exactly one way, because the signed-in routes need a JWT authorizer and there is no safe default.
        jwt_audience: the client ids a token must be issued to. Default (): required with `jwt_issuer`.
        user_pool: a Cognito user pool whose tokens sign people in. Default None.
        user_pool_clients: the app clients whose tokens are accepted. Default (): required with `user_pool`,
            unless `sign_in_domain` is given (API Gateway's own default would create a client you did not
            ask for).
        sign_in_domain: the user pool's domain (`user_pool.add_domain(...)`): the inbox page signs people in
            on its hosted pages. `AnswerApi` makes the page's app client (`inbox_client`: code grant with
            PKCE, no secret, the page's URL as callback), accepts its tokens, and sets the function's
            `AGENT_WAIT_SIGN_IN_*`. Default None: the page asks for a pasted token. Needs `user_pool`.
        inbox_callback_urls: more pages that sign in with that client, such as the inbox served on a laptop
            (`http://localhost:8000/inbox`). Default (). Needs `sign_in_domain`.
        inbox_sign_in: for an issuer other than Cognito: its endpoints and the page's public client
            (`InboxSignIn`), set as the function's `AGENT_WAIT_SIGN_IN_*`; the client's id must be in
            `jwt_audience`, and its redirect URI `inbox_url`. Default None. Not with `user_pool`.
        inbox: serve the approvals inbox page, `GET /inbox` and `GET /inbox/{asset}` without authorizer (the
            page and its files hold no question data). Default True.
        links: signed per-question links, and the four routes without authorizer they need. Default True:
            a person answers from an email without signing in; the token is the capability.
        link_keys: the Secrets Manager secret with the link keys, a JSON object
            `{"active": "<key id>", "<key id>": "<key>", ...}`: the active key signs, every key verifies.
            Default None: with `links`, one is created with one generated 48-character key `k1`. Not with
            `links=False`.
        groups_claim: the JWT claim that lists a person's groups (`AGENT_WAIT_GROUPS_CLAIM`). Default None:
            the runtime reads `cognito:groups`, then `groups`.
        audit_group: the group (in the groups claim) whose members may read the audit trail, `GET /audit`
            (`AGENT_WAIT_AUDIT_GROUP`). Default None: the route refuses everyone; the trail holds every vote's
            note and edits, so name the people who must prove decisions, not everyone who answers.
        cors_allowed_origins: origins (`https://host[:port]`, or `http://localhost[:port]`) of web pages that
            call the API from a browser. Default (): CORS off, since the API's own pages are same-origin;
            `*` is refused: name the pages.
        throttle_rate_limit: steady requests per second for the whole default stage. Default 50: people
            answering questions, with room; it caps the function's concurrency and the bill if a link
            leaks or someone floods the API.
        throttle_burst_limit: requests in a burst. Default 100, twice the rate.
        timeout: the function's. Default 10 seconds: a lookup, a read, a conditional write and one send; at most 30
            seconds, the HTTP API's integration limit.
        memory_size: the function's. Default 640 MB: a person waits on the cold answer, which is CPU-bound (Lambda's
            CPU grows with memory): 1.0-1.6 s at 640 MB on the measured curve, a second inside Slack's 3 s for what
            the bench cannot see (512 MB measured up to 2.5 s); a warm answer waits on four AWS calls, so more
            memory only bills that wait higher (docs/scaling.md, "The answer API's memory"). 128 to 10,240.
        architecture: Default x86_64; must match the bundle's.
        log_retention: the function's and the access logs'. Default one month.
        log_level: `LOG_LEVEL` for Powertools. Default "INFO": ids only, never question content.
        tracing: X-Ray for the function. Default None: off (`POWERTOOLS_TRACE_DISABLED=true`).
        encryption_key: a customer managed KMS key for the link keys secret it creates. Default None: the
            AWS managed `aws/secretsmanager` key.
        removal_policy: for the log groups and the link keys secret it creates. Default RETAIN.

    Raises:
        AgentWaitPropsError: one error listing every prop that is out of range or contradicts another.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        question_table: dynamodb.ITable,
        entry_queue: sqs.IQueue,
        code: lambda_.Code,
        jwt_issuer: str | None = None,
        jwt_audience: Sequence[str] = (),
        user_pool: cognito.IUserPool | None = None,
        user_pool_clients: Sequence[cognito.IUserPoolClient] = (),
        sign_in_domain: cognito.UserPoolDomain | None = None,
        inbox_callback_urls: Sequence[str] = (),
        inbox_sign_in: InboxSignIn | None = None,
        inbox: bool = True,
        links: bool = True,
        link_keys: secretsmanager.ISecret | None = None,
        groups_claim: str | None = None,
        audit_group: str | None = None,
        cors_allowed_origins: Sequence[str] = (),
        throttle_rate_limit: float = 50,
        throttle_burst_limit: int = 100,
        timeout: Duration = TEN_SECONDS,
        memory_size: int = 640,
        architecture: lambda_.Architecture = lambda_.Architecture.X86_64,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        log_level: str = "INFO",
        tracing: lambda_.Tracing | None = None,
        encryption_key: kms.IKey | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(
            checks,
            jwt_issuer=jwt_issuer,
            jwt_audience=jwt_audience,
            user_pool=user_pool,
            user_pool_clients=user_pool_clients,
            sign_in_domain=sign_in_domain,
            inbox_callback_urls=inbox_callback_urls,
            inbox_sign_in=inbox_sign_in,
            inbox=inbox,
            links=links,
            link_keys=link_keys,
            groups_claim=groups_claim,
            audit_group=audit_group,
            cors_allowed_origins=cors_allowed_origins,
            throttle_rate_limit=throttle_rate_limit,
            throttle_burst_limit=throttle_burst_limit,
            timeout=timeout,
            memory_size=memory_size,
            log_level=log_level,
        )
        checks.raise_if_any()

        self.link_keys: secretsmanager.ISecret | None = None
        if links:
            self.link_keys = link_keys or link_keys_secret(  # pyright: ignore[reportAttributeAccessIssue]
                self, encryption_key=encryption_key, removal_policy=removal_policy
            )

        environment = {
            shapes.ENV_TABLE: question_table.table_name,
            shapes.ENV_QUEUE_URL: entry_queue.queue_url,
            **powertools_environment(log_level=log_level, tracing=tracing),
        }
        if self.link_keys is not None:
            environment[shapes.ENV_LINK_KEYS_ARN] = self.link_keys.secret_arn
        if groups_claim is not None:
            environment[shapes.ENV_GROUPS_CLAIM] = groups_claim
        if audit_group is not None:
            environment[shapes.ENV_AUDIT_GROUP] = audit_group
        self.function, self.role, self.log_group = lambda_function(
            Construct(self, "Function"),
            handler=shapes.API_HANDLER,
            description="agent-wait answer API: people list, read and answer questions; signed links",
            code=code,
            environment=environment,
            timeout=timeout,
            memory_size=memory_size,
            architecture=architecture,
            log_retention=log_retention,
            removal_policy=removal_policy,
            tracing=tracing,
        )
        grant_answer_api(self.role, question_table)
        self._question_table = question_table
        _grants.grant_send(self.role, entry_queue, actions=_perms.SQS_SEND_ONLY)
        if self.link_keys is not None:
            _grants.grant_secret_value(self.role, self.link_keys)

        self.http_api = apigwv2.HttpApi(
            self,
            "Resource",
            api_name=Names.unique_id(self),
            description="agent-wait answer API",
            create_default_stage=False,  # the stage below, with throttling and access logs
            cors_preflight=cors_preflight(cors_allowed_origins),
        )
        self.stage, self.access_log_group = default_stage(
            self,
            self.http_api,
            rate_limit=throttle_rate_limit,
            burst_limit=throttle_burst_limit,
            log_retention=log_retention,
            removal_policy=removal_policy,
        )
        self.inbox_client: cognito.UserPoolClient | None = None
        clients = list(user_pool_clients)
        if user_pool is not None and sign_in_domain is not None:
            self.inbox_client, inbox_sign_in = inbox_client(
                self,
                user_pool=user_pool,
                domain=sign_in_domain,
                callback_urls=[self.inbox_url, *inbox_callback_urls],
            )
            clients.append(self.inbox_client)
        if inbox_sign_in is not None:
            for name, value in inbox_sign_in.environment().items():
                self.function.add_environment(name, value)
        self.authorizer: apigwv2.IHttpRouteAuthorizer = (
            authorizers.HttpUserPoolAuthorizer("UserPoolAuthorizer", user_pool, user_pool_clients=clients)
            if user_pool is not None
            else authorizers.HttpJwtAuthorizer("JwtAuthorizer", cast(str, jwt_issuer), jwt_audience=list(jwt_audience))
        )
        integration = integrations.HttpLambdaIntegration("Function", self.function)  # pyright: ignore[reportArgumentType]
        self._integration = integration
        self.routes: list[apigwv2.HttpRoute] = []
        for method, path in SIGNED_IN_ROUTES:
            self.routes += self._route(method, path, integration, self.authorizer)
        if links:
            self._add_open_routes(LINK_ROUTES, integration, why=_LINK_ROUTES_OPEN)
        if inbox:
            self._add_open_routes(INBOX_ROUTES, integration, why=INBOX_ROUTES_OPEN)

    def add_slack(self, slack: SlackProps) -> list[apigwv2.HttpRoute]:
        """Take Slack's button clicks and modal submissions on `POST /slack/interactions`, without an authorizer.

        Slack signs each request with the app's signing secret, which the function checks. Sets the function's
        `AGENT_WAIT_SLACK_BOT_TOKEN_ARN`, `AGENT_WAIT_SLACK_SIGNING_SECRET_ARN` and `AGENT_WAIT_SLACK_GROUPS` (with
        groups), and lets it read both secrets (`secretsmanager:GetSecretValue`, and `kms:Decrypt` on a customer
        managed key): the bot token to read who clicked. `AgentWait(slack=...)` calls it; call it yourself on an
        `AnswerApi` of your own. Returns the route(s) added.
        """
        for name, value in slack_environment(slack, for_api=True).items():
            self.function.add_environment(name, value)
        for secret in (slack.bot_token, slack.signing_secret):
            _grants.grant_secret_value(self.role, secret)
        before = len(self.routes)
        self._add_open_routes(SLACK_ROUTES, self._integration, why=SLACK_ROUTES_OPEN)
        return self.routes[before:]

    def add_a2a(self, a2a: A2aProps) -> list[apigwv2.HttpRoute]:
        """Serve the hosted agent over A2A v1.0: `POST /a2a` behind the JWT authorizer, and its agent card at
        `GET /.well-known/agent-card.json` without one (A2A clients read it before they sign in). Sets the function's
        `AGENT_WAIT_AGENT_CARD`. `AgentWait(a2a=...)` calls it (and sets the router's too, which tells push configs).
        Returns the routes added."""
        for name, value in a2a.environment().items():
            self.function.add_environment(name, value)
        before = len(self.routes)
        for method, path in A2A_ROUTES:
            self.routes += self._route(method, path, self._integration, self.authorizer)
        self._add_open_routes(A2A_OPEN_ROUTES, self._integration, why=A2A_ROUTES_OPEN)
        return self.routes[before:]

    def add_mcp(self, mcp: McpProps) -> list[apigwv2.HttpRoute]:
        """Serve the MCP server (`ask_person` answered as a Task) on `POST /mcp` behind this API's JWT authorizer and,
        with `mcp.iam`, on `POST /mcp/iam` behind an IAM authorizer (SigV4; `grant_invoke_mcp`). Sets the function's
        `AGENT_WAIT_MCP_POLICIES` and lets it open question rows (`PutItem`). `AgentWait(mcp=...)` calls it; returns
        the routes added."""
        self.function.add_environment(MCP_POLICIES_VARIABLE, mcp.policies_json())
        grant_mcp_asks(self.role, self._question_table)
        added: list[apigwv2.HttpRoute] = []
        for method, path in MCP_SIGNED_IN_ROUTES:
            added += self._route(method, path, self._integration, self.authorizer)
        if mcp.iam:
            for method, path in MCP_IAM_ROUTES:
                added += self._route(method, path, self._integration, authorizers.HttpIamAuthorizer())
        self.routes += added
        return added

    def grant_invoke_mcp(self, grantee: iam.IGrantable) -> iam.Grant:
        """`execute-api:Invoke` on `POST /mcp/iam` only: a machine client (a role, a function) may call the MCP
        server, signing with SigV4; it asks as `iam:<its ARN>`."""
        method, path = MCP_IAM_ROUTES[0]
        return iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["execute-api:Invoke"],
            resource_arns=[self.http_api.arn_for_execute_api(method, path)],
        )

    def _add_open_routes(
        self, routes: Sequence[tuple[str, str]], integration: apigwv2.HttpRouteIntegration, *, why: str
    ) -> None:
        """Routes without an authorizer, each with cdk-nag's APIG4 acknowledged for `why`."""
        for method, path in routes:
            for route in self._route(method, path, integration, apigwv2.HttpNoneAuthorizer()):
                Validations.of(route).acknowledge(Acknowledgment(id="AwsSolutions-APIG4", reason=why))
                self.routes.append(route)

    def _route(
        self,
        method: str,
        path: str,
        integration: apigwv2.HttpRouteIntegration,
        authorizer: apigwv2.IHttpRouteAuthorizer,
    ) -> list[apigwv2.HttpRoute]:
        return self.http_api.add_routes(
            path=path, methods=[apigwv2.HttpMethod(method)], integration=integration, authorizer=authorizer
        )

    @property
    def url(self) -> str:
        """The API's base URL, `https://<api id>.execute-api.<region>.<suffix>/` (a token until deploy)."""
        return cast(str, self.stage.url)

    @property
    def origin(self) -> str:
        """The API's origin, `https://<api id>.execute-api.<region>.<suffix>` (a token until deploy): where the inbox is
        served, so the WebAuthn relying party of its passkeys."""
        return cast(str, self.http_api.api_endpoint)

    @property
    def inbox_url(self) -> str:
        """The inbox page's URL, `https://<api id>.execute-api.<region>.<suffix>/inbox` (a token until deploy):
        the redirect URI its sign-in client must list."""
        return f"{self.http_api.api_endpoint}/inbox"

    @property
    def role_id(self) -> str:
        """The function role's IAM unique id (`AROA...`, CloudFormation `RoleId`): a trusted sender."""
        return role_id(self.role)

    check_props = staticmethod(check_answer_api_props)
    """Record every problem of these props in `checks` (`_answer_api_checks.check_answer_api_props`)."""
