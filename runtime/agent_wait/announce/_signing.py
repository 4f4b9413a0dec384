"""HMAC-SHA256 webhook signatures: a plain body signature, and a timestamped one that refuses replays."""

from __future__ import annotations

import hashlib
import hmac
import time

from agent_wait.errors import SignatureError

__all__ = ("sign", "sign_timestamped", "verify_signature", "verify_timestamped_signature")

DEFAULT_TOLERANCE_SECONDS = 300


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
    age = (time.time() if now is None else now) - timestamp
    if age > tolerance_seconds:
        raise SignatureError("expired", f"signed {int(age)}s ago, beyond the {tolerance_seconds}s tolerance: a replay?")
    if age < -tolerance_seconds:
        raise SignatureError("future", f"signed {int(-age)}s in the future, beyond the {tolerance_seconds}s tolerance")
    return timestamp
