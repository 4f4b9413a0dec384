"""Who a question is sent to, by address: the people a door that writes to each person (email) addresses.

A question's policy says who may answer (`rules.answerers`: groups and principals) and where it is routed
(`tags`). `RecipientRouting` turns that into people with an address:

- an answerer principal `email:<address>` is that person;
- an answerer group is the addresses the routing maps it to (`groups`); each of them is sent links that
  vouch for their membership of that group;
- a question whose policy names no answerers goes to the addresses of its first tag `"key:value"` that the
  routing maps (`tags`), else to those under `"*"`.

An escalation envelope (`wait.escalated`, and the reminders after it) carries the widened audience in its
`tags` and `rules.answerers`, so its recipients are the widened audience too. Addresses are compared and
kept lower-cased; each person is listed once, in the order the policy and the mapping name them.

Example:
    >>> from agent_wait import Question, WaitEnvelope, WaitPolicy
    >>> policy = WaitPolicy(answerer_groups=["finance"], answerer_principals=["email:Dana@Example.com"])
    >>> envelope = WaitEnvelope.create(Question("order-1", "q-1", {"function": "refund"}, policy=policy))
    >>> routing = RecipientRouting(groups={"finance": ["ana@example.com", "dana@example.com"]})
    >>> [(r.address, r.groups) for r in routing.recipients_for(envelope)]
    [('dana@example.com', ('finance',)), ('ana@example.com', ('finance',))]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.errors import ArgumentError, ConfigurationError, RecipientError
from agent_wait.people.keys import EMAIL_PRINCIPAL, MAX_ADDRESS_CHARS, email_address

__all__ = ("ANY_TAG", "EMAIL_PRINCIPAL", "MAX_ADDRESS_CHARS", "Recipient", "RecipientRouting", "email_address")

ANY_TAG = "*"
"""The `tags` key for a question none of whose tags is mapped."""


@dataclass(frozen=True, slots=True)
class Recipient:
    """One person a question is sent to."""

    address: str
    """Their mailbox, lower-cased."""
    principal: str
    """Who they answer as: `email:<address>`, recorded as `answered_by` and matched against `answerer_principals`."""
    groups: tuple[str, ...] = ()
    """The answerer groups the routing maps them to (and their links vouch for), in the policy's order."""

    @classmethod
    def of(cls, address: str, groups: Sequence[str] = ()) -> Recipient:
        """The recipient at `address` (checked and lower-cased).

        Raises:
            ArgumentError: `address` is not a plain `local@domain.tld` address.
        """
        checked = email_address(address)
        if checked is None:
            raise ArgumentError(
                f"{address!r} is not an email address: write it as local@domain.tld, without a display name",
                argument="address",
            )
        return cls(checked, EMAIL_PRINCIPAL + checked, tuple(groups))


def _addresses(
    mapping: Mapping[str, Sequence[str]] | None, what: str, problems: list[str]
) -> Mapping[str, tuple[str, ...]]:
    checked: dict[str, tuple[str, ...]] = {}
    if mapping is None:
        return MappingProxyType(checked)
    if not isinstance(mapping, Mapping):
        problems.append(f"{what} must map names to lists of addresses; got {type(mapping).__name__}")
        return MappingProxyType(checked)
    for name, addresses in mapping.items():
        if not isinstance(name, str) or not name:
            problems.append(f"{what}: every key must be a non-empty string; got {name!r}")
            continue
        if isinstance(addresses, str) or not isinstance(addresses, Sequence) or not addresses:
            problems.append(f"{what}[{name!r}] must be a non-empty list of addresses; got {addresses!r}")
            continue
        good: list[str] = []
        for address in addresses:
            found = email_address(address)
            if found is None:
                problems.append(f"{what}[{name!r}] holds {address!r}, which is not a local@domain.tld address")
            elif found not in good:
                good.append(found)
        checked[name] = tuple(good)
    return MappingProxyType(checked)


@dataclass(frozen=True, slots=True)
class RecipientRouting:
    """Who a question is sent to: its email answerer principals, its answerer groups' members, or its tags' readers.

    Args:
        groups: an answerer group -> the addresses of its members.
        tags: a routing tag `"key:value"` (or `"*"` for any other question) -> the addresses that read questions
            so tagged; used only for a question whose policy names no answerers.

    Raises:
        ArgumentError: every problem at once (a key that is not a non-empty string, an empty list, an address that
            is not a plain `local@domain.tld`).
    """

    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    tags: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        group_problems: list[str] = []
        tag_problems: list[str] = []
        groups = _addresses(self.groups, "groups", group_problems)
        tags = _addresses(self.tags, "tags", tag_problems)
        for key in tags:
            if key != ANY_TAG and (":" not in key or key.startswith(":")):
                tag_problems.append(f"tags key {key!r} must be 'key:value' (a policy tag) or '*'")
        if group_problems or tag_problems:
            raise ArgumentError(
                "; ".join(group_problems + tag_problems), argument="groups" if group_problems else "tags"
            )
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "tags", tags)

    @classmethod
    def parse(cls, text: str, *, variable: str) -> RecipientRouting:
        """The routing from a setting's JSON text: `{"groups": {group: [address, ...]}, "tags": {"k:v": [...]}}`.

        Args:
            text: the setting's value.
            variable: the setting's name, for the error.

        Raises:
            ConfigurationError: the text is not such an object, or any part of it is wrong (every problem named).
        """
        example = '{"groups": {"finance": ["ana@example.com"]}, "tags": {"team:billing": ["billing@example.com"]}}'
        try:
            data: Any = json.loads(text)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise ConfigurationError([f"{variable} must be a JSON object such as {example}"], variables=[variable])
        unknown = sorted(set(data) - {"groups", "tags"})
        if unknown:
            raise ConfigurationError(
                [f"{variable} has unknown member(s) {unknown}; it takes 'groups' and 'tags', such as {example}"],
                variables=[variable],
            )
        try:
            return cls(groups=data.get("groups") or {}, tags=data.get("tags") or {})
        except ArgumentError as exc:
            raise ConfigurationError([f"{variable}: {exc.message}"], variables=[variable]) from None

    def recipients_for(self, envelope: WaitEnvelope) -> tuple[Recipient, ...]:
        """The people `envelope`'s question is sent to, each once, in order.

        With answerers named (`rules.answerers`): each `email:` principal, then each named group's members (a
        person in several groups is listed once, with every group). Principals of other doors (`slack:...`, IAM
        ids) are not people with a mailbox and are skipped. With none named: the first mapped tag's addresses,
        else `"*"`'s. May be empty: nobody with an address is named or mapped.

        Raises:
            RecipientError: an `email:` answerer principal is not an address; `.recipients` holds the others, so a
                caller may still send to them.
        """
        answerers = envelope.rules.get("answerers") if isinstance(envelope.rules, Mapping) else None
        if not isinstance(answerers, Mapping):
            return tuple(Recipient.of(address) for address in self._tag_addresses(envelope.tags))
        found: dict[str, Recipient] = {}
        bad: list[str] = []
        for principal in answerers.get("principals") or ():
            if not (isinstance(principal, str) and principal.startswith(EMAIL_PRINCIPAL)):
                continue
            address = email_address(principal.removeprefix(EMAIL_PRINCIPAL))
            if address is None:
                bad.append(principal)
            elif address not in found:
                found[address] = Recipient.of(address)
        for group in answerers.get("groups") or ():
            for address in self.groups.get(group, ()):
                known = found.get(address)
                if known is None:
                    found[address] = Recipient.of(address, (group,))
                elif group not in known.groups:
                    found[address] = Recipient(known.address, known.principal, (*known.groups, group))
        recipients = tuple(found.values())
        if bad:
            raise RecipientError(
                f"question {envelope.question_id}'s answerer principal(s) {bad} are not email addresses: write "
                f"them as '{EMAIL_PRINCIPAL}local@domain.tld'",
                recipients=recipients,
            )
        return recipients

    def _tag_addresses(self, tags: Mapping[str, str]) -> tuple[str, ...]:
        for key, value in tags.items():
            found = self.tags.get(f"{key}:{value}")
            if found:
                return tuple(found)
        return tuple(self.tags.get(ANY_TAG, ()))
