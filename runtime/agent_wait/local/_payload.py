"""API Gateway's payload format 2.0 for HTTP APIs: the event it sends a Lambda for one request, and the response
it makes of what the Lambda returns.

The event has `version`, `routeKey`, `rawPath`, `rawQueryString`, lower-cased `headers`, `cookies`,
`queryStringParameters`, `pathParameters`, `requestContext` (with the authorizer's claims), `body` and
`isBase64Encoded`; a response is its status, headers, cookies and body, base64-decoded when flagged.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ("lambda_response", "request_event")

_TEXT_TYPES = re.compile(r"text/.*|application/(json|.*\+json|javascript|xml|.*\+xml)", re.IGNORECASE)
"""Content types API Gateway passes as text; any other body (a form post too) arrives base64-encoded."""


def request_event(
    route: str,
    *,
    method: str,
    path: str,
    query: str,
    parameters: Mapping[str, str],
    body: bytes,
    claims: Mapping[str, str] | None,
    request_headers: Iterable[tuple[str, str]],
    iam: Mapping[str, Any] | None = None,
    client_ip: str,
    protocol: str,
    port: int,
) -> dict[str, Any]:
    """The payload-2.0 event API Gateway would send for this request (`port`: the server's, for its domain name)."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request_headers:
        key = name.lower()
        if key == "cookie":
            cookies += [part.strip() for part in value.split(";") if part.strip()]
        else:
            headers[key] = f"{headers[key]},{value}" if key in headers else value
    headers.setdefault("x-forwarded-for", client_ip)
    headers.setdefault("x-forwarded-proto", "http")
    headers.setdefault("x-forwarded-port", str(port))
    now = datetime.now(UTC)
    request_context: dict[str, Any] = {
        "accountId": "123456789012",
        "apiId": "local",
        "domainName": headers.get("host", f"127.0.0.1:{port}"),
        "domainPrefix": "local",
        "http": {
            "method": method,
            "path": path,
            "protocol": protocol,
            "sourceIp": client_ip,
            "userAgent": headers.get("user-agent", ""),
        },
        "requestId": uuid.uuid4().hex,
        "routeKey": route,
        "stage": "$default",
        "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
        "timeEpoch": int(now.timestamp() * 1000),
    }
    if claims is not None:
        request_context["authorizer"] = {"jwt": {"claims": dict(claims), "scopes": None}}
    if iam is not None:  # what API Gateway's IAM authorizer hands the function (`HttpIamAuthorizer`)
        request_context["authorizer"] = {"iam": dict(iam)}
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route,
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": request_context,
        "isBase64Encoded": False,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        grouped: dict[str, str] = {}
        for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
            grouped[key] = f"{grouped[key]},{value}" if key in grouped else value
        event["queryStringParameters"] = grouped
    if parameters:
        event["pathParameters"] = dict(parameters)
    if body:
        if _TEXT_TYPES.fullmatch((headers.get("content-type") or "").split(";")[0].strip()):
            event["body"] = body.decode("utf-8", errors="replace")
        else:
            event["body"] = base64.b64encode(body).decode("ascii")
            event["isBase64Encoded"] = True
    return event


def lambda_response(response: Any) -> tuple[int, bytes, dict[str, str], list[str]]:
    """The status, body, headers and cookies API Gateway makes of a payload-2.0 response."""
    if not isinstance(response, Mapping) or "statusCode" not in response:
        # Payload 2.0: anything else is taken as a JSON body with status 200.
        payload = response if isinstance(response, str) else json.dumps(response)
        return 200, payload.encode("utf-8"), {"Content-Type": "application/json"}, []
    status = int(response["statusCode"])
    text = response.get("body") or ""
    data = base64.b64decode(text) if response.get("isBase64Encoded") else str(text).encode("utf-8")
    headers = {str(k): str(v) for k, v in (response.get("headers") or {}).items() if v is not None}
    for name, values in (response.get("multiValueHeaders") or {}).items():
        headers[str(name)] = ", ".join(str(v) for v in values)
    if not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = "application/json"
    return status, data, headers, [str(c) for c in response.get("cookies") or []]
