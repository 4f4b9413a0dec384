"""The MCP server on `AgentWait` (`mcp=McpProps(...)`), as the refund stack turns it on: `POST /mcp` behind the JWT
authorizer and `POST /mcp/iam` behind an IAM authorizer, both to the answer API's function; the named policies as its
`AGENT_WAIT_MCP_POLICIES`; its right to open question rows; a machine client's grant; props refused at synth; and the
`mcp` package kept only in the answer API's bundle of a stack that serves MCP."""

from __future__ import annotations

import json

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from tests.cdk.conftest import ISSUER, Synth, actions_on, getatt, inline_code, new_app, statements

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps, McpProps
from agent_wait_cdk.bundling import left_out
from agent_wait_cdk.mcp import MCP_IAM_ROUTES, MCP_SIGNED_IN_ROUTES

API = "agent_wait.host.api.handler"


def routes(synth: Synth) -> dict[str, dict]:
    return {r["Properties"]["RouteKey"]: r["Properties"] for r in synth.resources("AWS::ApiGatewayV2::Route").values()}


def test_people_reach_the_mcp_server_with_a_token_and_machines_with_a_signature(refund: Synth) -> None:
    found = routes(refund)
    assert found["POST /mcp"]["AuthorizationType"] == "JWT"
    assert found["POST /mcp"]["AuthorizerId"] == found["GET /questions"]["AuthorizerId"]
    assert found["POST /mcp/iam"]["AuthorizationType"] == "AWS_IAM"
    assert found["POST /mcp"]["Target"] == found["POST /mcp/iam"]["Target"] == found["GET /questions"]["Target"]


def test_the_api_function_gets_the_named_policies_and_may_open_question_rows(refund: Synth) -> None:
    from examples.refund_agent.stack import REFUND_MCP_POLICIES

    _, function = refund.one("AWS::Lambda::Function", Handler=API)
    setting = json.loads(function["Properties"]["Environment"]["Variables"]["AGENT_WAIT_MCP_POLICIES"])
    assert setting == {"policies": REFUND_MCP_POLICIES, "default": "refund-approval"}
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    (table,) = [k for k in refund.resources("AWS::DynamoDB::Table") if k.startswith("AgentWaitQuestionTable")]
    granted = actions_on(statements(refund, role))
    assert "dynamodb:PutItem" in granted[getatt(table)]
    assert not any("dynamodb:PutItem" in actions for resource, actions in granted.items() if "index" in resource)


def test_the_runtime_reads_the_setting_the_construct_writes() -> None:
    from agent_wait.mcp.policies import POLICIES_VARIABLE, McpPolicies
    from agent_wait.policy import WaitPolicy
    from agent_wait_cdk.mcp import MCP_POLICIES_VARIABLE

    props = McpProps(policies={"ops": WaitPolicy(timeout="PT1H", answerer_groups=["ops"])}, default_policy="ops")
    read = McpPolicies.from_json(props.policies_json())
    assert MCP_POLICIES_VARIABLE == POLICIES_VARIABLE
    assert read.policies["ops"].answerer_groups == ("ops",)


def test_the_local_api_plays_the_construct_s_mcp_routes() -> None:
    from agent_wait.local.sigv4 import IAM_ROUTES
    from agent_wait.local.sigv4 import MCP_SIGNED_IN_ROUTES as LOCAL_SIGNED_IN

    assert sorted(LOCAL_SIGNED_IN) == sorted(f"{m} {p}" for m, p in MCP_SIGNED_IN_ROUTES)
    assert sorted(IAM_ROUTES) == sorted(f"{m} {p}" for m, p in MCP_IAM_ROUTES)


def test_a_machine_client_is_granted_the_iam_route_only() -> None:
    app = new_app()
    stack = Stack(app, "McpGrant")
    wait = AgentWait(
        stack,
        "AgentWait",
        graph="agent_wait.asking.callbacks:DURABLE_ONLY",
        code=inline_code(),
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        mcp=McpProps(policies={"ops": {"timeout": "PT1H"}}),
    )
    runner = iam.Role(stack, "Runner", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    assert wait.answer_api is not None
    wait.answer_api.grant_invoke_mcp(runner)
    (policy,) = [p for k, p in app.synth().get_stack_by_name("McpGrant").template["Resources"].items()
                 if p["Type"] == "AWS::IAM::Policy" and k.startswith("RunnerDefaultPolicy")]  # fmt: skip
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == "execute-api:Invoke"
    assert json.dumps(statement["Resource"]).endswith('"/*/POST/mcp/iam"]]}')


@pytest.mark.parametrize(
    ("props", "answer_api", "says"),
    [
        (McpProps(policies={}), True, "mcp.policies must name at least one policy; got none"),
        (McpProps(policies={"Bad Name": {}}), True, "mcp.policies names must be 1 to 64 of a-z"),
        (McpProps(policies={"ops": {}}, default_policy="nope"), True, "mcp.default_policy must be one of ['ops']"),
        (McpProps(policies={"ops": {}}), False, "mcp.policies need answer_api=True"),
    ],
)
def test_bad_mcp_props_are_refused_at_synth(props: McpProps, answer_api: bool, says: str) -> None:
    stack = Stack(new_app(), "McpBad")
    with pytest.raises(AgentWaitPropsError, match=says.replace("[", r"\[").replace("]", r"\]")):
        AgentWait(
            stack,
            "AgentWait",
            graph="agent_wait.asking.callbacks:DURABLE_ONLY",
            code=inline_code(),
            answer_api=answer_api,
            answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]) if answer_api else None,
            mcp=props,
        )


def test_only_the_answer_api_of_a_stack_that_serves_mcp_keeps_the_mcp_package() -> None:
    assert "mcp" not in left_out("api", ["mcp"])
    assert "mcp" in left_out("api", [])
    assert "mcp" in left_out("router", ["mcp"])
    assert "mcp" in left_out("sweep", ["mcp"])
