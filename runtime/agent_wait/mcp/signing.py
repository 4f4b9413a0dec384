"""SigV4 for a Python MCP client of `POST /mcp/iam`: an `httpx2.Auth` (the `mcp` SDK's HTTP client) that signs
each request for API Gateway's IAM authorizer (service `execute-api`) with boto3's credentials.

Example:
    http = httpx2.AsyncClient(auth=SigV4Auth(region="eu-west-1"))
    async with Client(streamable_http_client(f"{api_url}mcp/iam", http_client=http), extensions=[TasksClaim()]):
        ...
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from agent_wait.errors import require_extra

require_extra("agent_wait.mcp", "mcp", "mcp")

import httpx2  # noqa: E402

__all__ = ("SigV4Auth",)

_SIGNED = ("content-type", "mcp-protocol-version", "mcp-method", "mcp-name")
"""The request's own headers signed besides `host` and the `x-amz-*` ones botocore adds."""


class SigV4Auth(httpx2.Auth):
    """Sign every request with SigV4 for `execute-api`.

    Args:
        credentials: botocore credentials (`access_key`, `secret_key`, `token`); None: boto3's default chain.
        region: the API's region; None: boto3's default.
    """

    requires_request_body = True

    def __init__(self, credentials: Any = None, *, region: str | None = None) -> None:
        import boto3

        session = boto3.Session()
        self.credentials = credentials or session.get_credentials()
        self.region = region or session.region_name or "us-east-1"

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        from botocore.auth import SigV4Auth as BotocoreSigV4
        from botocore.awsrequest import AWSRequest

        headers = {name: request.headers[name] for name in _SIGNED if name in request.headers}
        signed = AWSRequest(method=request.method, url=str(request.url), data=request.content, headers=headers)
        BotocoreSigV4(self.credentials, "execute-api", self.region).add_auth(signed)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in signed.headers:
                request.headers[name] = signed.headers[name]
        yield request
