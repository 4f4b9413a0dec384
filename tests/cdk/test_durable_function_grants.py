"""`AgentWait.serve_durable_function`: the durable function may ask (ledger, topic, bus; its settings), and the router
may complete its callbacks, on its durable executions only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template
from tests.cdk.conftest import Synth, actions_on, getatt, inline_code, new_app, ref, statements

from agent_wait_cdk import AgentWait


def _synth(**props: Any) -> tuple[Synth, str]:
    stack = Stack(new_app(), "Durable")
    agent = AgentWait(stack, "AgentWait", graph="agent_wait.asking.callbacks:DURABLE_ONLY", code=inline_code(), **props)
    refunds = lambda_.Function(
        stack, "Refunds", runtime=lambda_.Runtime.PYTHON_3_13, handler="refunds.handler", code=inline_code()
    )
    grant = agent.serve_durable_function(refunds)
    assert grant.success
    template = Template.from_stack(stack)
    synthed = Synth(stack=stack, template=template, json=template.to_json(), outdir=Path())
    return synthed, synthed.logical_id(refunds)


def _one(synthed: Synth, type_: str, part: str) -> str:
    return next(k for k in synthed.resources(type_) if part in k)


def test_the_durable_function_may_ask_and_the_router_may_complete_its_callbacks_only() -> None:
    synthed, function = _synth(index_shards=16, bus=True, topic=True)
    table = _one(synthed, "AWS::DynamoDB::Table", "QuestionTable")
    topic = _one(synthed, "AWS::SNS::Topic", "Topic")
    bus = _one(synthed, "AWS::Events::EventBus", "Bus")

    asking = actions_on(statements(synthed, "RefundsServiceRole"))
    assert asking == {
        getatt(table): {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
        ref(topic): {"sns:Publish"},
        getatt(bus): {"events:PutEvents"},
    }
    executions = json.dumps({"Fn::Join": ["", [{"Fn::GetAtt": [function, "Arn"]}, ":*"]]}, sort_keys=True)
    assert actions_on(statements(synthed, "AgentWaitRouter"))[executions] == {
        "lambda:SendDurableExecutionCallbackSuccess",
        "lambda:GetDurableExecutionHistory",
    }
    variables = synthed.json["Resources"][function]["Properties"]["Environment"]["Variables"]
    assert variables == {
        "AGENT_WAIT_TABLE": {"Ref": table},
        "AGENT_WAIT_TOPIC_ARN": {"Ref": topic},
        "AGENT_WAIT_BUS_NAME": {"Ref": bus},
        "AGENT_WAIT_INDEX_SHARDS": "16",
    }


def test_without_a_topic_or_a_bus_the_durable_function_gets_the_ledger_alone() -> None:
    synthed, function = _synth(topic=False, bus=False)
    table = _one(synthed, "AWS::DynamoDB::Table", "QuestionTable")
    variables = synthed.json["Resources"][function]["Properties"]["Environment"]["Variables"]
    assert variables == {"AGENT_WAIT_TABLE": {"Ref": table}}
    assert actions_on(statements(synthed, "RefundsServiceRole")) == {
        getatt(table): {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
    }
