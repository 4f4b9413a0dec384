"""Standing grants over HTTPS, for a person signed in with a JWT (`agent_wait.engine.grant_book` says who sees which):

    GET    /grants              ?all=1 (revoked, expired and used-up ones too) &limit=100: {"grants": [...]}
    GET    /grants/{grant_id}   one grant (`grant_view`)
    DELETE /grants/{grant_id}   revoke it, for every ask after this; the grant as kept after (200, a second revoke too)

A grant the person may not see is a 404 like one that does not exist. Grants are made by answering: an approval's
`grant` field (`POST /questions/{id}/answer`, `agent_wait.engine.granting`).
"""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.engine.checks import Answerer
from agent_wait.engine.grant_book import GrantBook, grant_view
from agent_wait.errors import GrantError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import json_response, problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in
from agent_wait.ledger import Grant, GrantLedger

__all__ = ("MAX_GRANTS_PAGE", "grant_routes")

MAX_GRANTS_PAGE = 500
"""The most grants one `GET /grants` returns; grants are few (each lives at most 30 days)."""


def grant_routes(context: Callable[[], ApiContext]) -> Router:
    """The `/grants` routes; `context()` gives the ledger, the audit group and the clock."""
    router = Router()

    def book() -> GrantBook | Response:
        ctx = context()
        if not isinstance(ctx.ledger, GrantLedger):
            return problem(404, "grants_off", "this deployment's ledger keeps no standing grants")
        return GrantBook(ctx.ledger, audit_group=ctx.audit_group, clock=ctx.clock)

    def signed_in() -> tuple[GrantBook, ApiContext, Answerer] | Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        found = book()
        if isinstance(found, Response):
            return found
        ctx = context()
        return found, ctx, answerer_from_claims(claims, groups_claims=ctx.groups_claims)

    @router.get("/grants")
    def list_grants() -> Response:
        ready = signed_in()
        if isinstance(ready, Response):
            return ready
        grants, ctx, person = ready
        params = router.current_event.query_string_parameters or {}
        limit_text = params.get("limit", "100")
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_GRANTS_PAGE:
            return problem(400, "bad_limit", f"limit must be a whole number from 1 to {MAX_GRANTS_PAGE}")
        live_only = params.get("all") not in ("1", "true")
        found = grants.list(person, live_only=live_only, limit=int(limit_text))
        now = ctx.clock()
        return json_response(200, {"grants": [grant_view(grant, now=now) for grant in found]})

    def one_grant(grant_id: str, act: Callable[[GrantBook, str, Answerer], Grant]) -> Response:
        """`act` (show or revoke) on one grant for the person signed in: the grant as kept, or 404 `unknown_grant`."""
        ready = signed_in()
        if isinstance(ready, Response):
            return ready
        grants, ctx, person = ready
        try:
            grant = act(grants, grant_id, person)
        except GrantError as exc:
            return problem(404, exc.code, str(exc))
        return json_response(200, grant_view(grant, now=ctx.clock()))

    @router.get("/grants/<grant_id>")
    def show_grant(grant_id: str) -> Response:
        return one_grant(grant_id, GrantBook.show)

    @router.delete("/grants/<grant_id>")
    def revoke_grant(grant_id: str) -> Response:
        return one_grant(grant_id, GrantBook.revoke)

    return router
