"""`/agui`: open questions as AG-UI interrupts, and AG-UI resume entries as answers, for a person signed in.

    GET  /agui/interrupts   ?tag=key:value&due_before=<RFC 3339>&limit=50&cursor=...&thread_id=...
    POST /agui/resume       {"resume": [ResumeEntry, ...]} or a whole RunAgentInput; header Idempotency-Key

The shapes are the `ag-ui-protocol` package's own (`Interrupt`, `ResumeEntry`, `RunAgentInput`). A resume
entry is an answer like any other: `ctx.service.answer` checks it and wins the conditional write, then
hands the resume to the entry queue. `resolved` answers with the entry's `payload` as sent; `cancelled`
applies the question's declared default as this person's answer. Mapping table: docs/agui.md.

`ag-ui-protocol` and pydantic are imported by the routes that use them, on their first request: the answer API's
cold start never pays for them (a third of its imports) unless AG-UI is what it serves first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.common.times import NEVER
from agent_wait.contract.schema import QuestionStatus
from agent_wait.dialects import agent_inbox, langchain_hitl
from agent_wait.engine.checks import Answerer
from agent_wait.errors import LedgerCursorError, MessageError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import NOT_JSON, json_body, json_response, message_problem, problem
from agent_wait.host.api._questions import (
    PageQuery,
    answer_id_for,
    answer_response,
    checked_answer,
    jwt_claims,
    not_signed_in,
    page_query,
    question_view,
)
from agent_wait.ledger import QuestionPage, QuestionRecord

if TYPE_CHECKING:
    from ag_ui.core import Interrupt, ResumeEntry
    from pydantic import ValidationError

__all__ = ("MAX_RESUME_ENTRIES", "agui_routes", "interrupt_for")

MAX_RESUME_ENTRIES = 100
"""The most resume entries one `POST /agui/resume` applies."""

TOOL_APPROVAL = "tool_approval"
"""`Interrupt.reason` of a question about a function or tool call."""
INPUT_REQUIRED = "input_required"
"""`Interrupt.reason` of any other question."""

_TOOL_DIALECTS = frozenset({langchain_hitl.NAME, agent_inbox.NAME})
"""Dialects whose questions are about a tool call."""
_PROMPT_KEYS = ("description", "prompt", "message", "question", "summary", "title", "reason")
"""Keys of a question that hold its human prompt, in the order they are tried."""
_APPLIED = frozenset({200, 202})
"""Statuses of an entry that was applied: decided (or repeated), or a vote recorded."""
_BODY_FORMS = 'send {"resume": [{"interruptId": ..., "status": "resolved", "payload": ...}]} or an AG-UI RunAgentInput'


def interrupt_for(record: QuestionRecord, *, now: datetime | None = None) -> Interrupt:
    """One open question as an AG-UI interrupt (the mapping table is in docs/agui.md).

    `now` says who may answer at the moment (`metadata.answerers`, escalation steps included).
    """
    from ag_ui.core import Interrupt

    envelope = record.envelope
    question, source = envelope.question, envelope.source
    view = question_view(record, now=now)
    schema = view["response_schema"]
    metadata: dict[str, Any] = {
        "threadId": record.thread_id,
        "questionId": record.question_id,
        "allowedActions": list(envelope.allowed_actions),
        "question": question,
        "source": dict(source) if source is not None else None,
        "tags": dict(envelope.tags),
        "askedAt": record.asked_at,
        "answerers": view["answerers"],
    }
    if "escalation" in view:
        metadata["escalation"] = view["escalation"]
    if "votes" in view:  # a quorum question: each resume is a vote
        metadata["quorum"] = {key: view[key] for key in ("votes", "approvals", "needed", "remaining", "veto")}
    return Interrupt(
        id=record.question_id,
        reason=TOOL_APPROVAL if _is_tool_call(source) else INPUT_REQUIRED,
        message=_prompt(question),
        tool_call_id=_tool_call_id(question),
        response_schema=dict(schema) if schema is not None else _answer_schema(record),
        expires_at=envelope.expires_at,
        metadata=metadata,
    )


def _is_tool_call(source: Mapping[str, Any] | None) -> bool:
    return source is not None and ("function" in source or source.get("dialect") in _TOOL_DIALECTS)


def _prompt(question: Any) -> str | None:
    """The first human prompt the question holds, or None."""
    if isinstance(question, list) and len(question) == 1:  # Agent Inbox's list of one request
        question = question[0]
    if isinstance(question, str):
        return question or None
    if not isinstance(question, Mapping):
        return None
    for key in _PROMPT_KEYS:
        if isinstance(question.get(key), str):
            return question[key]
    requests = question.get("action_requests")  # LangChain HumanInTheLoopMiddleware
    if isinstance(requests, list) and requests and isinstance(requests[0], Mapping):
        description = requests[0].get("description")
        return description if isinstance(description, str) else None
    return None


def _tool_call_id(question: Any) -> str | None:
    tool_call_id = question.get("tool_call_id") if isinstance(question, Mapping) else None
    return tool_call_id if isinstance(tool_call_id, str) else None


def _answer_schema(record: QuestionRecord) -> dict[str, Any]:
    """A JSON Schema of our own answer (`{"action", "note"?, "args"?}`) for a question with no schema of its own."""
    envelope = record.envelope
    properties: dict[str, Any] = {
        "action": {"type": "string", "enum": list(envelope.allowed_actions)},
        "note": {"type": "string"},
    }
    question, source = envelope.question, envelope.source
    function_call = source is not None and "function" in source and isinstance(question, Mapping)
    editable = (function_call and isinstance(question.get("args"), Mapping)) or _is_tool_call(source)
    if envelope.rules.get("edits", True) and editable:  # a dialect's rules.edits says whether ours can edit
        properties["args"] = {"type": "object"}
    return {"type": "object", "properties": properties, "required": ["action"], "additionalProperties": False}


def agui_routes(context: Callable[[], ApiContext]) -> Router:
    """The `/agui` routes; `context()` gives the ledger, the answer service and the settings."""
    router = Router()

    @router.get("/agui/interrupts")
    def list_interrupts() -> Response:
        if jwt_claims(router.current_event) is None:
            return not_signed_in()
        params = router.current_event.query_string_parameters or {}
        if params.get("status", QuestionStatus.OPEN.value) != QuestionStatus.OPEN.value:
            return problem(400, "bad_status", "interrupts are open questions only; leave out status or send open")
        query = page_query(params)
        if isinstance(query, Response):
            return query
        try:
            page = (
                _thread_page(context(), params["thread_id"], query)
                if params.get("thread_id")
                else context().ledger.page(
                    QuestionStatus.OPEN,
                    limit=query.limit,
                    cursor=query.cursor,
                    due_before=query.due_before,
                    tag=query.tag,
                )
            )
        except ValueError as exc:
            return problem(400, "bad_cursor", str(exc))
        now = context().clock()
        interrupts = [_dump(interrupt_for(record, now=now)) for record in page.records]
        return json_response(200, {"interrupts": interrupts, "next": page.cursor})

    @router.post("/agui/resume")
    def resume() -> Response:
        verified = jwt_claims(router.current_event)
        if verified is None:
            return not_signed_in()
        ctx = context()
        entries = _resume_entries(router.current_event.body)
        if isinstance(entries, Response):
            return entries
        answerer = answerer_from_claims(verified, groups_claims=ctx.groups_claims)
        key = router.current_event.headers.get("idempotency-key")
        responses = [_apply(ctx, entry, answerer, key) for entry in entries]
        if len(entries) == 1:
            return responses[0]
        results = [_result(entry, response) for entry, response in zip(entries, responses, strict=True)]
        # 202 is a vote recorded on a quorum question that waits for more: applied, not failed.
        failed = [response.status_code for response in responses if response.status_code not in _APPLIED]
        return json_response(failed[0] if failed else 200, {"results": results})

    return router


def _thread_page(ctx: ApiContext, thread_id: str, query: PageQuery) -> QuestionPage:
    """One thread's open questions, soonest deadline first; the cursor is an offset into them.

    Raises:
        ValueError: the cursor is not one this listing made.
    """
    if query.cursor is not None and not query.cursor.isdigit():
        raise LedgerCursorError("cursor is not one this listing made; start again without it")
    rows = sorted(
        (
            record
            for record in ctx.ledger.questions(thread_id, status=QuestionStatus.OPEN)
            if (query.due_before is None or (record.expires_at is not None and record.expires_at <= query.due_before))
            and (query.tag is None or record.envelope.tags.get(query.tag[0]) == query.tag[1])
        ),
        key=lambda record: (record.expires_at or NEVER, record.question_id),
    )
    start = int(query.cursor or 0)
    end = start + query.limit
    return QuestionPage(rows[start:end], str(end) if end < len(rows) else None)


def _resume_entries(body: str | None) -> list[ResumeEntry] | Response:
    """The body's resume entries, each checked with the router's own message rules, or a 400 problem."""
    from pydantic import ValidationError

    data = json_body(body)
    if isinstance(data, Response):
        return data
    if data is NOT_JSON:
        return problem(400, "not_json", f"the body must be JSON: {_BODY_FORMS}")
    if not isinstance(data, dict):
        return problem(400, "bad_resume", f"the body must be a JSON object: {_BODY_FORMS}")
    try:
        # `{"resume": [...]}` alone, else a whole RunAgentInput (its threadId, runId and messages are required).
        entries = _short_body(data) if set(data) == {"resume"} else _run_input(data)
    except ValidationError as exc:
        return problem(400, "bad_resume", f"{_where(exc)}; {_BODY_FORMS}")
    if not entries:
        return problem(400, "bad_resume", f"resume holds no entries; {_BODY_FORMS}")
    if len(entries) > MAX_RESUME_ENTRIES:
        return problem(400, "too_many_entries", f"resume holds {len(entries)} entries; at most {MAX_RESUME_ENTRIES}")
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if entry.interrupt_id in seen:
            return problem(
                400, "bad_resume", f"resume[{index}] repeats an earlier entry's interruptId; send each question once"
            )
        seen.add(entry.interrupt_id)
        answer = entry.payload if entry.status == "resolved" else None
        try:
            checked_answer(entry.interrupt_id, {"answer": answer})
        except MessageError as exc:
            return message_problem(exc, where=f"resume[{index}]")
    return entries


def _short_body(data: dict[str, Any]) -> list[ResumeEntry]:
    from agent_wait.host.api._agui_body import ResumeBody

    return ResumeBody.model_validate(data).resume


def _run_input(data: dict[str, Any]) -> list[ResumeEntry]:
    from ag_ui.core import RunAgentInput

    return RunAgentInput.model_validate(data).resume or []


def _where(exc: ValidationError) -> str:
    """Where the body is wrong: each field's location and the kind of error, never the value sent."""
    found = [
        f"{'.'.join(str(part) for part in error['loc']) or 'body'} ({error['type']})"
        for error in exc.errors(include_url=False, include_input=False, include_context=False)
    ]
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return f"wrong field(s): {', '.join(found[:5])}{more}"


def _apply(ctx: ApiContext, entry: ResumeEntry, answerer: Answerer, key: str | None) -> Response:
    """Answer the entry's question with its payload as sent; a `cancelled` entry cancels it (`cancelled_reason`)."""
    question_id = entry.interrupt_id
    # Per entry: one key over several entries still gives each question its own answer id.
    answer_id = answer_id_for(answerer, f"{key}\0{question_id}" if key else None)
    keyed = answer_id if key else None
    if entry.status == "cancelled":
        # A person who declines is a cancel through the one desk: the agent gets the policy's cancellation answer
        # (`on_cancel`, else a cancellation it can tell apart), never the default, which may approve.
        cancelled = ctx.service.cancel(question_id, cancelled_reason(entry.payload), answerer, answer_id=answer_id)
        return answer_response(cancelled, now=ctx.clock(), viewer=answerer, answer_id=keyed)
    answer = entry.payload
    result = ctx.service.answer(question_id, answer, answerer, answer_id=answer_id)
    return answer_response(result, now=ctx.clock(), viewer=answerer, sent=answer, answer_id=keyed)


DECLINED = "declined in AG-UI"
"""The reason recorded for a `cancelled` entry whose payload gives none."""


def cancelled_reason(payload: Any) -> str:
    """Why a `cancelled` entry cancels: the payload's `reason` (a text, or `{"reason": ...}`), else `DECLINED`. A
    reason the desk refuses (too long) is refused there, as the cancel route's is."""
    reason = payload.get("reason") if isinstance(payload, dict) else payload
    return reason if isinstance(reason, str) and reason.strip() else DECLINED


def _result(entry: ResumeEntry, response: Response) -> dict[str, Any]:
    """One entry's line in a several-entry response, from the response a single entry would get."""
    body = json.loads(str(response.body))
    result: dict[str, Any] = {"interruptId": entry.interrupt_id, "status": response.status_code}
    if response.status_code in _APPLIED:
        result["result"] = body["result"]
        if "remaining" in body:  # a quorum question: how many more approvals it needs
            result["remaining"] = body["remaining"]
    else:
        result["reason"] = body["reason"]
        if body.get("detail"):
            result["detail"] = body["detail"]
    return result


def _dump(interrupt: Interrupt) -> dict[str, Any]:
    return interrupt.model_dump(by_alias=True, exclude_none=True, mode="json")
