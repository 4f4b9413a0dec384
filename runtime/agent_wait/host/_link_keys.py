"""The keys that sign answer links: the secret's form (`LinkKeys.parse`), reading it from Secrets Manager
(`LinkKeys.load`), and a warm function's keyring that reads it again when the keys may have rotated (`LinkKeyring`).
`agent_wait.host.links` tells how to rotate them; every name imports from there.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from agent_wait.aws.errors import error_code
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host._link_tokens import KEY_ID, LinkClaims, LinkError, LinkReason, verify_token

__all__ = (
    "KEYRING_MAX_AGE",
    "KEYRING_MAX_MISSING",
    "KEYRING_MIN_INTERVAL",
    "KEYRING_MIN_REFRESH",
    "MIN_KEY_CHARS",
    "LinkKeyring",
    "LinkKeys",
    "link_keyring",
)

MIN_KEY_CHARS = 32
"""The shortest signing key accepted, in characters (its UTF-8 bytes are the HMAC key)."""
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
_ACTIVE = "active"
_VARIABLE = Settings.LINK_KEYS_ARN.value
_EXAMPLE = '{"active": "k1", "k1": "<at least 32 random characters, e.g. from: openssl rand -base64 48>"}'


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
            if not isinstance(kid, str) or not KEY_ID.fullmatch(kid):  # not shown: it may be a misplaced secret
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
            if not KEY_ID.fullmatch(kid):  # the name is not shown: it may be a secret pasted in the wrong place
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


def link_keyring(secret_arn: str, *, client: Any) -> LinkKeyring:
    """A `LinkKeyring` on the secret `secret_arn`: read now (cold start), and again when the keys may have rotated."""
    return LinkKeyring(lambda: LinkKeys.load(secret_arn, client=client))
