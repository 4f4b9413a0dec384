"""Signed per-question answer links, for people who answer from email or chat without signing in.

A link is a capability: whoever holds it may give one answer (its action) to one question until it
expires. It is an HMAC-SHA256 token under a named key, carried in the URL fragment of the confirmation
page, so it never reaches a server or proxy log (browsers do not send fragments):

    {api_url}/questions/{question_id}/confirm#v1.<kid>.<base64url(payload)>.<base64url(HMAC(key, "v1.<kid>.<payload>"))>

The payload is compact JSON: `q` the question id, `t` its thread id, `a` the action, `exp` the expiry in
Unix seconds and, when the link was made for someone, `sub` who it was sent to, `g` the answerer groups
the host vouches they belong to and, for a link that approves and grants, `o` the policy's grant offer's index.

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

A link's token is `agent_wait.host._link_tokens`, its keys and their rotation `agent_wait.host._link_keys`; this
module makes a question's links, and every name of the three imports from here.

Example:
    >>> keys = LinkKeys.parse('{"active": "k1", "k1": "' + "x" * 32 + '"}')
    >>> now = datetime(2030, 1, 1, tzinfo=UTC)
    >>> token = mint_token(keys, question_id="q-1", thread_id="order-1", action="approve",
    ...                    expires_at=now + timedelta(hours=4), now=now)
    >>> verify_token(keys, token, question_id="q-1", now=now).action
    'approve'
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agent_wait.channels.reading import read
from agent_wait.common.times import parse_rfc3339, require_aware
from agent_wait.contract.bound_call import APPROVE
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.engine.granting import grant_offers
from agent_wait.engine.offered import offer_key
from agent_wait.host._link_keys import (
    KEYRING_MAX_AGE,
    KEYRING_MIN_INTERVAL,
    KEYRING_MIN_REFRESH,
    MIN_KEY_CHARS,
    LinkKeyring,
    LinkKeys,
    link_keyring,
)
from agent_wait.host._link_tokens import (
    MAX_LINK_LIFETIME,
    MAX_TOKEN_CHARS,
    TOKEN_VERSION,
    LinkClaims,
    LinkError,
    LinkReason,
    SigningKeys,
    mint_token,
    verify_token,
    vouched_groups,
)
from agent_wait.people.keys import person_key, person_keys
from agent_wait.policy.grants import Grants

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


def link_url(api_url: str, question_id: str, token: str) -> str:
    """The confirmation page's URL with the token in its fragment, which browsers never send to a server.

    Args:
        api_url: the answer API's base URL (`AGENT_WAIT_API_URL`), with its stage path if it has one.
        question_id: the question (percent-encoded into the path).
        token: from `mint_token`.
    """
    return f"{api_url.rstrip('/')}/questions/{urllib.parse.quote(question_id, safe='')}/confirm#{token}"


def answer_links(
    keys: SigningKeys,
    api_url: str,
    envelope: WaitEnvelope,
    *,
    now: datetime,
    approver: str | None = None,
    groups: Sequence[str] = (),
    issued_at: datetime | None = None,
) -> dict[str, str]:
    """One signed link per answer one press gives to `envelope`'s question (`Reading.one_click`: no edit, reply or
    form, which a link cannot carry), by action; and, for links made for a named `approver` the policy lets grant,
    one per grant offer the question takes (`agent_wait.engine.offered`), under `offer_key(index)` (`"grant:0"`):
    it approves and makes that offer's grant in the approver's name.

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
    if answerers and not _named(answerers, approver, vouched_groups(groups)):
        return {}  # the link's answer would only be refused `answerer_not_allowed`
    if envelope.rules.get("quorum") and approver is None:
        return {}  # a quorum counts people, and a link made for nobody proves no one: they would all be one voter
    deadline = parse_rfc3339(envelope.expires_at) if envelope.expires_at else None
    expires_at = min(deadline, issued_at + MAX_LINK_LIFETIME) if deadline else issued_at + MAX_LINK_LIFETIME
    if math.floor(expires_at.timestamp()) <= now.timestamp():
        return {}

    def link(action: str, offer: int | None = None) -> str:
        token = mint_token(
            keys,
            question_id=envelope.question_id,
            thread_id=envelope.thread_id,
            action=action,
            expires_at=expires_at,
            approver=approver,
            groups=groups,
            offer=offer,
            now=now,
        )
        return link_url(api_url, envelope.question_id, token)

    links = {action: link(action) for action in read(envelope).one_click}
    if APPROVE in links:
        links.update({offer_key(index): link(APPROVE, index) for index in _offered(envelope, approver, groups)})
    return links


def _offered(envelope: WaitEnvelope, approver: str | None, groups: Sequence[str]) -> list[int]:
    """The grant offers `approver` (in `groups`) may take on `envelope`'s question: none for an unnamed link (a grant
    is a named person's decision) or a person the policy does not let grant."""
    raw = envelope.rules.get("grants")
    if approver is None or raw is None or not Grants.parse(raw).allows(groups=groups, names=[approver]):
        return []
    return [index for index, _offer in grant_offers(envelope)]


def _named(answerers: Any, approver: str | None, groups: tuple[str, ...]) -> bool:
    """Whether `approver` (in `groups`) is among the policy's `answerers`, as `check_answer` will judge it."""
    if approver is None or not isinstance(answerers, Mapping):
        return False
    named = person_key(approver) in person_keys(answerers.get("principals") or ())
    return named or bool(set(groups) & set(answerers.get("groups") or ()))
