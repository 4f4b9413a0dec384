"""A software passkey (WebAuthn authenticator) for tests that drive the answer API without a browser.

`SoftPasskey.create(options)` answers `navigator.credentials.create` with a `none` attestation and
`SoftPasskey.get(options)` answers `navigator.credentials.get` with an ES256 assertion, each as the JSON a browser
sends (base64url fields), for `origin`. The browser tests use Chromium's own virtual authenticator instead.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import encode_cbor

UP, UV, AT = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class SoftPasskey:
    """One ES256 credential on a software authenticator, for `origin` (its host the relying party id)."""

    def __init__(self, origin: str, *, user_verified: bool = True) -> None:
        self.origin = origin
        self.rp_id = origin.split("://", 1)[1].split(":", 1)[0]
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(16)
        self.count = 0
        self.flags = UP | (UV if user_verified else 0)

    @property
    def id(self) -> str:
        return b64url(self.credential_id)

    def create(self, options: dict[str, Any]) -> dict[str, Any]:
        """The registration credential for `options` (`PublicKeyCredentialCreationOptions` JSON)."""
        client_data = self._client_data("webauthn.create", options["challenge"])
        numbers = self.key.public_key().public_numbers()
        cose = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        attested = bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id + encode_cbor(cose)
        auth_data = self._auth_data(AT) + attested
        attestation = encode_cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        response = {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation)}
        return {"id": self.id, "rawId": self.id, "type": "public-key", "response": response}

    def get(self, options: dict[str, Any], *, origin: str | None = None) -> dict[str, Any]:
        """The assertion for `options` (`PublicKeyCredentialRequestOptions` JSON), signed now."""
        self.count += 1
        client_data = self._client_data("webauthn.get", options["challenge"], origin=origin)
        auth_data = self._auth_data(0)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        response = {
            "clientDataJSON": b64url(client_data),
            "authenticatorData": b64url(auth_data),
            "signature": b64url(signature),
        }
        return {"id": self.id, "rawId": self.id, "type": "public-key", "response": response}

    def _client_data(self, kind: str, challenge: str, *, origin: str | None = None) -> bytes:
        data = {"type": kind, "challenge": challenge, "origin": origin or self.origin, "crossOrigin": False}
        return json.dumps(data).encode()

    def _auth_data(self, extra_flags: int) -> bytes:
        rp_hash = hashlib.sha256(self.rp_id.encode()).digest()
        return rp_hash + bytes([self.flags | extra_flags]) + self.count.to_bytes(4, "big")
