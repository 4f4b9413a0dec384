"""`RefundAgentStack`: the refund agent on AWS, deployed with `cdk deploy` from the repository root."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import RemovalPolicy, Stack
from constructs import Construct

from agent_wait_cdk import AgentWait

__all__ = ("REFUND_GRAPH", "RefundAgentStack")

REFUND_GRAPH = "examples.refund_agent.graph:build_graph"
"""The refund agent's graph factory; the router imports it from the bundled `examples` package."""
EXAMPLES_DIR = Path(__file__).resolve().parents[1]
"""The `examples` package, copied whole into the Lambda bundle so `examples.refund_agent.graph` imports."""


class RefundAgentStack(Stack):
    """The refund-agent demo: `AgentWait` running `examples.refund_agent.graph:build_graph`.

    A demo, so `cdk destroy` removes everything it made (`removal_policy=DESTROY`); a real deployment
    keeps the `AgentWait` default, RETAIN.

    Example:
        app = App()
        RefundAgentStack(app, "RefundAgentStack")
        app.synth()
    """

    def __init__(
        self, scope: Construct, id: str, *, removal_policy: RemovalPolicy = RemovalPolicy.DESTROY, **kwargs
    ) -> None:
        super().__init__(scope, id, description="agent-wait: the refund agent example", **kwargs)
        self.agent_wait = AgentWait(
            self,
            "AgentWait",
            graph=REFUND_GRAPH,
            graph_source=[EXAMPLES_DIR],
            removal_policy=removal_policy,
        )
