"""A2A on `AgentWait(a2a=...)`: the router and the answer API get the agent card, the API its two routes (the
JSON-RPC endpoint behind the JWT authorizer, the card without), the bundles keep `a2a-sdk` only then, and A2A
without the answer API is refused."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import ISSUER, new_app, refund_agent

from agent_wait_cdk import A2aProps, AgentWait, AgentWaitPropsError, AnswerApiProps
from agent_wait_cdk.answer_api import A2A_OPEN_ROUTES, A2A_ROUTES
from agent_wait_cdk.bundling.slim import left_out

ROUTER, API = "agent_wait.host.router.handler", "agent_wait.host.api.handler"
CARD = A2aProps(
    name="Refunds",
    description="Refunds an order",
    skills=[{"id": "refund", "name": "Refund", "description": "Refunds one order", "tags": ["refunds"]}],
)


def _agent(stack: Stack, **props: Any) -> AgentWait:
    return refund_agent(stack, **props)


@pytest.fixture(scope="module")
def template() -> Mapping[str, Any]:
    stack = Stack(new_app(), "A2a")
    _agent(stack, answer_api=True, answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"]), a2a=CARD)
    return Template.from_stack(stack).to_json()


def _of_type(template: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    return [resource["Properties"] for resource in template["Resources"].values() if resource["Type"] == kind]


def test_the_router_and_the_answer_api_get_the_agent_card(template: Mapping[str, Any]) -> None:
    functions = {fn["Handler"]: fn["Environment"]["Variables"] for fn in _of_type(template, "AWS::Lambda::Function")}
    for handler in (ROUTER, API):
        card = json.loads(functions[handler]["AGENT_WAIT_AGENT_CARD"])
        assert (card["name"], card["skills"][0]["id"]) == ("Refunds", "refund"), handler


def test_the_json_rpc_endpoint_needs_a_jwt_and_the_card_needs_none(template: Mapping[str, Any]) -> None:
    found = {route["RouteKey"]: route for route in _of_type(template, "AWS::ApiGatewayV2::Route")}
    for method, path in A2A_ROUTES:
        assert found[f"{method} {path}"]["AuthorizationType"] == "JWT"
    for method, path in A2A_OPEN_ROUTES:
        assert found[f"{method} {path}"]["AuthorizationType"] == "NONE"


def test_without_a2a_there_are_no_a2a_routes_and_no_card() -> None:
    stack = Stack(new_app(), "NoA2a")
    _agent(stack, answer_api=True, answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"]))
    template = Template.from_stack(stack).to_json()
    keys = {route["RouteKey"] for route in _of_type(template, "AWS::ApiGatewayV2::Route")}
    assert not keys & {f"{method} {path}" for method, path in (*A2A_ROUTES, *A2A_OPEN_ROUTES)}
    for fn in _of_type(template, "AWS::Lambda::Function"):
        assert "AGENT_WAIT_AGENT_CARD" not in fn.get("Environment", {}).get("Variables", {})


def test_a2a_without_the_answer_api_is_refused_saying_why() -> None:
    with pytest.raises(AgentWaitPropsError) as raised:
        _agent(Stack(new_app(), "S"), a2a=CARD)
    assert raised.value.problems == (
        "a2a is served by the answer API, which is off; pass answer_api=True too, or drop it",
    )


def test_the_bundles_keep_a2a_sdk_only_when_a2a_is_on() -> None:
    for function in ("router", "sweep", "api"):
        assert "a2a-sdk" in left_out(function)
        assert "a2a-sdk" not in left_out(function, ["a2a"])
