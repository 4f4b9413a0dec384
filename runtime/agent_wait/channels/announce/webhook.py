"""`WebhookAnnounce`: one signed JSON POST per envelope, standard library only."""

from __future__ import annotations

import logging
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

from agent_wait.channels.announce._signing import (
    STANDARD_SECRET_PREFIX,
    WebhookSecrets,
    is_standard_secret,
    secret_list,
    sign,
    sign_standard_webhook,
    sign_timestamped,
)
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import ArgumentError

__all__ = ("WebhookAnnounce", "WebhookDeliveryError", "is_url", "origin_of")

logger = logging.getLogger("agent_wait.channels.announce")

EVENT_HEADER = "X-Agent-Wait-Event"
DEDUPE_HEADER = "X-Agent-Wait-Dedupe-Key"
SIGNATURE_HEADER = "X-Agent-Wait-Signature"
TIMESTAMP_SIGNATURE_HEADER = "X-Agent-Wait-Timestamp-Signature"
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"

_DEFAULT_PORTS = {"http": 80, "https": 443}
_FINAL_URL = "point the webhook at the final URL"


class WebhookDeliveryError(Exception):
    """The receiver answered with a non-2xx status or could not be reached (contained by `BaseAnnounce`).

    The message names the receiver by its origin (`scheme://host[:port]`) only: a webhook URL's path and
    query often carry a token.
    """


def is_url(text: str) -> bool:
    """Whether `text` is one http(s) URL, as a secret holding a webhook's URL must be."""
    return text.startswith(("https://", "http://")) and not any(c.isspace() for c in text)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url`, the only part of a webhook URL agent-wait ever logs.

    The port is shown when it is not the scheme's default; user info, path, query and fragment never are.
    """
    scheme, host, port = _origin_key(url)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" if port == _DEFAULT_PORTS.get(scheme) else f"{scheme}://{shown}:{port}"


def _origin_key(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or ""), port if port is not None else _DEFAULT_PORTS.get(scheme)


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a 307/308 to the same origin with the same POST; refuse every other redirect.

    urllib on its own follows a 301/302/303 from a POST as a bodiless GET, to any host, carrying every
    header: the signatures, `Authorization`, the caller's `headers=`. Here nothing is ever sent to
    another origin, and a redirect that would drop the body is a failure, not a silent GET.
    """

    def redirect_request(  # noqa: PLR0917  # urllib's signature, positional as it calls it
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        origin = origin_of(req.full_url)
        if _origin_key(newurl) != _origin_key(req.full_url):
            fp.close()
            raise WebhookDeliveryError(
                f"{origin} answered HTTP {code}, redirected to another host ({origin_of(newurl)}); "
                f"nothing was sent there: {_FINAL_URL}"
            )
        if code not in (307, 308):
            fp.close()
            raise WebhookDeliveryError(
                f"{origin} answered HTTP {code}, a redirect that would resend the POST as a GET without its body; "
                f"{_FINAL_URL}"
            )
        return urllib.request.Request(
            newurl,
            data=req.data,
            headers=dict(req.headers),
            origin_req_host=req.origin_req_host,
            unverifiable=True,
            method=req.get_method(),
        )


class WebhookAnnounce(BaseAnnounce):
    """POST each envelope as JSON to `url`, signed two ways when given a secret.

    Headers: `X-Agent-Wait-Event` (the envelope type) and `X-Agent-Wait-Dedupe-Key`, and with a secret:

    - agent-wait's own signatures, unchanged byte for byte: `X-Agent-Wait-Signature: sha256=<hex
      HMAC-SHA256(secret, raw body)>` and `X-Agent-Wait-Timestamp-Signature: t=<unix>,sha256=<hex
      HMAC(secret, "<t>." + body)>`, keyed by the secret's UTF-8 bytes (`verify_signature`,
      `verify_timestamped_signature`);
    - the Standard Webhooks headers (https://www.standardwebhooks.com): `webhook-id` (the envelope's
      `event_id`), `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 over
      "<id>.<timestamp>.<body>">`, keyed by the base64-decoded part of a `whsec_<base64>` secret, as the
      specification and its libraries expect (`verify_standard_webhook`).

    Rotation: pass `secret=[new, old]`. The first secret signs the `X-Agent-Wait-*` headers; every one
    signs `webhook-signature`, space-separated, so receivers holding either secret accept the request.

    Redirects: a 307 or 308 to the same origin (scheme, host and port) is followed with the same POST,
    body and headers (a trailing-slash redirect, say). Anything else is a failed delivery, sending nothing
    further: a redirect to another origin (urllib would forward every header, signatures and
    `Authorization` included), and a 301/302/303 (urllib would resend the POST as a GET without its body).

    The URL is never logged: errors, log lines and `repr` name its origin only, because a path or query
    may carry a token. No retry: the POST runs inside the agent's invocation, so the timeout is short and
    a failure is a log line, never an exception in the run.

    Example:
        >>> secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # "whsec_" + base64 of the key
        >>> hook = WebhookAnnounce("https://approvals.example.com/hooks?token=abc", secret=secret)
        >>> hook
        WebhookAnnounce(name='webhook', origin='https://approvals.example.com')

    Args:
        url: the receiver; http or https.
        secret: the shared HMAC secret (str or bytes), or a list of them newest first; unsigned when None.
            Prefer `"whsec_" + base64(32 random bytes)`: Standard Webhooks libraries accept only that form.
        headers: extra headers sent on every request (e.g. an API key); they cannot replace the headers above.
        timeout: seconds to wait for the receiver.
        delivers: the transitions to POST; all by default.
        clock: unix seconds, for the timestamps.

    Raises:
        ValueError: a URL that is not http(s) with a host, a timeout that is not a positive number, or a
            secret that is empty or not a str or bytes (never echoed).
    """

    name = "webhook"

    def __init__(
        self,
        url: str,
        *,
        secret: WebhookSecrets | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 5.0,
        delivers: Iterable[Transition | str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(delivers=delivers)
        parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            given = f"scheme {parts.scheme!r} and host {parts.hostname!r}" if parts is not None else type(url).__name__
            raise ArgumentError(
                f"WebhookAnnounce url must start with http:// or https:// and name a host; got {given} "
                "(the rest of the URL is not shown: it may carry a token)"
            )
        try:
            parts.port  # noqa: B018  # urlsplit checks the port only when asked
        except ValueError:
            raise ArgumentError(
                f"WebhookAnnounce url has a port that is not a number from 0 to 65535 (host {parts.hostname!r})"
            ) from None
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise ArgumentError(f"WebhookAnnounce timeout must be more than 0 seconds; got {timeout!r}")
        self._secrets = () if secret is None else secret_list(secret, what="WebhookAnnounce secret")
        for index, item in enumerate(self._secrets):
            if isinstance(item, str) and item.startswith(STANDARD_SECRET_PREFIX) and not is_standard_secret(item):
                logger.warning(
                    "webhook secret #%d starts with %r but the rest is not base64: webhook-signature is keyed by "
                    "its UTF-8 text, which Standard Webhooks libraries refuse; use 'whsec_' + base64(32 random bytes)",
                    index + 1,
                    STANDARD_SECRET_PREFIX,
                )
        self.url = url
        self.secret = secret
        self.headers = dict(headers or {})
        self.timeout = timeout
        self._clock = clock
        self._opener = urllib.request.build_opener(_SameOriginRedirects())

    @property
    def origin(self) -> str:
        """`scheme://host[:port]` of the URL: what errors, log lines and `repr` show of it."""
        return origin_of(self.url)

    def body(self, envelope: WaitEnvelope) -> bytes:
        """What is POSTed for `envelope`: the envelope's JSON (a subclass may shape it; the signatures cover it)."""
        return envelope.to_json().encode("utf-8")

    def build_request(self, envelope: WaitEnvelope) -> urllib.request.Request:
        """The exact request `deliver` sends (public so receivers can test against it)."""
        body = self.body(envelope)
        headers = {
            **self.headers,
            "Content-Type": "application/json",
            "User-Agent": "agent-wait",
            EVENT_HEADER: envelope.type,
            DEDUPE_HEADER: envelope.dedupe_key,
        }
        if self._secrets:
            timestamp = int(self._clock())
            current = self._secrets[0]
            headers[SIGNATURE_HEADER] = sign(current, body)
            headers[TIMESTAMP_SIGNATURE_HEADER] = sign_timestamped(current, body, timestamp)
            headers[STANDARD_ID_HEADER] = envelope.event_id
            headers[STANDARD_TIMESTAMP_HEADER] = str(timestamp)
            headers[STANDARD_SIGNATURE_HEADER] = sign_standard_webhook(
                self._secrets, envelope.event_id, timestamp, body
            )
        return urllib.request.Request(self.url, data=body, headers=headers, method="POST")

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        request = self.build_request(envelope)
        origin = self.origin
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                status = response.status
        except WebhookDeliveryError:
            raise
        except urllib.error.HTTPError as exc:
            exc.close()
            if 300 <= exc.code < 400:  # a redirect loop, or one without a Location
                raise WebhookDeliveryError(
                    f"{origin} answered HTTP {exc.code}, a redirect that was not followed; {_FINAL_URL}"
                ) from None
            raise WebhookDeliveryError(f"{origin} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise WebhookDeliveryError(f"{origin} unreachable: {reason}") from None
        except Exception as exc:  # http.client puts the URL in some messages (control characters): name the type only
            raise WebhookDeliveryError(f"{origin} could not be sent: {type(exc).__name__}") from None
        if not 200 <= status < 300:
            raise WebhookDeliveryError(f"{origin} answered HTTP {status}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, origin={self.origin!r})"
