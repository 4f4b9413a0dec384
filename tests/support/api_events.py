"""API Gateway HTTP API (payload 2.0) events for the answer API's routes, and its responses read back.

Shared by the route tests, which call `create_app(...).resolve(event, {})` as the Lambda handler does.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

SENT_AT = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
"""When every event says it was received (`requestContext.timeEpoch`)."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


def http_event(
    method: str,
    path: str,
    body: Any = None,
    *,
    query: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    claims: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An HTTP API event as a browser's request makes it.

    Args:
        method: the HTTP method.
        path: the request path.
        body: sent as JSON unless it is a string already (then as it is).
        query: the query string's parameters.
        headers: more headers, lower-cased as API Gateway passes them.
        claims: the JWT claims API Gateway's authorizer verified; None: a route with no authorizer.
    """
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": urllib.parse.urlencode(query or {}),
        "headers": {
            "accept": "*/*",
            "content-type": "application/json",
            "host": "abc123.execute-api.us-east-1.amazonaws.com",
            "user-agent": "Mozilla/5.0",
            **{name.lower(): value for name, value in (headers or {}).items()},
        },
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "domainName": "abc123.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": "abc123",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "Mozilla/5.0",
            },
            "requestId": "JKJaXmPLvHcESHA=",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jan/2030:09:00:00 +0000",
            "timeEpoch": int(SENT_AT.timestamp() * 1000),
        },
        "body": json.dumps(body) if body is not None and not isinstance(body, str) else body,
        "isBase64Encoded": False,
    }
    if query:
        event["queryStringParameters"] = dict(query)
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": dict(claims), "scopes": None}}
    return event


def call(app: APIGatewayHttpResolver, method: str, path: str, body: Any = None, **event: Any) -> Response:
    """Resolve one request through `app` (`event` as for `http_event`); the response with lower-cased headers."""
    raw = app.resolve(http_event(method, path, body, **event), {})
    headers = {k.lower(): v for k, v in (raw.get("headers") or {}).items()}
    return Response(raw["statusCode"], headers, raw.get("body") or "")
