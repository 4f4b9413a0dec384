"""Passkeys over HTTPS, for a person signed in with a JWT (`agent_wait.host.passkeys.WebAuthnPasskeys`):

    GET  /passkeys                              the person's passkeys: {"passkeys": [{credential_id, label, ...}]}
    POST /passkeys/registration/options         {}: PublicKeyCredentialCreationOptions for navigator.credentials.create
    POST /passkeys/registration                 {"credential": <the created PublicKeyCredential>, "label": "..."}: 201
    POST /questions/{question_id}/passkey       {"answer": {...}}: {"at", "publicKey"} for navigator.credentials.get,
                                                the challenge the answer's digest (docs/proving.md)

The answer then goes to `POST /questions/{id}/answer` with `"passkey": {"at", "credential"}` beside it, and the
desk verifies it. With passkeys off (`AGENT_WAIT_PASSKEY_ORIGIN` unset) every route is a 404 `passkeys_off`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.checks import Answerer
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.errors import PasskeyError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import NOT_JSON, json_body, json_response, problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in, signed_in_question

__all__ = ("passkey_routes",)

_STATUS_FOR_CODE = {"no_challenge": 409, "registration_refused": 422, "no_passkey": 409, "passkeys_off": 404}


def passkey_routes(context: Callable[[], ApiContext]) -> Router:
    """The passkey routes; `context()` gives the passkeys (`ApiContext.passkeys`), the ledger and the claims."""
    router = Router()

    def ready() -> tuple[Any, Answerer] | Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        ctx = context()
        if ctx.passkeys is None:
            return _off()
        return ctx.passkeys, answerer_from_claims(claims, groups_claims=ctx.groups_claims)

    @router.get("/passkeys")
    def list_passkeys() -> Response:
        found = ready()
        if isinstance(found, Response):
            return found
        passkeys, person = found
        kept = [_view(c) for c in passkeys.credentials(person)] if person.answered_by else []
        return json_response(200, {"passkeys": kept})

    @router.post("/passkeys/registration/options")
    def registration_options() -> Response:
        found = ready()
        if isinstance(found, Response):
            return found
        passkeys, person = found
        try:
            return json_response(200, passkeys.registration_options(person))
        except PasskeyError as exc:
            return _refused(exc)

    @router.post("/passkeys/registration")
    def register() -> Response:
        found = ready()
        if isinstance(found, Response):
            return found
        passkeys, person = found
        body = json_body(router.current_event.body)
        if isinstance(body, Response):
            return body
        if body is NOT_JSON or not isinstance(body, dict) or not isinstance(body.get("credential"), dict):
            return problem(400, "bad_passkey", 'the body must be {"credential": <navigator.credentials.create()>}')
        label = body.get("label") if isinstance(body.get("label"), str) else ""
        try:
            registered = passkeys.register(person, body["credential"], label=label)
        except PasskeyError as exc:
            return _refused(exc)
        return json_response(201, _view(registered))

    @router.post("/questions/<question_id>/passkey")
    def answer_options(question_id: str) -> Response:
        asked = signed_in_question(router.current_event, question_id)
        if isinstance(asked, Response):
            return asked
        question_id, _claims = asked
        found = ready()
        if isinstance(found, Response):
            return found
        passkeys, person = found
        body = json_body(router.current_event.body)
        if isinstance(body, Response):
            return body
        if body is NOT_JSON or not isinstance(body, dict) or "answer" not in body:
            return problem(400, "missing_answer", 'the body must be {"answer": {...}}: the answer to confirm')
        record = context().ledger.find(question_id)
        if record is None:
            return problem(404, RefusalReason.UNKNOWN_QUESTION.value, f"no question {question_id}")
        if record.status is not QuestionStatus.OPEN:
            return problem(409, RefusalReason.ALREADY_DECIDED.value, f"the question is {record.status.value}")
        try:
            return json_response(200, passkeys.answer_options(record, body["answer"], person))
        except PasskeyError as exc:
            return _refused(exc)

    return router


def _view(credential: Any) -> dict[str, Any]:
    return {
        "credential_id": credential.credential_id,
        "label": credential.label,
        "registered_at": credential.registered_at,
        "sign_count": credential.sign_count,
    }


def _off() -> Response:
    detail = (
        "this deployment has no passkeys: turn them on with AgentWait(passkeys=True), which sets "
        "AGENT_WAIT_PASSKEY_ORIGIN to the inbox's origin"
    )
    return problem(404, "passkeys_off", detail)


def _refused(exc: PasskeyError) -> Response:
    return problem(_STATUS_FOR_CODE.get(exc.code, 422), exc.code, str(exc))
