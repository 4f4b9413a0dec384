"""The CDK app: `cdk synth` / `cdk deploy` the refund-agent stack from the repository root.

Context:
    agent-wait:bundle=false  synthesize without building the Lambda bundle (no PyPI needed); the
                             template is the same, the asset is a placeholder that must not be deployed.
"""

from __future__ import annotations

from aws_cdk import App
from examples.refund_agent.stack import RefundAgentStack

BUNDLE_CONTEXT = "agent-wait:bundle"


def build(app: App | None = None) -> App:
    """Add `RefundAgentStack` to `app` (a new `App` by default) and return the app."""
    app = app or App()
    if str(app.node.try_get_context(BUNDLE_CONTEXT)).lower() == "false":
        # CDK's own switch: bundle no stack. Must be set before any stack exists.
        app.node.set_context("aws:cdk:bundling-stacks", [])
    RefundAgentStack(app, "RefundAgentStack")
    return app


if __name__ == "__main__":
    build().synth()
