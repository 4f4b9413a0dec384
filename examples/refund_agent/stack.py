"""`RefundAgentStack`: the refund agent on AWS, deployed with `cdk deploy` from the repository root."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from agent_wait_cdk import AgentWait
from examples.refund_agent.settings import REFUND_TABLE_VARIABLE

__all__ = ("REFUND_GRAPH", "REFUND_TABLE_VARIABLE", "RefundAgentStack")

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
        # The refund itself: one row per execution, so every scenario can count how often it ran.
        self.refunds = dynamodb.Table(
            self,
            "Refunds",
            partition_key=dynamodb.Attribute(name="order_id", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="refund_id", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=removal_policy,
        )
        router = self.agent_wait.router_function
        router.add_environment(REFUND_TABLE_VARIABLE, self.refunds.table_name)
        self.refunds.grant(router, "dynamodb:PutItem")
        CfnOutput(self, "RefundTableName", value=self.refunds.table_name, description="Refunds, one row per execution")
