"""The official Python `mcp` client against the local answer API's MCP server: ask, poll, cancel, as a person (JWT)
or a machine (SigV4). Each helper opens its own client (a second client of the same caller is a second call)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from agent_wait.mcp.signing import SigV4Auth
from agent_wait.mcp.tasks import (
    CancelTaskRequest,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskRequest,
    GetTaskResult,
    TaskIdParams,
    TasksClaim,
)

__all__ = ("Door", "ask", "cancel", "get", "tool_names")


class Door:
    """How a client reaches the MCP server: the URL and what it authenticates with."""

    def __init__(self, api_url: str, *, token: str | None = None, signer: Any = None) -> None:
        self.url = f"{api_url}/mcp/iam" if signer is not None else f"{api_url}/mcp"
        self.token = token
        self.signer = signer

    def client(self) -> Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        auth = SigV4Auth(self.signer, region="us-east-1") if self.signer is not None else None
        http = httpx2.AsyncClient(headers=headers, auth=auth, timeout=60)
        return Client(streamable_http_client(self.url, http_client=http), extensions=[TasksClaim()])


def ask(door: Door, arguments: dict[str, Any]) -> CreateTaskResult | CallToolResult:
    """`tools/call ask_person`: the task, or the tool's error result."""

    async def run() -> Any:
        async with door.client() as client:
            return await client.session.call_tool("ask_person", arguments, allow_claimed=True)

    return anyio.run(run)


def get(door: Door, task_id: str) -> GetTaskResult | MCPError:
    """`tasks/get`: the task, or the JSON-RPC error."""

    async def run() -> Any:
        async with door.client() as client:
            try:
                request = GetTaskRequest(params=TaskIdParams(task_id=task_id))
                return await client.session.send_request(request, GetTaskResult)
            except MCPError as exc:
                return exc

    return anyio.run(run)


def cancel(door: Door, task_id: str) -> MCPError | None:
    """`tasks/cancel`: None (acknowledged), or the JSON-RPC error."""

    async def run() -> Any:
        async with door.client() as client:
            try:
                request = CancelTaskRequest(params=TaskIdParams(task_id=task_id))
                await client.session.send_request(request, CancelTaskResult)
            except MCPError as exc:
                return exc
            return None

    return anyio.run(run)


def tool_names(door: Door) -> list[str]:
    async def run() -> Any:
        async with door.client() as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(run)
