"""`agent-wait cancel` and `agent-wait answer Q1 Q2 ... ACTION`: what an operator does to several questions, over the
answer API (`POST /questions/{id}/cancel`, `POST /questions/answers`), as the person the token names.

The API decides each through the one desk and says what happened; these turn its answers into a line per question.
"""

from __future__ import annotations

import argparse
import urllib.parse
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agent_wait.cli import _api
from agent_wait.cli._target import CliError, Target

__all__ = ("BULK_LIMIT", "add_cancel_arguments", "answer_many", "cancel")

BULK_LIMIT = 25
"""The most answers the answer API takes in one request (`POST /questions/answers`); more go in several."""


def add_cancel_arguments(sub: argparse.ArgumentParser) -> None:
    """`agent-wait cancel QUESTION --reason TEXT [--token TOKEN]`."""
    sub.add_argument("question_id", metavar="QUESTION", help="an open question's id (see: agent-wait questions)")
    sub.add_argument(
        "--reason", required=True, help="why, in a sentence; recorded with the decision and in the audit trail"
    )
    sub.add_argument(
        "--token", help=f"cancel over the answer API with this bearer token (default: ${_api.TOKEN_VARIABLE})"
    )


def _need_api(target: Target, token: str | None, what: str, question_id: str | None = None) -> tuple[str, str]:
    if not target.api_url:
        raise CliError(f"{what} goes through the answer API, and {target.source} has none; deploy it with answer_api")
    if not token:
        hint = _api.token_hint(target, question_id) if question_id else _api.token_command()
        raise CliError(
            f"{what} needs a bearer token that says who you are: --token, or {_api.TOKEN_VARIABLE} "
            f"(on agent-wait dev: {hint})"
        )
    return target.api_url, token


def cancel(target: Target, question_id: str, reason: str, *, token: str | None) -> str:
    """Cancel `question_id` with `reason` through the answer API; returns the line saying it was cancelled.

    Raises:
        CliError: no API or token, or the API refused the cancel (already decided, expired, not yours, ...).
    """
    api_url, token = _need_api(target, token, "cancelling a question", question_id)
    url = f"{api_url}/questions/{urllib.parse.quote(question_id, safe='')}/cancel"
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex}
    status, payload = _api._call(url, method="POST", body={"reason": reason}, headers=headers)
    data: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
    if status != 200:
        raise CliError(_refused_line(status, data, question_id, "cancel"))
    outcome: Mapping[str, Any] = data.get("outcome") or {}
    line = (
        f"question {question_id} cancelled by {outcome.get('answered_by') or 'you'} on thread {data.get('thread_id')}"
        f"; the agent resumes with the policy's cancellation answer"
    )
    if data.get("result") == "repeated":
        line = f"question {question_id} was already cancelled by this same request; nothing changed"
    return line


def answer_many(
    target: Target, question_ids: Sequence[str], answer: Any, *, token: str | None
) -> tuple[list[str], int]:
    """Answer every question in `question_ids` with `answer` through the answer API, 25 per request, each decided on
    its own; returns a line per question and how many were not decided.

    Raises:
        CliError: no API or token, the token refused, or a request refused as a whole.
    """
    api_url, token = _need_api(target, token, "answering several questions")
    lines: list[str] = []
    refused = 0
    for start in range(0, len(question_ids), BULK_LIMIT):
        chunk = question_ids[start : start + BULK_LIMIT]
        body = {"answers": [{"question_id": q, "answer": answer} for q in chunk]}
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex}
        status, payload = _api._call(f"{api_url}/questions/answers", method="POST", body=body, headers=headers)
        data: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
        if status != 200 or not isinstance(data.get("results"), list):
            raise CliError(_refused_line(status, data, ", ".join(chunk), "answer"))
        for item in data["results"]:
            line, decided = _item_line(item)
            lines.append(line)
            refused += 0 if decided else 1
    return lines, refused


def _item_line(item: Mapping[str, Any]) -> tuple[str, bool]:
    question_id, status = item.get("question_id"), item.get("status")
    body: Mapping[str, Any] = item.get("body") or {}
    result = body.get("result")
    if result == "won":
        who = (body.get("outcome") or {}).get("answered_by") or "you"
        return f"won       {question_id}  thread={body.get('thread_id')}  as {who}; the agent resumes", True
    if result == "repeated":
        return f"repeated  {question_id}  already decided by this same answer; nothing changed", True
    if result == "voted":
        return f"voted     {question_id}  {body.get('remaining')} more approval(s) needed", True
    return f"refused   {question_id}  {status} {body.get('reason')}: {body.get('detail')}", False


def _refused_line(status: int, data: Mapping[str, Any], question_id: str, verb: str) -> str:
    if status == 401:
        return f"the answer API refused the token (expired, or not from its issuer); get a fresh one and {verb} again"
    reason, detail = data.get("reason"), data.get("detail")
    if reason:
        return f"question {question_id}: the answer API refused to {verb} it ({reason}): {detail}"
    return f"the answer API failed (HTTP {status}); see the output of `agent-wait dev` (or the API's logs) and retry"
