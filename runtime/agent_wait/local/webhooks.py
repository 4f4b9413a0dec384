"""What `agent-wait dev` does for webhooks whose URL is a secret: a local receiver that keeps what they POST.

A template with `AgentWait(webhook_url_secret=...)` or `shaped_webhook=ShapedWebhookProps(url=...)` names a secret
whose value is the webhook's URL. Deployed, someone puts the URL there; on the emulator the secret is either one the
stack created (its value generated: not a URL) or one it only imports (whose ARN the emulator cannot resolve), and
the functions refuse to start either way. `route_webhooks_locally` points each such setting at a secret of its own whose
value is this server's receiver, `POST /dev/webhooks/<kind>` (`webhook`, `shaped`), and `WebhookSink` keeps each
body; `GET /dev/webhooks/received.json` lists them, newest first. A secret that already holds a URL is left alone,
and so is a plain `AGENT_WAIT_WEBHOOK_URL`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from agent_wait.channels.announce.webhook import (
    is_url,  # the check the functions make of the secret at their cold start
)
from agent_wait.contract.schema import Settings

__all__ = ("WEBHOOKS_PATH", "WebhookSink", "route_webhooks_locally")

logger = logging.getLogger("agent_wait.local")

WEBHOOKS_PATH = "/dev/webhooks"
"""Where the local receivers are: `POST /dev/webhooks/<kind>`, and `GET /dev/webhooks/received.json`."""
MAX_BODIES = 200
"""How many bodies the sink keeps (the oldest are dropped)."""
_ROUTED = {Settings.WEBHOOK_URL_SECRET_ARN: "webhook", Settings.SHAPED_WEBHOOK_URL_ARN: "shaped"}
"""The settings whose secret holds a webhook's URL, and the receiver each is routed to."""

Response = tuple[int, bytes, dict[str, str]]


class WebhookSink:
    """The bodies the local webhook receivers took, newest last; thread-safe. Serves them (`handle`)."""

    def __init__(self, *, limit: int = MAX_BODIES) -> None:
        self._bodies: deque[dict[str, Any]] = deque(maxlen=limit)
        self._lock = threading.Lock()

    def received(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Every kept body, oldest first: `{received_at, kind, body}` (the body parsed when it is JSON)."""
        with self._lock:
            return [b for b in self._bodies if kind is None or b["kind"] == kind]

    def handle(self, method: str, path: str, body: bytes) -> Response | None:
        """Serve `path` when it is a receiver or the list; None otherwise."""
        if method == "POST" and path.startswith(f"{WEBHOOKS_PATH}/") and path.count("/") == 3:
            kind = path.rsplit("/", 1)[1]
            try:
                parsed: Any = json.loads(body or b"null")
            except (ValueError, RecursionError):
                parsed = body.decode("utf-8", "replace")
            kept = {
                "received_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "kind": kind,
                "body": parsed,
            }
            with self._lock:
                self._bodies.append(kept)
            return 200, b"", {"Content-Type": "text/plain"}
        if method == "GET" and path == f"{WEBHOOKS_PATH}/received.json":
            newest_first = list(reversed(self.received()))
            return (
                200,
                json.dumps(newest_first).encode(),
                {"Content-Type": "application/json", "Cache-Control": "no-store"},
            )
        return None


def _has_templates(environment: Mapping[str, str]) -> bool:
    return bool(environment.get(Settings.SHAPED_WEBHOOK_TEMPLATES.value))


def _holds_url(client: Any, arn: str) -> bool:
    try:
        value = client.get_secret_value(SecretId=arn).get("SecretString") or ""
    except Exception:  # not in the emulator (imported by name), or unreadable: route it
        return False
    return is_url(value.strip())


def route_webhooks_locally(environment: Mapping[str, str], api_url: str, client: Any, *, name: str) -> dict[str, str]:
    """The variables that send the stack's URL-secret webhooks to this server's receivers (see the module docstring):
    for each setting whose secret does not hold a URL here, a secret of its own holding the receiver's URL.

    Args:
        environment: the functions' variables as deployed on the emulator.
        api_url: this server's URL.
        client: a boto3 Secrets Manager client on the emulator.
        name: the local stack's name (the new secrets are named after it).
    """
    changes: dict[str, str] = {}
    for setting, kind in _ROUTED.items():
        arn = environment.get(setting.value)
        # An imported secret's ARN is built from the account and region, which the emulator does not resolve: the
        # variable is then missing, and a shaped webhook's templates say the template had one.
        wanted = arn is not None or (setting is Settings.SHAPED_WEBHOOK_URL_ARN and _has_templates(environment))
        if not wanted or (arn and _holds_url(client, arn)):
            continue
        url = f"{api_url.rstrip('/')}{WEBHOOKS_PATH}/{kind}"
        changes[setting.value] = client.create_secret(Name=f"{name}-local-{kind}-url", SecretString=url)["ARN"]
        logger.info("%s holds no URL on the emulator: the %s posts to %s", setting.value, kind, url)
    return changes
