"""A2A v1.0 on the answer API: the hosted agent's card, and its JSON-RPC endpoint for a person signed in.

    GET  /.well-known/agent-card.json   the agent card (public: it holds no question data)
    POST /a2a                           JSON-RPC 2.0: SendMessage, GetTask, CancelTask, the push config methods

Both answer 404 `a2a_off` until `AGENT_WAIT_AGENT_CARD` is set (`AgentWait(a2a=...)`). The caller of `/a2a` is the
person the JWT authorizer proved (`answerer_from_claims`), who answers a question by message as from the inbox. The
protocol is the SDK's (`agent_wait.host.a2a.http`), imported only when a request comes (the `a2a` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.schema import Settings
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in

__all__ = ("AGENT_CARD_PATH", "a2a_routes")

AGENT_CARD_PATH = "/.well-known/agent-card.json"
"""Where A2A clients look for an agent's card (the SDK's `AGENT_CARD_WELL_KNOWN_PATH`)."""


def _off() -> Response:
    return problem(
        404, "a2a_off", f"A2A is not turned on here: set {Settings.AGENT_CARD.value} (AgentWait(a2a=A2aProps(...)))"
    )


def a2a_routes(context: Callable[[], ApiContext]) -> Router:
    """The A2A routes; `context()` gives the A2A service (`ApiContext.a2a`), the answer service and the settings."""
    router = Router()

    @router.get(AGENT_CARD_PATH)
    def get_agent_card() -> Response:
        a2a = context().a2a
        if a2a is None:
            return _off()
        from a2a.server.request_handlers.response_helpers import agent_card_to_dict

        from agent_wait.host.a2a.card import agent_card

        domain = (router.current_event.get("requestContext") or {}).get("domainName") or "localhost"
        base = a2a.api_url or f"https://{domain}"
        card = agent_card_to_dict(agent_card(a2a.agent, base))
        return Response(200, "application/json", json.dumps(card), headers={"Cache-Control": "max-age=300"})

    @router.post("/a2a")
    def post_a2a() -> Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        ctx = context()
        if ctx.a2a is None:
            return _off()
        from agent_wait.host.a2a.http import serve_jsonrpc

        caller = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        event = router.current_event
        body = event.decoded_body or ""
        raw = body.encode("utf-8") if isinstance(body, str) else body
        status, headers, out = serve_jsonrpc(ctx.a2a, caller, body=raw, headers=dict(event.headers or {}))
        content_type = headers.pop("content-type", "application/json")
        return Response(status, content_type, out.decode("utf-8"), headers=headers)

    return router
