"""`application/problem+json` responses (RFC 9457) carrying the same typed reasons the router uses."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response

from agent_wait.common.canonical_json import MAX_DEPTH
from agent_wait.errors import MessageError

__all__ = ("NOT_JSON", "PROBLEM_JSON", "json_body", "json_response", "message_problem", "problem")

NOT_JSON = object()
"""`json_body`'s answer for a body that is not JSON at all (the route says what it expected)."""

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


def message_problem(exc: MessageError, *, where: str = "", **extra: Any) -> Response:
    """A message rule's refusal, the same in every route: `422 bad_answer` for an answer no store can hold exactly (too
    big a number, NaN, too deep, too large, a control character: `agent_wait.contract.messages.parse_answer`), else
    `400` with the rule's own reason (a missing or wrongly typed field)."""
    status = 422 if exc.reason == "bad_answer" else 400
    return problem(status, exc.reason, f"{where}: {exc.message}" if where else exc.message, **extra)


def json_body(body: str | None) -> Any:
    """The request body as JSON, or `NOT_JSON`; a body nested too deeply to read is a `422 bad_answer` problem (only
    an answer nests: every other field is flat), as `parse_answer` refuses one too deep to store."""
    try:
        return json.loads(body or "")
    except RecursionError:
        detail = f"the answer is nested too deeply to read; an answer may nest at most {MAX_DEPTH} levels: flatten it"
        return problem(422, "bad_answer", detail)
    except ValueError:
        return NOT_JSON
