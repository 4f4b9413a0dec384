"""`/mcp`: agent-wait as an MCP server (`agent_wait.mcp`), for people (JWT) and for machines (IAM, SigV4).

    POST /mcp       behind the JWT authorizer: the caller is the token's person (`answerer_from_claims`)
    POST /mcp/iam   behind API Gateway's IAM authorizer: the caller is the signing principal, `iam:<arn>` (an
                    assumed role's session name dropped, so every session of one role is one caller)

Both serve the same stateless MCP server (streamable HTTP, protocol 2026-07-28, the `mcp` SDK); the caller is
recorded as who asked and bounds which tasks they can read or cancel. Off (404) unless the deployment names the
policies `ask_person` may ask under (`AGENT_WAIT_MCP_POLICIES`, `AgentWait(mcp=McpProps(...))`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in

__all__ = ("iam_caller_key", "mcp_routes")

_ASSUMED_ROLE = re.compile(r"^(arn:[^:]+:sts::\d+:assumed-role/[^/]+)/.+$")


def iam_caller_key(identity: Mapping[str, Any]) -> str | None:
    """The caller key of an IAM-signed request (`requestContext.authorizer.iam`): `iam:<userArn>`, an assumed role's
    ARN without its session name (`iam:arn:aws:sts::111122223333:assumed-role/agent`); None without an ARN."""
    arn = identity.get("userArn")
    if not isinstance(arn, str) or not arn.strip():
        return None
    found = _ASSUMED_ROLE.match(arn.strip())
    return "iam:" + (found.group(1) if found else arn.strip())


def mcp_routes(context: Callable[[], ApiContext]) -> Router:
    """The MCP routes; `context()` gives the MCP server's asker (`ApiContext.mcp`)."""
    router = Router()

    @router.post("/mcp")
    def mcp_for_people() -> Response:
        verified = jwt_claims(router.current_event)
        if verified is None:
            return not_signed_in()
        ctx = context()
        person = answerer_from_claims(verified, groups_claims=ctx.groups_claims, via="mcp")
        if person.answered_by is None:
            return problem(403, "no_person", "the token names nobody: it carries no verified email and no subject")
        return _served(ctx, person.answered_by, "jwt", person.groups, router.current_event.raw_event)

    @router.post("/mcp/iam")
    def mcp_for_machines() -> Response:
        event = router.current_event.raw_event
        authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
        key = iam_caller_key(authorizer.get("iam") or {})
        if key is None:
            return problem(403, "not_signed", "sign the request with SigV4 (service execute-api)")
        return _served(context(), key, "iam", (), event)

    return router


def _served(ctx: ApiContext, key: str, door: str, groups: tuple[str, ...], event: Mapping[str, Any]) -> Response:
    if ctx.mcp is None:
        return problem(404, "mcp_off", "this deployment serves no MCP server: configure AgentWait(mcp=McpProps(...))")
    from agent_wait.mcp.asking import Caller
    from agent_wait.mcp.http import serve_event

    reply = serve_event(ctx.mcp, Caller(key, door, groups), event)
    content_type = reply.headers.pop("content-type", None)
    return Response(reply.status, content_type, reply.body.decode("utf-8"), headers=reply.headers or None)
