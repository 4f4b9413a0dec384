"""`/questions`: list questions, read one, answer one, for a person signed in with a JWT."""

from __future__ import annotations

import hashlib
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.common.times import format_rfc3339, parse_rfc3339, utc_now
from agent_wait.contract.messages import MAX_ID_LENGTH
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerResult, Verdict, VerdictKind
from agent_wait.engine.checks import Answerer
from agent_wait.engine.grant_book import grant_view
from agent_wait.engine.granting import split_grant
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.engine.votes import vote_of, vote_progress
from agent_wait.errors import GrantError
from agent_wait.host.api._answer_body import answer_body, checked_answer
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import json_response, problem
from agent_wait.ledger import QuestionRecord
from agent_wait.ledger.outcome import QuestionOutcome, agent_progress, question_outcome

__all__ = (
    "PageQuery",
    "answer_id_for",
    "answer_response",
    "checked_answer",
    "jwt_claims",
    "not_signed_in",
    "page_query",
    "path_question_id",
    "question_routes",
    "question_view",
    "signed_in_question",
)

MAX_PAGE = 100
"""The most questions one `GET /questions` returns."""

_STATUS_FOR_REFUSAL = {
    RefusalReason.UNKNOWN_QUESTION: 404,
    RefusalReason.UNKNOWN_THREAD: 404,
    RefusalReason.EXPIRED: 410,
    RefusalReason.ANSWERER_NOT_ALLOWED: 403,
    RefusalReason.NOT_TRUSTED: 403,
    RefusalReason.ACTION_NOT_ALLOWED: 422,
    RefusalReason.EDIT_NOT_ALLOWED: 422,
    RefusalReason.ANSWER_STALE: 422,
    RefusalReason.INVALID_ANSWER: 422,
    RefusalReason.GRANT_REFUSED: 422,
    RefusalReason.PASSKEY_REQUIRED: 403,
    RefusalReason.PASSKEY_REFUSED: 403,
}
"""Any other refusal is a 409: the question's or the thread's state conflicts with the answer."""
_TITLE_FOR_REFUSAL = {
    RefusalReason.ALREADY_VOTED: "Already voted",
    RefusalReason.THREAD_FAILED: "The agent failed on this thread",
    RefusalReason.THREAD_BUSY: "The agent is busy",
    RefusalReason.NOT_PARKED: "No longer waiting",
    RefusalReason.PASSKEY_REQUIRED: "Confirm with your passkey",
    RefusalReason.PASSKEY_REFUSED: "Passkey not accepted",
}
_RESULT_FOR_KIND = {VerdictKind.DECIDED: "won", VerdictKind.REPEATED: "repeated", VerdictKind.VOTED: "voted"}
"""The `result` of a 200 or 202 body (what the inbox page and clients read)."""
THREAD_BUSY_RETRY_SECONDS = 5
"""`Retry-After` on a `thread_busy` refusal: the agent's run on the thread is usually over by then."""


def question_view(
    record: QuestionRecord, *, now: datetime | None = None, viewer: Answerer | None = None
) -> dict[str, Any]:
    """One question as the API shows it: what is asked, its policy, its status and, once decided, its outcome.

    Also who may answer (`answerers`, escalation steps included), the escalation step in effect when the
    policy has steps (`escalation`), and for a quorum question the votes so far (`votes`, `approvals`,
    `needed`, `remaining`, `veto`) and, when `viewer` is given, that person's own vote (`your_vote`).

    Args:
        record: the question's ledger row.
        now: when "now" is, for who may answer and the escalation step (default: the current time).
        viewer: the person asking to see it (the API's signed-in user, a link's answerer), if known.
    """
    envelope = record.envelope
    view: dict[str, Any] = {
        "question_id": record.question_id,
        "thread_id": record.thread_id,
        "status": record.status.value,
        "question": envelope.question,
        "source": dict(envelope.source) if envelope.source is not None else None,
        # The JSON Schema an answer must fit (LangGraph's `interrupt(response_schema=...)`), or None.
        "response_schema": envelope.rules.get("response_schema"),
        "asked_at": record.asked_at,
        "policy": {
            "allowed_actions": list(envelope.allowed_actions),
            "default": envelope.default,
            "expires_at": envelope.expires_at,
            "answer_ttl": envelope.answer_ttl,
            "rules": dict(envelope.rules),
            "tags": dict(envelope.tags),
        },
        "outcome": None,
        # The last answer the router refused on the queue, and why (a queue answers its sender nothing).
        "last_refusal": record.last_refusal.to_item() if record.last_refusal else None,
    }
    outcome = question_outcome(record)
    if outcome is not None:
        view["outcome"] = {
            # What decided it, in the one vocabulary (`agent_wait.ledger.outcome`): answered, expired, cancelled
            # (by a person: `answered_by`, `reason`) or withdrawn (the agent moved on); and what the agent did.
            "status": outcome.value,
            "agent": agent_progress(record).value,
            "answer": _shown_answer(record),
            "answered_by": record.answered_by,
            "via": record.via,
            # For an approval of a `@wait` call: the arguments its body runs with, as asked or as edited.
            "approved_args": record.approved_args,
            "decided_at": record.decided_at,
            "resumed_at": record.resumed_at,
            # A default applied at the deadline: nobody decided it.
            "expired": outcome is QuestionOutcome.EXPIRED,
            "reason": record.reason,  # why a person cancelled it
            # Confirmed with a passkey (`require_passkey`): which, and when signed; the whole proof is in the audit.
            "passkey": _passkey_shown(record.passkey),
        }
    if record.failure is not None:
        view["failure"] = {"error": record.failure.error, "failed_at": record.failure.failed_at}
    view.update(_audience(record, now or utc_now()))
    if record.followups.voting:
        view.update(_votes(record, viewer))
    return view


def _passkey_shown(proof: Mapping[str, Any] | None) -> dict[str, Any] | None:
    signed = proof.get("signed") if proof else None
    if not proof or not isinstance(signed, Mapping):
        return None
    return {"credential_id": proof.get("credential_id"), "signed_at": signed.get("at")}


def _shown_answer(record: QuestionRecord) -> Any:
    """The decided answer as everyone signed in may see it: a quorum decision's votes show who, which way and when,
    never a voter's note or edited arguments (those are for the agent, which gets them in full)."""
    answer = record.answer
    if not (record.followups.voting and isinstance(answer, Mapping) and isinstance(answer.get("votes"), list)):
        return answer
    votes = [
        {key: vote.get(key) for key in ("by", "action", "at")} if isinstance(vote, Mapping) else vote
        for vote in answer["votes"]
    ]
    return {**answer, "votes": votes}


def _audience(record: QuestionRecord, now: datetime) -> dict[str, Any]:
    """Who may answer and the escalation step in effect: now while the question is open, else when it was decided."""
    at = now
    if record.status is not QuestionStatus.OPEN and record.decided_at:
        at = min(now, parse_rfc3339(record.decided_at))
    audience: dict[str, Any] = {"answerers": record.answerers_at(at)}
    followups = record.followups
    if followups.escalation:
        level = record.escalation_level(at)
        times = record.escalation_times()  # moved by any extension of the deadline
        audience["escalation"] = {
            "level": level,
            "steps": len(followups.escalation),
            "next_at": format_rfc3339(times[level]) if level < len(times) and record.outcome is None else None,
            # The routing tags with the steps in effect (`policy.tags` stays as asked).
            "tags": followups.tags_at(record.envelope.tags, level),
        }
    return audience


def _votes(record: QuestionRecord, viewer: Answerer | None) -> dict[str, Any]:
    """A quorum question's votes: who voted what and when, the count, and how many more approvals it needs.

    Each vote shows only `by`, `action` and `at`. Everyone signed in may read a question, and a vote's note
    (or edited arguments) is that voter's free text for the agent, which receives every vote in full with
    the decision; the other voters need only who voted which way, and must not be swayed by the notes.
    """
    progress = vote_progress(record)
    votes: dict[str, Any] = {
        "votes": [{"by": vote.by, "action": vote.action, "at": vote.at} for vote in record.progress.votes],
        "approvals": progress["approvals"],
        "needed": progress["needed"],
        "remaining": progress["remaining"],
        "veto": progress["veto"],
    }
    if viewer is not None:
        own = vote_of(record, viewer)
        votes["your_vote"] = {"action": own.action, "at": own.at} if own is not None else None
    return votes


def answer_response(
    result: AnswerResult,
    *,
    now: datetime | None = None,
    viewer: Answerer | None = None,
    sent: Any = None,
    answer_id: str | None = None,
) -> Response:
    """The HTTP response for an answer attempt: 200 won or repeated, 202 a vote recorded on a question that waits
    for more, or a problem with the refusal's reason: 404, 403, 409 (the question's or the thread's state, with
    `Retry-After` when the agent is busy), 410 or 422 (`question_view` args: `now`, `viewer`).

    With `sent` and `answer_id` (an answer given under an `Idempotency-Key`): a repeat of that key with another
    answer is 422 `idempotency_key_reused`, as a payment API refuses a key reused with another body.
    """
    verdict = result.verdict
    if (
        answer_id is not None
        and verdict.kind is VerdictKind.REPEATED
        and _first_answer(verdict, answer_id) != _kept(sent)
    ):
        detail = "this Idempotency-Key was used for another answer to this question; use a new key for a new answer"
        view = question_view(verdict.record, now=now, viewer=viewer) if verdict.record is not None else None
        return problem(422, "idempotency_key_reused", detail, title="Idempotency-Key reused", question=view)
    if verdict.record is None:
        reason = verdict.reason or RefusalReason.UNKNOWN_QUESTION
        return problem(_STATUS_FOR_REFUSAL.get(reason, 409), reason.value, verdict.detail or "no such question")
    view = question_view(verdict.record, now=now, viewer=viewer)
    if verdict.kind is not VerdictKind.REFUSED:
        # A vote recorded on a question that waits for more: the body shows the votes so far and what is needed.
        status = 202 if verdict.kind is VerdictKind.VOTED else 200
        body = {"result": _RESULT_FOR_KIND[verdict.kind], "handed_over": result.handed_over, **view}
        if verdict.grant is not None:  # the standing grant this approval made (its `grant` field)
            body["grant"] = grant_view(verdict.grant, now=now or utc_now())
        return json_response(status, body)
    reason = verdict.reason or RefusalReason.INVALID_ANSWER
    status = _STATUS_FOR_REFUSAL.get(reason, 409)
    response = problem(status, reason.value, verdict.detail, title=_TITLE_FOR_REFUSAL.get(reason), question=view)
    if reason is RefusalReason.THREAD_BUSY:
        response.headers["Retry-After"] = str(THREAD_BUSY_RETRY_SECONDS)
    return response


def _kept(sent: Any) -> Any:
    """What of a sent answer the row keeps: all but its `grant` field (made into a grant, never given to the agent)."""
    try:
        return split_grant(sent)[0]
    except GrantError:
        return sent


def path_question_id(raw: str) -> str:
    """The question id a route's path names, decoded: API Gateway passes the path as sent, and a browser or the CLI
    percent-encodes what an id may hold (`:` in a Strands id, `v1:tool_call:...`; `/`, `%`)."""
    return urllib.parse.unquote(raw)


def _first_answer(verdict: Verdict, answer_id: str) -> Any:
    """What was first answered under `answer_id`: its vote's answer on a quorum question, else the decision's."""
    record = verdict.record
    vote = verdict.vote or (record.progress.vote_with(answer_id) if record is not None else None)
    if vote is not None:
        return vote.answer
    return record.answer if record is not None else None


def jwt_claims(event: Any) -> dict[str, Any] | None:
    """The claims API Gateway's JWT authorizer verified (`requestContext.authorizer.jwt.claims`), or None."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    return (authorizer.get("jwt") or {}).get("claims") or None


def not_signed_in() -> Response:
    """The 401 problem for a signed-in route reached without JWT claims."""
    return problem(401, "not_signed_in", "sign in: send a bearer token from the API's issuer")


def answer_id_for(answerer: Answerer, key: str | None) -> str:
    """The answer id of an answer given over the API, from its `Idempotency-Key` (None: a fresh one each time).

    One key, one answer: the same key resent by the same person repeats the outcome, never decides twice.
    """
    seed = f"{answerer.sender}\0{key}" if key else uuid.uuid4().hex
    return "api:" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class PageQuery:
    """Which page of a listing a request asks for."""

    limit: int
    cursor: str | None
    """The previous page's `next`, opaque."""
    due_before: str | None
    """Only questions whose deadline is at or before this RFC 3339 time."""
    tag: tuple[str, str] | None
    """Only questions whose policy tags include this (key, value)."""


def page_query(params: Mapping[str, str]) -> PageQuery | Response:
    """`limit`, `cursor`, `due_before` and `tag` from a listing's query string, or a 400 problem."""
    limit_text = params.get("limit", "50")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_PAGE:
        return problem(400, "bad_limit", f"limit must be a whole number from 1 to {MAX_PAGE}")
    tag = None
    if params.get("tag"):
        key, sep, value = params["tag"].partition(":")
        if not sep or not key:
            return problem(400, "bad_tag", "tag must look like key:value, e.g. approver_group:finance")
        tag = (key, value)
    return PageQuery(int(limit_text), params.get("cursor"), params.get("due_before"), tag)


def question_routes(context: Callable[[], ApiContext]) -> Router:
    """The `/questions` routes; `context()` gives the ledger, the answer service and the settings."""
    router = Router()

    def claims() -> dict[str, Any] | None:
        return jwt_claims(router.current_event)

    @router.get("/questions")
    def list_questions() -> Response:
        verified = claims()
        if verified is None:
            return not_signed_in()
        params = router.current_event.query_string_parameters or {}
        try:
            status = QuestionStatus(params.get("status", "open"))
        except ValueError:
            known = [s.value for s in QuestionStatus]
            return problem(400, "bad_status", f"status must be one of {known}")
        query = page_query(params)
        if isinstance(query, Response):
            return query
        ctx = context()
        try:
            page = ctx.ledger.page(
                status, limit=query.limit, cursor=query.cursor, due_before=query.due_before, tag=query.tag
            )
        except ValueError as exc:
            return problem(400, "bad_cursor", str(exc))
        now, viewer = ctx.clock(), answerer_from_claims(verified, groups_claims=ctx.groups_claims)
        views = [question_view(r, now=now, viewer=viewer) for r in page.records]
        return json_response(200, {"questions": views, "next": page.cursor})

    @router.get("/questions/<question_id>")
    def get_question(question_id: str) -> Response:
        asked = signed_in_question(router.current_event, question_id)
        if isinstance(asked, Response):
            return asked
        question_id, verified = asked
        ctx = context()
        record = ctx.ledger.find(question_id)
        if record is None:
            return problem(404, RefusalReason.UNKNOWN_QUESTION.value, f"no question {question_id}")
        viewer = answerer_from_claims(verified, groups_claims=ctx.groups_claims)
        return json_response(200, question_view(record, now=ctx.clock(), viewer=viewer))

    @router.post("/questions/<question_id>/answer")
    def answer_question(question_id: str) -> Response:
        asked = signed_in_question(router.current_event, question_id)
        if isinstance(asked, Response):
            return asked
        question_id, verified = asked
        ctx = context()
        answerer = answerer_from_claims(verified, groups_claims=ctx.groups_claims)
        parsed = answer_body(router.current_event.body, question_id)
        if isinstance(parsed, Response):
            return parsed
        parsed, passkey = parsed
        key = router.current_event.headers.get("idempotency-key")
        # The question is part of the id: one key reused on two questions of a thread is two answers, and
        # their hand-overs must not share a deduplication id in the thread's message group.
        answer_id = answer_id_for(answerer, f"{key}\0{question_id}" if key else None)
        result = ctx.service.answer(
            question_id, parsed.answer, answerer, answer_id=answer_id, valid_until=parsed.valid_until, passkey=passkey
        )
        keyed = answer_id if key else None
        return answer_response(result, now=ctx.clock(), viewer=answerer, sent=parsed.answer, answer_id=keyed)

    return router


def signed_in_question(event: Any, question_id: str) -> tuple[str, dict[str, Any]] | Response:
    """A question route's start: the path's question id and the caller's verified claims, or the problem the route
    answers at once (401 not signed in; 404 for an id longer than any question's, without asking a store)."""
    question_id = path_question_id(question_id)
    verified = jwt_claims(event)
    if verified is None:
        return not_signed_in()
    if len(question_id) > MAX_ID_LENGTH:
        return _no_such_question(question_id)
    return question_id, verified


def _no_such_question(question_id: str) -> Response:
    """The 404 for an id no question can have (longer than any id agent-wait accepts): no store is asked."""
    detail = f"no question has an id of {len(question_id)} characters; ids are at most {MAX_ID_LENGTH}"
    return problem(404, RefusalReason.UNKNOWN_QUESTION.value, detail)
