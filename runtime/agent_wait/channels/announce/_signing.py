"""HMAC-SHA256 webhook signatures.

Two schemes, sent side by side by `WebhookAnnounce`:

- agent-wait's own: `X-Agent-Wait-Signature` (the raw body) and `X-Agent-Wait-Timestamp-Signature`
  (`"<t>." + body`, refuses replays), keyed by the secret's UTF-8 bytes, exactly as before;
- Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
  `webhook-signature: v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>">`, one `v1,` entry per secret
  so that secrets can be rotated without downtime. A `whsec_<base64>` secret is keyed by its decoded bytes,
  as the specification says; any other str by its UTF-8 bytes; bytes as given.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Mapping, Sequence

from agent_wait.errors import ArgumentError, SignatureError

__all__ = (
    "STANDARD_SECRET_PREFIX",
    "WebhookSecrets",
    "secret_list",
    "sign",
    "sign_standard_webhook",
    "sign_timestamped",
    "standard_webhook_key",
    "verify_signature",
    "verify_standard_webhook",
    "verify_timestamped_signature",
)

DEFAULT_TOLERANCE_SECONDS = 300
STANDARD_SECRET_PREFIX = "whsec_"
"""The prefix Standard Webhooks gives a symmetric secret; the rest is the key, base64-encoded."""

WebhookSecrets = str | bytes | Sequence[str | bytes]
"""One secret, or several for rotation (the first is the current one)."""

_DIGITS = re.compile(r"[0-9]+")


def _hex_hmac(secret: str | bytes, message: bytes) -> str:
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _as_bytes(body: str | bytes) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def sign(secret: str | bytes, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256(secret, body)>`: the `X-Agent-Wait-Signature` header value."""
    return f"sha256={_hex_hmac(secret, body)}"


def sign_timestamped(secret: str | bytes, body: bytes, timestamp: int) -> str:
    """`t=<unix seconds>,sha256=<hex HMAC(secret, "<t>." + body)>`: the `X-Agent-Wait-Timestamp-Signature` value."""
    return f"t={timestamp},sha256={_hex_hmac(secret, str(timestamp).encode() + b'.' + body)}"


def verify_signature(secret: str | bytes, body: str | bytes, header: str | None) -> bool:
    """True when `header` is the `X-Agent-Wait-Signature` of `body` under `secret`. Constant-time.

    Pass the raw request body, byte for byte: a re-serialised JSON body will not match.
    """
    if not header or not header.startswith("sha256="):
        return False
    return hmac.compare_digest(header.encode(), sign(secret, _as_bytes(body)).encode())


def verify_timestamped_signature(
    secret: str | bytes,
    body: str | bytes,
    header: str | None,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> int:
    """Check an `X-Agent-Wait-Timestamp-Signature` header and refuse replays; returns the signed timestamp.

    Raises:
        SignatureError: `.reason` is `missing`, `malformed`, `mismatch`, `expired` (older than the
            tolerance) or `future` (more than the tolerance ahead of this clock).
    """
    if not header:
        raise SignatureError("missing", "no X-Agent-Wait-Timestamp-Signature header; refuse the request")
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
        claimed = parts["sha256"]
    except (KeyError, ValueError):
        raise SignatureError(
            "malformed", "X-Agent-Wait-Timestamp-Signature must look like 't=<unix seconds>,sha256=<hex>'"
        ) from None
    expected = sign_timestamped(secret, _as_bytes(body), timestamp).split(",", 1)[1]
    if not hmac.compare_digest(f"sha256={claimed}".encode(), expected.encode()):
        raise SignatureError("mismatch", "signature does not match the body; check the secret and use the raw body")
    _check_age(timestamp, tolerance_seconds, now)
    return timestamp


# --- Standard Webhooks ------------------------------------------------------------------------------


def secret_list(secrets: WebhookSecrets, *, what: str = "secret") -> tuple[str | bytes, ...]:
    """One secret or several as a non-empty tuple, newest first; never echoes a secret in an error.

    Raises:
        ValueError: no secret, an empty one, or something that is not a str or bytes.
    """
    if isinstance(secrets, (str, bytes)):
        items: tuple[object, ...] = (secrets,)
    elif isinstance(secrets, Sequence):
        items = tuple(secrets)
    else:  # a set has no order, and the first secret is the one that signs the legacy headers
        raise ArgumentError(
            f"{what} must be a str, bytes, or a list of them, newest first; got {type(secrets).__name__}"
        )
    if not items:
        raise ArgumentError(
            f"{what} must be a str, bytes, or a non-empty list of them; got an empty {type(secrets).__name__}"
        )
    for index, item in enumerate(items):
        if not isinstance(item, (str, bytes)):
            raise ArgumentError(f"{what} #{index + 1} must be a str or bytes; got {type(item).__name__}")
        if not item or not standard_webhook_key(item):
            raise ArgumentError(
                f"{what} #{index + 1} is empty; pass a real secret, or no secret for unsigned deliveries"
            )
    return items  # type: ignore[return-value]  # every item was checked above


def is_standard_secret(secret: str | bytes) -> bool:
    """True for a `whsec_<base64>` string whose key part decodes, as Standard Webhooks libraries require."""
    return isinstance(secret, str) and secret.startswith(STANDARD_SECRET_PREFIX) and _decode_key(secret) is not None


def _decode_key(secret: str) -> bytes | None:
    try:
        return base64.b64decode(secret[len(STANDARD_SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        return None


def standard_webhook_key(secret: str | bytes) -> bytes:
    """The HMAC key a secret gives for `webhook-signature`.

    `whsec_<base64>` gives the decoded bytes (the specification's form, what its libraries expect); any
    other str, including a `whsec_` one whose rest is not base64, gives its UTF-8 bytes; bytes are the key.
    """
    if isinstance(secret, bytes):
        return secret
    if secret.startswith(STANDARD_SECRET_PREFIX):
        decoded = _decode_key(secret)
        if decoded is not None:
            return decoded
    return secret.encode("utf-8")


def _standard_digest(key: bytes, content: bytes) -> str:
    return base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode("ascii")


def sign_standard_webhook(secrets: WebhookSecrets, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value: `v1,<base64 HMAC-SHA256>` per secret, space-separated.

    Each entry signs `"<webhook_id>.<timestamp>.<body>"` with `standard_webhook_key(secret)`.

    Example:
        >>> sign_standard_webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
        ...                       1614265330, b'{"test": 2432232314}')
        'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='

    Args:
        secrets: one secret, or several during a rotation (all of them sign).
        webhook_id: the `webhook-id` header; must not contain `.` (it would blur where the id ends).
        timestamp: the `webhook-timestamp` header, unix seconds.
        body: the raw request body, byte for byte.

    Raises:
        ValueError: an empty or dotted id, a negative timestamp, or no usable secret.
    """
    if not webhook_id or "." in webhook_id:
        raise ArgumentError("webhook-id must be non-empty and contain no '.'; use the envelope's event_id")
    if isinstance(timestamp, bool) or not isinstance(timestamp, int) or timestamp < 0:
        raise ArgumentError(f"webhook-timestamp must be whole unix seconds; got {timestamp!r}")
    content = f"{webhook_id}.{timestamp}.".encode() + body
    keys = [standard_webhook_key(secret) for secret in secret_list(secrets)]
    return " ".join(f"v1,{_standard_digest(key, content)}" for key in keys)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value.strip() if isinstance(value, str) and value.strip() else None


def verify_standard_webhook(
    secret_or_secrets: WebhookSecrets,
    body: str | bytes,
    headers: Mapping[str, str],
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> str:
    """Check a Standard Webhooks request (`webhook-id`, `webhook-timestamp`, `webhook-signature`).

    The request is accepted when any `v1,` entry of `webhook-signature` matches any of the secrets,
    compared in constant time; other entries (`v1a,` asymmetric ones) are ignored. The signature is
    checked before the age, so a forger learns nothing about this clock.

    Example:
        >>> secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        >>> body = b'{"test": 2432232314}'
        >>> headers = {"webhook-id": "msg_1", "webhook-timestamp": "1614265330"}
        >>> headers["webhook-signature"] = sign_standard_webhook(secret, "msg_1", 1614265330, body)
        >>> verify_standard_webhook(secret, body, headers, now=1614265331)
        'msg_1'

    Args:
        secret_or_secrets: the secret, or several while one is being rotated.
        body: the raw request body, byte for byte: a re-serialised JSON body will not match.
        headers: the request headers; names are matched case-insensitively.
        tolerance_seconds: how far the signed time may be from `now`, either way.
        now: unix seconds; the wall clock by default.

    Returns:
        The `webhook-id`: keep it for a while and drop a repeat, as the specification advises.

    Raises:
        SignatureError: `.reason` is `missing` (a header is absent), `malformed` (an unreadable
            timestamp or id, or no `v1,` entry), `mismatch`, `expired` (older than the tolerance) or
            `future` (more than the tolerance ahead of this clock).
        ValueError: no secret, or an empty one (a mistake in the receiver, not in the request).
    """
    keys = [standard_webhook_key(secret) for secret in secret_list(secret_or_secrets)]
    found = {name: _header(headers, name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    absent = [name for name, value in found.items() if value is None]
    if absent:
        raise SignatureError("missing", f"no {', '.join(absent)} header; refuse the request")
    webhook_id, timestamp_text, signature = (str(value) for value in found.values())
    if not _DIGITS.fullmatch(timestamp_text):
        raise SignatureError("malformed", "webhook-timestamp must be whole unix seconds (digits only)")
    if "." in webhook_id:
        raise SignatureError("malformed", "webhook-id must not contain '.'")
    claimed = [entry[3:] for entry in signature.split() if entry.startswith("v1,")]
    if not claimed:
        raise SignatureError("malformed", "webhook-signature must hold space-separated 'v1,<base64>' entries")
    content = f"{webhook_id}.{timestamp_text}.".encode() + _as_bytes(body)
    expected = [_standard_digest(key, content).encode() for key in keys]
    if not any(
        hmac.compare_digest(candidate.encode("utf-8", "replace"), digest)
        for candidate in claimed
        for digest in expected
    ):
        raise SignatureError("mismatch", "signature does not match the body; check the secret and use the raw body")
    _check_age(int(timestamp_text), tolerance_seconds, now)
    return webhook_id


def _check_age(timestamp: int, tolerance_seconds: int, now: float | None) -> None:
    age = (time.time() if now is None else now) - timestamp
    if age > tolerance_seconds:
        raise SignatureError("expired", f"signed {int(age)}s ago, beyond the {tolerance_seconds}s tolerance: a replay?")
    if age < -tolerance_seconds:
        raise SignatureError("future", f"signed {int(-age)}s in the future, beyond the {tolerance_seconds}s tolerance")
