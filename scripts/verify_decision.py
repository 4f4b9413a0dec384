#!/usr/bin/env python3
"""Verify a passkey-signed decision from an agent-wait audit export, offline, without trusting agent-wait.

    python scripts/verify_decision.py audit.jsonl --question <question id>
    agent-wait audit export --since 2030-01-01 --format jsonl | python scripts/verify_decision.py - --question q-1

Reads one row of the audit trail (JSON lines, as `agent-wait audit export` and `GET /audit` give it; or one JSON
object) and checks, from that row alone:

1. the signed inputs (`passkey.signed`) are the row's own question id, action and arguments (the call's arguments
   as asked with the answer's edits, `approved_args` for an approval);
2. the digest, SHA-256 over their canonical JSON, is the challenge the passkey signed (`clientDataJSON`'s
   `challenge`), in a `webauthn.get` ceremony at the recorded origin;
3. the authenticator data is for the recorded relying party (its `rpIdHash`) with the person present and verified;
4. the signature over `authenticatorData || SHA-256(clientDataJSON)` verifies with the credential's public key.

Prints `verified: ...` and exits 0, or prints `not verified: <what failed>` and exits 1 (2 for a usage error). Needs
only the standard library and `cryptography` (`pip install cryptography`). docs/proving.md says what each field is.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.serialization import load_der_public_key

DIGEST_VERSION = 1
"""The digest form this script checks (`v` in the signed inputs)."""
USER_PRESENT, USER_VERIFIED = 0x01, 0x04
"""The authenticator data's flag bits: the person touched the authenticator; and proved who they are to it."""


class NotVerifiedError(Exception):
    """One check failed; the message names it."""


def canonical_bytes(value: Any) -> bytes:
    """Canonical JSON, as agent-wait hashes it: keys sorted, no spaces, non-ASCII kept, whole numbers as integers."""
    return json.dumps(
        _whole_numbers(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _whole_numbers(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(key): _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_whole_numbers(item) for item in value]
    return value


def b64url_decode(text: str, name: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(str(text) + "=" * (-len(str(text)) % 4))
    except (ValueError, TypeError):
        raise NotVerifiedError(f"{name} is not base64url") from None


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def expected_args(row: Mapping[str, Any]) -> list[Any]:
    """Every form of the arguments the row says were decided; the signed ones must equal each of them."""
    forms: list[Any] = []
    question, edits = row.get("question"), row.get("args")
    is_call = isinstance(question, Mapping) and isinstance(question.get("function"), str)
    asked = question.get("args") if is_call and isinstance(question, Mapping) else None
    if isinstance(asked, Mapping):
        forms.append({**asked, **(edits if isinstance(edits, Mapping) else {})})
    else:
        forms.append(question)
    if row.get("approved_args") is not None:
        forms.append(row["approved_args"])
    return forms


def verify(row: Mapping[str, Any]) -> str:
    """Check one audit row's passkey proof; the sentence to print when it holds.

    Raises:
        NotVerifiedError: naming the first check that failed.
    """
    proof = row.get("passkey")
    if not isinstance(proof, Mapping):
        raise NotVerifiedError(f"question {row.get('question_id')} carries no passkey proof")
    signed = proof.get("signed")
    if not isinstance(signed, Mapping) or signed.get("v") != DIGEST_VERSION:
        raise NotVerifiedError(f"the signed inputs are missing or not of digest version {DIGEST_VERSION}")
    _check_inputs(row, proof, signed)
    client_data_bytes = _check_ceremony(proof, signed)
    _check_signature(proof, client_data_bytes)
    return (
        f"verified: question {row['question_id']} decided {row.get('action')!r} by {row.get('answered_by')} with "
        f"passkey {proof.get('credential_id')} at {signed.get('at')}"
    )


def _check_inputs(row: Mapping[str, Any], proof: Mapping[str, Any], signed: Mapping[str, Any]) -> None:
    """1. What was signed is what the row says was decided, by whom."""
    if signed.get("question_id") != row.get("question_id"):
        raise NotVerifiedError(
            f"question id: signed {signed.get('question_id')!r}, the row says {row.get('question_id')!r}"
        )
    if signed.get("action") != row.get("action"):
        raise NotVerifiedError(f"action: signed {signed.get('action')!r}, the row says {row.get('action')!r}")
    for form in expected_args(row):
        if canonical_bytes(signed.get("args")) != canonical_bytes(form):
            raise NotVerifiedError("arguments: the signed arguments are not those the row says were decided")
    if proof.get("person") is not None and proof.get("person") != row.get("answered_by"):
        raise NotVerifiedError(
            f"person: the passkey is {proof.get('person')!r}'s, the row says {row.get('answered_by')!r}"
        )


def _check_ceremony(proof: Mapping[str, Any], signed: Mapping[str, Any]) -> bytes:
    """2. The digest of the signed inputs is the challenge of a `webauthn.get` ceremony at the recorded origin, and
    3. the authenticator data is for the recorded relying party, with the person present and verified. Returns the
    clientDataJSON bytes."""
    digest = hashlib.sha256(canonical_bytes(dict(signed))).digest()
    if proof.get("digest") != b64url(digest):
        raise NotVerifiedError("digest: the recorded digest is not the digest of the signed inputs")
    client_data_bytes = b64url_decode(proof.get("client_data_json", ""), "client_data_json")
    try:
        client_data = json.loads(client_data_bytes)
    except ValueError:
        raise NotVerifiedError("client_data_json is not JSON") from None
    if client_data.get("type") != "webauthn.get":
        raise NotVerifiedError(f"clientDataJSON type is {client_data.get('type')!r}, not 'webauthn.get'")
    if client_data.get("challenge") != b64url(digest):
        raise NotVerifiedError("challenge: the passkey signed another challenge than this decision's digest")
    if client_data.get("origin") != proof.get("origin"):
        raise NotVerifiedError(f"origin: signed at {client_data.get('origin')!r}, recorded {proof.get('origin')!r}")
    authenticator_data = b64url_decode(proof.get("authenticator_data", ""), "authenticator_data")
    if len(authenticator_data) < 37:
        raise NotVerifiedError("authenticator_data is shorter than 37 bytes")
    if authenticator_data[:32] != hashlib.sha256(str(proof.get("rp_id", "")).encode()).digest():
        raise NotVerifiedError(f"rpIdHash: the authenticator data is not for relying party {proof.get('rp_id')!r}")
    flags = authenticator_data[32]
    if not flags & USER_PRESENT:
        raise NotVerifiedError("flags: the person was not present (UP unset)")
    if not flags & USER_VERIFIED:
        raise NotVerifiedError("flags: the person was not verified by the authenticator (UV unset)")
    return client_data_bytes


def _check_signature(proof: Mapping[str, Any], client_data_bytes: bytes) -> None:
    """4. The signature over `authenticatorData || SHA-256(clientDataJSON)`, with the credential's public key."""
    authenticator_data = b64url_decode(proof.get("authenticator_data", ""), "authenticator_data")
    signature = b64url_decode(proof.get("signature", ""), "signature")
    message = authenticator_data + hashlib.sha256(client_data_bytes).digest()
    try:
        key = load_der_public_key(b64url_decode(proof.get("public_key", ""), "public_key"))
    except ValueError:
        raise NotVerifiedError("public_key is not a DER SubjectPublicKeyInfo") from None
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, message, padding.PKCS1v15(), hashes.SHA256())
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, message)
        else:
            raise NotVerifiedError(f"public_key is a {type(key).__name__}; ES256, EdDSA and RS256 are checked")
    except InvalidSignature:
        raise NotVerifiedError("signature: it does not verify with the credential's public key") from None


def read_row(text: str, question_id: str | None) -> Mapping[str, Any]:
    """The row to check: the one with `question_id` (and a passkey proof), else the only row with a proof. `text` is
    JSON lines (`agent-wait audit export`), one row, or a `GET /audit` body (its `questions`)."""
    rows: list[Any] = []
    stripped = text.strip()
    if stripped.startswith("{") and "\n" not in stripped:
        whole = json.loads(stripped)
        rows = list(whole["questions"]) if isinstance(whole.get("questions"), list) else [whole]
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    rows = [r for r in rows if isinstance(r, Mapping) and "question_id" in r and "asked_at" in r]  # questions only
    if question_id is not None:
        rows = [r for r in rows if r.get("question_id") == question_id]
        if not rows:
            raise NotVerifiedError(f"no row for question {question_id} in the export")
        return rows[-1]
    proven = [r for r in rows if r.get("passkey")]
    if len(proven) != 1:
        raise NotVerifiedError(f"the export holds {len(proven)} passkey-signed rows; name one with --question")
    return proven[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify a passkey-signed decision from an agent-wait audit export.")
    parser.add_argument("export", help="the audit export (JSON lines, or one JSON object); - reads standard input")
    parser.add_argument("--question", help="the question id of the row to verify")
    options = parser.parse_args(argv)
    try:
        if options.export == "-":
            text = sys.stdin.read()
        else:
            with open(options.export, encoding="utf-8") as file:
                text = file.read()
    except OSError as exc:
        print(f"cannot read {options.export}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        print(verify(read_row(text, options.question)))
    except json.JSONDecodeError as exc:
        print(f"not verified: the export is not JSON lines ({exc.msg} at line {exc.lineno})")
        return 1
    except NotVerifiedError as exc:
        print(f"not verified: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
