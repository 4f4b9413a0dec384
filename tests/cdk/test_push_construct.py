"""Web push on `AgentWait`: the subscriptions and sends tables, every function's settings, each function's grants (the
API keeps subscriptions, the router and the sweep read them and claim pushes), the signed-in routes, cdk-nag and
cfn-lint clean, and props refused at construction. One synthesized stack (`push` below)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_secretsmanager as secretsmanager
from cfnlint.api import lint
from tests.cdk.conftest import EXAMPLES, ISSUER, Synth, actions_on, getatt, inline_code, new_app, statements, synth

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps, PushProps

ROUTER, SWEEP, API = "agent_wait.host.router.handler", "agent_wait.host.sweep.handler", "agent_wait.host.api.handler"
SUBSCRIPTION_KEYS = [{"AttributeName": "person", "KeyType": "HASH"}, {"AttributeName": "device", "KeyType": "RANGE"}]
SENDS_KEYS = [{"AttributeName": "question_id", "KeyType": "HASH"}]
KEYS_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait/push-keys-AbCdEf"


@pytest.fixture(scope="module")
def push() -> Synth:
    app = new_app()
    stack = Stack(app, "Push")
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        topic=False,
        bus=False,
        removal_policy=RemovalPolicy.DESTROY,
        resource_name_prefix="refunds-push",
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        push=PushProps(
            keys_secret=secretsmanager.Secret.from_secret_complete_arn(stack, "PushKeys", KEYS_ARN),
            subject="mailto:ops@example.com",
        ),
    )
    return synth(app, stack)


def variables(synth: Synth, handler: str) -> dict[str, Any]:
    _, function = synth.one("AWS::Lambda::Function", Handler=handler)
    return function["Properties"]["Environment"]["Variables"]


def role_of(synth: Synth, handler: str) -> str:
    _, function = synth.one("AWS::Lambda::Function", Handler=handler)
    return function["Properties"]["Role"]["Fn::GetAtt"][0]


def test_every_function_gets_the_push_settings_and_only_the_router_and_the_sweep_the_sends_table(push: Synth) -> None:
    subscriptions, _ = push.one("AWS::DynamoDB::Table", TableName="refunds-push-push-subscriptions")
    sends, _ = push.one("AWS::DynamoDB::Table", TableName="refunds-push-push-sends")
    for handler in (ROUTER, SWEEP, API):
        found = variables(push, handler)
        assert found["AGENT_WAIT_PUSH_KEYS_ARN"] == KEYS_ARN, handler
        assert found["AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE"] == {"Ref": subscriptions}, handler
        assert found["AGENT_WAIT_PUSH_SUBJECT"] == "mailto:ops@example.com", handler
        assert ("AGENT_WAIT_PUSH_SENDS_TABLE" in found) is (handler != API), handler
    assert variables(push, ROUTER)["AGENT_WAIT_PUSH_SENDS_TABLE"] == {"Ref": sends}


def test_the_api_keeps_subscriptions_and_the_router_and_the_sweep_read_them_and_claim_pushes(push: Synth) -> None:
    subscriptions, _ = push.one("AWS::DynamoDB::Table", TableName="refunds-push-push-subscriptions")
    sends, _ = push.one("AWS::DynamoDB::Table", TableName="refunds-push-push-sends")
    api = actions_on(statements(push, role_of(push, API)))
    assert api[getatt(subscriptions)] == {"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query"}
    assert getatt(sends) not in api
    assert KEYS_ARN in _secret_reads(push, API)
    for handler in (ROUTER, SWEEP):
        granted = actions_on(statements(push, role_of(push, handler)))
        assert granted[getatt(subscriptions)] == {"dynamodb:Scan", "dynamodb:DeleteItem"}, handler
        assert granted[getatt(sends)] == {"dynamodb:UpdateItem"}, handler
        assert KEYS_ARN in _secret_reads(push, handler), handler


def test_the_subscriptions_table_is_keyed_by_person_and_device_and_the_push_routes_are_signed_in(push: Synth) -> None:
    subscriptions, table = push.one("AWS::DynamoDB::Table", TableName="refunds-push-push-subscriptions")
    assert table["Properties"]["KeySchema"] == SUBSCRIPTION_KEYS
    assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    _, sends = push.one("AWS::DynamoDB::Table", TableName="refunds-push-push-sends")
    assert sends["Properties"]["KeySchema"] == SENDS_KEYS
    routes = {r["Properties"]["RouteKey"]: r["Properties"] for r in push.resources("AWS::ApiGatewayV2::Route").values()}
    for route in ("GET /push/key", "POST /push/subscriptions", "DELETE /push/subscriptions/{device}"):
        assert routes[route]["AuthorizationType"] == "JWT", route
    outputs = {k.removeprefix("AgentWait")[:-8]: v for k, v in push.json["Outputs"].items()}
    assert outputs["PushSubscriptionsTableName"]["Value"] == {"Ref": subscriptions}


def _secret_reads(synth: Synth, handler: str) -> list[Any]:
    """The secrets a function may read (`GetSecretValue`), as its role's statements name them."""
    found = statements(synth, role_of(synth, handler))
    reads = [s["Resource"] for s in found if "secretsmanager:GetSecretValue" in json.dumps(s["Action"])]
    return [r for resource in reads for r in (resource if isinstance(resource, list) else [resource])]


def test_cdk_nag_and_cfn_lint_find_nothing(push: Synth) -> None:
    report_path = push.outdir / "validation-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {"pluginReports": []}
    assert [v for p in report["pluginReports"] for v in p.get("violations", [])] == []
    matches = lint(json.dumps(push.json), regions=["us-east-1"])
    assert [f"{m.rule.id} {m.message}" for m in matches if m.rule.id.startswith("E")] == []


def test_push_needs_the_answer_api_and_a_vapid_subject_it_can_read() -> None:
    stack = Stack(new_app(), "S")
    keys = secretsmanager.Secret.from_secret_complete_arn(stack, "K", KEYS_ARN)
    with pytest.raises(AgentWaitPropsError) as refused:
        AgentWait(stack, "A", graph="g:g", code=inline_code(), push=PushProps(keys_secret=keys, subject="ops"))
    text = str(refused.value)
    assert "push needs answer_api=True: people subscribe to pushes in the answer API's inbox" in text
    assert "push.subject must be 'mailto:<address>' or an https:// URL (RFC 8292); got 'ops'" in text


def test_the_phone_pages_snippet_synthesizes_with_nothing_for_cdk_nag() -> None:
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "phone.md").read_text(encoding="utf-8")
    (snippet,) = [s for s in re.findall(r"```python\n(.*?)```", doc, re.DOTALL) if "PhoneApprovalsStack" in s]
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "docs/phone.md", "exec"), namespace)
    app = new_app(**{"agent-wait:bundle": "false"})
    stack = namespace["PhoneApprovalsStack"](app, "PhoneApprovals")
    result = synth(app, stack)  # cdk-nag runs as a validation plugin: a finding fails here
    routes = {r["Properties"]["RouteKey"] for r in result.resources("AWS::ApiGatewayV2::Route").values()}
    assert {"GET /push/key", "POST /push/subscriptions", "DELETE /push/subscriptions/{device}"} <= routes
