"""Signed per-question answer links, for people who answer from email or chat without signing in.

A link is a capability: whoever holds it may give one answer (its action) to one question until it
expires. It is an HMAC-SHA256 token under a named key, carried in the URL fragment of the confirmation
page, so it never reaches a server or proxy log (browsers do not send fragments):

    {api_url}/questions/{question_id}/confirm#v1.<kid>.<base64url(payload)>.<base64url(HMAC(key, "v1.<kid>.<payload>"))>

The payload is compact JSON: `q` the question id, `t` its thread id, `a` the action, `exp` the expiry in
Unix seconds and, when the link was made for someone, `sub` who it was sent to and `g` the answerer groups
the host vouches they belong to.

A link made for someone (a person-bound link) answers as that person: `sub` is recorded as `answered_by`, is
the principal matched against the policy's `answerer_principals`, and `g` the groups matched against its
`answerer_groups`; a quorum counts it as that person's vote. Minting one is the host's word for who the person
is, so only a door that knows the person (an email sent to their address) makes one. Whoever holds the link
answers as the person it was made for: a forwarded email answers as its first recipient.

Keys live in one Secrets Manager secret (`AGENT_WAIT_LINK_KEYS_ARN`) whose `SecretString` is a JSON object:

    {"active": "k2", "k1": "<at least 32 random characters>", "k2": "<at least 32 random characters>"}

`active` names the key that signs new links; every key listed verifies. To rotate without breaking the
links in flight: add `k2`, then set `active` to `k2`, and remove `k1` once its last link has expired
(at most `MAX_LINK_LIFETIME` later). A link signed with a removed key is refused as `unknown_key`.
Warm functions read the secret again through `LinkKeyring`: at once when a link names a key id they do
not know (bounded, so forged key ids can neither flood the secret nor crowd out a genuine new key), and
every `KEYRING_MAX_AGE` besides, so a rotation reaches them without a redeploy. Add a key and wait
`KEYRING_MAX_AGE` before making it active, and no link ever depends on the first of those reads.

Example:
    >>> keys = LinkKeys.parse('{"active": "k1", "k1": "' + "x" * 32 + '"}')
    >>> now = datetime(2030, 1, 1, tzinfo=UTC)
    >>> token = mint_token(keys, question_id="q-1", thread_id="order-1", action="approve",
    ...                    expires_at=now + timedelta(hours=4), now=now)
    >>> verify_token(keys, token, question_id="q-1", now=now).action
    'approve'

Long on purpose: a link's token, its keys and their rotation are one security boundary, kept in one place to
be read and reviewed whole.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import math
import re
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from agent_wait.aws.errors import error_code
from agent_wait.common.times import parse_rfc3339, require_aware
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import Settings
from agent_wait.errors import ArgumentError, ConfigurationError, WaitError
from agent_wait.people.keys import person_key, person_keys

__all__ = (
    "KEYRING_MAX_AGE",
    "KEYRING_MIN_INTERVAL",
    "KEYRING_MIN_REFRESH",
    "MAX_LINK_LIFETIME",
    "MAX_TOKEN_CHARS",
    "MIN_KEY_CHARS",
    "TOKEN_VERSION",
    "LinkClaims",
    "LinkError",
    "LinkKeyring",
    "LinkKeys",
    "LinkReason",
    "answer_links",
    "link_keyring",
    "link_url",
    "mint_token",
    "verify_token",
)

TOKEN_VERSION = "v1"
"""The first part of every token; a token of another version is refused as `malformed`."""
MAX_LINK_LIFETIME = timedelta(days=7)
"""The longest a link lives: a link expires at its question's deadline or this long after it was made,
whichever is earlier. It bounds how long a forwarded or leaked link stays usable for a question without a
deadline, and how long a rotated-out key must stay listed."""
MIN_KEY_CHARS = 32
"""The shortest signing key accepted, in characters (its UTF-8 bytes are the HMAC key)."""
MAX_TOKEN_CHARS = 4096
"""Longer tokens are refused as `malformed` before any work is done on them."""
KEYRING_MAX_AGE = timedelta(minutes=5)
"""How long a warm function uses the keys it read before reading the secret again: a removed key stops
verifying, and a new active key starts signing, at most this long after the secret changed."""
KEYRING_MIN_REFRESH = timedelta(seconds=30)
"""How long a key id that a read of the secret did not find is refused without reading again (so the same
forged key id cannot flood Secrets Manager)."""
KEYRING_MIN_INTERVAL = timedelta(seconds=1)
"""The least time between two reads that unknown key ids cause. A token under another unknown key id inside
it waits for the rest of the interval, then reads: a genuine new key is never refused because a forged one
came first, and tokens under ever new forged key ids cause at most one read per interval."""
KEYRING_MAX_MISSING = 1024
"""How many key ids that a read did not find are remembered (the oldest are forgotten first)."""

logger = logging.getLogger("agent_wait.host")

_KID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
_ACTIVE = "active"
_VARIABLE = Settings.LINK_KEYS_ARN.value
_EXAMPLE = '{"active": "k1", "k1": "<at least 32 random characters, e.g. from: openssl rand -base64 48>"}'


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


@dataclass(frozen=True, slots=True, eq=False)  # compared by identity: equality would have to compare secrets
class LinkKeys:
    """The keys that sign and verify answer links: `active` signs, every key verifies.

    Build it with `LinkKeys.parse(secret_string)` or `LinkKeys.load(secret_arn, client=...)`; the key
    material never appears in a repr or an error message.

    Example:
        >>> keys = LinkKeys.parse('{"active": "k2", "k1": "' + "a" * 32 + '", "k2": "' + "b" * 32 + '"}')
        >>> keys.active, keys.kids
        ('k2', ('k1', 'k2'))
    """

    active: str
    """The id of the key that signs new links."""
    keys: Mapping[str, bytes] = field(repr=False)
    """Every verifying key by id (its secret's UTF-8 bytes); includes `active`."""

    def __post_init__(self) -> None:
        problems: list[str] = []
        for kid, key in self.keys.items():
            if not isinstance(kid, str) or not _KID.fullmatch(kid):  # not shown: it may be a misplaced secret
                problems.append("a key id is not 1 to 64 letters, digits, '_' or '-'")
            elif not isinstance(key, bytes) or len(key) < MIN_KEY_CHARS:
                problems.append(f"key {kid!r} must be at least {MIN_KEY_CHARS} bytes")
        if self.active not in self.keys:
            problems.append(f"the active key {self.active!r} is not one of the keys given")
        if problems:
            raise ConfigurationError([f"{_VARIABLE}: {p}" for p in problems], variables=[_VARIABLE])
        object.__setattr__(self, "keys", MappingProxyType(dict(self.keys)))

    def verify(self, token: str, *, question_id: str, now: datetime) -> LinkClaims:
        """`verify_token` with these keys (the same call as `LinkKeyring.verify`)."""
        return verify_token(self, token, question_id=question_id, now=now)

    @property
    def kids(self) -> tuple[str, ...]:
        """The ids of every key that verifies, sorted."""
        return tuple(sorted(self.keys))

    @classmethod
    def parse(cls, secret_string: str) -> LinkKeys:
        """Read the keys from the secret's text: `{"active": "<kid>", "<kid>": "<secret>", ...}`.

        Args:
            secret_string: the secret's `SecretString`.

        Raises:
            ConfigurationError: every problem with the secret at once (not JSON, no `active`, `active` naming
                a key that is not there, a key id with other characters than letters, digits, `_` and `-`, a
                key that is not a string or is shorter than `MIN_KEY_CHARS`). Never quotes a key.
        """
        return cls._parse(secret_string, where=_VARIABLE)

    @classmethod
    def load(cls, secret_arn: str, *, client: Any = None) -> LinkKeys:
        """Read the keys from the Secrets Manager secret `secret_arn` (at cold start).

        Args:
            secret_arn: the secret's ARN (`AGENT_WAIT_LINK_KEYS_ARN`).
            client: a boto3 Secrets Manager client; None makes one from the default session.

        Raises:
            ConfigurationError: the secret cannot be read (with AWS's error code) or is not in the form above.
        """
        where = f"{_VARIABLE}={secret_arn!r}"
        if client is None:
            import boto3

            client = boto3.client("secretsmanager")
        try:
            response = client.get_secret_value(SecretId=secret_arn)
        except Exception as exc:  # botocore's ClientError, or BotoCoreError (no credentials, no endpoint)
            code = error_code(exc)
            raise ConfigurationError(
                [
                    f"{where}: cannot read the link keys ({code}); check the ARN, and give the answer API's function "
                    "secretsmanager:GetSecretValue on it (and kms:Decrypt on its key if it has its own)"
                ],
                variables=[_VARIABLE],
            ) from None
        text = response.get("SecretString")
        if not isinstance(text, str):
            raise ConfigurationError(
                [f"{where}: the secret is binary; store the link keys as text (SecretString), such as {_EXAMPLE}"],
                variables=[_VARIABLE],
            )
        return cls._parse(text, where=where)

    @classmethod
    def _parse(cls, text: str, *, where: str) -> LinkKeys:
        def refuse(problems: list[str]) -> ConfigurationError:
            return ConfigurationError([f"{where}: {p}" for p in problems], variables=[_VARIABLE])

        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise refuse([f"the link-keys secret must be a JSON object such as {_EXAMPLE}"])
        problems: list[str] = []
        keys: dict[str, bytes] = {}
        for position, (kid, value) in enumerate(data.items(), start=1):
            if kid == _ACTIVE:
                continue
            if not _KID.fullmatch(kid):  # the name is not shown: it may be a secret pasted in the wrong place
                problems.append(f"member {position}'s name is not a key id: use 1 to 64 letters, digits, '_' or '-'")
            elif not isinstance(value, str):
                problems.append(f"key {kid!r} must be a string (the secret text), not {type(value).__name__}")
            elif len(value) < MIN_KEY_CHARS:
                problems.append(
                    f"key {kid!r} is shorter than {MIN_KEY_CHARS} characters; make one with: openssl rand -base64 48"
                )
            else:
                keys[kid] = value.encode("utf-8")
        active = data.get(_ACTIVE)
        if not isinstance(active, str) or not active:
            problems.append(f'"active" must name the key that signs new links, such as {_EXAMPLE}')
        elif active not in data or active == _ACTIVE:
            problems.append(
                f'"active" names key {active!r}, which the secret does not hold; add that key, or set '
                '"active" to one of the key ids the secret lists'
            )
        if problems or not isinstance(active, str):
            raise refuse(problems)
        return cls(active=active, keys=keys)


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


def mint_token(
    keys: LinkKeys,
    *,
    question_id: str,
    thread_id: str,
    action: str,
    expires_at: datetime,
    approver: str | None = None,
    groups: Sequence[str] = (),
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
    vouched = _groups(groups)
    if vouched and approver is None:
        raise ArgumentError(
            "groups vouch for a person: make a link with groups only for a named approver", argument="groups"
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
    encoded = _b64encode(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    signed = f"{TOKEN_VERSION}.{keys.active}.{encoded}"
    return f"{signed}.{_signature(keys.keys[keys.active], signed)}"


def verify_token(keys: LinkKeys, token: str, *, question_id: str, now: datetime) -> LinkClaims:
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
    if version != TOKEN_VERSION or not _KID.fullmatch(kid):
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


class LinkKeyring:
    """The link keys of a warm function, read again from their secret when they may have rotated.

    The first read happens here (at cold start) and raises if the secret is unusable. Afterwards the keys
    are read again once they are older than `max_age`, and at once when a token names a key id they do not
    hold: a link signed under a new key by a function that has already read it works here too. Anyone can
    send a token under a made-up key id, so such reads are bounded without letting a forged id block a
    genuine one: a key id a read did not find is refused without reading for `min_refresh`, and reads for
    other unknown ids are at least `min_interval` apart (a token waits for its turn rather than being
    refused). A later read that fails keeps the keys in hand and logs the error's code: links keep working
    through a Secrets Manager outage.

    Args:
        load: reads the keys (`lambda: LinkKeys.load(arn, client=...)`).
        max_age: how long keys are used before they are read again.
        min_refresh: how long a key id a read did not find is refused without reading again.
        min_interval: the least time between two reads that unknown key ids cause.
        monotonic: seconds on a clock that never goes back (tests pass their own).
        sleep: waits a number of seconds (tests pass their own).

    Raises:
        ConfigurationError: the first read failed (see `LinkKeys.load`).

    Example:
        >>> secret = '{"active": "k1", "k1": "' + "x" * 32 + '"}'
        >>> ring = LinkKeyring(lambda: LinkKeys.parse(secret))
        >>> ring.keys().active
        'k1'
    """

    def __init__(
        self,
        load: Callable[[], LinkKeys],
        *,
        max_age: timedelta = KEYRING_MAX_AGE,
        min_refresh: timedelta = KEYRING_MIN_REFRESH,
        min_interval: timedelta = KEYRING_MIN_INTERVAL,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._load = load
        self._max_age = max_age.total_seconds()
        self._min_refresh = min_refresh.total_seconds()
        self._min_interval = min_interval.total_seconds()
        self._monotonic = monotonic
        self._sleep = sleep
        self._lock = threading.Lock()
        self._keys = load()
        self._read_at = monotonic()
        self._asked_at = -math.inf  # the last read an unknown key id caused
        self._missing: OrderedDict[str, float] = OrderedDict()  # key id -> when a read did not find it

    def keys(self) -> LinkKeys:
        """The keys, read again first when they are older than `max_age`."""
        with self._lock:
            if self._monotonic() - self._read_at >= self._max_age:
                self._reload()
            return self._keys

    def verify(self, token: str, *, question_id: str, now: datetime) -> LinkClaims:
        """`verify_token` with the current keys; a token under an unknown key id reads the secret again first.

        Raises:
            LinkError: as `verify_token`.
        """
        try:
            return verify_token(self.keys(), token, question_id=question_id, now=now)
        except LinkError as exc:
            if exc.reason is not LinkReason.UNKNOWN_KEY:
                raise
            kid = token.split(".")[1]  # verify_token found a well-formed key id there
            with self._lock:
                if kid not in self._keys.keys and not self._read_for(kid):
                    raise
                keys = self._keys
            return verify_token(keys, token, question_id=question_id, now=now)

    def _read_for(self, kid: str) -> bool:
        """Read the secret again for an unknown key id, unless a recent read already did not find it."""
        missed_at = self._missing.get(kid)
        if missed_at is not None and self._monotonic() - missed_at < self._min_refresh:
            return False
        wait = self._asked_at + self._min_interval - self._monotonic()
        if wait > 0:
            self._sleep(wait)
        self._asked_at = self._monotonic()
        self._reload()
        if kid in self._keys.keys:
            self._missing.pop(kid, None)
            return True
        self._missing[kid] = self._asked_at
        self._missing.move_to_end(kid)
        while len(self._missing) > KEYRING_MAX_MISSING:
            self._missing.popitem(last=False)
        return False

    def _reload(self) -> None:
        tried_at = self._monotonic()
        try:
            self._keys = self._load()
        except ConfigurationError as exc:
            logger.warning("link keys could not be read again; the keys read before stay in use: %s", exc)
        self._read_at = tried_at  # after a failure too: the next try waits max_age, not every request


def link_url(api_url: str, question_id: str, token: str) -> str:
    """The confirmation page's URL with the token in its fragment, which browsers never send to a server.

    Args:
        api_url: the answer API's base URL (`AGENT_WAIT_API_URL`), with its stage path if it has one.
        question_id: the question (percent-encoded into the path).
        token: from `mint_token`.
    """
    return f"{api_url.rstrip('/')}/questions/{urllib.parse.quote(question_id, safe='')}/confirm#{token}"


def answer_links(
    keys: LinkKeys,
    api_url: str,
    envelope: WaitEnvelope,
    *,
    now: datetime,
    approver: str | None = None,
    groups: Sequence[str] = (),
    issued_at: datetime | None = None,
) -> dict[str, str]:
    """One signed link per allowed action of `envelope`'s question, by action.

    Each link expires at the question's deadline, or `MAX_LINK_LIFETIME` after `issued_at` (default `now`)
    when that is earlier or the question has none. A question whose deadline has passed gets no links (an
    empty dict). A question whose policy names who may answer (`rules.answerers`: groups, principals) gets
    links only when they are made for an `approver` who is one of them: the approver is a named principal,
    or `groups` (which the caller vouches the approver belongs to) meet a named group. A quorum question
    gets links only when they are made for a named `approver`: each vote must be a distinct person's.

    The links are a function of their arguments: the same question, approver, groups and `issued_at` give
    the same links (under the same active key), so a message sent again carries the links it carried before.

    Args:
        keys: the link keys; the active one signs.
        api_url: the answer API's base URL.
        envelope: the question's envelope (an escalation's carries the widened `rules.answerers`).
        now: the current time (timezone-aware); no link is made that would already be expired.
        approver: who the links are made for (recorded as `answered_by`, matched as a principal); None records
            "signed link".
        groups: the answerer groups the caller vouches `approver` belongs to, carried in the links.
        issued_at: when the links' lifetime starts (for a message sent again, when it was first due); default
            `now`.
    """
    now = require_aware(now, "now")
    issued_at = now if issued_at is None else require_aware(issued_at, "issued_at")
    answerers = envelope.rules.get("answerers")
    if answerers and not _named(answerers, approver, _groups(groups)):
        return {}  # the link's answer would only be refused `answerer_not_allowed`
    if envelope.rules.get("quorum") and approver is None:
        return {}  # a quorum counts people, and a link made for nobody proves no one: they would all be one voter
    deadline = parse_rfc3339(envelope.expires_at) if envelope.expires_at else None
    expires_at = min(deadline, issued_at + MAX_LINK_LIFETIME) if deadline else issued_at + MAX_LINK_LIFETIME
    if math.floor(expires_at.timestamp()) <= now.timestamp():
        return {}
    return {
        action: link_url(
            api_url,
            envelope.question_id,
            mint_token(
                keys,
                question_id=envelope.question_id,
                thread_id=envelope.thread_id,
                action=action,
                expires_at=expires_at,
                approver=approver,
                groups=groups,
                now=now,
            ),
        )
        for action in envelope.allowed_actions
    }


def _named(answerers: Any, approver: str | None, groups: tuple[str, ...]) -> bool:
    """Whether `approver` (in `groups`) is among the policy's `answerers`, as `check_answer` will judge it."""
    if approver is None or not isinstance(answerers, Mapping):
        return False
    named = person_key(approver) in person_keys(answerers.get("principals") or ())
    return named or bool(set(groups) & set(answerers.get("groups") or ()))


def _groups(groups: Sequence[str]) -> tuple[str, ...]:
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
    q, t, a, exp, sub, g = (data.get(name) for name in ("q", "t", "a", "exp", "sub", "g"))
    if not (isinstance(q, str) and q and isinstance(t, str) and t and isinstance(a, str) and a):
        return None
    if type(exp) is not int or (sub is not None and not (isinstance(sub, str) and sub)):
        return None
    if g is not None and not (
        sub is not None and isinstance(g, list) and g and all(isinstance(group, str) and group for group in g)
    ):
        return None
    try:
        expires_at = datetime.fromtimestamp(exp, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return LinkClaims(
        question_id=q, thread_id=t, action=a, expires_at=expires_at, approver=sub, kid=kid, groups=tuple(g or ())
    )


def _signature(key: bytes, signed: str) -> str:
    return _b64encode(hmac.new(key, signed.encode("ascii"), hashlib.sha256).digest())


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def link_keyring(secret_arn: str, *, client: Any) -> LinkKeyring:
    """A `LinkKeyring` on the secret `secret_arn`: read now (cold start), and again when the keys may have rotated."""
    return LinkKeyring(lambda: LinkKeys.load(secret_arn, client=client))
