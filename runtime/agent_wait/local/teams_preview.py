"""What `agent-wait dev` does for Teams: a local Workflows webhook that keeps every card, and `/dev/teams`, the page
that draws them with Microsoft's own Adaptive Cards renderer, their buttons live against the local answer API.

The stack points `AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN` at a secret in the emulator whose value is this server's
`/dev/teams/webhook` (`route_teams_locally`): the template's Teams props when it has them (mode, recipients), else
one card per question for a channel. The router and the sweep then post to it exactly as they would to Teams,
and `TeamsCards` keeps what arrived (in this process only; the newest `MAX_CARDS`) and serves it with the page. The
page and its renderer are the Teams channel's (`agent_wait.channels.teams.preview`).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from agent_wait.channels.teams.preview import ADAPTIVECARDS_VERSION, PAGE_FILES, PAGE_POLICY, page_file
from agent_wait.contract.schema import Settings
from agent_wait.local.tables import question_keyed_table

__all__ = (
    "ADAPTIVECARDS_VERSION",
    "MAX_CARDS",
    "TEAMS_PAGE_PATH",
    "TEAMS_WEBHOOK_PATH",
    "TeamsCards",
    "local_teams_sends",
    "route_teams_locally",
)

TEAMS_PAGE_PATH = "/dev/teams"
"""Where `agent-wait dev` shows every Teams card it would have sent."""
TEAMS_WEBHOOK_PATH = "/dev/teams/webhook"
"""The local stand-in for a Teams Workflows webhook: takes a card as Teams would, answers 202."""
MAX_CARDS = 200
"""How many cards the page keeps (the oldest are dropped)."""

_FILES = {f"{TEAMS_PAGE_PATH}/{name}": name for name in PAGE_FILES if name != "teams.html"}
"""The files the page loads, by the path it loads them from."""

Response = tuple[int, bytes, dict[str, str]]


class TeamsCards:
    """The cards the local Teams webhook took, newest last; thread-safe. Serves the webhook, the page and its files
    (`handle`, for `LocalApi`'s dev routes)."""

    def __init__(self, *, limit: int = MAX_CARDS) -> None:
        self._cards: deque[dict[str, Any]] = deque(maxlen=limit)
        self._lock = threading.Lock()

    def received(self) -> list[dict[str, Any]]:
        """Every kept delivery: `{received_at, recipient, event, question_id, card}`, oldest first."""
        with self._lock:
            return list(self._cards)

    def take(self, body: bytes) -> tuple[int, dict[str, Any] | None]:
        """Keep the cards of one webhook body; a body Teams would refuse gets its 400."""
        try:
            data = json.loads(body or b"null")
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("attachments"), list) or not data["attachments"]:
            return 400, {"error": {"code": "InvalidRequestContent", "message": "send a message with attachments"}}
        attachments: list[Any] = data["attachments"]
        about: Mapping[str, Any] = data["agent_wait"] if isinstance(data.get("agent_wait"), Mapping) else {}
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self._lock:
            for attachment in attachments:
                if isinstance(attachment, Mapping) and isinstance(attachment.get("content"), Mapping):
                    self._cards.append(
                        {
                            "received_at": now,
                            "recipient": about.get("recipient"),
                            "event": about.get("event"),
                            "question_id": about.get("question_id"),
                            "card": attachment["content"],
                        }
                    )
        return 202, None

    def handle(self, method: str, path: str, body: bytes) -> Response | None:
        """Serve `path` when it is the webhook, the page or one of its files; None otherwise."""
        if method == "POST" and path == TEAMS_WEBHOOK_PATH:
            status, payload = self.take(body)
            data = json.dumps(payload).encode() if payload is not None else b""
            return status, data, {"Content-Type": "application/json"}
        if method != "GET":
            return None
        if path == TEAMS_PAGE_PATH:
            headers = {"Content-Type": PAGE_FILES["teams.html"], "Content-Security-Policy": PAGE_POLICY}
            return 200, page_file("teams.html"), {**headers, "Cache-Control": "no-store"}
        if path == f"{TEAMS_PAGE_PATH}/cards.json":
            newest_first = list(reversed(self.received()))
            return (
                200,
                json.dumps(newest_first).encode(),
                {"Content-Type": "application/json", "Cache-Control": "no-store"},
            )
        if path in _FILES:
            name = _FILES[path]
            return 200, page_file(name), {"Content-Type": PAGE_FILES[name], "Cache-Control": "no-cache"}
        return None


def route_teams_locally(environment: Mapping[str, str], api_url: str, client: Any, *, name: str) -> dict[str, str]:
    """The variables that send the stack's Teams cards to this server's local webhook: a secret holding its URL
    (created in the emulator's Secrets Manager, named after the stack `name`), and, when the template has no Teams
    of its own, the channel mode (one card a question, unbound links where anyone may answer)."""
    url = f"{api_url.rstrip('/')}{TEAMS_WEBHOOK_PATH}"
    arn = client.create_secret(Name=f"{name}-local-teams-webhook", SecretString=url)["ARN"]
    changes = {Settings.TEAMS_WEBHOOK_URL_ARN.value: arn}
    if not environment.get(Settings.TEAMS_WEBHOOK_URL_ARN.value):
        changes[Settings.TEAMS_MODE.value] = "channel"
    return changes


def local_teams_sends(environment: Mapping[str, str], dynamodb: Any, *, name: str) -> dict[str, str]:
    """`AGENT_WAIT_TEAMS_SENDS_TABLE` for a stack whose template has no Teams of its own (the local webhook still
    gets its cards): a table made in the emulator, so a redelivered event posts no card twice here either."""
    if environment.get(Settings.TEAMS_SENDS_TABLE.value):
        return {}
    return {Settings.TEAMS_SENDS_TABLE.value: question_keyed_table(dynamodb, f"{name}-teams-sends")}
