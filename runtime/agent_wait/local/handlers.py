"""The deployed functions' handlers, by the names the constructs give them, and the slice of a Lambda context they
read: what the emulated stack (`stack.py`) and the emulated schedules (`schedules.py`) both invoke."""

from __future__ import annotations

import uuid

__all__ = ("API_HANDLER", "HANDLERS", "ROUTER_HANDLER", "SWEEP_HANDLER", "LambdaContext")

ROUTER_HANDLER = "agent_wait.host.router.handler"
SWEEP_HANDLER = "agent_wait.host.sweep.handler"
API_HANDLER = "agent_wait.host.api.handler"
HANDLERS = (ROUTER_HANDLER, SWEEP_HANDLER, API_HANDLER)
"""Every function the emulator runs."""


class LambdaContext:
    """The slice of a Lambda context the Powertools decorators read."""

    def __init__(self, handler: str) -> None:
        self.function_name = handler.rsplit(".", 2)[-2]
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "local"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 300_000
