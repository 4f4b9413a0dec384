"""Operators' routes: cancel a question with a reason, answer up to 25 questions at once; for a person signed in.

    POST /questions/{question_id}/cancel   {"reason": "..."}; header Idempotency-Key
    POST /questions/answers                {"answers": [{"question_id": ..., "answer": {...}, "valid_until": ...}]}

Both decide through the one desk every door uses (`AnswerService.cancel`, `AnswerService.answer`): a cancel is a cancel
attempt (the agent receives the policy's `on_cancel`, else a cancellation, never the default; recorded `cancelled` with
who and why), and each bulk item is its own answer, decided on its own (never a shared transaction), with the same
result or problem the single answer route gives it. A malformed body, or more than `MAX_BULK_ANSWERS` items, is a 400
and decides nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.messages import MAX_ID_LENGTH, AnswerMessage
from agent_wait.errors import MessageError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import NOT_JSON, json_body, json_response, message_problem, problem
from agent_wait.host.api._questions import (
    answer_id_for,
    answer_response,
    checked_answer,
    jwt_claims,
    not_signed_in,
    signed_in_question,
)

__all__ = ("MAX_BULK_ANSWERS", "operator_routes")

MAX_BULK_ANSWERS = 25
"""The most answers one `POST /questions/answers` takes: each is decided on its own, one after another, and 25 stay
well inside API Gateway's 30-second limit."""
BULK_WAIT_SECONDS = 10.0
"""How long one `POST /questions/answers` may wait in all for runs on its questions' threads to finish."""
_BULK_FIELDS = frozenset({"question_id", "answer", "valid_until"})
_RESULT_KEYS = ("won", "repeated", "voted")


def operator_routes(context: Callable[[], ApiContext]) -> Router:
    """The cancel and bulk-answer routes; `context()` gives the answer service and the settings."""
    router = Router()

    @router.post("/questions/<question_id>/cancel")
    def cancel_question(question_id: str) -> Response:
        signed_in = signed_in_question(router.current_event, question_id)
        if isinstance(signed_in, Response):
            return signed_in
        question_id, verified = signed_in
        reason = _cancel_reason(router.current_event.body)
        if isinstance(reason, Response):
            return reason
        ctx = context()
        person = answerer_from_claims(verified, groups_claims=ctx.groups_claims)
        key = router.current_event.headers.get("idempotency-key")
        answer_id = answer_id_for(person, f"{key}\0cancel\0{question_id}" if key else None)
        result = ctx.service.cancel(question_id, reason, person, answer_id=answer_id)
        return answer_response(result, now=ctx.clock(), viewer=person)

    @router.post("/questions/answers")
    def answer_many() -> Response:
        verified = jwt_claims(router.current_event)
        if verified is None:
            return not_signed_in()
        items = _bulk_items(router.current_event.body)
        if isinstance(items, Response):
            return items
        ctx = context()
        person = answerer_from_claims(verified, groups_claims=ctx.groups_claims)
        key = router.current_event.headers.get("idempotency-key")
        results: list[dict[str, Any]] = []
        # Waiting for busy threads shares one budget: 25 items each waiting the full lease wait would outlast API
        # Gateway's 30 s; once it is spent, a busy thread is refused at once (`thread_busy`, with Retry-After).
        waits_end = time.monotonic() + BULK_WAIT_SECONDS
        for index, item in enumerate(items):  # one at a time, each through the desk: no item waits on another
            answer_id = answer_id_for(person, f"{key}\0{index}\0{item.question_id}" if key else None)
            result = ctx.service.answer(
                item.question_id,
                item.answer,
                person,
                answer_id=answer_id,
                valid_until=item.valid_until,
                lease_wait=min(ctx.service.lease_wait, waits_end - time.monotonic()),
            )
            reply = answer_response(
                result, now=ctx.clock(), viewer=person, sent=item.answer, answer_id=answer_id if key else None
            )
            results.append({"question_id": item.question_id, "status": reply.status_code, "body": _body(reply)})
        summary = dict.fromkeys((*_RESULT_KEYS, "refused"), 0)
        for entry in results:
            result_name = entry["body"].get("result")
            summary[result_name if result_name in _RESULT_KEYS else "refused"] += 1
        return json_response(200, {"results": results, "summary": summary})

    return router


def _body(reply: Response) -> dict[str, Any]:
    body = reply.body
    parsed = json.loads(body if isinstance(body, str | bytes) else "{}")
    return parsed if isinstance(parsed, dict) else {}


def _json_object(body: str | None, field: str, example: str) -> dict[str, Any] | Response:
    """The body as a JSON object holding `field` and nothing else, or the 400 problem that says what is wrong."""
    data = json_body(body)
    if isinstance(data, Response):
        return data
    if data is NOT_JSON:
        return problem(400, "not_json", f"the body must be JSON: {example}")
    if not isinstance(data, dict):
        return problem(400, "not_an_object", f"the body must be a JSON object: {example}")
    unknown = sorted(set(data) - {field})
    if unknown:
        return problem(400, "unknown_field", f"unknown field(s) {unknown}; send only {field}, e.g. {example}")
    return data


def _cancel_reason(body: str | None) -> str | Response:
    """The cancel's reason from the body, or a 400 problem; whether it is a usable reason is the desk's to say."""
    example = '{"reason": "the customer withdrew the request"}'
    data = _json_object(body, "reason", example)
    if isinstance(data, Response):
        return data
    reason = data.get("reason")
    if not isinstance(reason, str):
        return problem(400, "missing_reason", f"a cancel needs a reason, as a string: {example}")
    return reason


def _bulk_items(body: str | None) -> list[AnswerMessage] | Response:
    """Every item checked with the router's own message rules before any is decided, or one 400 naming the first bad
    item: a malformed request decides nothing."""
    example = '{"answers": [{"question_id": "...", "answer": {"action": "approve"}}]}'
    data = _json_object(body, "answers", example)
    if isinstance(data, Response):
        return data
    answers = data.get("answers")
    if not isinstance(answers, list) or not answers:
        return problem(400, "missing_answers", f"the body must hold a non-empty list of answers: {example}")
    if len(answers) > MAX_BULK_ANSWERS:
        detail = f"{len(answers)} answers in one request; the most is {MAX_BULK_ANSWERS}: send the rest in another"
        return problem(400, "too_many_answers", detail)
    items: list[AnswerMessage] = []
    for index, entry in enumerate(answers):
        item = _bulk_item(index, entry)
        if isinstance(item, Response):
            return item
        items.append(item)
    return items


def _bulk_item(index: int, entry: Any) -> AnswerMessage | Response:
    where = f"answers[{index}]"
    if not isinstance(entry, Mapping) or not isinstance(entry.get("question_id"), str) or "answer" not in entry:
        detail = f'{where} must be an object with "question_id" (a string) and "answer"'
        return problem(400, "bad_answer_item", detail, index=index)
    unknown = sorted(set(entry) - _BULK_FIELDS)
    if unknown:
        detail = f"{where} has unknown field(s) {unknown}; an item takes question_id, answer and valid_until"
        return problem(400, "unknown_field", detail, index=index)
    question_id = str(entry["question_id"])
    if not question_id or len(question_id) > MAX_ID_LENGTH:
        detail = f"{where}.question_id must be 1 to {MAX_ID_LENGTH} characters"
        return problem(400, "bad_answer_item", detail, index=index)
    try:
        return checked_answer(question_id, {k: v for k, v in entry.items() if k != "question_id"})
    except MessageError as exc:
        return message_problem(exc, where=where, index=index)
