"""A browser's side of web push, for tests: the keys `pushManager.subscribe` makes (RFC 8291) and the decryption a
device does, so a test can subscribe through the same route the inbox page uses and read what reached the push
service. Headless Chromium cannot reach a real push service to subscribe, so the test holds the keys instead."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ("Device",)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Device:
    """One browser's subscription: an endpoint at a push service, its P-256 key pair and its auth secret."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return _b64(point)

    def subscription(self) -> dict[str, Any]:
        """What `PushSubscription.toJSON()` gives, as the page POSTs it."""
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": self.p256dh, "auth": _b64(self.auth)},
        }

    def decrypt(self, body: bytes) -> dict[str, Any]:
        """The push's JSON, decrypted as the device does (RFC 8291, aes128gcm)."""
        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"))
