"""`AgentWait(index_shards=...)` sets AGENT_WAIT_INDEX_SHARDS alike on every function that reads the question table:
a router and a sweep sharding differently would each miss the other's questions."""

from __future__ import annotations

import re

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import ISSUER, inline_code, new_app

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps

HANDLERS = ("agent_wait.host.router.handler", "agent_wait.host.sweep.handler", "agent_wait.host.api.handler")


def _shards(template: Template) -> dict[str, str | None]:
    functions = template.find_resources("AWS::Lambda::Function")
    return {
        props["Handler"]: props.get("Environment", {}).get("Variables", {}).get("AGENT_WAIT_INDEX_SHARDS")
        for props in (resource["Properties"] for resource in functions.values())
        if props.get("Handler") in HANDLERS
    }


def _agent_wait(**props: object) -> Template:
    stack = Stack(new_app(), "S")
    api = AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"])
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), answer_api=True, answer_api_props=api, **props)
    return Template.from_stack(stack)


def test_index_shards_is_set_on_the_router_the_sweep_and_the_answer_api_alike() -> None:
    assert _shards(_agent_wait(index_shards=64)) == dict.fromkeys(HANDLERS, "64")


def test_without_index_shards_no_function_sets_it_and_the_runtime_default_holds() -> None:
    assert _shards(_agent_wait()) == dict.fromkeys(HANDLERS)


@pytest.mark.parametrize("value", [0, 1001])
def test_index_shards_outside_1_to_1000_is_refused(value: int) -> None:
    message = f"index_shards must be between 1 and 1000 shards; got {value} shards"
    with pytest.raises(AgentWaitPropsError, match=re.escape(message)):
        _agent_wait(index_shards=value)
