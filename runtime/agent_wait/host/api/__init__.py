"""The answer API Lambda: people list, read and answer questions over HTTPS (API Gateway HTTP API + JWT).

Handler: `agent_wait.host.api.handler`. Routes:

    GET  /questions                        ?status=open&tag=key:value&due_before=<RFC 3339>&limit=50&cursor=...
    GET  /questions/{question_id}          the question, its policy, its status, and once decided its outcome
    POST /questions/{question_id}/answer   {"answer": {...}, "valid_until": "..."}; header Idempotency-Key
    POST /questions/{question_id}/extend   {"by": "PT2H"} or {"until": "<RFC 3339>"}: a later deadline (`_extend`)
    POST /questions/{question_id}/cancel   {"reason": "..."}: on_cancel, else a cancellation; recorded cancelled
    POST /questions/answers                {"answers": [{"question_id", "answer", ...}]}: up to 25, each on its own
    GET  /agui/interrupts                  open questions as AG-UI interrupts, filtered as above or by ?thread_id=
    POST /agui/resume                      {"resume": [ResumeEntry...]} or a RunAgentInput; header Idempotency-Key
    GET  /inbox                            the approvals inbox page (and /inbox/{asset}, its files and sign-in)
    GET  /insights                         ?days=7|30&by=<tag key>: counts, time to answer, oldest open, answerers
    GET  /audit                            ?since=&until=&limit=&cursor=: the audit trail (AGENT_WAIT_AUDIT_GROUP only)
    GET  /grants, GET|DELETE /grants/{id}  standing grants: list, show, revoke (`_grants`); made by answering
    POST /slack/interactions               Slack's button clicks and modals, signed by Slack (no JWT)
    GET  /.well-known/agent-card.json      the hosted agent's A2A card (no JWT); POST /a2a: A2A v1.0 JSON-RPC (`_a2a`)
    GET|POST /passkeys..., POST /questions/{question_id}/passkey   register a passkey; confirm an answer (`_passkeys`)
    GET  /push/key, POST /push/subscriptions, DELETE /push/subscriptions/{device}: web push to the inbox (`_push`)
    POST /mcp, POST /mcp/iam               the MCP server (`ask_person` as a Task), JWT or IAM (`_mcp`)

An answer decides at once, through the one decision every door uses (`agent_wait.engine.AnswerService`, while it
holds the thread), and only then hands the resume to the router: the response is the real outcome (200; 202 for
a vote on a quorum question that still needs more, with the votes so far; or a problem+json 403, 404, 409 —
`already_decided`, `already_voted`, `cancelled`, `thread_failed`, `thread_busy` with `Retry-After`,
`not_parked` —, 410, 422 with the engine's reason). Refusals are logged and counted (`AnswersRefused` by
reason). Every request is also counted (`ApiRequests`; `ApiClientErrors` for a 4xx and `ApiServerErrors` for a 5xx,
by status code) and timed (`ApiLatencySeconds`); a request API Gateway's JWT authorizer refuses never reaches
this function, so its 401 is in API Gateway's own `4xx` metric only. Who answers comes from the JWT claims API
Gateway verified (`email`, else `cognito:username`, else `username`, else `sub`; groups from
`AGENT_WAIT_GROUPS_CLAIM`, default `cognito:groups` then `groups`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from agent_wait.engine import tracing
from agent_wait.engine.metrics import Metric
from agent_wait.host import _powertools
from agent_wait.host.api._a2a import a2a_routes
from agent_wait.host.api._agui import agui_routes
from agent_wait.host.api._context import ApiContext, SignIn, answerer_from_claims, groups_from_claims
from agent_wait.host.api._extend import extend_routes
from agent_wait.host.api._grant_suggestions import grant_suggestion_routes
from agent_wait.host.api._grants import grant_routes
from agent_wait.host.api._inbox import inbox_routes
from agent_wait.host.api._insights import insights_routes
from agent_wait.host.api._links import link_routes
from agent_wait.host.api._mcp import mcp_routes
from agent_wait.host.api._operators import operator_routes
from agent_wait.host.api._passkeys import passkey_routes
from agent_wait.host.api._problems import PROBLEM_JSON
from agent_wait.host.api._push import push_routes
from agent_wait.host.api._questions import question_routes, question_view
from agent_wait.host.api._slack import slack_routes
from agent_wait.host.settings import HostSettings

__all__ = (
    "REQUEST_LINE_FIELDS",
    "ApiContext",
    "SignIn",
    "answerer_from_claims",
    "create_app",
    "groups_from_claims",
    "handler",
    "question_view",
    "request_fields",
    "reset",
)

logger = _powertools.logger()
metrics = _powertools.metrics()
tracer = _powertools.tracer()


def create_app(context: Callable[[], ApiContext]) -> APIGatewayHttpResolver:
    """The API's routes over `context()`; the Lambda handler and the local server both serve this."""
    app = APIGatewayHttpResolver()
    app.use(middlewares=[_measured(context)])
    app.include_router(question_routes(context))
    app.include_router(operator_routes(context))
    app.include_router(agui_routes(context))
    app.include_router(link_routes(context))
    app.include_router(inbox_routes(context))
    app.include_router(insights_routes(context))
    app.include_router(slack_routes(context))
    app.include_router(extend_routes(context))
    app.include_router(grant_routes(context))
    app.include_router(grant_suggestion_routes(context))
    app.include_router(a2a_routes(context))
    app.include_router(passkey_routes(context))
    app.include_router(push_routes(context))
    app.include_router(mcp_routes(context))
    return app


def _measured(context: Callable[[], ApiContext]) -> Callable[..., Any]:
    """A middleware that counts every request by its status class and times it, in the service's metrics, and logs
    its one INFO line (`request handled`)."""

    def middleware(app: APIGatewayHttpResolver, next_middleware: Callable[[APIGatewayHttpResolver], Any]) -> Any:
        started = time.perf_counter()
        try:
            response = next_middleware(app)
        except Exception:
            _count_request(context, 500, time.perf_counter() - started)  # unhandled: API Gateway answers 500
            raise
        seconds = time.perf_counter() - started
        _count_request(context, int(response.status_code), seconds)
        logger.info("request handled", extra=request_fields(app.current_event, response, seconds))
        return response

    return middleware


REQUEST_LINE_FIELDS = ("method", "path", "status", "reason", "seconds")
"""The fields of the answer API's one INFO line per request; `reason` only on a problem response."""


def request_fields(event: Any, response: Any, seconds: float) -> dict[str, Any]:
    """The one INFO line's fields: the method and path (ids only: a link's token rides in the body or the fragment,
    never the path; the query string is left out, as a tag filter may hold a value), the status, a problem's reason
    (`already_decided`, `thread_busy`, ...), and the seconds the function took."""
    fields: dict[str, Any] = {
        "method": event.request_context.http.method,
        "path": event.raw_path,
        "status": int(response.status_code),
        "seconds": round(seconds, 3),
    }
    if response.content_type == PROBLEM_JSON and isinstance(response.body, str):
        with contextlib.suppress(ValueError):  # a problem body is ours, always JSON; never fail over its log line
            fields["reason"] = json.loads(response.body).get("reason")
    return fields


def _count_request(context: Callable[[], ApiContext], status: int, seconds: float) -> None:
    metrics = getattr(getattr(context(), "service", None), "metrics", None)
    if metrics is None:  # a context without an answer service (some tests'): nowhere to count
        return
    metrics.count(Metric.API_REQUESTS)
    if 400 <= status < 500:
        metrics.count(Metric.API_CLIENT_ERRORS, reason=str(status))
    elif status >= 500:
        metrics.count(Metric.API_SERVER_ERRORS, reason=str(status))
    metrics.seconds(Metric.API_LATENCY, seconds)


@functools.cache
def _context() -> ApiContext:
    settings = HostSettings.from_env("api")
    return ApiContext.from_settings(settings, metrics=_powertools.PowertoolsMetrics(metrics), log=logger)


@functools.cache
def _app() -> APIGatewayHttpResolver:
    return create_app(_context)


def reset() -> None:
    """Forget the cold-start state (settings, clients, routes): the next invocation builds them again."""
    _app.cache_clear()
    _context.cache_clear()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)  # responses hold question content
@metrics.log_metrics  # refusals counted as AnswersRefused by reason, as the router's are
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point for the HTTP API (payload format 2.0).

    Raises:
        ConfigurationError: on the cold-start call, when a setting is missing or wrong.
    """
    _context()
    with tracing.continued(event.get("headers")):  # a caller's `traceparent`: the door's spans continue its trace
        return _app().resolve(event, context)
