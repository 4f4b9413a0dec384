"""`WebhookAnnounce`: one signed JSON POST per envelope, standard library only."""

from __future__ import annotations

import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping

from agent_wait.announce._signing import sign, sign_timestamped
from agent_wait.announce.base import BaseAnnounce
from agent_wait.envelope import Transition, WaitEnvelope

__all__ = ("WebhookAnnounce", "WebhookDeliveryError")

EVENT_HEADER = "X-Agent-Wait-Event"
DEDUPE_HEADER = "X-Agent-Wait-Dedupe-Key"
SIGNATURE_HEADER = "X-Agent-Wait-Signature"
TIMESTAMP_SIGNATURE_HEADER = "X-Agent-Wait-Timestamp-Signature"


class WebhookDeliveryError(Exception):
    """The receiver answered with a non-2xx status or could not be reached (contained by `BaseAnnounce`)."""


class WebhookAnnounce(BaseAnnounce):
    """POST each envelope as JSON to `url`.

    Headers: `X-Agent-Wait-Event` (the envelope type), `X-Agent-Wait-Dedupe-Key`, and with a secret
    `X-Agent-Wait-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>` plus
    `X-Agent-Wait-Timestamp-Signature: t=<unix>,sha256=<hex HMAC(secret, "<t>." + body)>` for receivers
    that refuse replays (`verify_timestamped_signature`). No retry: the POST runs inside the agent's
    invocation, so the timeout is short and a failure is a log line, never an exception in the run.

    Args:
        url: the receiver; http or https.
        secret: the shared HMAC secret; unsigned when None.
        headers: extra headers sent on every request (e.g. an API key).
        timeout: seconds to wait for the receiver.
        delivers: the transitions to POST; all by default.
    """

    name = "webhook"

    def __init__(
        self,
        url: str,
        *,
        secret: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 5.0,
        delivers: Iterable[Transition | str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(delivers=delivers)
        parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"WebhookAnnounce url must start with http:// or https:// and name a host; got {url!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise ValueError(f"WebhookAnnounce timeout must be more than 0 seconds; got {timeout!r}")
        self.url = url
        self.secret = secret
        self.headers = dict(headers or {})
        self.timeout = timeout
        self._clock = clock

    def build_request(self, envelope: WaitEnvelope) -> urllib.request.Request:
        """The exact request `deliver` sends (public so receivers can test against it)."""
        body = envelope.to_json().encode("utf-8")
        headers = {
            **self.headers,
            "Content-Type": "application/json",
            "User-Agent": "agent-wait",
            EVENT_HEADER: envelope.type,
            DEDUPE_HEADER: envelope.dedupe_key,
        }
        if self.secret is not None:
            headers[SIGNATURE_HEADER] = sign(self.secret, body)
            headers[TIMESTAMP_SIGNATURE_HEADER] = sign_timestamped(self.secret, body, int(self._clock()))
        return urllib.request.Request(self.url, data=body, headers=headers, method="POST")

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        request = self.build_request(envelope)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            raise WebhookDeliveryError(f"{self.url} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise WebhookDeliveryError(f"{self.url} unreachable: {reason}") from None
        if not 200 <= status < 300:
            raise WebhookDeliveryError(f"{self.url} answered HTTP {status}")
