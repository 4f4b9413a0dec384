"""A delivery's status is a `DeliveryStatus`, and still reads as its text."""

from __future__ import annotations

from agent_wait import InMemoryAnnounce, Question, WaitEnvelope
from agent_wait.contract.announcer import DeliveryStatus
from agent_wait.contract.envelope import Transition


def test_each_delivery_says_what_happened_as_a_delivery_status() -> None:
    envelope = WaitEnvelope.create(Question("t-1", "q-1", {"x": 1}))
    announcer = InMemoryAnnounce(delivers=[Transition.CREATED])
    delivered = announcer.announce(envelope)
    skipped = announcer.announce(envelope, Transition.ANSWERED)
    assert (delivered.status, skipped.status) == (DeliveryStatus.DELIVERED, DeliveryStatus.SKIPPED)
    assert delivered.status == "delivered", "a StrEnum: code that compared the text keeps working"
