"""What an answer's request body holds, checked with the router's own message rules: the answer, its `valid_until`,
and the passkey assertion that confirms it (`agent_wait.engine.proof`). The answer API's routes share these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.event_handler import Response

from agent_wait.contract.messages import AnswerMessage, parse_message
from agent_wait.engine.proof import PasskeyAssertion
from agent_wait.errors import MessageError
from agent_wait.host.api._problems import NOT_JSON, json_body, message_problem, problem

__all__ = ("answer_body", "checked_answer")


def checked_answer(question_id: str, fields: Mapping[str, Any]) -> AnswerMessage:
    """`fields` (`answer`, optionally `valid_until`) checked with the router's own message rules.

    Raises:
        MessageError: the shape, the size or a value a store cannot hold; the text names the field, never its value.
    """
    parsed = parse_message({"thread_id": "api", "question_id": question_id, **fields})
    if not isinstance(parsed, AnswerMessage):  # a question id makes it an answer; say so if that ever changes
        raise MessageError("bad_answer", 'the body must be an answer: {"answer": ...}')
    return parsed


def answer_body(body: str | None, question_id: str) -> tuple[AnswerMessage, PasskeyAssertion | None] | Response:
    """The request body checked with the router's own message rules (shape, size, values a store can hold), and the
    passkey assertion that confirms it, when it carries one (`passkey`: `{"at", "credential"}`)."""
    data = json_body(body)
    if isinstance(data, Response):
        return data
    if data is NOT_JSON:
        return problem(400, "not_json", 'the body must be JSON: {"answer": {"action": "approve"}}')
    if not isinstance(data, dict) or "answer" not in data:
        return problem(
            400, "missing_answer", 'the body must be an object with "answer", e.g. {"answer": {"action": "approve"}}'
        )
    unknown = sorted(set(data) - {"answer", "valid_until", "passkey"})
    if unknown:
        detail = f"unknown field(s) {unknown}; send answer and, optionally, valid_until and passkey"
        return problem(400, "unknown_field", detail)
    sent_passkey = data.pop("passkey", None)
    passkey = PasskeyAssertion.from_body(sent_passkey) if sent_passkey is not None else None
    if sent_passkey is not None and passkey is None:
        detail = 'passkey must be {"at": <the options\' at>, "credential": <navigator.credentials.get()>}'
        return problem(400, "bad_passkey", detail)
    try:
        return checked_answer(question_id, data), passkey
    except MessageError as exc:
        # A well-formed body whose answer no store can hold (too big a number, too deep) is unprocessable, not bad.
        return message_problem(exc)
