"""A stack whose webhooks' URLs are secrets runs on the emulator, and what they post is kept at `/dev/webhooks`.

Deployed, someone puts each webhook's URL in its secret. On the emulator a secret the stack creates holds a
generated value and one it imports is not there at all, so the functions refused to start ("the secret must be
the webhook URL itself"). The local stack now points each such setting at a receiver of its own; a secret that
holds a URL is left alone.
"""

from __future__ import annotations

import io
import json
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agent_wait.contract.schema import Settings

TEMPLATES = {"created": '{"text": {{ ("Waiting for an answer: " ~ question_id) | tojson }}}'}


@pytest.fixture(scope="module")
def webhook_template() -> dict[str, Any]:
    from aws_cdk import App, Stack
    from aws_cdk import aws_secretsmanager as secretsmanager
    from examples.refund_agent.stack import GRAPH_SOURCE, REFUND_GRAPH

    from agent_wait_cdk import AgentWait, ShapedWebhookProps

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, "WebhooksLocal")
    AgentWait(
        stack,
        "AgentWait",
        graph=REFUND_GRAPH,
        graph_source=GRAPH_SOURCE,
        webhook_url_secret=secretsmanager.Secret(stack, "WebhookUrl"),  # its value is generated: not a URL
        webhook_secret=secretsmanager.Secret(stack, "WebhookSigning"),
        # imported by name: not in the emulator at all
        shaped_webhook=ShapedWebhookProps(
            url=secretsmanager.Secret.from_secret_name_v2(stack, "ChatHook", "agent-wait/chat-webhook"),
            templates=TEMPLATES,
        ),
    )
    return app.synth().get_stack_by_name("WebhooksLocal").template


@pytest.fixture(scope="module")
def world(webhook_template: dict[str, Any]) -> Iterator[Any]:
    from examples.refund_agent.demo import MovableClock, World

    from agent_wait.cli._dev import Observer
    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(webhook_template, clock=clock, stack_name=f"hooks-{uuid.uuid4().hex[:8]}")
    local.start()  # refused to start before: neither secret holds a URL here
    try:
        yield World(local, clock, Observer(local), io.StringIO())
    finally:
        local.stop()


def test_both_webhook_settings_are_sent_to_the_local_receivers(world: Any) -> None:
    local = world.local
    assert local.webhooks_routed == [Settings.SHAPED_WEBHOOK_URL_ARN.value, Settings.WEBHOOK_URL_SECRET_ARN.value]
    secrets = local.client("secretsmanager")
    for setting, kind in ((Settings.WEBHOOK_URL_SECRET_ARN, "webhook"), (Settings.SHAPED_WEBHOOK_URL_ARN, "shaped")):
        value = secrets.get_secret_value(SecretId=local.environment[setting.value])["SecretString"]
        assert value == f"{local.api_url}/dev/webhooks/{kind}"


def test_a_question_reaches_both_webhooks_and_the_list_shows_it(world: Any) -> None:
    thread = f"hooks-{uuid.uuid4().hex[:8]}"
    question = world.question_of(world.start(thread, 900))
    webhook = [b for b in world.local.webhooks.received("webhook") if b["body"].get("question_id") == question]
    assert [b["body"]["type"] for b in webhook] == ["wait.created"]  # the envelope itself
    shaped = [b["body"] for b in world.local.webhooks.received("shaped")]
    assert {"text": f"Waiting for an answer: {question}"} in shaped
    with urllib.request.urlopen(f"{world.local.api_url}/dev/webhooks/received.json") as response:
        listed = json.loads(response.read())
    assert {b["kind"] for b in listed} >= {"webhook", "shaped"}
