"""`GET /insights` (what the inbox's insights view draws) and `GET /audit` (the audit trail, a bounded page at a
time), for a person signed in with a JWT; `/audit` only for members of `AGENT_WAIT_AUDIT_GROUP`.

    GET /insights   ?days=7|30&by=<tag key>     counts, time to answer p50/p90 (overall and by the tag's value),
                                                the longest-open questions, who answers most
    GET /audit      ?since=&until=&limit=&cursor=   every question asked or decided in [since, until): who asked,
                                                what, every vote and the decision (who, door, when, arguments),
                                                and what the agent did after
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.schema import Settings
from agent_wait.engine.audit import MAX_AUDIT_PAGE, audit_page, audit_window
from agent_wait.engine.insights import INSIGHT_DAYS, Insights, read_insights
from agent_wait.errors import ArgumentError, LedgerCursorError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import json_response, problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in, question_view

__all__ = ("AUDIT_PAGE", "insights_body", "insights_routes")

AUDIT_PAGE = 100
"""The rows one `GET /audit` reads by default (`limit`, at most `MAX_AUDIT_PAGE`)."""


def insights_body(found: Insights, *, now: datetime | None = None) -> dict[str, Any]:
    """The JSON `GET /insights` answers with (`now`: for the open questions' views, see `question_view`)."""
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
        "read": {"rows": found.rows_read, "per_status": found.per_status, "capped": found.capped},
    }


def insights_routes(context: Callable[[], ApiContext]) -> Router:
    """The `/insights` and `/audit` routes; `context()` gives the ledger, the clock and the audit group."""
    router = Router()

    @router.get("/insights")
    def insights() -> Response:
        if jwt_claims(router.current_event) is None:
            return not_signed_in()
        params = router.current_event.query_string_parameters or {}
        days_text = params.get("days", "7")
        if days_text not in {str(days) for days in INSIGHT_DAYS}:
            return problem(400, "bad_days", f"days must be one of {list(INSIGHT_DAYS)}; got {days_text!r}")
        ctx = context()
        now = ctx.clock()
        found = read_insights(ctx.ledger, now=now, days=int(days_text), group_by=params.get("by") or None)
        return json_response(200, insights_body(found, now=now))

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
        try:
            window = audit_window(params.get("since"), params.get("until"), now=ctx.clock())
            page = audit_page(ctx.ledger, window, limit=int(limit_text), cursor=params.get("cursor"))
        except ArgumentError as exc:
            return problem(400, f"bad_{exc.argument or 'window'}", exc.message)
        except LedgerCursorError as exc:
            return problem(400, "bad_cursor", exc.message)
        body = {"since": window.since, "until": window.until, "questions": page.rows, "next": page.cursor}
        return json_response(200, body)

    return router
