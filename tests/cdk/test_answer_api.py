"""The answer API: HTTP API, throttled stage with access logs, JWT authorizer, link routes, its function and role."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template
from tests.cdk.conftest import ISSUER, KMS_READ_WRITE, Synth, actions_on, getatt, inline_code, new_app, ref, statements

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApi, AnswerApiProps, InboxSignIn
from agent_wait_cdk._inbox import INBOX_ROUTES
from agent_wait_cdk.answer_api import ACCESS_LOG_FORMAT, LINK_ROUTES, SIGNED_IN_ROUTES

API_HANDLER = "agent_wait.host.api.handler"
SIGNED_IN = {f"{method} {path}" for method, path in SIGNED_IN_ROUTES}
LINKS = {f"{method} {path}" for method, path in LINK_ROUTES}
PAGES = {f"{method} {path}" for method, path in INBOX_ROUTES}
LOGS = {"logs:CreateLogStream", "logs:PutLogEvents"}
API_READ = {"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}


def routes(synth: Synth) -> dict[str, dict[str, Any]]:
    """`{route key: properties}` of every route."""
    return {r["Properties"]["RouteKey"]: r["Properties"] for r in synth.resources("AWS::ApiGatewayV2::Route").values()}


def api_function(synth: Synth) -> tuple[str, dict[str, Any]]:
    return synth.one("AWS::Lambda::Function", Handler=API_HANDLER)


def index_arn(table_id: str, index: str) -> str:
    return json.dumps({"Fn::Join": ["", [{"Fn::GetAtt": [table_id, "Arn"]}, f"/index/{index}"]]}, sort_keys=True)


def test_the_stage_is_the_default_one_throttled_and_logging_each_request(refund: Synth, answering: Synth) -> None:
    for synth, (rate, burst) in ((refund, (50, 100)), (answering, (20, 40))):
        (api_id,) = synth.resources("AWS::ApiGatewayV2::Api")
        (logs_id,) = [k for k in synth.resources("AWS::Logs::LogGroup") if "AccessLogs" in k]
        _, stage = synth.one("AWS::ApiGatewayV2::Stage")
        assert stage["Properties"] == {
            "ApiId": {"Ref": api_id},
            "StageName": "$default",
            "AutoDeploy": True,
            "DefaultRouteSettings": {"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst},
            "AccessLogSettings": {"DestinationArn": {"Fn::GetAtt": [logs_id, "Arn"]}, "Format": ACCESS_LOG_FORMAT},
        }
        assert synth.resources("AWS::Logs::LogGroup")[logs_id]["Properties"]["RetentionInDays"] == 30


def test_the_access_log_holds_no_query_string_header_or_body() -> None:
    """A link's token rides in the URL fragment and the POST body: neither may reach a log line."""
    fields = json.loads(ACCESS_LOG_FORMAT)
    assert all(value.startswith("$context.") for value in fields.values())
    for leak in ("querystring", "header", "body", "requestOverride", "$input", "$request"):
        assert leak.lower() not in ACCESS_LOG_FORMAT.lower(), leak


def test_signed_in_routes_need_a_jwt_from_the_issuer_and_link_routes_need_none(answering: Synth) -> None:
    (authorizer_id, authorizer) = answering.one("AWS::ApiGatewayV2::Authorizer")
    assert authorizer["Properties"]["AuthorizerType"] == "JWT"
    assert authorizer["Properties"]["IdentitySource"] == ["$request.header.Authorization"]
    assert authorizer["Properties"]["JwtConfiguration"] == {"Issuer": ISSUER, "Audience": ["approvals", "inbox"]}
    found = routes(answering)
    assert set(found) == SIGNED_IN | LINKS | PAGES
    for key in SIGNED_IN:
        assert (found[key]["AuthorizationType"], found[key]["AuthorizerId"]) == ("JWT", {"Ref": authorizer_id}), key
    for key in LINKS | PAGES:
        assert found[key]["AuthorizationType"] == "NONE", key
        assert "AuthorizerId" not in found[key], key


def test_the_grants_routes_sit_behind_the_same_authorizer_as_the_questions(answering: Synth) -> None:
    # GIVEN the answer API as synthesized, WHEN its routes are read
    found = routes(answering)
    # THEN listing, showing, revoking and dry-running grants need the JWT /questions needs, and nothing else is served
    # for grants
    questions = found["GET /questions"]
    grant_routes = {key for key in found if key.split(" ")[1].startswith("/grants")}
    assert grant_routes == {
        "GET /grants",
        "GET /grants/{grant_id}",
        "DELETE /grants/{grant_id}",
        "POST /grants/dry-run",
    }
    for key in grant_routes:
        assert (found[key]["AuthorizationType"], found[key]["AuthorizerId"]) == (
            "JWT",
            questions["AuthorizerId"],
        ), key
        assert found[key]["Target"] == questions["Target"], key


def test_a_cognito_user_pool_signs_people_in_for_its_app_clients(cognito_api: Synth) -> None:
    (pool_id,) = cognito_api.resources("AWS::Cognito::UserPool")
    (client_id,) = [k for k in cognito_api.resources("AWS::Cognito::UserPoolClient") if "AnswerApi" not in k]
    (inbox_id,) = [k for k in cognito_api.resources("AWS::Cognito::UserPoolClient") if "AnswerApi" in k]
    (authorizer_id, authorizer) = cognito_api.one("AWS::ApiGatewayV2::Authorizer")
    assert authorizer["Properties"]["JwtConfiguration"] == {
        "Audience": [{"Ref": client_id}, {"Ref": inbox_id}],
        "Issuer": {"Fn::Join": ["", ["https://cognito-idp.", {"Ref": "AWS::Region"}, ".amazonaws.com/",
                                     {"Ref": pool_id}]]},
    }  # fmt: skip
    found = routes(cognito_api)
    assert set(found) == SIGNED_IN | LINKS | PAGES
    for key in SIGNED_IN:
        assert found[key]["AuthorizerId"] == {"Ref": authorizer_id}, key


def test_without_links_there_is_no_link_route_and_no_link_keys() -> None:
    template = _api_template(_oidc(links=False))
    assert _route_keys(template) == SIGNED_IN | PAGES
    assert not [r for r in template["Resources"].values() if r["Type"] == "AWS::SecretsManager::Secret"]
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Lambda::Function":
            assert "AGENT_WAIT_LINK_KEYS_ARN" not in resource["Properties"]["Environment"]["Variables"]


def test_cors_is_off_by_default_and_names_the_pages_when_given(refund: Synth, answering: Synth) -> None:
    (_, api) = refund.one("AWS::ApiGatewayV2::Api")
    assert "CorsConfiguration" not in api["Properties"]
    (_, api) = answering.one("AWS::ApiGatewayV2::Api")
    assert api["Properties"]["CorsConfiguration"] == {
        "AllowOrigins": ["https://approvals.example.com", "http://localhost:5173"],
        "AllowMethods": ["GET", "POST"],
        "AllowHeaders": ["authorization", "content-type", "idempotency-key"],
        "MaxAge": 3600,
    }


def test_the_api_function_knows_the_table_the_queue_the_link_keys_and_the_groups_claim(answering: Synth) -> None:
    (_, function) = api_function(answering)
    (secret_id,) = answering.resources("AWS::SecretsManager::Secret")
    (table_id,) = [k for k in answering.resources("AWS::DynamoDB::Table") if "QuestionTable" in k]
    variables = dict(function["Properties"]["Environment"]["Variables"])
    # Precise deadlines are on in this synth: the three schedule variables (tests/cdk/test_precise_deadlines.py).
    scheduled = {name: variables.pop(name) for name in [n for n in variables if n.startswith("AGENT_WAIT_SCHEDULE_")]}
    assert sorted(scheduled) == [
        "AGENT_WAIT_SCHEDULE_GROUP",
        "AGENT_WAIT_SCHEDULE_ROLE_ARN",
        "AGENT_WAIT_SCHEDULE_TARGET_ARN",
    ]
    assert variables == {
        "AGENT_WAIT_TABLE": {"Ref": table_id},
        "AGENT_WAIT_QUEUE_URL": {"Ref": "AgentWaitEntryQueue74B3737D"},
        "AGENT_WAIT_LINK_KEYS_ARN": {"Ref": secret_id},
        "AGENT_WAIT_GROUPS_CLAIM": "groups",
        "AGENT_WAIT_SIGN_IN_URL": "https://login.example.com/authorize",
        "AGENT_WAIT_SIGN_IN_TOKEN_URL": "https://login.example.com/token",
        "AGENT_WAIT_SIGN_IN_CLIENT_ID": "inbox",
        "AGENT_WAIT_SIGN_IN_SCOPES": "openid email",
        "AGENT_WAIT_DECIDED_RETENTION": "P400D",  # it decides: its decided rows are kept as the router's
        "AGENT_WAIT_CHANNEL_RECORD_RETENTION": "P90D",
        "POWERTOOLS_SERVICE_NAME": "agent-wait",
        "POWERTOOLS_METRICS_NAMESPACE": "AgentWait",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "LOG_LEVEL": "INFO",
    }
    assert (function["Properties"]["Timeout"], function["Properties"]["MemorySize"]) == (15, 512)
    assert function["Properties"]["Runtime"] == "python3.13"


def test_the_api_function_defaults_and_no_groups_claim_unless_given(refund: Synth) -> None:
    (_, function) = api_function(refund)
    # 640 MB: a cold answer a second inside Slack's 3 s on the measured curve (issue 46; docs/scaling.md)
    assert (function["Properties"]["Timeout"], function["Properties"]["MemorySize"]) == (10, 640)
    assert "AGENT_WAIT_GROUPS_CLAIM" not in function["Properties"]["Environment"]["Variables"]


def test_the_api_role_reads_and_decides_questions_sends_resumes_and_reads_the_link_keys(refund: Synth) -> None:
    (secret_id,) = refund.resources("AWS::SecretsManager::Secret")
    (table_id,) = [k for k in refund.resources("AWS::DynamoDB::Table") if "QuestionTable" in k]
    (logs_id,) = [k for k in refund.resources("AWS::Logs::LogGroup") if "AnswerApiFunction" in k]
    assert actions_on(statements(refund, "AgentWaitAnswerApi")) == {
        getatt(logs_id): LOGS,
        # the decision, and making, using or revoking a standing grant: conditional updates; and, since the refund
        # stack serves MCP (`AgentWait(mcp=...)`), opening a question's row with a put that never replaces one
        getatt(table_id): API_READ | {"dynamodb:UpdateItem", "dynamodb:PutItem"},
        index_arn(table_id, "by_status"): API_READ,  # lists a status's questions (keys, then rows)
        index_arn(table_id, "by_question"): API_READ,  # finds a question's thread by its id
        getatt("AgentWaitEntryQueue74B3737D"): {"sqs:SendMessage"},  # by URL: no attribute or URL look-ups
        ref(secret_id): {"secretsmanager:GetSecretValue"},  # not DescribeSecret
    }


def test_with_a_customer_key_the_api_role_uses_it_for_the_table_the_queue_and_the_secret(answering: Synth) -> None:
    granted = actions_on(statements(answering, "AgentWaitAnswerApi"))
    assert granted[getatt("Key961B73FD")] == KMS_READ_WRITE
    (secret_id, secret) = answering.one("AWS::SecretsManager::Secret")
    assert secret["Properties"]["KmsKeyId"] == {"Fn::GetAtt": ["Key961B73FD", "Arn"]}
    assert granted[ref(secret_id)] == {"secretsmanager:GetSecretValue"}


def test_the_link_keys_secret_holds_one_generated_active_key(refund: Synth) -> None:
    (_, secret) = refund.one("AWS::SecretsManager::Secret")
    assert secret["Properties"]["GenerateSecretString"] == {
        "SecretStringTemplate": '{"active":"k1"}',
        "GenerateStringKey": "k1",
        "PasswordLength": 48,  # the runtime wants at least 32 characters
        "ExcludePunctuation": True,
    }
    assert secret["DeletionPolicy"] == "Delete"  # the refund demo's removal policy


def test_the_api_url_is_an_output(refund: Synth) -> None:
    (api_id,) = refund.resources("AWS::ApiGatewayV2::Api")
    (url,) = [o["Value"] for k, o in refund.json["Outputs"].items() if k.startswith("AgentWaitAnswerApiUrl")]
    assert url == {
        "Fn::Join": ["", ["https://", {"Ref": api_id}, ".execute-api.", {"Ref": "AWS::Region"}, ".",
                          {"Ref": "AWS::URLSuffix"}, "/"]]
    }  # fmt: skip


def test_each_route_may_invoke_only_the_api_function(answering: Synth) -> None:
    function_id, _ = api_function(answering)
    permissions = [
        p["Properties"]
        for p in answering.resources("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "apigateway.amazonaws.com"
    ]
    assert len(permissions) == len(SIGNED_IN | LINKS | PAGES)
    for permission in permissions:
        assert permission["FunctionName"] == {"Fn::GetAtt": [function_id, "Arn"]}
        assert "SourceArn" in permission  # scoped to its route, not to the whole account


def api_environment(synth: Synth) -> dict[str, Any]:
    return api_function(synth)[1]["Properties"]["Environment"]["Variables"]


def test_the_inbox_signs_in_at_the_pool_domain_with_a_public_client_made_for_its_own_url(
    cognito_api: Synth,
) -> None:
    (api_id,) = cognito_api.resources("AWS::ApiGatewayV2::Api")
    (domain_id,) = cognito_api.resources("AWS::Cognito::UserPoolDomain")
    (inbox_id, inbox) = next(
        (k, r) for k, r in cognito_api.resources("AWS::Cognito::UserPoolClient").items() if "AnswerApi" in k
    )
    page = {"Fn::Join": ["", [{"Fn::GetAtt": [api_id, "ApiEndpoint"]}, "/inbox"]]}
    props = inbox["Properties"]
    assert props["GenerateSecret"] is False  # a page keeps no secret: PKCE protects the code
    assert (props["AllowedOAuthFlows"], props["AllowedOAuthFlowsUserPoolClient"]) == (["code"], True)
    assert props["AllowedOAuthScopes"] == ["openid", "email", "profile"]
    assert props["CallbackURLs"] == [page, "http://localhost:8000/inbox"]
    assert props["SupportedIdentityProviders"] == ["COGNITO"]
    assert props["PreventUserExistenceErrors"] == "ENABLED"
    assert not {"ALLOW_USER_PASSWORD_AUTH", "ALLOW_ADMIN_USER_PASSWORD_AUTH"} & set(props.get("ExplicitAuthFlows", []))
    hosted = {
        "Fn::Join": ["", ["https://", {"Ref": domain_id}, ".auth.", {"Ref": "AWS::Region"}, ".amazoncognito.com"]]
    }
    env = api_environment(cognito_api)
    for name, path in (
        ("AGENT_WAIT_SIGN_IN_URL", "/oauth2/authorize"),
        ("AGENT_WAIT_SIGN_IN_TOKEN_URL", "/oauth2/token"),
    ):
        assert json.dumps(env[name]) == json.dumps(hosted).replace('.amazoncognito.com"', f'.amazoncognito.com{path}"')
    assert env["AGENT_WAIT_SIGN_IN_CLIENT_ID"] == {"Ref": inbox_id}
    assert env["AGENT_WAIT_SIGN_IN_SCOPES"] == "openid email profile"


def test_with_another_issuer_the_inbox_signs_in_where_inbox_sign_in_says(answering: Synth) -> None:
    env = api_environment(answering)
    assert {k: v for k, v in env.items() if k.startswith("AGENT_WAIT_SIGN_IN_")} == {
        "AGENT_WAIT_SIGN_IN_URL": "https://login.example.com/authorize",
        "AGENT_WAIT_SIGN_IN_TOKEN_URL": "https://login.example.com/token",
        "AGENT_WAIT_SIGN_IN_CLIENT_ID": "inbox",
        "AGENT_WAIT_SIGN_IN_SCOPES": "openid email",
    }
    assert not answering.resources("AWS::Cognito::UserPoolClient")


def test_without_a_way_to_sign_in_the_page_asks_for_a_token_and_inbox_false_removes_its_routes(
    refund: Synth,
) -> None:
    template = _api_template(_oidc(inbox=False))
    assert _route_keys(template) == SIGNED_IN | LINKS
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Lambda::Function":
            assert not [k for k in resource["Properties"]["Environment"]["Variables"] if "SIGN_IN" in k]


def test_the_refund_stack_outputs_where_its_inbox_is(refund: Synth) -> None:
    (api_id,) = refund.resources("AWS::ApiGatewayV2::Api")
    (url,) = [o["Value"] for k, o in refund.json["Outputs"].items() if k.startswith("InboxUrl")]
    assert url == {"Fn::Join": ["", [{"Fn::GetAtt": [api_id, "ApiEndpoint"]}, "/inbox"]]}
    (_, domain) = refund.one("AWS::Cognito::UserPoolDomain")
    assert domain["Properties"]["Domain"] == {"Fn::Join": ["", ["agent-wait-refund-", {"Ref": "AWS::AccountId"}]]}


def _oidc(**props: Any) -> AnswerApiProps:
    return AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"], **props)


def _api_template(props: AnswerApiProps) -> dict[str, Any]:
    """The template of a stack holding one `AgentWait` with its answer API on these props."""
    stack = Stack(new_app(), "S")
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), answer_api=True, answer_api_props=props)
    return Template.from_stack(stack).to_json()


def _route_keys(template: dict[str, Any]) -> set[str]:
    return {r["Properties"]["RouteKey"] for r in template["Resources"].values() if r["Type"].endswith("::Route")}


def _pool(stack: Stack) -> cognito.IUserPool:
    return cognito.UserPool(stack, "Pool")


def _client(stack: Stack) -> cognito.IUserPoolClient:
    return cognito.UserPoolClient.from_user_pool_client_id(stack, "Client", "inbox")


def _domain(stack: Stack) -> cognito.UserPoolDomain:
    pool = cognito.UserPool(stack, "DomainPool")
    return pool.add_domain("Domain", cognito_domain=cognito.CognitoDomainOptions(domain_prefix="approvals"))


def _sign_in(**props: Any) -> InboxSignIn:
    return InboxSignIn(
        **{
            "authorize_url": "https://login.example.com/authorize",
            "token_url": "https://login.example.com/token",
            **props,
        }
    )


_ON = {"answer_api": True}
_ORIGINS = (
    "answer_api_props.cors_allowed_origins must list origins such as 'https://approvals.example.com' (https, host and "
    "optional port, no path, no '*'; http only for localhost); got "
)
_NEEDS_LINKS = (
    "link_announcers needs answer_api=True with links on (AnswerApiProps.links, the default): links point at the "
    "answer API and are signed with its keys; got ['sns']"
)
BAD_PROPS: dict[str, tuple[Callable[[Stack], dict[str, Any]], str]] = {
    "no sign-in props": (
        lambda s: _ON,
        "answer_api_props must say how people sign in when answer_api=True: AnswerApiProps(jwt_issuer=..., "
        "jwt_audience=[...]) for any OIDC issuer, or AnswerApiProps(user_pool=..., user_pool_clients=[...]) for "
        "Cognito; got None",
    ),
    "props without the api": (
        lambda s: {"answer_api_props": _oidc()},
        "answer_api_props configures the answer API, which is off; pass answer_api=True too, or drop it",
    ),
    "no sign-in": (
        lambda s: {**_ON, "answer_api_props": AnswerApiProps()},
        "answer_api_props.jwt_issuer and jwt_audience (any OIDC issuer), or user_pool and user_pool_clients "
        "(Cognito), must be given: the signed-in routes need a JWT authorizer; got neither",
    ),
    "both sign-ins": (
        lambda s: {**_ON, "answer_api_props": _oidc(user_pool=_pool(s), user_pool_clients=[_client(s)])},
        "answer_api_props.user_pool cannot go with jwt_issuer/jwt_audience: the API has one JWT authorizer; pass "
        "jwt_issuer and jwt_audience (any OIDC issuer) or user_pool and user_pool_clients (Cognito), not both",
    ),
    "audience without issuer": (
        lambda s: {**_ON, "answer_api_props": AnswerApiProps(jwt_audience=["approvals"])},
        "answer_api_props.jwt_issuer must be given with jwt_audience: the https URL of the tokens' issuer; got None",
    ),
    "http issuer": (
        lambda s: {
            **_ON,
            "answer_api_props": AnswerApiProps(jwt_issuer="http://login.example.com", jwt_audience=["a"]),
        },
        "answer_api_props.jwt_issuer must be the issuer's https:// URL (API Gateway reads its OpenID "
        "configuration); got 'http://login.example.com'",
    ),
    "empty audience": (
        lambda s: {**_ON, "answer_api_props": AnswerApiProps(jwt_issuer=ISSUER)},
        "answer_api_props.jwt_audience must list at least 1 audience (a client id) with jwt_issuer; got 0",
    ),
    "clients without pool": (
        lambda s: {**_ON, "answer_api_props": AnswerApiProps(user_pool_clients=[_client(s)])},
        "answer_api_props.user_pool must be given with user_pool_clients: the pool that issues the tokens; got None",
    ),
    "pool without clients": (
        lambda s: {**_ON, "answer_api_props": AnswerApiProps(user_pool=_pool(s))},
        "answer_api_props.user_pool_clients must list at least 1 app client of user_pool (or give sign_in_domain, "
        "and the inbox's client is made for you); got 0",
    ),
    "link keys without links": (
        lambda s: {
            **_ON,
            "answer_api_props": _oidc(links=False, link_keys=secretsmanager.Secret.from_secret_name_v2(s, "K", "k")),
        },
        "answer_api_props.link_keys cannot go with links=False: there are no links to sign; drop one",
    ),
    "groups claim": (
        lambda s: {**_ON, "answer_api_props": _oidc(groups_claim="cognito groups")},
        "answer_api_props.groups_claim must be one JWT claim name such as 'cognito:groups' or 'groups'; "
        "got 'cognito groups'",
    ),
    "cors any origin": (lambda s: {**_ON, "answer_api_props": _oidc(cors_allowed_origins=["*"])}, _ORIGINS + "'*'"),
    "cors with a path": (
        lambda s: {**_ON, "answer_api_props": _oidc(cors_allowed_origins=["https://a.example.com/inbox"])},
        _ORIGINS + "'https://a.example.com/inbox'",
    ),
    "cors plain http": (
        lambda s: {**_ON, "answer_api_props": _oidc(cors_allowed_origins=["http://a.example.com"])},
        _ORIGINS + "'http://a.example.com'",
    ),
    "throttle rate": (
        lambda s: {**_ON, "answer_api_props": _oidc(throttle_rate_limit=0)},
        "answer_api_props.throttle_rate_limit must be between 1 and 10000 requests per second; got 0 requests per "
        "second",
    ),
    "throttle burst": (
        lambda s: {**_ON, "answer_api_props": _oidc(throttle_burst_limit=5001)},
        "answer_api_props.throttle_burst_limit must be between 1 and 5000 requests; got 5001 requests",
    ),
    "timeout": (
        lambda s: {**_ON, "answer_api_props": _oidc(timeout=Duration.seconds(31))},
        "answer_api_props.timeout must be between 1 and 30 seconds; got 31 seconds",
    ),
    "memory": (
        lambda s: {**_ON, "answer_api_props": _oidc(memory_size=64)},
        "answer_api_props.memory_size must be between 128 and 10240 MB; got 64 MB",
    ),
    "unknown link announcer": (
        lambda s: {**_ON, "answer_api_props": _oidc(), "link_announcers": ("sqs",)},
        "link_announcers must name announcers among eventbridge, sns, webhook, shaped; got ['sqs']",
    ),
    "link announcers without the api": (lambda s: {"link_announcers": ("sns",)}, _NEEDS_LINKS),
    "link announcers with links off": (
        lambda s: {**_ON, "answer_api_props": _oidc(links=False), "link_announcers": ("sns",)},
        _NEEDS_LINKS,
    ),
    "sns links without a topic": (
        lambda s: {**_ON, "answer_api_props": _oidc(), "topic": False, "link_announcers": ("sns",)},
        "link_announcers names 'sns', which needs a topic; there is none",
    ),
    "eventbridge links without a bus": (
        lambda s: {**_ON, "answer_api_props": _oidc(), "bus": False, "link_announcers": ("eventbridge",)},
        "link_announcers names 'eventbridge', which needs a bus; there is none",
    ),
    "sign-in domain without a pool": (
        lambda s: {**_ON, "answer_api_props": _oidc(sign_in_domain=_domain(s))},
        "answer_api_props.sign_in_domain needs user_pool: it is that pool's domain; got no user_pool",
    ),
    "two ways for the inbox to sign in": (
        lambda s: {
            **_ON,
            "answer_api_props": AnswerApiProps(
                user_pool=_pool(s), sign_in_domain=_domain(s), inbox_sign_in=_sign_in(client_id="approvals")
            ),
        },
        "answer_api_props.inbox_sign_in cannot go with sign_in_domain: the page signs in one way; sign_in_domain "
        "for a Cognito user pool, inbox_sign_in for any other issuer",
    ),
    "inbox sign-in with a pool": (
        lambda s: {
            **_ON,
            "answer_api_props": AnswerApiProps(
                user_pool=_pool(s), user_pool_clients=[_client(s)], inbox_sign_in=_sign_in(client_id="approvals")
            ),
        },
        "answer_api_props.inbox_sign_in is for an issuer other than Cognito; with user_pool, pass its domain as "
        "sign_in_domain instead",
    ),
    "inbox client outside the audience": (
        lambda s: {**_ON, "answer_api_props": _oidc(inbox_sign_in=_sign_in(client_id="someone-else"))},
        "answer_api_props.inbox_sign_in.client_id must be one of jwt_audience ['approvals']: the page calls the "
        "API with the ID token, whose aud is the client id; got 'someone-else'",
    ),
    "inbox sign-in over http": (
        lambda s: {
            **_ON,
            "answer_api_props": _oidc(
                inbox_sign_in=_sign_in(client_id="approvals", token_url="http://login.example.com/token")
            ),
        },
        "answer_api_props.inbox_sign_in.token_url must be an https:// URL of the issuer; "
        "got 'http://login.example.com/token'",
    ),
    "inbox sign-in without scopes": (
        lambda s: {**_ON, "answer_api_props": _oidc(inbox_sign_in=_sign_in(client_id="approvals", scopes=()))},
        "answer_api_props.inbox_sign_in.scopes must list scopes such as 'openid'; got []",
    ),
    "sign-in without the inbox": (
        lambda s: {**_ON, "answer_api_props": _oidc(inbox=False, inbox_sign_in=_sign_in(client_id="approvals"))},
        "answer_api_props.inbox_sign_in cannot go with inbox=False: there is no page to sign in to; drop one",
    ),
    "callback urls without a domain": (
        lambda s: {**_ON, "answer_api_props": _oidc(inbox_callback_urls=["https://inbox.example.com/inbox"])},
        "answer_api_props.inbox_callback_urls needs sign_in_domain: they are added to the app client AnswerApi "
        "makes for the page",
    ),
    "an http callback off localhost": (
        lambda s: {
            **_ON,
            "answer_api_props": AnswerApiProps(
                user_pool=_pool(s), sign_in_domain=_domain(s), inbox_callback_urls=["http://inbox.example.com/"]
            ),
        },
        "answer_api_props.inbox_callback_urls must be https:// URLs (http:// only on localhost) of pages that "
        "sign in; got 'http://inbox.example.com/'",
    ),
    "webhook links without a webhook": (
        lambda s: {**_ON, "answer_api_props": _oidc(), "link_announcers": ("webhook",)},
        "link_announcers names 'webhook', which needs webhook_url; there is none",
    ),
}


@pytest.mark.parametrize("case", BAD_PROPS, ids=str)
def test_bad_answer_api_props_are_refused_naming_the_prop(case: str) -> None:
    props, problem = BAD_PROPS[case]
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), **props(stack))
    assert info.value.problems == (problem,)
    assert not [c for c in stack.node.find_all() if c.node.path.startswith("S/AgentWait/")], "nothing created"


def test_answer_api_on_its_own_checks_its_props_without_a_prefix() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as info:
        AnswerApi(
            stack,
            "Api",
            question_table=dynamodb.Table.from_table_name(stack, "Table", "questions"),
            entry_queue=sqs.Queue.from_queue_arn(stack, "Queue", "arn:aws:sqs:us-east-1:123456789012:entry.fifo"),
            code=inline_code(),
            jwt_issuer="http://login.example.com",
            jwt_audience=["approvals"],
            log_level="LOUD",
        )
    assert info.value.construct == "S/Api"
    assert info.value.problems == (
        "jwt_issuer must be the issuer's https:// URL (API Gateway reads its OpenID configuration); "
        "got 'http://login.example.com'",
        "log_level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL; got 'LOUD'",
    )
