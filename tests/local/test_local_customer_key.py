"""A stack whose tables, queues and topic are encrypted with a customer managed key runs on the emulator.

The key's policy names the functions' roles, which the emulator does not deploy; the local template used to drop
the key for that, and with it every table, queue and topic encrypted with it, so the functions had no
`AGENT_WAIT_TABLE` nor `AGENT_WAIT_QUEUE_URL` and `agent-wait dev --app` refused to start. The key now gets a
policy that names nobody (the emulator enforces no IAM), and everything it encrypts is deployed.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def keyed_template() -> dict[str, Any]:
    from aws_cdk import App, RemovalPolicy, Stack
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_secretsmanager as secretsmanager
    from examples.refund_agent.stack import GRAPH_SOURCE, REFUND_GRAPH

    from agent_wait_cdk import AgentWait

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, "KeyedLocal")
    key = kms.Key(stack, "Key", enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY)
    agent = AgentWait(stack, "AgentWait", graph=REFUND_GRAPH, graph_source=GRAPH_SOURCE, encryption_key=key)
    # The graph's own secret (a model's API key, say) under the same key: CDK grants reading it through Secrets
    # Manager in the key's policy, naming the router's role.
    model_key = secretsmanager.Secret(stack, "ModelApiKey", encryption_key=key)
    model_key.grant_read(agent.router_function)
    return app.synth().get_stack_by_name("KeyedLocal").template


@pytest.fixture(scope="module")
def world(keyed_template: dict[str, Any]) -> Iterator[Any]:
    from examples.refund_agent.demo import MovableClock, World

    from agent_wait.cli._dev import Observer
    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(keyed_template, clock=clock, stack_name=f"keyed-{uuid.uuid4().hex[:8]}")
    local.start()  # refused to start before: no table and no queue
    try:
        yield World(local, clock, Observer(local), io.StringIO())
    finally:
        local.stop()


def test_the_key_and_what_it_encrypts_are_deployed(keyed_template: dict[str, Any], world: Any) -> None:
    (key_id,) = [lid for lid, r in keyed_template["Resources"].items() if r["Type"] == "AWS::KMS::Key"]
    assert "Role" in str(keyed_template["Resources"][key_id]["Properties"]["KeyPolicy"])  # why it was dropped
    local = world.local
    deployed = local.client("cloudformation").describe_stack_resource(
        StackName=local.stack_name, LogicalResourceId=key_id
    )
    key = local.client("kms").describe_key(KeyId=deployed["StackResourceDetail"]["PhysicalResourceId"])
    assert key["KeyMetadata"]["Enabled"]
    assert local.client("dynamodb").describe_table(TableName=local.table)["Table"]["TableStatus"] == "ACTIVE"


def test_a_question_is_asked_and_answered_on_the_keyed_stack(world: Any) -> None:
    thread = f"keyed-{uuid.uuid4().hex[:8]}"
    question = world.question_of(world.start(thread, 900))
    world.answer(thread, question, "reject")  # approve would write the refund to a table only the example's stack has
    row = world.row(thread, question)
    assert (row["status"], row["answer"]["action"]) == ("resumed", "reject")
