"""The Lambda deployables over the engine: the router, the sweep and the answer API. Needs the `host` extra.

Handlers: `agent_wait.host.router.handler` (an SQS FIFO event in, a partial batch response out),
`agent_wait.host.sweep.handler` (a scheduled event) and `agent_wait.host.api.handler` (an HTTP API event,
payload 2.0). Each reads its settings (`HostSettings`) from the environment on its first invocation. The rules
they apply are the engine's (`agent_wait.engine`); `build_router` and `build_sweep` build the same objects from
settings for a host of your own, from the same parts (`adapter_for`, `announcers_for`, `checkpoint_saver`).
"""

from agent_wait.errors import require_extra

# First, so a missing extra is named before anything else fails. The host needs no agent framework: LangGraph
# and its checkpoint saver (extra `langgraph-host`) are imported only when the deployed agent is a graph.
for _package in ("boto3", "aws_lambda_powertools"):
    require_extra("agent_wait.host", _package, "host")

from agent_wait.host._wiring import (  # noqa: E402
    adapter_for,
    announcers_for,
    build_router,
    build_sweep,
    checkpoint_saver,
)
from agent_wait.host.settings import HostSettings  # noqa: E402

__all__ = ("HostSettings", "adapter_for", "announcers_for", "build_router", "build_sweep", "checkpoint_saver")
