"""`application/problem+json` responses (RFC 9457) carrying the same typed reasons the router uses."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response

__all__ = ("PROBLEM_JSON", "json_response", "problem")

PROBLEM_JSON = "application/problem+json"
_TITLES = {
    400: "Bad request",
    401: "Not signed in",
    403: "Not allowed to answer",
    404: "No such question",
    409: "Already decided",
    410: "Expired",
    422: "Answer not allowed",
}


def problem(status: int, reason: str, detail: str, *, title: str | None = None, **extra: Any) -> Response:
    """A problem response: `type` names the reason (`urn:agent-wait:problem:<reason>`), as the router's outcomes do.

    `title` overrides the status's usual title (a 409 is "Already decided" unless said otherwise).
    """
    body = {
        "type": f"urn:agent-wait:problem:{reason}",
        "title": title or _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "reason": reason,
        **extra,
    }
    return Response(status_code=status, content_type=PROBLEM_JSON, body=json.dumps(body))


def json_response(status: int, body: Any) -> Response:
    return Response(status_code=status, content_type="application/json", body=json.dumps(body))
