"""`GET /insights` (what the inbox's insights view draws) and `GET /audit` (the audit trail, a bounded page at a
time), for a person signed in with a JWT; `/audit` only for members of `AGENT_WAIT_AUDIT_GROUP`.

    GET /insights   ?days=7|30&by=<tag key>     counts, time to answer p50/p90 (overall and by the tag's value),
                                                the longest-open questions, who answers most, the share decided
                                                by standing grants and by which (those the person may see)
    GET /audit      ?since=&until=&limit=&cursor=   every question asked or decided in [since, until): who asked,
                                                what, every vote and the decision (who, door, when, arguments,
                                                the grant that made it), and what the agent did after; the first
                                                page (no cursor) also lists the standing grants in force in the
                                                window, each with the questions it decided
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.schema import Settings
from agent_wait.engine.audit import MAX_AUDIT_PAGE, audit_grants, audit_page, audit_window
from agent_wait.engine.checks import Answerer
from agent_wait.engine.grant_book import GrantBook
from agent_wait.engine.insights import INSIGHT_DAYS, GrantShare, Insights, read_insights
from agent_wait.errors import ArgumentError, LedgerCursorError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import json_response, problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in, question_view
from agent_wait.ledger import GrantLedger

__all__ = ("AUDIT_PAGE", "insights_body", "insights_routes")

AUDIT_PAGE = 100
"""The rows one `GET /audit` reads by default (`limit`, at most `MAX_AUDIT_PAGE`)."""


def insights_body(
    found: Insights, *, now: datetime | None = None, shown: Callable[[GrantShare], bool] = lambda _share: True
) -> dict[str, Any]:
    """The JSON `GET /insights` answers with (`now`: for the open questions' views, see `question_view`; `shown`:
    whether the person may see a grant; the decisions of one they may not are counted, not described)."""
    return {
        "days": found.days,
        "since": found.since,
        "until": found.until,
        "asked": found.asked,
        "outcomes": found.outcomes,
        "open_now": found.open_now,
        "failed_now": found.failed_now,
        "daily": found.daily,
        "time_to_answer": {
            "count": len(found.answer_seconds),
            "p50_seconds": found.p50_seconds,
            "p90_seconds": found.p90_seconds,
        },
        "group_by": found.group_by,
        "tag_keys": found.tag_keys,
        "groups": [
            {"group": g.group, "count": g.count, "p50_seconds": g.p50_seconds, "p90_seconds": g.p90_seconds}
            for g in found.groups
        ],
        "slowest_open": [question_view(record, now=now) for record in found.slowest_open],
        "answerers": [{"who": who, "decisions": d, "votes": v} for who, d, v in found.answerers],
        "grants": _grants_body(found, shown),
        "read": {"rows": found.rows_read, "per_status": found.per_status, "capped": found.capped},
    }


def _grants_body(found: Insights, shown: Callable[[GrantShare], bool]) -> dict[str, Any]:
    """The share of the window's decisions that standing grants made, and each grant the person may see: what it
    covers in words, who granted it, how many it decided."""
    visible = [share for share in found.by_grant if shown(share)]
    return {
        "decided": found.granted,
        "of": found.decided,
        "share": found.granted_share,
        "by_grant": [_share_view(share) for share in visible],
        "not_shown": found.granted - sum(share.decided for share in visible),
    }


def _share_view(share: GrantShare) -> dict[str, Any]:
    grant = share.grant
    terms = grant.terms if grant else None
    return {
        "grant_id": share.grant_id,
        "function": share.function,
        "granted_by": share.granted_by,
        "decided": share.decided,
        "pins": {name: pin.to_dict() for name, pin in terms.pins.items()} if terms else None,
        "pins_text": ", ".join(pin.describe(name) for name, pin in terms.pins.items()) if terms else None,
        "scope": terms.scope if terms else None,
        "revoked": grant.revoked_at is not None if grant else None,
    }


def _may_see(ctx: ApiContext, person: Answerer) -> Callable[[GrantShare], bool]:
    """Whether `person` may see a grant share's grant, as `GrantBook` says; one no longer kept only its granter and
    the audit group see."""
    book = (
        GrantBook(ctx.ledger, audit_group=ctx.audit_group, clock=ctx.clock)
        if isinstance(ctx.ledger, GrantLedger)
        else None
    )
    auditor = ctx.audit_group is not None and ctx.audit_group in person.groups

    def shown(share: GrantShare) -> bool:
        if share.grant is not None and book is not None:
            return book.may_see(share.grant, person)
        return auditor or (share.granted_by is not None and person.is_named([share.granted_by]))

    return shown


def insights_routes(context: Callable[[], ApiContext]) -> Router:
    """The `/insights` and `/audit` routes; `context()` gives the ledger, the clock and the audit group."""
    router = Router()

    @router.get("/insights")
    def insights() -> Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        params = router.current_event.query_string_parameters or {}
        days_text = params.get("days", "7")
        if days_text not in {str(days) for days in INSIGHT_DAYS}:
            return problem(400, "bad_days", f"days must be one of {list(INSIGHT_DAYS)}; got {days_text!r}")
        ctx = context()
        now = ctx.clock()
        found = read_insights(ctx.ledger, now=now, days=int(days_text), group_by=params.get("by") or None)
        person = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        return json_response(200, insights_body(found, now=now, shown=_may_see(ctx, person)))

    @router.get("/audit")
    def audit() -> Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        ctx = context()
        if not ctx.audit_group:
            detail = f"the audit trail is off on this API: its construct names no audit group ({Settings.AUDIT_GROUP})"
            return problem(403, "audit_not_enabled", detail, title="Audit trail not enabled")
        person = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        if ctx.audit_group not in person.groups:
            detail = f"only members of the group {ctx.audit_group!r} may read the audit trail"
            return problem(403, "not_an_auditor", detail, title="Not allowed to read the audit trail")
        params = router.current_event.query_string_parameters or {}
        limit_text = params.get("limit", str(AUDIT_PAGE))
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_AUDIT_PAGE:
            return problem(400, "bad_limit", f"limit must be a whole number from 1 to {MAX_AUDIT_PAGE}")
        cursor, now = params.get("cursor"), ctx.clock()
        try:
            window = audit_window(params.get("since"), params.get("until"), now=now)
            page = audit_page(ctx.ledger, window, limit=int(limit_text), cursor=cursor)
        except ArgumentError as exc:
            return problem(400, f"bad_{exc.argument or 'window'}", exc.message)
        except LedgerCursorError as exc:
            return problem(400, "bad_cursor", exc.message)
        # The grants ride on the first page only (one query of the grants), so a client paging through reads them once.
        grants = audit_grants(ctx.ledger, window, now=now) if not cursor else None
        body = {
            "since": window.since,
            "until": window.until,
            "questions": page.rows,
            "next": page.cursor,
            "grants": grants.grants if grants else [],
            "grants_capped": grants.capped if grants else False,
        }
        return json_response(200, body)

    return router
