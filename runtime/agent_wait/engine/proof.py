"""Signed decisions: what a passkey signs for an answer, and the desk's check that it did (docs/proving.md).

A question asked with `WaitPolicy(require_passkey=...)` is decided only by an answer that carries a WebAuthn
assertion (`PasskeyAssertion`) whose challenge is `decision_digest`: SHA-256 over the canonical JSON of the question
id, the arguments as approved (after edits), the action, and the time the person's answer was prepared. The desk
(`agent_wait.engine.answering.AnswerDesk`) computes the digest from the question's row and the answer itself, and
asks the `PasskeyVerifier` the host injected whether the assertion signs exactly it with a passkey registered to the
answering person. What the verifier returns (the assertion, the credential's public key) is kept on the decided row
with the digest's inputs (`QuestionRecord.passkey`), so `scripts/verify_decision.py` can check the decision offline.

The engine verifies nothing itself: with no verifier, a question that needs a passkey refuses every answer. Standard
library only: the WebAuthn verifier lives in the host (`agent_wait.host.passkeys`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.bound_call import wait_call
from agent_wait.engine.checks import Answerer, Refusal
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.ledger import QuestionRecord
from agent_wait.policy.passkey import passkey_actions

__all__ = (
    "DIGEST_VERSION",
    "PASSKEY_WINDOW",
    "PasskeyAssertion",
    "PasskeyCheck",
    "PasskeyVerifier",
    "SignedInputs",
    "canonical_bytes",
    "confirm_passkey",
    "decision_digest",
    "needs_passkey",
    "signed_inputs",
)

DIGEST_VERSION = 1
"""The digest's form (`v` in what is hashed): a later form gets a new number, and the script checks it."""
PASSKEY_WINDOW = timedelta(minutes=5)
"""How long after its answer was prepared (`PasskeyAssertion.at`) an assertion may decide: a browser's WebAuthn
prompt times out after a minute; five leave room for a slow person, never for an assertion kept for later."""
INBOX_POINTER = "answer it in the inbox (/inbox#/questions/{question_id}), where your passkey confirms the answer"
"""Where a door that cannot do WebAuthn sends the person (the refusal's detail)."""


def canonical_bytes(value: Any) -> bytes:
    """`value` as canonical JSON (UTF-8): keys sorted, no spaces, non-ASCII kept, and every whole number written as
    an integer (`2.0` is `2`: a store hands numbers back as decimals, so the same value must hash the same)."""
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


@dataclass(frozen=True, slots=True)
class SignedInputs:
    """What a passkey signs for one answer; the digest is computed from these and nothing else."""

    question_id: str
    args: Any
    """The arguments as approved: a `@wait` call's arguments as asked with the answer's edits; for any other
    question, the question as asked."""
    action: str | None
    """The answer's action (None for a dialect's own answer, which names none of ours)."""
    at: str
    """When the person's answer was prepared (RFC 3339 UTC), by the host's clock."""

    def to_dict(self) -> dict[str, Any]:
        return {"v": DIGEST_VERSION, "question_id": self.question_id, "args": self.args, "action": self.action,
                "at": self.at}  # fmt: skip

    @property
    def digest(self) -> bytes:
        """`decision_digest` of these inputs."""
        return hashlib.sha256(canonical_bytes(self.to_dict())).digest()


def decision_digest(question_id: str, args: Any, action: str | None, at: str) -> bytes:
    """The challenge a passkey signs for an answer: SHA-256 over the canonical JSON of
    `{"v": 1, "question_id", "args", "action", "at"}` (`canonical_bytes`).

    Example:
        >>> decision_digest("q-1", {"amount": 900.0}, "approve", "2030-01-01T09:00:00Z").hex()[:16]
        '267aa8dd3885706d'
    """
    return SignedInputs(question_id, args, action, at).digest


def signed_inputs(record: QuestionRecord, answer: Any, at: str) -> SignedInputs:
    """The digest's inputs for `answer` to `record`'s question, prepared at `at`."""
    envelope = record.envelope
    action = answer.get("action") if isinstance(answer, Mapping) else None
    call = wait_call(envelope.question, envelope.source)
    if call is not None:
        edits = answer.get("args") if isinstance(answer, Mapping) else None
        args: Any = {**call[1], **(edits if isinstance(edits, Mapping) else {})}
    else:
        args = envelope.question
    return SignedInputs(record.question_id, args, action if isinstance(action, str) else None, at)


def needs_passkey(record: QuestionRecord, answer: Any) -> bool:
    """Whether `answer` to `record`'s question must be confirmed with a passkey: its action is one the policy names,
    or it names no action of ours (a dialect's own answer) while the policy names any."""
    actions = passkey_actions(record.envelope.rules)
    if not actions:
        return False
    action = answer.get("action") if isinstance(answer, Mapping) else None
    return not isinstance(action, str) or action in actions


@dataclass(frozen=True, slots=True)
class PasskeyAssertion:
    """A WebAuthn assertion as a door received it with an answer."""

    at: str
    """When the answer was prepared (the `at` the host gave with the options), an input of the digest."""
    credential: Mapping[str, Any]
    """The `PublicKeyCredential` from `navigator.credentials.get`, as JSON: `id`, `rawId`, `type` and `response`
    (`authenticatorData`, `clientDataJSON`, `signature`, `userHandle`), each base64url."""

    @classmethod
    def from_body(cls, value: Any) -> PasskeyAssertion | None:
        """The `passkey` field of an answer's body (`{"at": ..., "credential": {...}}`), or None when it is not one."""
        if not isinstance(value, Mapping) or not isinstance(value.get("at"), str):
            return None
        credential = value.get("credential")
        return cls(value["at"], dict(credential)) if isinstance(credential, Mapping) else None


@dataclass(frozen=True, slots=True)
class PasskeyCheck:
    """What a verifier found: the proof to keep on the row, or the problem (one sentence, ids only)."""

    proof: Mapping[str, Any] | None = None
    """The assertion (`credential_id`, `authenticator_data`, `client_data_json`, `signature`, base64url), the
    credential's public key (`public_key`, SubjectPublicKeyInfo DER in base64url, and its COSE `algorithm`), the
    `rp_id`, `origin`, `sign_count` and `person`; None when refused."""
    problem: str | None = None


class PasskeyVerifier(ABC):
    """Checks a WebAuthn assertion against the passkeys people registered (the host's: `agent_wait.host.passkeys`)."""

    @abstractmethod
    def verify(self, assertion: PasskeyAssertion, *, challenge: bytes, answerer: Answerer) -> PasskeyCheck:
        """Whether `assertion` signs `challenge` with a passkey registered to `answerer`'s person key (its origin,
        relying party, flags and signature); reads, writes nothing."""

    @abstractmethod
    def used(self, check: PasskeyCheck, answerer: Answerer) -> None:
        """Keep the sign count of the passkey that decided a question (after the decision was written)."""


def confirm_passkey(
    record: QuestionRecord,
    answer: Any,
    answerer: Answerer,
    assertion: PasskeyAssertion | None,
    verifier: PasskeyVerifier | None,
    *,
    received_at: datetime,
) -> tuple[Refusal | None, PasskeyCheck | None]:
    """The desk's passkey check: (refusal, None) when `answer` needs a passkey it does not carry verified, (None,
    check) with the proof to keep when it does, (None, None) when it needs none."""
    if not needs_passkey(record, answer):
        return None, None
    pointer = INBOX_POINTER.format(question_id=record.question_id)
    if assertion is None:
        detail = f"this question needs the answer confirmed with a passkey; {answerer.via} sent none: {pointer}"
        return (RefusalReason.PASSKEY_REQUIRED, detail), None
    if verifier is None:
        detail = f"this deployment verifies no passkeys (AGENT_WAIT_PASSKEY_ORIGIN is unset): {pointer}"
        return (RefusalReason.PASSKEY_REQUIRED, detail), None
    try:
        prepared = parse_rfc3339(assertion.at)
    except ValueError:
        return (RefusalReason.PASSKEY_REFUSED, f"the passkey's time {assertion.at!r} is not an RFC 3339 time"), None
    if not received_at - PASSKEY_WINDOW <= prepared <= received_at:
        detail = (
            f"the passkey signed an answer prepared at {format_rfc3339(prepared)}, outside the "
            f"{int(PASSKEY_WINDOW.total_seconds() // 60)} minutes before it arrived; confirm it again"
        )
        return (RefusalReason.PASSKEY_REFUSED, detail), None
    inputs = signed_inputs(record, answer, format_rfc3339(prepared))
    check = verifier.verify(assertion, challenge=inputs.digest, answerer=answerer)
    if check.proof is None:
        return (RefusalReason.PASSKEY_REFUSED, check.problem or "the passkey's assertion did not verify"), None
    proof = {**check.proof, "signed": inputs.to_dict(), "digest": _b64url(inputs.digest)}
    return None, PasskeyCheck(proof)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
