"""`agent-wait token` and `agent-wait answer` over HTTP: the dev sign-in and the answer API.

The answer API decides at once and says what happened (won, already decided by whom, expired,
refused and why); these functions turn its JSON and problem+json responses into one line for the
person at the terminal. Tokens are sent, never printed here and never put in an error message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agent_wait.cli._target import CliError, Target, answer_value

__all__ = ("SIGN_IN", "TOKEN_VARIABLE", "answer", "sign_in", "token_command", "token_hint")

TOKEN_VARIABLE = "AGENT_WAIT_TOKEN"
"""Where `agent-wait answer` looks for a bearer token when `--token` is not given."""
TIMEOUT_SECONDS = 30.0
SIGN_IN = "agent-wait token --user you@example.com"
"""The `agent-wait token` line a hint offers, before the groups a question's policy names (if any)."""


def token_command(groups: Sequence[str] = ()) -> str:
    """`agent-wait token --user you@example.com`, signing in to `groups` when there are any: the groups a question's
    own policy names, never an example's (a project's groups are its own)."""
    return SIGN_IN + (f" --groups {','.join(groups)}" if groups else "")


def token_hint(target: Target, question_id: str, *, rule: str = "answerers") -> str:
    """The `agent-wait token` line for `question_id`: in the groups its policy names under `rule` (`answerers`, who
    may answer and cancel; `extend`, who may move its deadline), in none when it names none or cannot be read."""
    from agent_wait.cli._commands import ledger_record
    from agent_wait.errors import WaitError

    try:
        rules = ledger_record(target, question_id).envelope.rules or {}
    except (WaitError, OSError):  # a hint is a convenience: the error it rides on says what went wrong
        return token_command()
    groups = (rules.get(rule) or {}).get("groups") or ()
    return token_command([str(group) for group in groups])


def _call(url: str, *, method: str, body: Any = None, headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """(status, parsed JSON body) of one request; a body that is not JSON comes back as None.

    Raises:
        CliError: the server cannot be reached.
    """
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        origin = urllib.parse.urlsplit(url)
        raise CliError(
            f"cannot reach {origin.scheme}://{origin.netloc} ({reason}); is `agent-wait dev` (or the stack) running?"
        ) from None
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, None


def sign_in(target: Target, user: str, groups: Sequence[str], *, expires_in: int | None = None) -> str:
    """A token from the running `agent-wait dev`'s sign-in (`POST /dev/token`).

    Raises:
        CliError: no local issuer is known, it cannot be reached, or it refused the request.
    """
    if not target.issuer:
        raise CliError(
            "agent-wait token signs in to the local issuer of a running `agent-wait dev`, and none is running here "
            f"(the target is {target.source}); for a deployed stack, sign in to its user pool instead"
        )
    body: dict[str, Any] = {"user": user, "groups": list(groups)}
    if expires_in is not None:
        body["expires_in"] = expires_in
    status, payload = _call(f"{target.issuer}/dev/token", method="POST", body=body)
    if status != 200 or not isinstance(payload, Mapping) or not isinstance(payload.get("token"), str):
        message = payload.get("message") if isinstance(payload, Mapping) else None
        raise CliError(f"the dev sign-in refused: {message or f'HTTP {status}'}")
    return payload["token"]


def answer(
    target: Target,
    question_id: str,
    action: str | None,
    *,
    token: str,
    note: str | None = None,
    idempotency_key: str | None = None,
    args: Any = None,
    value: Any = None,
) -> str:
    """Answer `question_id` through the answer API; returns the line saying this answer won.

    Args:
        target: the stack; its `api_url` is used.
        question_id: the question.
        action: one of its allowed actions.
        token: the bearer token that says who answers.
        note: a note sent with the answer.
        args: edited arguments for the waiting call (the answer's `args`).
        value: any JSON answer, sent as it is instead of `action`, `note` and `args`.
        idempotency_key: the same key sent again repeats the outcome instead of deciding twice (default: fresh).

    Raises:
        CliError: the answer did not decide the question (already decided, expired, refused, unknown, not
            signed in), with what happened and by whom.
    """
    if not target.api_url:
        raise CliError("this stack has no answer API: answer on the entry queue (--queue), or deploy one")
    value = answer_value(action, note, args, value)
    url = f"{target.api_url}/questions/{urllib.parse.quote(question_id, safe='')}/answer"
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": idempotency_key or uuid.uuid4().hex}
    status, payload = _call(url, method="POST", body={"answer": value}, headers=headers)
    data: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
    if status == 200:
        return _won(data, question_id, action or "(JSON)")
    if status == 202 and data.get("result") == "voted":
        return _voted(data, question_id, action or "(JSON)")
    raise CliError(_refused(status, data, question_id, target))


def _voted(data: Mapping[str, Any], question_id: str, action: str) -> str:
    """A vote recorded on a quorum question that waits for more."""
    remaining = data.get("remaining")
    more = f"{remaining} more approval{'s' if remaining != 1 else ''} needed" if isinstance(remaining, int) else ""
    return f"vote {action!r} recorded on question {question_id}" + (f"; {more}" if more else "")


def _won(data: Mapping[str, Any], question_id: str, action: str) -> str:
    outcome: Mapping[str, Any] = data.get("outcome") or {}
    who = outcome.get("answered_by") or "you"
    if data.get("result") == "repeated":
        if data.get("status") == "open":  # a vote resent with the same idempotency key
            return f"your vote on question {question_id} was already recorded with this same answer; nothing changed"
        return f"question {question_id} was already decided by this same answer (by {who}); nothing changed"
    line = f"answer {action!r} won question {question_id} on thread {data.get('thread_id')}, recorded as {who}"
    if data.get("handed_over") is False:
        return line + "; the resume could not be queued yet, and the sweep hands it over"
    return line + "; the agent resumes"


_THREAD_REFUSALS = {
    "thread_failed": "the agent failed on its thread; run agent-wait retry THREAD after the fix, then answer again",
    "thread_busy": "the agent is running on its thread right now; answer again in a few seconds",
    "not_parked": "the agent is no longer waiting on it, so no answer can reach it",
}
"""409s about the thread rather than the question: nothing was decided, and each says what to do."""


def _refused(status: int, data: Mapping[str, Any], question_id: str, target: Target) -> str:
    reason, detail = data.get("reason"), data.get("detail")
    question: Mapping[str, Any] = data["question"] if isinstance(data.get("question"), Mapping) else {}
    outcome: Mapping[str, Any] = question.get("outcome") or {}
    if status == 401:
        return (
            "the answer API refused the token (expired, or not from its issuer); get a fresh one with: "
            f"{token_hint(target, question_id)}, then pass it with --token or {TOKEN_VARIABLE}"
        )
    if status == 404:
        return f"no question {question_id!r}; list them with: agent-wait questions --status open"
    if status == 409 and reason == "already_voted":
        return f"you already voted on question {question_id}; a second vote changes nothing"
    if status == 409 and reason in _THREAD_REFUSALS:  # about the thread: nothing was decided
        return f"question {question_id} was not answered: {_THREAD_REFUSALS[reason]} ({detail})"
    if status == 409:
        decided = (outcome.get("answer") or {}).get("action") if isinstance(outcome.get("answer"), Mapping) else None
        what = f"{outcome.get('status')}" + (f" with {decided!r}" if decided else "")
        return (
            f"question {question_id} was already decided by {outcome.get('answered_by') or 'someone else'} "
            f"at {outcome.get('decided_at')} ({what}); your answer was not applied"
        )
    if status == 410:
        expires = (question.get("policy") or {}).get("expires_at")
        return f"question {question_id} expired at {expires}: the policy's default applies; your answer was not applied"
    if reason:
        return f"the answer API refused the answer ({reason}): {detail}"
    return f"the answer API failed (HTTP {status}); see the output of `agent-wait dev` (or the API's logs) and retry"
