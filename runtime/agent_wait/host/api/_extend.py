"""`POST /questions/{question_id}/extend`: move an open question's deadline later, for someone its policy allows.

Body: `{"by": "PT2H"}` (an ISO 8601 duration, or seconds) or `{"until": "2026-09-14T09:00:00Z"}` (RFC 3339), one of
the two. The move goes through `agent_wait.engine.extend.ExtendService`, the one way every door extends. Answers:
200 with the question (its new `policy.expires_at`); a problem+json 400 (`not_json`, `bad_extend`, `bad_duration`,
`bad_time`), 401, 403 `extend_not_allowed`, 404, 409 (`already_decided`, `deadline_passed`, `changed`) or 422
(`not_later`, `beyond_maximum`: past the policy's `max_total`, a `by` longer than `MAX_DURATION` that no policy allows,
or an `until` past the last time a deadline holds).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.common.durations import (
    ACCEPTED_FORMS,
    MAX_DURATION,
    DurationSyntaxError,
    DurationTooLongError,
    format_duration,
    parse_duration,
)
from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.engine.extend import ExtendRefusal, ExtendService
from agent_wait.errors import ArgumentError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import json_response, problem
from agent_wait.host.api._questions import question_view, signed_in_question

__all__ = ("STATUS_FOR_REFUSAL", "extend_routes")

STATUS_FOR_REFUSAL = {
    ExtendRefusal.UNKNOWN_QUESTION: 404,
    ExtendRefusal.NOT_ALLOWED: 403,
    ExtendRefusal.ALREADY_DECIDED: 409,
    ExtendRefusal.DEADLINE_PASSED: 409,
    ExtendRefusal.CHANGED: 409,
    ExtendRefusal.NOT_LATER: 422,
    ExtendRefusal.BEYOND_MAXIMUM: 422,
}
"""The HTTP status of each refusal."""
_TITLES = {
    ExtendRefusal.UNKNOWN_QUESTION: "No such question",
    ExtendRefusal.NOT_ALLOWED: "Not allowed to extend",
    ExtendRefusal.ALREADY_DECIDED: "Already decided",
    ExtendRefusal.DEADLINE_PASSED: "Deadline passed",
    ExtendRefusal.CHANGED: "Changed meanwhile",
    ExtendRefusal.NOT_LATER: "Not later",
    ExtendRefusal.BEYOND_MAXIMUM: "Beyond the policy's maximum",
}
_EXAMPLE = '{"by": "PT2H"} or {"until": "2026-09-14T09:00:00Z"}'


def extend_routes(context: Callable[[], ApiContext]) -> Router:
    """The extend route; `context()` gives the ledger, the clock and the extend service."""
    router = Router()

    @router.post("/questions/<question_id>/extend")
    def extend_question(question_id: str) -> Response:
        signed_in = signed_in_question(router.current_event, question_id)
        if isinstance(signed_in, Response):
            return signed_in
        question_id, claims = signed_in
        asked = _body(router.current_event.body)
        if isinstance(asked, Response):
            return asked
        ctx = context()
        who = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        service = ctx.extend or ExtendService(ctx.ledger, clock=ctx.clock, metrics=_metrics(ctx))
        result = service.extend(question_id, who, **asked)
        view = question_view(result.record, now=ctx.clock(), viewer=who) if result.record is not None else None
        if result.refusal is None:
            return json_response(200, {"result": "extended", "announced": result.announced, **(view or {})})
        status = STATUS_FOR_REFUSAL[result.refusal]
        return problem(status, result.refusal.value, result.detail, title=_TITLES[result.refusal], question=view)

    return router


def _metrics(ctx: ApiContext) -> Any:
    return getattr(ctx.service, "metrics", None)


def _body(body: str | None) -> dict[str, Any] | Response:
    """`{"by": timedelta}` or `{"until": datetime}` from the request body, or a 400 problem naming what is wrong."""
    try:
        data = json.loads(body or "")
    except (json.JSONDecodeError, RecursionError):
        return problem(400, "not_json", f"the body must be JSON: {_EXAMPLE}")
    if not isinstance(data, dict) or len(data) != 1 or not set(data) <= {"by", "until"}:
        return problem(400, "bad_extend", f"the body must hold exactly one of by or until: {_EXAMPLE}")
    if "by" in data:
        return _by(data["by"])
    try:
        until: datetime = parse_rfc3339(data["until"])
    except OverflowError:  # well-formed, but its offset takes it past the first or the last datetime in UTC
        return _beyond_any_time(data["until"])
    except (ValueError, ArgumentError):
        return problem(400, "bad_time", "until must be an RFC 3339 time with its offset, e.g. 2026-09-14T09:00:00Z")
    return {"until": until}


def _by(value: Any) -> dict[str, Any] | Response:
    """`{"by": timedelta}`, a 400 for what is not a duration, or a 422 for one longer than any policy allows."""
    try:
        by: timedelta = parse_duration(value)
    except DurationTooLongError:
        return _too_long(value)
    except DurationSyntaxError as exc:
        return problem(400, "bad_duration", f"by must be {ACCEPTED_FORMS}; {exc}")
    # No policy lets a deadline move further (`Extension(max_total=...)`); refused here, before any date arithmetic.
    return _too_long(value) if by > MAX_DURATION else {"by": by}


def _too_long(value: Any) -> Response:
    detail = (
        f"by may be at most {format_duration(MAX_DURATION)} (about ten years), the furthest any policy lets a "
        f"deadline move; got {value!r}"
    )
    return problem(422, ExtendRefusal.BEYOND_MAXIMUM.value, detail, title=_TITLES[ExtendRefusal.BEYOND_MAXIMUM])


def _beyond_any_time(value: Any) -> Response:
    if str(value).startswith(f"{datetime.max.year}"):
        last = format_rfc3339(datetime.max.replace(tzinfo=UTC))
        detail = f"until is later than any time a deadline holds (the last is {last}; the policy allows far less)"
        refusal = ExtendRefusal.BEYOND_MAXIMUM
    else:
        detail = "until is earlier than any time a deadline holds, so not later than the current deadline"
        refusal = ExtendRefusal.NOT_LATER
    return problem(422, refusal.value, f"{detail}; got {value!r}", title=_TITLES[refusal])
