"""Passkeys (WebAuthn) for the answer API: a person registers one, and confirms answers to `require_passkey`
questions with it. `WebAuthnPasskeys` is the desk's `PasskeyVerifier` (`agent_wait.engine.proof`), built with the
`webauthn` package.

Registration: `registration_options` (a fresh challenge, kept in the `PasskeyBook` for one registration) then
`register` (the attestation verified; the credential kept under the person key with its COSE public key and sign
count). Confirming an answer: `answer_options` gives the time `at` and options whose challenge is the answer's
digest (`agent_wait.engine.proof.decision_digest`), limited to the person's own passkeys; the browser signs it, and
the desk calls `verify` with the digest it computes itself. Only algorithms `scripts/verify_decision.py` checks
offline are accepted (ES256, EdDSA, RS256), and the person must be verified by the authenticator (PIN, biometric).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from agent_wait.errors import PasskeyError, require_extra

require_extra("agent_wait.host.passkeys", "webauthn", "passkey")

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402  (after the extra check)
from webauthn import (  # noqa: E402
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url, parse_authentication_credential_json  # noqa: E402
from webauthn.helpers.cose import COSEAlgorithmIdentifier  # noqa: E402
from webauthn.helpers.decode_credential_public_key import decode_credential_public_key  # noqa: E402
from webauthn.helpers.decoded_public_key_to_cryptography import decoded_public_key_to_cryptography  # noqa: E402
from webauthn.helpers.exceptions import WebAuthnException  # noqa: E402
from webauthn.helpers.structs import (  # noqa: E402
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from agent_wait.common.times import format_rfc3339, utc_now  # noqa: E402
from agent_wait.engine.checks import Answerer  # noqa: E402
from agent_wait.engine.proof import PasskeyAssertion, PasskeyCheck, PasskeyVerifier, signed_inputs  # noqa: E402
from agent_wait.ledger import QuestionRecord  # noqa: E402
from agent_wait.ledger.passkeys import PasskeyBook, PasskeyCredential, RegistrationChallenge  # noqa: E402

__all__ = ("ALGORITHMS", "REGISTRATION_WINDOW", "WebAuthnPasskeys", "base64url")

ALGORITHMS = (
    COSEAlgorithmIdentifier.ECDSA_SHA_256,
    COSEAlgorithmIdentifier.EDDSA,
    COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256,
)
"""The signature algorithms a passkey may use: those the offline script verifies with `cryptography`."""
REGISTRATION_WINDOW = timedelta(minutes=5)
"""How long a registration's challenge may be used."""


def base64url(data: bytes) -> str:
    """`data` as unpadded base64url, the form WebAuthn's JSON uses."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class WebAuthnPasskeys(PasskeyVerifier):
    """Register passkeys and verify the assertions that confirm answers, for one relying party (the inbox's origin).

    Args:
        book: where passkeys are kept (`InMemoryPasskeyBook`, `agent_wait.aws.passkeys.DynamoDbPasskeyBook`).
        origin: the inbox's origin, `https://<API domain>` (`AGENT_WAIT_PASSKEY_ORIGIN`); its host is the relying
            party id, so a passkey works on this API's pages only.
        rp_name: the name an authenticator shows when registering.
        clock: returns now (UTC).

    Example:
        >>> from agent_wait.ledger.passkeys import InMemoryPasskeyBook
        >>> WebAuthnPasskeys(InMemoryPasskeyBook(), origin="http://localhost:8000").rp_id
        'localhost'
    """

    def __init__(
        self,
        book: PasskeyBook,
        *,
        origin: str,
        rp_name: str = "agent-wait",
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        parts = urlsplit(origin)
        if parts.scheme not in ("https", "http") or not parts.hostname or parts.path not in ("", "/"):
            raise PasskeyError("passkeys_off", f"the passkey origin must look like https://host[:port]; got {origin!r}")
        self.book = book
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.rp_id = parts.hostname
        self.rp_name = rp_name
        self.clock = clock

    # -- registration ---------------------------------------------------------------------------------------------

    def registration_options(self, person: Answerer) -> dict[str, Any]:
        """`PublicKeyCredentialCreationOptions` as JSON for `person` to register a passkey; the challenge is kept
        for one registration within `REGISTRATION_WINDOW`."""
        key = _key_of(person)
        challenge = secrets.token_bytes(32)
        options = generate_registration_options(
            rp_id=self.rp_id,
            rp_name=self.rp_name,
            user_name=key,
            user_id=_user_id(key),
            challenge=challenge,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=self._descriptors(key),
            supported_pub_key_algs=list(ALGORITHMS),
        )
        expires = format_rfc3339(self.clock() + REGISTRATION_WINDOW)
        self.book.put_challenge(key, RegistrationChallenge(base64url(challenge), expires))
        return json.loads(options_to_json(options))

    def register(self, person: Answerer, credential: Mapping[str, Any], *, label: str = "") -> PasskeyCredential:
        """Verify `credential` (from `navigator.credentials.create`) against `person`'s kept challenge and keep it.

        Raises:
            PasskeyError: `no_challenge` (no registration under way, or it expired), `registration_refused` (the
                attestation does not verify: its origin, challenge, flags or algorithm; or it is registered already).
        """
        key = _key_of(person)
        kept = self.book.take_challenge(key)
        now = self.clock()
        if kept is None or not kept.live(now):
            detail = "no passkey registration is under way for you; ask for its options again"
            raise PasskeyError("no_challenge", detail)
        try:
            verified = verify_registration_response(
                credential=dict(credential),
                expected_challenge=_bytes(kept.challenge),
                expected_rp_id=self.rp_id,
                expected_origin=self.origin,
                require_user_verification=True,
                supported_pub_key_algs=list(ALGORITHMS),
            )
        except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
            raise PasskeyError("registration_refused", f"the passkey was not registered: {exc}") from None
        registered = PasskeyCredential(
            person=key,
            credential_id=base64url(verified.credential_id),
            public_key=base64url(verified.credential_public_key),
            sign_count=verified.sign_count,
            registered_at=format_rfc3339(now),
            label=label.strip()[:100] or f"Passkey registered {format_rfc3339(now)}",
        )
        if not self.book.add_credential(registered):
            raise PasskeyError("registration_refused", "this passkey is registered to you already")
        return registered

    def credentials(self, person: Answerer) -> list[PasskeyCredential]:
        """`person`'s passkeys."""
        return self.book.credentials(_key_of(person))

    # -- confirming an answer -------------------------------------------------------------------------------------

    def answer_options(self, record: QuestionRecord, answer: Any, person: Answerer) -> dict[str, Any]:
        """What the inbox passes to `navigator.credentials.get` to confirm `answer` to `record`'s question:
        `{"at", "publicKey"}`, the challenge the answer's digest at `at` (now), limited to `person`'s passkeys.

        Raises:
            PasskeyError: `no_passkey` when `person` registered none.
        """
        descriptors = self._descriptors(_key_of(person))
        if not descriptors:
            raise PasskeyError("no_passkey", "you have no passkey registered: register one in the inbox, then answer")
        at = format_rfc3339(self.clock())
        options = generate_authentication_options(
            rp_id=self.rp_id,
            challenge=signed_inputs(record, answer, at).digest,
            allow_credentials=descriptors,
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        return {"at": at, "publicKey": json.loads(options_to_json(options))}

    def verify(self, assertion: PasskeyAssertion, *, challenge: bytes, answerer: Answerer) -> PasskeyCheck:
        key = answerer.answered_by
        try:
            parsed = parse_authentication_credential_json(json.dumps(dict(assertion.credential)))
        except (WebAuthnException, ValueError, KeyError, TypeError):
            return PasskeyCheck(problem="the passkey's assertion is not a PublicKeyCredential's JSON")
        credential_id = base64url(parsed.raw_id)
        kept = next((c for c in self.book.credentials(key) if c.credential_id == credential_id), None) if key else None
        if kept is None:
            return PasskeyCheck(problem=f"passkey {credential_id} is not one of {key or 'this sender'}'s passkeys")
        public_key = _bytes(kept.public_key)
        try:
            verified = verify_authentication_response(
                credential=parsed,
                expected_challenge=challenge,
                expected_rp_id=self.rp_id,
                expected_origin=self.origin,
                credential_public_key=public_key,
                credential_current_sign_count=kept.sign_count,
                require_user_verification=True,
            )
        except WebAuthnException as exc:
            return PasskeyCheck(problem=f"passkey {credential_id} did not confirm this answer: {exc}")
        response = parsed.response
        decoded = decode_credential_public_key(public_key)
        spki = decoded_public_key_to_cryptography(decoded).public_bytes(  # pyright: ignore[reportAttributeAccessIssue]
            Encoding.DER, PublicFormat.SubjectPublicKeyInfo
        )
        proof = {
            "credential_id": credential_id,
            "authenticator_data": bytes_to_base64url(response.authenticator_data),
            "client_data_json": bytes_to_base64url(response.client_data_json),
            "signature": bytes_to_base64url(response.signature),
            "public_key": base64url(spki),
            "algorithm": int(decoded.alg) if decoded.alg is not None else None,
            "rp_id": self.rp_id,
            "origin": self.origin,
            "sign_count": verified.new_sign_count,
            "user_verified": verified.user_verified,
            "person": key,
        }
        return PasskeyCheck(proof)

    def used(self, check: PasskeyCheck, answerer: Answerer) -> None:
        proof = check.proof or {}
        key, credential_id = answerer.answered_by, proof.get("credential_id")
        new = int(proof.get("sign_count") or 0)
        if not key or not credential_id or new == 0:
            return  # a passkey that keeps no counter (most synced ones) has nothing to move
        kept = next((c for c in self.book.credentials(key) if c.credential_id == credential_id), None)
        if kept is not None and new > kept.sign_count:
            self.book.count_signature(key, str(credential_id), seen=kept.sign_count, now=new)

    def _descriptors(self, key: str) -> list[PublicKeyCredentialDescriptor]:
        return [PublicKeyCredentialDescriptor(id=_bytes(c.credential_id)) for c in self.book.credentials(key)]


def _key_of(person: Answerer) -> str:
    if not person.answered_by:
        raise PasskeyError("no_passkey", "a passkey belongs to a person: sign in with a token that names you")
    return person.answered_by


def _user_id(key: str) -> bytes:
    """The WebAuthn user handle for a person key: a digest, never the address itself (WebAuthn asks for no personal
    data in it), the same on every registration so one authenticator keeps one passkey per person."""
    return hashlib.sha256(f"agent-wait person\0{key}".encode()).digest()


def _bytes(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
