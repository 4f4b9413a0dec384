"""The passkeys people registered to confirm their answers (`PasskeyCredential`), and where they are kept
(`PasskeyBook`; in memory: `InMemoryPasskeyBook`; on the question table: `agent_wait.aws.DynamoDbPasskeyBook`).

Each credential is kept under the person key (`agent_wait.people.keys.person_key`) of who registered it, with its
public key (COSE, as the authenticator gave it) and its sign count, so a passkey confirms answers for that person
only. A registration's challenge is kept beside them until the registration uses it, once. Standard library only.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from agent_wait.common.times import parse_rfc3339

__all__ = ("InMemoryPasskeyBook", "PasskeyBook", "PasskeyCredential", "RegistrationChallenge")


@dataclass(frozen=True, slots=True)
class PasskeyCredential:
    """One passkey a person registered."""

    person: str
    """The person key of who registered it; it confirms their answers only."""
    credential_id: str
    """The credential's id, base64url (as `PublicKeyCredential.id`)."""
    public_key: str
    """The credential's public key as COSE, base64url (what the authenticator gave at registration)."""
    sign_count: int
    """The authenticator's signature counter when last used (0 for passkeys that keep none)."""
    registered_at: str
    """RFC 3339."""
    label: str = ""
    """What the person sees it by (the authenticator's name, when it says; else when it was registered)."""

    def to_item(self) -> dict[str, Any]:
        return {
            "person": self.person,
            "credential_id": self.credential_id,
            "public_key": self.public_key,
            "sign_count": self.sign_count,
            "registered_at": self.registered_at,
            "label": self.label,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> PasskeyCredential:
        return cls(
            person=str(item["person"]),
            credential_id=str(item["credential_id"]),
            public_key=str(item["public_key"]),
            sign_count=int(item.get("sign_count") or 0),
            registered_at=str(item["registered_at"]),
            label=str(item.get("label") or ""),
        )


@dataclass(frozen=True, slots=True)
class RegistrationChallenge:
    """The challenge a registration's options gave, until the registration uses it."""

    challenge: str
    """base64url."""
    expires_at: str
    """RFC 3339: a registration after it is refused."""

    def live(self, now: datetime) -> bool:
        return now < parse_rfc3339(self.expires_at)


class PasskeyBook(ABC):
    """Where the passkeys people registered are kept, by person key."""

    @abstractmethod
    def add_credential(self, credential: PasskeyCredential) -> bool:
        """Keep `credential`; False when `credential.person` registered its id already: nothing is changed. (Another
        person's credential of the same id confirms nothing for this one: each person's answers are checked against
        their own passkeys only.)"""

    @abstractmethod
    def credentials(self, person: str) -> list[PasskeyCredential]:
        """`person`'s passkeys, oldest first (one consistent read)."""

    @abstractmethod
    def count_signature(self, person: str, credential_id: str, *, seen: int, now: int) -> bool:
        """Move the credential's sign count from `seen` to `now`, in one conditional write; False when it moved
        meanwhile (or there is no such credential)."""

    @abstractmethod
    def put_challenge(self, person: str, challenge: RegistrationChallenge) -> None:
        """Keep `person`'s registration challenge (replacing an earlier one)."""

    @abstractmethod
    def take_challenge(self, person: str) -> RegistrationChallenge | None:
        """`person`'s registration challenge, removed as it is read, so it serves one registration; None: none."""


class InMemoryPasskeyBook(PasskeyBook):
    """Passkeys in a dict: the reference backend, for tests and a local host."""

    def __init__(self) -> None:
        self._credentials: dict[tuple[str, str], PasskeyCredential] = {}
        self._challenges: dict[str, RegistrationChallenge] = {}
        self._lock = threading.Lock()

    def add_credential(self, credential: PasskeyCredential) -> bool:
        with self._lock:
            key = (credential.person, credential.credential_id)
            if key in self._credentials:
                return False
            self._credentials[key] = credential
            return True

    def credentials(self, person: str) -> list[PasskeyCredential]:
        with self._lock:
            mine = [c for c in self._credentials.values() if c.person == person]
        return sorted(mine, key=lambda c: (c.registered_at, c.credential_id))

    def count_signature(self, person: str, credential_id: str, *, seen: int, now: int) -> bool:
        with self._lock:
            kept = self._credentials.get((person, credential_id))
            if kept is None or kept.sign_count != seen:
                return False
            self._credentials[(person, credential_id)] = replace(kept, sign_count=now)
            return True

    def put_challenge(self, person: str, challenge: RegistrationChallenge) -> None:
        with self._lock:
            self._challenges[person] = challenge

    def take_challenge(self, person: str) -> RegistrationChallenge | None:
        with self._lock:
            return self._challenges.pop(person, None)
