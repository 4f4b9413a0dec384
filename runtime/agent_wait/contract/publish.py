"""`publish`: fan one envelope out to every announcer at once, and report what went where."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from agent_wait.contract.announcer import BaseAnnounce, Delivery, DeliveryStatus
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import ArgumentTypeError

__all__ = ("Announcers", "PublishReport", "apublish", "as_announcers", "publish")

Announcers = BaseAnnounce | Iterable[BaseAnnounce] | None
"""One announcer, several, or None (nothing to deliver)."""


@dataclass(frozen=True, slots=True)
class PublishReport:
    """What every announcer did with one envelope."""

    envelope: WaitEnvelope
    """The envelope that was published (with its `event_id`)."""
    deliveries: tuple[Delivery, ...]
    """One entry per announcer, in the order they were given."""

    @property
    def delivered(self) -> tuple[str, ...]:
        """Names of the announcers that delivered."""
        return tuple(d.announcer for d in self.deliveries if d.status is DeliveryStatus.DELIVERED)

    @property
    def failed(self) -> tuple[Delivery, ...]:
        return tuple(d for d in self.deliveries if d.status is DeliveryStatus.FAILED)

    @property
    def ok(self) -> bool:
        """True when no announcer failed (skips are not failures)."""
        return not self.failed


def as_announcers(announce: Announcers) -> tuple[BaseAnnounce, ...]:
    """Normalise one announcer, an iterable of them, or None into a tuple, checking each."""
    if announce is None:
        return ()
    items = (announce,) if isinstance(announce, BaseAnnounce) else tuple(announce)
    for item in items:
        if not isinstance(item, BaseAnnounce):
            raise ArgumentTypeError(f"announce must hold BaseAnnounce instances; got a {type(item).__name__}")
    return items


def publish(
    envelope: WaitEnvelope, announce: Announcers, *, transition: Transition | str | None = None
) -> PublishReport:
    """Deliver `envelope` to every announcer concurrently; never raises because of an announcer.

    The call takes as long as the slowest announcer, not the sum of them. Each announcer contains
    its own failure (`BaseAnnounce.announce`), so one broken backend cannot stop the others.

    Args:
        envelope: what to deliver.
        announce: one announcer, several, or None.
        transition: which lifecycle step this is; the envelope's own type by default.

    Returns:
        A `PublishReport` with one `Delivery` per announcer.
    """
    announcers = as_announcers(announce)
    step = Transition.parse(transition) if transition is not None else envelope.transition
    if len(announcers) <= 1:
        return PublishReport(envelope, tuple(a.announce(envelope, step) for a in announcers))
    with ThreadPoolExecutor(max_workers=len(announcers), thread_name_prefix="agent-wait-announce") as pool:
        deliveries: Sequence[Delivery] = list(pool.map(lambda a: a.announce(envelope, step), announcers))
    return PublishReport(envelope, tuple(deliveries))


async def apublish(
    envelope: WaitEnvelope, announce: Announcers, *, transition: Transition | str | None = None
) -> PublishReport:
    """`publish` for async code: runs the fan-out off the event loop."""
    return await asyncio.to_thread(publish, envelope, announce, transition=transition)
