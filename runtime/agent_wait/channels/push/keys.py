"""The VAPID key pair web push is sent with (RFC 8292), as the operator stores it in Secrets Manager.

The secret's text is JSON `{"public_key": ..., "private_key": ...}`: the P-256 public key as its uncompressed point
and the private key as its 32-byte scalar, both base64url without padding (the forms the Push API's
`applicationServerKey` and `pywebpush` take). `agent-wait push keys` makes and stores a pair; `agent-wait dev` makes
its own. The inbox is given the public key only (`GET /push/key`); the private key never leaves the router and the
sweep. Generating needs `cryptography` (the `push` extra); reading a pair needs only the standard library.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from agent_wait.errors import ArgumentError, ConfigurationError

__all__ = ("VapidKeys", "b64url", "b64url_bytes")


def b64url(data: bytes) -> str:
    """`data` as base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_bytes(text: str) -> bytes:
    """The bytes of base64url `text`, padded or not.

    Raises:
        ArgumentError: `text` is not base64url.
    """
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ArgumentError("expected base64url text (A-Z, a-z, 0-9, - and _)", argument="text") from exc


@dataclass(frozen=True, slots=True)
class VapidKeys:
    """A VAPID key pair (P-256). `repr` leaves out the private key."""

    public_key: str
    """The uncompressed public point (65 bytes, starting 0x04), base64url: the Push API's `applicationServerKey`."""
    private_key: str
    """The private scalar (32 bytes), base64url: what `pywebpush` signs with."""

    def __repr__(self) -> str:
        return f"VapidKeys(public_key={self.public_key!r}, private_key=<not shown>)"

    @classmethod
    def generate(cls) -> VapidKeys:
        """A new random pair."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return cls(b64url(point), b64url(key.private_numbers().private_value.to_bytes(32, "big")))

    def to_secret(self) -> str:
        """The secret's text."""
        return json.dumps({"public_key": self.public_key, "private_key": self.private_key})

    @classmethod
    def parse(cls, text: str, *, variable: str) -> VapidKeys:
        """The pair a secret's text holds.

        Raises:
            ConfigurationError: the text is not `{"public_key", "private_key"}` of the right sizes (never shown).
        """
        data: Any = None
        try:
            data = json.loads(text)
            public, private = b64url_bytes(data["public_key"]), b64url_bytes(data["private_key"])
            good = len(public) == 65 and public[0] == 4 and len(private) == 32
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            good = False
        if not good:
            raise ConfigurationError(
                [
                    f'{variable}: the secret must be JSON {{"public_key", "private_key"}}, a P-256 key pair in '
                    "base64url (65-byte uncompressed public point, 32-byte private scalar); `agent-wait push keys` "
                    "makes one (its value is not shown)"
                ],
                variables=[variable],
            )
        return cls(data["public_key"].rstrip("="), data["private_key"].rstrip("="))
