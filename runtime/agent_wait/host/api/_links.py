"""Signed answer links: the confirmation page and the two POSTs it makes, for people who are not signed in.

Routes (API Gateway serves them WITHOUT the JWT authorizer: the link's token is the capability):

    GET  /questions/{question_id}/confirm          the confirmation page; answers nothing (mail scanners open links)
    GET  /questions/{question_id}/confirm/{asset}  its script and style sheet (`confirm.js`, `confirm.css`)
    POST /questions/{question_id}/link             {"token"}: what is asked, the link's action and expiry (and the
                                                   grant offer it makes, if any)
    POST /questions/{question_id}/link/answer      {"token", "note"?}: answer with the link's action, once

The token rides in the link's URL fragment, which browsers never send; the page's script posts it in a
JSON body, so it is in no URL, access log or Referer header. A token that cannot be used gets a 403
problem whose `reason` is the `LinkError` reason (`malformed`, `unknown_key`, `tampered`, `expired`,
`wrong_question`); with no link keys configured (`AGENT_WAIT_LINK_KEYS_ARN` unset) every route answers
404 `links_off`. An answer's id is derived from the token, so the same link used twice repeats its
outcome and never decides twice. On a quorum question the link's answer is a vote: 202 while the question
waits for more approvals, 409 `already_voted` when this answerer voted before.

A link that carries a grant offer's index (`agent_wait.engine.offered`) approves and grants: the offer is looked up
again from the question's row (`grant_offers`) and sent as the answer's `grant` field to the one desk, which makes
the grant in the link's person's name. An index the question no longer offers (its policy changed) is refused 422
`grant_refused` before anything is decided.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.messages import parse_answer
from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.granting import GRANT_FIELD, grant_offers
from agent_wait.engine.offered import function_of, offer_words
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.errors import MessageError
from agent_wait.host.api._context import ApiContext
from agent_wait.host.api._pages import page_file
from agent_wait.host.api._pages import secured as _secured
from agent_wait.host.api._problems import json_response, message_problem, problem
from agent_wait.host.api._questions import answer_response, path_question_id, question_view
from agent_wait.host.links import LinkClaims, LinkError, LinkKeyring, LinkKeys
from agent_wait.ledger import QuestionRecord
from agent_wait.policy.grants import GrantOffer

__all__ = ("LINK_ANSWERED_BY", "MAX_NOTE_CHARS", "PAGE_CONTENT_SECURITY_POLICY", "link_routes")

logger = logging.getLogger("agent_wait.host")

MAX_NOTE_CHARS = 1000
"""The longest note a person may add to a link's answer."""
LINK_ANSWERED_BY = "signed link"
"""Recorded as `answered_by` when the link was not made for a named person."""
PAGE_CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
"""The confirmation page runs only its own same-origin script (no inline script), talks only to this API,
and cannot be framed."""
_PAGE_FILES = frozenset({"confirm.js", "confirm.css", "shared.js", "inbox-reading.js", "look.css"})
"""What `/confirm/<asset>` serves; the page refers to them relatively (`confirm/confirm.js`), so they load from
this API under any stage or base path. `shared.js`, `inbox-reading.js` and `look.css` are the scripts and look the
inbox shares (`confirm.css` imports `look.css`; `inbox-reading.js` reads a question as the inbox does)."""


@dataclass(frozen=True, slots=True)
class _Verified:
    claims: LinkClaims
    token: str
    note: str | None
    record: QuestionRecord


def link_routes(context: Callable[[], ApiContext]) -> Router:
    """The signed-link routes; `context()` gives the ledger, the answer service, the link keys and the clock.

    Args:
        context: returns the API's dependencies; `link_keys` None turns the routes off (404 `links_off`).

    Returns:
        A Powertools `Router` for `APIGatewayHttpResolver.include_router`.
    """
    router = Router()

    @router.get("/questions/<question_id>/confirm")
    def confirm_page(question_id: str) -> Response:
        # Static: it neither reads nor changes the question, so a scanner opening the link does nothing.
        return _asset("confirm.html") if _keys(context()) is not None else _links_off()

    @router.get("/questions/<question_id>/confirm/<asset>")
    def confirm_asset(question_id: str, asset: str) -> Response:
        if _keys(context()) is None:
            return _links_off()
        if asset not in _PAGE_FILES:
            return _secured(problem(404, "no_such_file", f"the confirmation page uses only {sorted(_PAGE_FILES)}"))
        return _asset(asset)

    @router.post("/questions/<question_id>/link")
    def read_link(question_id: str) -> Response:
        checked = _verify(context(), question_id, router.current_event.body, fields=("token",))
        if isinstance(checked, Response):
            return _secured(checked)
        claims = checked.claims
        link: dict[str, Any] = {
            "action": claims.action,
            "expires_at": format_rfc3339(claims.expires_at),
            "approver": claims.approver,
        }
        if claims.offer is not None:
            offer = _offer(checked.record, claims.offer)
            if isinstance(offer, Response):
                return _secured(offer)
            link["grant"] = {
                "offer": claims.offer,
                "label": offer.label,
                "allows": offer_words(function_of(checked.record.envelope), offer.request),
            }
        # As this link's answerer sees it: on a quorum question, `your_vote` says whether the link voted already.
        view = question_view(checked.record, now=context().clock(), viewer=_answerer(claims))
        return _secured(json_response(200, {"question": view, "link": link}))

    @router.post("/questions/<question_id>/link/answer")
    def answer_link(question_id: str) -> Response:
        ctx = context()
        checked = _verify(ctx, question_id, router.current_event.body, fields=("token", "note"))
        if isinstance(checked, Response):
            return _secured(checked)
        claims = checked.claims
        answer: dict[str, Any] = {"action": claims.action}
        if checked.note:
            answer["note"] = checked.note
        if claims.offer is not None:
            offer = _offer(checked.record, claims.offer)
            if isinstance(offer, Response):
                return _secured(offer)
            answer[GRANT_FIELD] = offer.request.to_dict()  # the desk checks it, and makes it in the person's name
        answerer = _answerer(claims)
        # One link, one answer: the same token again repeats the outcome instead of deciding twice.
        answer_id = "link:" + hashlib.sha256(checked.token.encode("utf-8")).hexdigest()[:40]
        result = ctx.service.answer(claims.question_id, answer, answerer, answer_id=answer_id)
        logger.info(
            "signed link used",
            extra={
                "question_id": claims.question_id,
                "thread_id": claims.thread_id,
                "kid": claims.kid,
                "result": result.verdict.kind.value,
                "reason": result.verdict.reason.value if result.verdict.reason else None,
            },
        )
        # A vote on a quorum question that waits for more is 202, its body the votes so far (`remaining`).
        return _secured(answer_response(result, now=ctx.clock(), viewer=answerer))

    return router


def _verify(ctx: ApiContext, question_id: str, body: str | None, *, fields: tuple[str, ...]) -> _Verified | Response:
    """The body read, the token verified for this question, and the question found, or the problem to answer."""
    keys = _keys(ctx)
    if keys is None:
        return _links_off()
    try:
        data = json.loads(body or "")
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return problem(400, "not_json", 'the body must be a JSON object: {"token": "<the part of the link after #>"}')
    unknown = sorted(set(data) - set(fields))
    if unknown:
        return problem(400, "unknown_field", f"unknown field(s) {unknown}; send {list(fields)}")
    note = data.get("note")
    if note is not None and not isinstance(note, str):
        return problem(400, "bad_note", f"note must be text of at most {MAX_NOTE_CHARS} characters")
    if note is not None:  # the note is the answer's one free value: read as every door reads an answer
        if len(note) > MAX_NOTE_CHARS:
            return problem(
                422, "bad_answer", f"answer.note is {len(note):,} characters; the most is {MAX_NOTE_CHARS:,}"
            )
        try:
            parse_answer({"note": note})
        except MessageError as exc:
            return message_problem(exc)
    token = data.get("token")
    question_id = path_question_id(question_id)
    try:
        claims = keys.verify(token if isinstance(token, str) else "", question_id=question_id, now=ctx.clock())
    except LinkError as exc:
        logger.info("signed link refused", extra={"question_id": question_id, "reason": exc.reason.value})
        return problem(403, exc.reason.value, exc.message)
    record = ctx.ledger.find(question_id)
    if record is None:
        return problem(404, RefusalReason.UNKNOWN_QUESTION.value, f"no question {question_id}")
    if record.thread_id != claims.thread_id:
        logger.info("signed link refused", extra={"question_id": question_id, "reason": "wrong_question"})
        return problem(403, "wrong_question", f"this link answers another question, not {question_id}")
    return _Verified(claims, token if isinstance(token, str) else "", note.strip() if note else None, record)


def _offer(record: QuestionRecord, index: int) -> GrantOffer | Response:
    """The grant offer `index` as the question's row offers it now, or the 422 `grant_refused` problem when it no
    longer does (the policy changed, or the call no longer fits it): nothing is decided."""
    offer = dict(grant_offers(record.envelope)).get(index)
    if offer is not None:
        return offer
    logger.info("signed link refused", extra={"question_id": record.question_id, "reason": "offer_withdrawn"})
    return problem(
        422,
        RefusalReason.GRANT_REFUSED.value,
        f"the grant was refused (not_grantable): question {record.question_id} no longer offers this link's grant "
        f"(offer {index}); nothing was decided. Approve with the plain Approve link, or grant from the inbox",
    )


def _answerer(claims: LinkClaims) -> Answerer:
    """Who answers by this link: the person it was made for (as the principal, in the groups the host vouched for
    when it made the link), else any holder of an unnamed link."""
    return answerer_for(
        "link", person=claims.approver or LINK_ANSWERED_BY, sender=f"link:{claims.kid}", groups=claims.groups
    )


def _keys(ctx: ApiContext) -> LinkKeys | LinkKeyring | None:
    return ctx.link_keys if isinstance(ctx.link_keys, LinkKeys | LinkKeyring) else None


def _links_off() -> Response:
    return _secured(
        problem(404, "links_off", "answer links are off here: set AGENT_WAIT_LINK_KEYS_ARN on the answer API")
    )


def _asset(name: str) -> Response:
    policy = PAGE_CONTENT_SECURITY_POLICY if name.endswith(".html") else None
    return page_file(name, content_security_policy=policy)
