"""A policy's fixed grant offers as the doors without a form show them: which a question takes, and in words.

Teams cards, emails and Slack messages offer, beside Approve, the policy's `GrantOffer`s this question's call
satisfies (`agent_wait.engine.granting.grant_offers`). A signed link or a button carries only the offer's index; the
door looks the offer up again from the question's row when the answer comes, so a policy changed since the message
went out never grants what the message said (an index no longer offered is refused).

A question's signed links (`agent_wait.host.links.answer_links`) are a mapping by action; an offer's link rides in
it under `offer_key(index)` (`"grant:0"`), and `offer_links` reads them back with the offer's label and its words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from agent_wait.contract.bound_call import wait_call
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.engine.granting import grant_offers
from agent_wait.policy.grants import GrantRequest

__all__ = (
    "OFFER_PREFIX",
    "OfferLink",
    "duration_words",
    "function_of",
    "offer_index",
    "offer_key",
    "offer_links",
    "offer_words",
)

OFFER_PREFIX = "grant:"
"""How an offer's signed link is keyed among a question's links by action: `grant:<index>`."""


@dataclass(frozen=True, slots=True)
class OfferLink:
    """One grant offer's signed link, as a card or an email shows it."""

    index: int
    """The offer's index in the policy's `Grants.offers`."""
    label: str
    """What the person reads on the button ("Approve, and allow refunds up to 500 for an hour (3 uses)")."""
    words: str
    """What it allows, in words (`offer_words`)."""
    url: str


def offer_key(index: int) -> str:
    """The key of offer `index`'s link among a question's links."""
    return f"{OFFER_PREFIX}{index}"


def offer_index(key: str) -> int | None:
    """The offer index a links key names, or None for an action's key."""
    tail = key.removeprefix(OFFER_PREFIX)
    return int(tail) if key.startswith(OFFER_PREFIX) and tail.isdigit() else None


def offer_links(envelope: WaitEnvelope, links: Mapping[str, str]) -> list[OfferLink]:
    """The offers `envelope`'s question takes that `links` carries a link for, in the policy's order."""
    function = function_of(envelope)
    return [
        OfferLink(index, offer.label, offer_words(function, offer.request), links[offer_key(index)])
        for index, offer in grant_offers(envelope)
        if offer_key(index) in links
    ]


def offer_words(function: str | None, request: GrantRequest) -> str:
    """What a grant request allows, in words: "issue_refund with amount up to 500, on any thread, for 1 hour,
    3 uses"."""
    what = function or "this question's call"
    if request.pins is None:
        allows = f"exactly this call of {what} again"
    elif request.pins:
        allows = f"{what} with " + " and ".join(pin.describe(name) for name, pin in request.pins.items())
    else:
        allows = f"any call of {what}"
    where = "on this thread only" if request.scope == "thread" else "on any thread"
    uses = "any number of uses" if request.uses is None else f"{request.uses} use{'' if request.uses == 1 else 's'}"
    return f"{allows}, {where}, for {duration_words(request.ttl)}, {uses}"


def duration_words(delta: timedelta) -> str:
    """A time to live as people say it: "1 hour", "90 minutes", "2 days"."""
    seconds = int(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


def function_of(envelope: WaitEnvelope) -> str | None:
    """The name of the `@wait` function `envelope` asks about, or None for a question that is not a call."""
    call = wait_call(envelope.question, envelope.source)
    return call[0] if call is not None else None
