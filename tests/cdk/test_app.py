"""The root app: `cdk synth` runs `app.py` with no AWS credentials; the CLI version is pinned."""

from __future__ import annotations

import json
import re

import app as app_module
from aws_cdk import App, Stack
from examples.refund_agent.stack import REFUND_GRAPH, RefundAgentStack
from tests.cdk.conftest import REPO, Synth


def test_app_builds_the_refund_agent_stack(refund: Synth) -> None:
    """The `refund` fixture is `app.build(...)` synthesized; its stack is env-agnostic (no account lookup)."""
    assert isinstance(refund.stack, RefundAgentStack)
    assert refund.stack.stack_name == "RefundAgentStack"
    assert refund.stack.resolve(refund.stack.account) == {"Ref": "AWS::AccountId"}
    assert refund.stack.agent_wait.bundle.sources[1][1] == "examples"
    for fn in refund.resources("AWS::Lambda::Function").values():
        assert fn["Properties"]["Environment"]["Variables"]["AGENT_WAIT_GRAPH"] == REFUND_GRAPH


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
