"""A signed link's token: what it carries, how it is signed under a named key, and why one is refused.

    v1.<kid>.<base64url(payload)>.<base64url(HMAC(key, "v1.<kid>.<payload>"))>

The payload is compact JSON: `q` the question id, `t` its thread id, `a` the action, `exp` the expiry in Unix seconds
and, for a person-bound link, `sub` who it was sent to, `g` the answerer groups the host vouches they belong to and,
for a link that approves and grants, `o` the index of the policy's grant offer (`agent_wait.engine.offered`).
The keys that sign and verify are `LinkKeys` (`agent_wait.host._link_keys`); every name imports from
`agent_wait.host.links`, which tells the whole story.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from agent_wait.common.times import require_aware
from agent_wait.errors import ArgumentError, WaitError

__all__ = (
    "KEY_ID",
    "MAX_LINK_LIFETIME",
    "MAX_TOKEN_CHARS",
    "TOKEN_VERSION",
    "LinkClaims",
    "LinkError",
    "LinkReason",
    "SigningKeys",
    "mint_token",
    "verify_token",
    "vouched_groups",
)

TOKEN_VERSION = "v1"
"""The first part of every token; a token of another version is refused as `malformed`."""
MAX_LINK_LIFETIME = timedelta(days=7)
"""The longest a link lives: a link expires at its question's deadline or this long after it was made,
whichever is earlier. It bounds how long a forwarded or leaked link stays usable for a question without a
deadline, and how long a rotated-out key must stay listed."""
MAX_TOKEN_CHARS = 4096
"""Longer tokens are refused as `malformed` before any work is done on them."""
KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A key id: what a token names its key by, and a member name of the link-keys secret."""
_B64URL = re.compile(r"[A-Za-z0-9_-]+")


class SigningKeys(Protocol):
    """What signs and verifies tokens (`LinkKeys`): the id of the key that signs, and every verifying key by id."""

    @property
    def active(self) -> str: ...

    @property
    def keys(self) -> Mapping[str, bytes]: ...


class LinkReason(StrEnum):
    """Why a signed link was refused (`LinkError.reason`; the answer API's `reason`)."""

    MALFORMED = "malformed"
    """Not a token of this version: wrong shape, bad encoding, or a payload without the fields a link has."""
    UNKNOWN_KEY = "unknown_key"
    """Signed with a key id the secret no longer lists (rotated out), or never listed."""
    TAMPERED = "tampered"
    """The signature does not match the token's content: it was changed, or signed with another key."""
    EXPIRED = "expired"
    """The link's expiry (at the latest its question's deadline) has passed."""
    WRONG_QUESTION = "wrong_question"
    """An authentic link, but for another question than the one it was used on."""


class LinkError(WaitError, ValueError):
    """Raised when a signed answer link cannot be used; `.reason` says why. The message never holds the token."""

    def __init__(self, reason: LinkReason, message: str, *, question_id: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.question_id = question_id


@dataclass(frozen=True, slots=True)
class LinkClaims:
    """What a verified link says: who may answer which question with what, until when."""

    question_id: str
    """The question the link answers."""
    thread_id: str
    """The question's thread."""
    action: str
    """The one action the link gives."""
    expires_at: datetime
    """When the link stops working (UTC, whole seconds); never later than its question's deadline."""
    approver: str | None
    """Who the link was made for (recorded as `answered_by`, matched as a principal), or None."""
    kid: str
    """The id of the key that signed it."""
    groups: tuple[str, ...] = ()
    """The answerer groups the host vouched `approver` belongs to when it made the link."""
    offer: int | None = None
    """The index of the policy's grant offer this link approves with (`Grants.offers`), or None: a plain answer."""


def mint_token(
    keys: SigningKeys,
    *,
    question_id: str,
    thread_id: str,
    action: str,
    expires_at: datetime,
    approver: str | None = None,
    groups: Sequence[str] = (),
    offer: int | None = None,
    now: datetime,
) -> str:
    """Sign a token that answers `question_id` with `action`, under the active key.

    Args:
        keys: the link keys; the active one signs.
        question_id: the question the link answers.
        thread_id: the question's thread.
        action: the one action the link gives (one of the question's allowed actions).
        expires_at: the question's deadline. The link expires then, or `MAX_LINK_LIFETIME` after `now`,
            whichever is earlier (pass `now + MAX_LINK_LIFETIME` for a question without a deadline).
        approver: who the link is made for; recorded as `answered_by` when it is used, and the principal it
            answers as.
        groups: the answerer groups the host vouches `approver` belongs to (needs `approver`).
        offer: the index of the policy's grant offer the link approves with (needs `approver` and the action
            `approve`: a grant is one named person's decision).
        now: the current time (timezone-aware).

    Returns:
        The token, for `link_url`. The same arguments (and active key) always give the same token.

    Raises:
        ValueError: an id or the action is empty, a time is naive, a group is empty or given without an
            approver, or the link would already be expired.
    """
    now = require_aware(now, "now")
    deadline = min(require_aware(expires_at, "expires_at"), now + MAX_LINK_LIFETIME)
    for name, value in (("question_id", question_id), ("thread_id", thread_id), ("action", action)):
        if not isinstance(value, str) or not value:
            raise ArgumentError(f"{name} must be a non-empty string; got {value!r}")
    if approver is not None and (not isinstance(approver, str) or not approver):
        raise ArgumentError("approver must be a non-empty string or None")
    vouched = vouched_groups(groups)
    if vouched and approver is None:
        raise ArgumentError(
            "groups vouch for a person: make a link with groups only for a named approver", argument="groups"
        )
    if offer is not None and (type(offer) is not int or offer < 0 or approver is None or action != "approve"):
        raise ArgumentError(
            f"offer must be an offer's index (0 or more) on an approve link made for a named approver; got {offer!r}",
            argument="offer",
        )
    exp = math.floor(deadline.timestamp())  # whole seconds, never after the deadline
    if exp <= now.timestamp():
        raise ArgumentError(
            f"expires_at {deadline.isoformat()} is not after now {now.isoformat()}: the link would be expired "
            "already; send no link for a question whose deadline has passed"
        )
    payload: dict[str, Any] = {"a": action, "exp": exp, "q": question_id, "t": thread_id}
    if approver is not None:
        payload["sub"] = approver
    if vouched:
        payload["g"] = list(vouched)
    if offer is not None:
        payload["o"] = offer
    encoded = _b64encode(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    signed = f"{TOKEN_VERSION}.{keys.active}.{encoded}"
    return f"{signed}.{_signature(keys.keys[keys.active], signed)}"


def verify_token(keys: SigningKeys, token: str, *, question_id: str, now: datetime) -> LinkClaims:
    """Check that `token` is an unexpired link for `question_id`, signed with one of `keys`.

    The signature is compared in constant time, and checked before the payload is read.

    Args:
        keys: the link keys; any of them verifies.
        token: the token from the link's fragment.
        question_id: the question the link is being used on.
        now: the current time (timezone-aware).

    Returns:
        The link's claims.

    Raises:
        LinkError: with `.reason` `malformed`, `unknown_key`, `tampered`, `expired` or `wrong_question`.
    """
    now = require_aware(now, "now")

    def refuse(reason: LinkReason, message: str) -> LinkError:
        return LinkError(reason, message, question_id=question_id)

    malformed = refuse(
        LinkReason.MALFORMED,
        f"the link for question {question_id} is not a complete answer link; open it exactly as it was sent, "
        "or ask for a new one",
    )
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS or not token.isascii():
        raise malformed
    parts = token.split(".")
    if len(parts) != 4:
        raise malformed
    version, kid, payload_text, signature = parts
    if version != TOKEN_VERSION or not KEY_ID.fullmatch(kid):
        raise malformed
    if not _B64URL.fullmatch(payload_text) or not _B64URL.fullmatch(signature):
        raise malformed
    key = keys.keys.get(kid)
    if key is None:
        raise refuse(
            LinkReason.UNKNOWN_KEY,
            f"the link for question {question_id} was signed with a key that is no longer in use; ask for a new link",
        )
    if not hmac.compare_digest(_signature(key, f"{version}.{kid}.{payload_text}"), signature):
        raise refuse(
            LinkReason.TAMPERED,
            f"the link for question {question_id} has been changed since it was signed; open it exactly as it "
            "was sent, or ask for a new one",
        )
    claims = _claims(payload_text, kid)
    if claims is None:
        raise malformed
    if claims.question_id != question_id:
        raise refuse(
            LinkReason.WRONG_QUESTION,
            f"this link answers another question, not {question_id}; open the link sent for this question",
        )
    if now >= claims.expires_at:
        raise refuse(
            LinkReason.EXPIRED,
            f"the link for question {question_id} expired at {claims.expires_at.isoformat()}",
        )
    return claims


def vouched_groups(groups: Sequence[str]) -> tuple[str, ...]:
    """`groups` checked (non-empty strings), each once, in order."""
    if isinstance(groups, str) or not all(isinstance(g, str) and g for g in groups):
        raise ArgumentError(f"groups must be a list of non-empty strings; got {groups!r}", argument="groups")
    return tuple(dict.fromkeys(groups))


def _claims(payload_text: str, kid: str) -> LinkClaims | None:
    """The claims in an authentic payload, or None when it lacks the fields a link has."""
    try:
        data = json.loads(base64.urlsafe_b64decode(payload_text + "=" * (-len(payload_text) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    q, t, a, exp, sub, g, o = (data.get(name) for name in ("q", "t", "a", "exp", "sub", "g", "o"))
    if not (isinstance(q, str) and q and isinstance(t, str) and t and isinstance(a, str) and a):
        return None
    if type(exp) is not int or (sub is not None and not (isinstance(sub, str) and sub)):
        return None
    if g is not None and not (
        sub is not None and isinstance(g, list) and g and all(isinstance(group, str) and group for group in g)
    ):
        return None
    if o is not None and not (type(o) is int and o >= 0 and sub is not None):
        return None
    try:
        expires_at = datetime.fromtimestamp(exp, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return LinkClaims(
        question_id=q,
        thread_id=t,
        action=a,
        expires_at=expires_at,
        approver=sub,
        kid=kid,
        groups=tuple(g or ()),
        offer=o,
    )


def _signature(key: bytes, signed: str) -> str:
    return _b64encode(hmac.new(key, signed.encode("ascii"), hashlib.sha256).digest())


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
