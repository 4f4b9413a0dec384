"""The root app: `cdk synth` runs `app.py` with no AWS credentials; the CLI version is pinned."""

from __future__ import annotations

import json
import re

import app as app_module
from aws_cdk import App, Stack
from aws_cdk.assertions import Match, Template
from examples.refund_agent.settings import REFUND_ROUTER_MEMORY_MB
from examples.refund_agent.stack import (
    APPROVER_GROUP,
    CALLBACK_URL_CONTEXT,
    DEFAULT_CALLBACK_URL,
    REFUND_GRAPH,
    RefundAgentStack,
)
from tests.cdk.conftest import REPO, Synth, actions_on, getatt, new_app, statements

from agent_wait_cdk import RouterProps


def test_app_builds_the_refund_agent_stack(refund: Synth) -> None:
    """The `refund` fixture is `app.build(...)` synthesized; its stack is env-agnostic (no account lookup)."""
    assert isinstance(refund.stack, RefundAgentStack)
    assert refund.stack.stack_name == "RefundAgentStack"
    assert refund.stack.resolve(refund.stack.account) == {"Ref": "AWS::AccountId"}
    assert refund.stack.agent_wait.bundle.sources[1][1] == "examples"
    for fn in refund.resources("AWS::Lambda::Function").values():
        variables = fn["Properties"]["Environment"]["Variables"]
        if fn["Properties"]["Handler"] == "agent_wait.host.api.handler":
            assert "AGENT_WAIT_GRAPH" not in variables  # the answer API decides from the ledger, never runs the graph
        else:
            assert variables["AGENT_WAIT_GRAPH"] == REFUND_GRAPH


def test_the_refund_router_runs_at_the_memory_its_cost_curve_chose(refund: Synth) -> None:
    """320 MB (bench_router_memory.py), not the library's 512 MB default."""
    (router,) = [
        fn["Properties"]
        for fn in refund.resources("AWS::Lambda::Function").values()
        if fn["Properties"].get("Handler") == "agent_wait.host.router.handler"
    ]
    assert router["MemorySize"] == REFUND_ROUTER_MEMORY_MB == 320
    assert RouterProps().memory_size == 512


def test_bundle_false_context_turns_bundling_off() -> None:
    app = app_module.build(App(context={app_module.BUNDLE_CONTEXT: "false"}, builtin_cloud_formation_validation=False))
    stack = app.node.find_child("RefundAgentStack")
    assert isinstance(stack, Stack)
    assert stack.bundling_required is False


def test_cdk_json_runs_app_py_with_telemetry_off() -> None:
    config = json.loads((REPO / "cdk.json").read_text())
    assert config["app"] == "uv run --frozen python app.py"
    assert config["context"]["cli-telemetry"] is False


def test_the_cdk_cli_is_pinned_exactly() -> None:
    package = json.loads((REPO / "package.json").read_text())
    version = package["devDependencies"]["aws-cdk"]
    assert re.fullmatch(r"2\.\d+\.\d+", version), f"pin an exact 2.x version, got {version!r}"
    lock = json.loads((REPO / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/aws-cdk"]["version"] == version


def test_the_refund_stack_gives_only_the_router_the_refunds_table(refund: Synth) -> None:
    """The example's side effect is a table the router may only put into, named by REFUND_TABLE."""
    (table_id,) = [
        lid
        for lid, r in refund.resources("AWS::DynamoDB::Table").items()
        if r["Properties"]["KeySchema"][0]["AttributeName"] == "order_id"
    ]
    for lid, fn in refund.resources("AWS::Lambda::Function").items():
        variables = fn["Properties"]["Environment"]["Variables"]
        is_router = fn["Properties"]["Handler"] == "agent_wait.host.router.handler"
        assert (variables.get("REFUND_TABLE") == {"Ref": table_id}) is is_router, lid
    grants = [
        statement
        for policy in refund.resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if {"Fn::GetAtt": [table_id, "Arn"]}
        in ([statement["Resource"]] if isinstance(statement["Resource"], dict) else statement["Resource"])
    ]
    assert [statement["Action"] for statement in grants] == ["dynamodb:PutItem"]


def test_the_refund_stack_signs_approvers_in_with_its_own_cognito_pool(refund: Synth) -> None:
    """Invited approvers only, a strong password, the stack's removal policy; a `finance` group; one public
    app client with the authorization-code grant (PKCE) back to the inbox page."""
    pool_id, pool = refund.one("AWS::Cognito::UserPool")
    props = pool["Properties"]
    assert props["AdminCreateUserConfig"] == {"AllowAdminCreateUserOnly": True}
    assert props["Policies"]["PasswordPolicy"] == {
        "MinimumLength": 14,
        "RequireLowercase": True,
        "RequireNumbers": True,
        "RequireSymbols": True,
        "RequireUppercase": True,
        "TemporaryPasswordValidityDays": 3,
    }
    assert (props["MfaConfiguration"], props["EnabledMfas"]) == ("OPTIONAL", ["SOFTWARE_TOKEN_MFA"])
    assert pool["DeletionPolicy"] == "Delete"
    refund.template.has_resource_properties(
        "AWS::Cognito::UserPoolGroup", {"GroupName": APPROVER_GROUP, "UserPoolId": {"Ref": pool_id}}
    )
    client_id, client = refund.one("AWS::Cognito::UserPoolClient")
    assert client["Properties"]["GenerateSecret"] is False
    assert client["Properties"]["AllowedOAuthFlows"] == ["code"]
    (api_id,) = refund.resources("AWS::ApiGatewayV2::Api")
    inbox = {"Fn::Join": ["", [{"Fn::GetAtt": [api_id, "ApiEndpoint"]}, "/inbox"]]}
    assert client["Properties"]["CallbackURLs"] == [inbox, DEFAULT_CALLBACK_URL]
    _, authorizer = refund.one("AWS::ApiGatewayV2::Authorizer")
    assert authorizer["Properties"]["JwtConfiguration"]["Audience"] == [{"Ref": client_id}]
    outputs = {key: value["Value"] for key, value in refund.json["Outputs"].items()}
    assert (outputs["UserPoolId"], outputs["UserPoolClientId"]) == ({"Ref": pool_id}, {"Ref": client_id})


def test_the_callback_url_comes_from_the_context() -> None:
    app = app_module.build(new_app(**{CALLBACK_URL_CONTEXT: "https://inbox.example.com/inbox"}))
    template = Template.from_stack(app.node.find_child("RefundAgentStack"))  # type: ignore[arg-type]
    template.has_resource_properties(
        "AWS::Cognito::UserPoolClient", {"CallbackURLs": [Match.any_value(), "https://inbox.example.com/inbox"]}
    )


def test_the_refund_stack_puts_signed_links_on_sns_and_lets_its_caller_only_start(refund: Synth) -> None:
    (router,) = [
        fn["Properties"]["Environment"]["Variables"]
        for fn in refund.resources("AWS::Lambda::Function").values()
        if fn["Properties"]["Handler"] == "agent_wait.host.router.handler"
    ]
    assert router["AGENT_WAIT_LINK_ANNOUNCERS"] == "sns"
    (caller,) = [k for k in refund.resources("AWS::IAM::Role") if k.startswith("RefundCaller")]
    assert router["AGENT_WAIT_START_SENDERS"] == {"Fn::GetAtt": [caller, "RoleId"]}
    assert "AGENT_WAIT_ANSWER_SENDERS" not in router  # people answer on the API; nothing answers by queue
    assert actions_on(statements(refund, "RefundCaller")) == {
        getatt("AgentWaitEntryQueue74B3737D"): {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
    }
    outputs = {key: value["Value"] for key, value in refund.json["Outputs"].items()}
    assert outputs["RefundCallerRoleArn"] == {"Fn::GetAtt": [caller, "Arn"]}
