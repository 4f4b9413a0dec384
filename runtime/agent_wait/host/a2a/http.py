"""One JSON-RPC request of the answer API, served by the SDK's `JsonRpcDispatcher`: the protocol (JSON-RPC 2.0, the
v1.0 method names, `A2A-Version`, parameter parsing, error codes) is the SDK's, never ours.

API Gateway hands the Lambda an event, not a Starlette request: the event's body and headers become one, the
dispatcher answers it, and its status, headers and body go back as the route's response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

from agent_wait.engine.checks import Answerer
from agent_wait.host.a2a.card import RPC_PATH
from agent_wait.host.a2a.handler import ANSWERER_STATE, A2aService, HostedAgentHandler
from agent_wait.host.a2a.push import run_sync

__all__ = ("serve_jsonrpc",)


class _ProvenCaller(DefaultServerCallContextBuilder):
    """The SDK's call context, with the caller the JWT authorizer proved."""

    def __init__(self, caller: Answerer) -> None:
        self.caller = caller

    def build(self, request: Any) -> ServerCallContext:
        context = super().build(request)
        context.state[ANSWERER_STATE] = self.caller
        return context


def serve_jsonrpc(
    a2a: A2aService, caller: Answerer, *, body: bytes, headers: Mapping[str, str]
) -> tuple[int, dict[str, str], bytes]:
    """Answer one JSON-RPC request (`body`, with its `headers`) for `caller`: (status, headers, body)."""
    from starlette.requests import Request

    dispatcher = JsonRpcDispatcher(HostedAgentHandler(a2a), context_builder=_ProvenCaller(caller))
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": RPC_PATH,
        "raw_path": RPC_PATH.encode(),
        "query_string": b"",
        "headers": [(name.lower().encode("latin-1"), str(value).encode("latin-1")) for name, value in headers.items()],
        "client": None,
        "server": None,
    }
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:  # pragma: no cover - the dispatcher reads the body once
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    response = run_sync(dispatcher.handle_requests(Request(scope, receive)))
    out = {name: value for name, value in response.headers.items() if name.lower() != "content-length"}
    return response.status_code, out, bytes(response.body)
