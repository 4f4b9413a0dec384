"""What the inbox's "Approve and allow…" form reads before anyone grants (`agent_wait.engine.grant_suggestions`):

    GET  /grants/suggestions?question_id=Q   the policy's offers this question's call satisfies, and a suggested
                                             grant when people approved exactly this call `SUGGEST_AFTER` times
                                             within `WINDOW` (the approvals listed); `suggestion` null otherwise
    POST /grants/dry-run                     {"question_id": Q, "grant": {scope, ttl, uses, pins}}: which past
                                             decided questions of the function that grant would have decided

Both only read. The dry run checks the grant exactly as an approval would (`agent_wait.engine.granting.grant_for`, as
the signed-in person): a grant the answer would refuse is a 422 `grant_refused` with the same reason (and its
`code`), so the form can say why before anyone presses Approve. Each reads at most `MAX_ROWS` (1,000) decided rows
through the status index (`read.capped` says when some were left unread); a question whose policy allows no grants
reads none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.bound_call import APPROVE, wait_call
from agent_wait.contract.messages import MAX_ID_LENGTH
from agent_wait.engine.grant_suggestions import (
    MAX_ROWS,
    SUGGEST_AFTER,
    WINDOW,
    DecidedRows,
    dry_run,
    read_decided,
    row_summary,
    suggestion_for,
    window_start,
)
from agent_wait.engine.granting import grant_for, grant_offers
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.errors import GrantError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import NOT_JSON, json_body, json_response, problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in
from agent_wait.ledger import QuestionRecord
from agent_wait.policy.grants import GrantRequest

__all__ = ("MAX_LISTED", "grant_suggestion_routes")

MAX_LISTED = 50
"""The most past questions one answer lists in each list (the counts cover them all)."""


def grant_suggestion_routes(context: Callable[[], ApiContext]) -> Router:
    """`GET /grants/suggestions` and `POST /grants/dry-run`; `context()` gives the ledger and the clock."""
    router = Router()

    def question(question_id: Any) -> QuestionRecord | Response:
        if not isinstance(question_id, str) or not 0 < len(question_id) <= MAX_ID_LENGTH:
            return problem(
                400, "bad_question_id", f"question_id must be a question's id of 1 to {MAX_ID_LENGTH} characters"
            )
        record = context().ledger.find(question_id)
        if record is None:
            return problem(404, RefusalReason.UNKNOWN_QUESTION.value, f"no question {question_id}")
        return record

    @router.get("/grants/suggestions")
    def suggestions() -> Response:
        if jwt_claims(router.current_event) is None:
            return not_signed_in()
        params = router.current_event.query_string_parameters or {}
        record = question(params.get("question_id"))
        if isinstance(record, Response):
            return record
        ctx = context()
        now = ctx.clock()
        offers = [
            {"index": index, "label": offer.label, "grant": offer.request.to_dict()}
            for index, offer in grant_offers(record.envelope)
        ]
        rows = _rows_for(ctx, record)
        suggestion = suggestion_for(record, rows.records, now=now)
        body: dict[str, Any] = {
            "question_id": record.question_id,
            "offers": offers,
            "suggestion": None,
            "window": _window(now),
            "read": _read(rows),
        }
        if suggestion is not None:
            body["suggestion"] = {
                "function": suggestion.function,
                "count": len(suggestion.approvals),
                "threshold": SUGGEST_AFTER,
                "approvals": [row_summary(row) for row in suggestion.approvals[:MAX_LISTED]],
            }
        return json_response(200, body)

    @router.post("/grants/dry-run")
    def dry_run_grant() -> Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        data = json_body(router.current_event.body)
        if isinstance(data, Response):
            return data
        if data is NOT_JSON or not isinstance(data, dict) or set(data) != {"question_id", "grant"}:
            return problem(
                400, "bad_dry_run", 'the body must be {"question_id": "...", "grant": {scope, ttl, uses, pins}}'
            )
        record = question(data["question_id"])
        if isinstance(record, Response):
            return record
        ctx = context()
        now = ctx.clock()
        person = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        try:
            terms = grant_for(record, GrantRequest.parse(data["grant"]), {"action": APPROVE}, person, now=now).terms
        except GrantError as exc:
            detail = f"the grant would be refused ({exc.code}): {exc}"
            return problem(422, RefusalReason.GRANT_REFUSED.value, detail, code=exc.code)
        rows = _rows_for(ctx, record)
        found = dry_run(terms, record, rows.records, now=now)
        return json_response(
            200,
            {
                "question_id": record.question_id,
                "terms": terms.to_dict(),
                "covered_count": len(found.covered),
                "not_covered_count": len(found.not_covered),
                "covered": [row_summary(row) for row in found.covered[:MAX_LISTED]],
                "not_covered": [row_summary(row) for row in found.not_covered[:MAX_LISTED]],
                "window": _window(now),
                "read": _read(rows),
            },
        )

    return router


def _rows_for(ctx: ApiContext, record: QuestionRecord) -> DecidedRows:
    """The decided rows to look through: none for a question no grant can cover (no read at all)."""
    rules = record.envelope.rules
    if not isinstance(rules, Mapping) or rules.get("grants") is None:
        return DecidedRows([], capped=False)
    if wait_call(record.envelope.question, record.envelope.source) is None:
        return DecidedRows([], capped=False)
    return read_decided(ctx.ledger, record)


def _window(now: Any) -> dict[str, Any]:
    return {"since": window_start(now), "days": WINDOW.days}


def _read(rows: DecidedRows) -> dict[str, Any]:
    return {"rows": len(rows.records), "max_rows": MAX_ROWS, "capped": rows.capped}
