"""Which Teams cards a question has posted: one claim per (event, person or channel), so a redelivered event posts
no card twice.

Every card has a key of its own: the event's `dedupe_key` and who it is for (`send_key`: `wait.reminder:<id>:2|`
`ana@example.com`, or `...|channel` in channel mode). It is claimed before it is posted and marked `ACCEPTED` once
the webhook accepted it (a Workflows webhook gives no message id). A card claimed by an attempt that died before
the webhook answered is posted again: a webhook cannot be asked what it posted.

The record is the one every channel keeps (`agent_wait.channels.records`), as sends (`agent_wait.channels.sends`,
which email keeps its messages in too); these are its names for Teams.
"""

from __future__ import annotations

from typing import Protocol

from agent_wait.channels.sends import SENDS, DynamoDbSends, InMemorySends, Send, Sends
from agent_wait.contract.envelope import Transition, WaitEnvelope

__all__ = ("ACCEPTED", "CHANNEL", "SENDS", "DynamoDbSends", "InMemorySends", "Send", "Sends", "address_of", "send_key")

CHANNEL = "channel"
"""Where a `channel`-mode card goes, in its send key (a person's card has their address there)."""
ACCEPTED = "accepted"
"""What a card's send record says once the webhook accepted it (a Workflows webhook gives no message id)."""


class Addressed(Protocol):
    @property
    def address(self) -> str: ...


def send_key(envelope: WaitEnvelope, transition: Transition, recipient: Addressed | None) -> str:
    """The card's key in the record: the event's `dedupe_key` (`wait.reminder:<id>:2`) and who it is for."""
    event = envelope if envelope.transition is transition else envelope.for_transition(transition)
    return f"{event.dedupe_key}|{address_of(recipient)}"


def address_of(recipient: Addressed | None) -> str:
    """Where a card goes, in its send record: the person's address, or `CHANNEL`."""
    return recipient.address if recipient is not None else CHANNEL
