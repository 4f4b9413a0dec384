"""`agent-wait extend QUESTION --by PT2H` (or `--until TIME`): move an open question's deadline later.

It goes through the answer API (`POST /questions/{id}/extend`) with a bearer token (`--token` or
`$AGENT_WAIT_TOKEN`), which says who is extending: the question's policy decides whether they may and how far
(`WaitPolicy(extend=Extension(...))`). There is no queue path: an extension needs a proven person.
"""

from __future__ import annotations

import argparse
import os
import urllib.parse
from collections.abc import Mapping
from typing import Any

from agent_wait.cli._api import TOKEN_VARIABLE, _call, token_hint
from agent_wait.cli._target import CliError, Target

__all__ = ("add_extend_arguments", "extend", "run_extend")


def add_extend_arguments(sub: argparse.ArgumentParser) -> None:
    """The options of `agent-wait extend` (the stack options are added with every stack command's)."""
    sub.add_argument("question_id", metavar="QUESTION", help="an open question's id (see: agent-wait questions)")
    how = sub.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--by",
        metavar="DURATION",
        help="move the deadline this much later, ISO 8601: PT2H, P1D (no default: give --by or --until)",
    )
    how.add_argument(
        "--until",
        metavar="TIME",
        help="move it to this RFC 3339 time, e.g. 2026-09-14T09:00:00Z (no default: give --by or --until)",
    )
    sub.add_argument("--token", help=f"the bearer token that says who extends (default: ${TOKEN_VARIABLE})")


def run_extend(target: Target, args: argparse.Namespace) -> int:
    """Run `agent-wait extend` and print what happened.

    Raises:
        CliError: no token, no answer API, or the API refused (with its reason and what to do).
    """
    token = args.token or os.environ.get(TOKEN_VARIABLE)
    if not token:
        hint = token_hint(target, args.question_id, rule="extend")
        raise CliError(f"extending needs a bearer token (--token or {TOKEN_VARIABLE}); get one with: {hint}")
    body = {"by": args.by} if args.by is not None else {"until": args.until}
    print(extend(target, args.question_id, body, token=token))
    return 0


def extend(target: Target, question_id: str, body: Mapping[str, Any], *, token: str) -> str:
    """Extend `question_id` over the answer API; the line that says where its deadline is now.

    Raises:
        CliError: the API refused or cannot be reached; the text is the API's reason and detail.
    """
    if not target.api_url:
        raise CliError(f"{target.source} has no answer API; extending goes through it (deploy one)")
    url = f"{target.api_url}/questions/{urllib.parse.quote(question_id, safe='')}/extend"
    status, payload = _call(url, method="POST", body=dict(body), headers={"Authorization": f"Bearer {token}"})
    data: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
    if status == 200:
        expires = (data.get("policy") or {}).get("expires_at")
        told = "announced wait.extended" if data.get("announced") else "wait.extended goes out with the next sweep"
        return f"question {question_id} now expires at {expires}; its reminders and escalation steps moved too ({told})"
    if status == 401:
        raise CliError(
            "the answer API refused the token (expired, or not from its issuer); get one with: "
            f"{token_hint(target, question_id, rule='extend')}"
        )
    reason, detail = data.get("reason"), data.get("detail")
    if reason:
        raise CliError(f"question {question_id} was not extended ({reason}): {detail}")
    raise CliError(f"the answer API failed (HTTP {status}); see the output of `agent-wait dev` (or the API's logs)")
