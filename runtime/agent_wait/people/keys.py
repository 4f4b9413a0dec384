"""One person, one key: how every door, policy field and record names the person who answers.

A person reaches a question through many doors: the inbox and the answer API (a JWT), a signed link made for their
address (an email or a Teams card), a Slack button, a trusted sender on the entry queue. Each door proves something
different about them, and each used to write it its own way (`email:alice@example.com`, `alice@example.com`, a
Slack profile, a username). A quorum counts people and a policy names people, so they must all agree on one key:

- **an address, wherever one is proven**: a token's `email` when the issuer says `email_verified`, the address a
  signed link was made for, a Slack profile's email (read with the `users:read.email` scope), a trusted sender's
  claim. Trimmed, lower-cased, any `email:` prefix dropped: `" Email:Alice@Example.COM "` is `alice@example.com`;
- **else the issuer-qualified subject** the door proved: `iss#sub` for a token, `slack:T:U` for a Slack user whose
  address the app cannot read, `sqs:AROA...` for an untrusted queue sender. Never a username: a pool that lets
  people pick their username would let one pick someone else's address.

`person_key` turns any name (a policy's answerer principal, an `Extension`'s people, a recorded `answered_by` or
vote, old rows written before this key included) into that key, so comparing two names is comparing their keys
(`same_person`). What else the door proved (the raw subject, the Slack id, the link's key id) is kept beside the
key on the decision (`sender`), for the audit.

Example:
    >>> person_key(" Email:Alice@Example.COM "), person_key("https://issuer.example.com#u-1")
    ('alice@example.com', 'https://issuer.example.com#u-1')
    >>> same_person("email:bob@example.com", "BOB@example.com"), same_person("alice@example.com", "slack:T1:U1")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = (
    "EMAIL_PRINCIPAL",
    "MAX_ADDRESS_CHARS",
    "address_key",
    "email_address",
    "person_key",
    "person_keys",
    "same_person",
)

EMAIL_PRINCIPAL = "email:"
"""An answerer principal `email:<address>` is the person who reads that mailbox."""
MAX_ADDRESS_CHARS = 254
"""The longest address accepted (RFC 5321's limit on a forward path, less its angle brackets)."""

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_ADDRESS = re.compile(rf"[a-z0-9.!#$%&'*+/=?^_`{{|}}~-]{{1,64}}@{_LABEL}(?:\.{_LABEL})+")
"""A plain `local@domain.tld` address (no display name, no quoted local part, no comments): what a person's
mailbox is written as in a policy or a setting, and nothing a mail header could be tricked with."""


def email_address(text: object) -> str | None:
    """`text` as a lower-cased mailbox address, or None when it is not a plain `local@domain.tld` address.

    Example:
        >>> email_address("Ana@Example.COM"), email_address("Ana <ana@example.com>")
        ('ana@example.com', None)
    """
    if not isinstance(text, str) or len(text) > MAX_ADDRESS_CHARS:
        return None
    address = text.strip().lower()
    if not _ADDRESS.fullmatch(address) or ".." in address or address.startswith(".") or ".@" in address:
        return None
    return address


def address_key(text: object) -> str | None:
    """`text` as a person's address key (trimmed, any `email:` prefix dropped, lower-cased), or None when it is not
    a plain `local@domain.tld` address.

    Example:
        >>> address_key("EMAIL:Dana@Example.com"), address_key("dana"), address_key("Dana <dana@example.com>")
        ('dana@example.com', None, None)
    """
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    if stripped[: len(EMAIL_PRINCIPAL)].lower() == EMAIL_PRINCIPAL:
        stripped = stripped[len(EMAIL_PRINCIPAL) :].strip()
    return email_address(stripped)


def person_key(name: object) -> str | None:
    """The key of the person `name` names: its address key when it is an address (with or without `email:`, in any
    case, with surrounding whitespace), else the name as written, trimmed (`iss#sub`, `slack:T:U`, an IAM id).
    None for no name (None, not text, or blank)."""
    if not isinstance(name, str) or not name.strip():
        return None
    return address_key(name) or name.strip()


def person_keys(names: Iterable[object]) -> frozenset[str]:
    """The keys of every name in `names` that names someone (blanks and None dropped)."""
    return frozenset(key for key in map(person_key, names) if key is not None)


def same_person(first: object, second: object) -> bool:
    """Whether two names name one person: both name someone, and their keys are equal."""
    key = person_key(first)
    return key is not None and key == person_key(second)
