"""Templates for running `AgentWait` on the local emulator (`agent_wait.local.stack.EmulatedStack`).

`agent-wait dev --graph my_pkg.graph:build` and a project's own tests use `template_for_graph`: `AgentWait`
with its defaults around one graph, synthesized in-process without building the Lambda bundle (the local
stack deploys only the tables, queues, topic and bus, and runs the handlers in its own process).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ("GRAPH_STACK_NAME", "template_for_graph")


GRAPH_STACK_NAME = "AgentWaitDev"
"""The stack `template_for_graph` synthesizes."""


def template_for_graph(spec: str) -> dict[str, Any]:
    """The template of a stack holding only `AgentWait(graph=spec)` with its defaults, synthesized unbundled:
    what `agent-wait dev --graph` and a project's own tests run on `EmulatedStack`.

    Example:
        with EmulatedStack(template_for_graph("my_agent.graph:build_graph")) as local:
            local.send({"thread_id": "t-1", "input": {...}})
            local.pump()
    """
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App, RemovalPolicy, Stack
    from aws_cdk import aws_lambda as lambda_

    from agent_wait_cdk.agent_wait import AgentWait

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, GRAPH_STACK_NAME)
    AgentWait(
        stack,
        "AgentWait",
        graph=spec,
        # Locally the handlers run in this process: no bundle is built, so the functions get a stand-in.
        code=lambda_.Code.from_inline("def handler(event, context):\n    raise NotImplementedError\n"),
        removal_policy=RemovalPolicy.DESTROY,
    )
    return app.synth().get_stack_by_name(GRAPH_STACK_NAME).template
