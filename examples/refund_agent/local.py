"""The refund agent on a laptop: the stack's template for `agent-wait dev`, and the narrated demo.

`agent-wait dev` and `agent-wait demo` import this module by default: `agent_wait.examples.refund_agent.local`
from the wheel, `examples.refund_agent.local` in the repository.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

__all__ = ("STACK_NAME", "demo", "template")

STACK_NAME = "RefundAgentStack"


def template() -> dict[str, Any]:
    """Synthesize `RefundAgentStack` in-process (no bundling: nothing is uploaded) and return its template."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App
    from aws_cdk import aws_lambda as lambda_

    from .stack import RefundAgentStack

    # No bundling (nothing is uploaded) and no built-in template validation (~20 s; CI runs cfn-lint).
    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    # The demo's durable scenario runs the agent as a durable function too: the template serves it, so the router
    # may complete its callbacks (the emulator holds each function to its role); the SDK's local runner plays it.
    played_locally = lambda_.Code.from_inline("# played by the durable SDK's local runner: see demo.py\n")
    RefundAgentStack(app, STACK_NAME, durable_code=played_locally)
    return app.synth().get_stack_by_name(STACK_NAME).template


def demo(scenarios: Sequence[str] = ()) -> int:
    """Run the narrated scenarios; the exit status is non-zero if any outcome is wrong."""
    from .demo import run

    return run(list(scenarios))
