"""`agent-wait grants list|show|revoke`: a running stack's standing grants, read from its ledger with the deployment's
own credentials (`GrantBook` for the operator: every grant), printed as a table or as `grant_view` JSON.

    agent-wait grants list [--all] [--json]   the live grants (with --all: revoked, expired and used-up ones too)
    agent-wait grants show GRANT [--json]     one grant, with the questions it decided
    agent-wait grants revoke GRANT            revoke it, for every ask after this

An id that names no grant, or one missing or too many, is one line on stderr and exit status 2, so a script can tell
it from a stack it cannot reach (1).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

from agent_wait.cli._target import Target

__all__ = ("BAD_GRANT_ID_EXIT", "pin_words", "run_grants")

BAD_GRANT_ID_EXIT = 2
"""The exit status when the id names no grant, or is missing where one is needed (argparse's for a usage error)."""
_LIMIT = 500
"""The most grants `list` reads (the API's page limit; grants are few, each lives at most 30 days)."""
_PIN_WORDS: Mapping[str, Callable[[str, Any], str]] = {
    "equals": lambda name, value: f"{name} = {json.dumps(value)}",
    "at_most": lambda name, value: f"{name} <= {value}",
    "at_least": lambda name, value: f"{name} >= {value}",
    "prefix": lambda name, value: f"{name} starts with {json.dumps(value)}",
    "glob": lambda name, value: f"{name} matches {json.dumps(value)}",
    "one_of": lambda name, value: f"{name} in {', '.join(json.dumps(v) for v in value)}",
}
"""Each pin kind (`agent_wait.policy.pins.PIN_KINDS`) in words."""


def pin_words(view: Mapping[str, Any]) -> str:
    """A grant's pins in words, `amount <= 500, region in "eu", "us"`; `this exact call` for an exact grant."""
    if view["exact"]:
        return "this exact call"
    words = [_PIN_WORDS[kind](name, value) for name, pin in view["pins"].items() for kind, value in pin.items()]
    return ", ".join(words) or "any call"


def run_grants(target: Target, verb: str, grant_id: str | None, *, show_all: bool, as_json: bool) -> int:
    """Run `grants VERB [GRANT]`; the exit status.

    Raises:
        CliError: a ledger that cannot be read (says which stack it tried).
    """
    if (verb == "list") != (grant_id is None):
        return _bad_id("grants list takes no id; grants show and grants revoke take one: agent-wait grants show GRANT")
    if show_all and verb != "list":
        return _bad_id("--all is for grants list: show and revoke name one grant, whatever its state")
    from agent_wait.cli._commands import guarded, ledger_for
    from agent_wait.engine.grant_book import OPERATOR, GrantBook, grant_view
    from agent_wait.errors import GrantError

    book = GrantBook(ledger_for(target))
    now = book.clock()
    if grant_id is None:
        found = guarded(lambda: book.list(OPERATOR, live_only=not show_all, limit=_LIMIT), target)
        return _print_list([grant_view(grant, now=now) for grant in found], as_json=as_json, show_all=show_all)
    act = book.revoke if verb == "revoke" else book.show
    try:
        grant = guarded(lambda: act(grant_id, OPERATOR), target)
    except GrantError:
        return _bad_id(f"no grant {grant_id!r}; list them with: agent-wait grants list --all")
    view = grant_view(grant, now=book.clock())
    if as_json:
        print(json.dumps(view, indent=2, sort_keys=True))
    elif verb == "revoke":
        revoked = f"revoked {view['grant_id']} at {view['revoked_at']} by {view['revoked_by']}"
        print(f"{revoked}: it decides no ask after this")
    else:
        print(_details(view))
    return 0


def _bad_id(message: str) -> int:
    print(f"agent-wait: {message}", file=sys.stderr)
    return BAD_GRANT_ID_EXIT


_COLUMNS = ("GRANT", "FUNCTION", "PINS", "USES LEFT", "EXPIRES", "GRANTED BY", "VIA", "QUESTION", "STATE")


def _print_list(views: list[dict[str, Any]], *, as_json: bool, show_all: bool) -> int:
    if as_json:
        for view in views:
            print(json.dumps(view, sort_keys=True))
    if not views:
        # JSON lines stay parseable: none at all on stdout, and the words for a person on stderr.
        print("no grants" if show_all else "no live grants", file=sys.stderr if as_json else sys.stdout)
    if as_json or not views:
        return 0
    rows = [_COLUMNS, *(_row(view) for view in views)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 0


def _row(view: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        view["grant_id"],
        view["function"],
        pin_words(view),
        _uses_left(view),
        view["expires_at"],
        view["granted_by"],
        view["via"],
        view["question_id"],
        _state(view),
    )


def _uses_left(view: Mapping[str, Any]) -> str:
    return "unlimited" if view["uses_left"] is None else f"{view['uses_left']} of {view['uses']}"


def _state(view: Mapping[str, Any]) -> str:
    """live, revoked, used up or expired: why a grant decides no more asks."""
    if view["live"]:
        return "live"
    if view["revoked_at"]:
        return "revoked"
    return "used up" if view["uses_left"] == 0 else "expired"


def _details(view: Mapping[str, Any]) -> str:
    scope = "any thread of the agent" if view["scope"] == "agent" else f"thread {view['thread_id']} only"
    lines = [
        f"grant      {view['grant_id']}  ({_state(view)})",
        f"allows     {view['function']}: {pin_words(view)}; on {scope}",
        f"tags       {json.dumps(view['tags'], sort_keys=True)}",
        f"uses left  {_uses_left(view)}",
        f"granted    by {view['granted_by']} via {view['via']} at {view['granted_at']}, approving question "
        f"{view['question_id']}",
        f"expires    {view['expires_at']}",
    ]
    if view["revoked_at"]:
        lines.append(f"revoked    by {view['revoked_by']} at {view['revoked_at']}")
    decided = view["decided"]
    lines.append(f"decided    {len(decided)} question(s)" + (f": {', '.join(decided)}" if decided else ""))
    return "\n".join(lines)
