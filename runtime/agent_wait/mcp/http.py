"""One MCP request per Lambda invocation: an API Gateway (payload 2.0) event through the `mcp` SDK's streamable HTTP
entry, stateless and in JSON mode, and its response back as the Lambda's.

The SDK's `StreamableHTTPSessionManager(stateless=True, json_response=True)` serves the request as an ASGI call:
a 2026-07-28 request (its `MCP-Protocol-Version` header) is one self-contained POST with no session, which is what
a Lambda behind API Gateway can serve. Nothing is kept between requests: a task's state is its question's row.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.errors import require_extra

require_extra("agent_wait.mcp", "mcp", "mcp")

import anyio  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: E402

from agent_wait.mcp.asking import Caller, PersonAsker  # noqa: E402
from agent_wait.mcp.server import build_server  # noqa: E402

__all__ = ("HttpReply", "serve_event")


@dataclass(frozen=True, slots=True)
class HttpReply:
    """What the SDK answered: status, headers and body."""

    status: int
    headers: dict[str, str]
    body: bytes


def serve_event(asker: PersonAsker, caller: Caller, event: Mapping[str, Any]) -> HttpReply:
    """Serve the MCP request in `event` (payload 2.0) for `caller` with the SDK; its HTTP reply."""
    return anyio.run(_serve, asker, caller, event)


async def _serve(asker: PersonAsker, caller: Caller, event: Mapping[str, Any]) -> HttpReply:
    body = _body(event)
    sent: dict[str, Any] = {"status": 500, "headers": {}, "body": b""}
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()  # JSON mode never waits for a disconnect; cancelled when the reply is sent
        return {"type": "http.disconnect"}  # pragma: no cover

    async def send(message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent["status"] = int(message["status"])
            sent["headers"] = {k.decode("latin-1"): v.decode("latin-1") for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")

    manager = StreamableHTTPSessionManager(app=build_server(asker, caller), json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(_scope(event), receive, send)
    return HttpReply(sent["status"], sent["headers"], sent["body"])


def _body(event: Mapping[str, Any]) -> bytes:
    raw = event.get("body") or ""
    return base64.b64decode(raw) if event.get("isBase64Encoded") else str(raw).encode("utf-8")


def _scope(event: Mapping[str, Any]) -> dict[str, Any]:
    """The ASGI scope of the request API Gateway received (its method, path, headers)."""
    context = event.get("requestContext") or {}
    http = context.get("http") or {}
    sent = (event.get("headers") or {}).items()
    headers = [(str(name).lower().encode("latin-1"), str(value).encode("latin-1")) for name, value in sent]
    path = str(event.get("rawPath") or http.get("path") or "/mcp")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": str(http.get("method") or "POST"),
        "scheme": "https",
        "path": path,
        "raw_path": path.encode("utf-8"),
        "query_string": str(event.get("rawQueryString") or "").encode("latin-1"),
        "root_path": "",
        "headers": headers,
        "client": (str(http.get("sourceIp") or "127.0.0.1"), 0),
        "server": (str(context.get("domainName") or "localhost"), 443),
    }
