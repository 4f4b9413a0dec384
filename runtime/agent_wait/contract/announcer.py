"""`BaseAnnounce`: the one interface every announcer implements, and the rule it enforces.

An announcer must never raise into the run. Subclasses write `deliver()`; `announce()` wraps it so
that an exception becomes one log line, a counted failure and a `Delivery` saying what went wrong.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from agent_wait.contract.envelope import Transition, WaitEnvelope

__all__ = ("ALL_TRANSITIONS", "BaseAnnounce", "Delivery", "DeliveryStats", "DeliveryStatus")

logger = logging.getLogger("agent_wait.channels.announce")

ALL_TRANSITIONS: frozenset[Transition] = frozenset(Transition)


class DeliveryStatus(StrEnum):
    """What one announcer did with one envelope (a `str`, so it compares and serialises as its value)."""

    DELIVERED = "delivered"
    FAILED = "failed"
    SKIPPED = "skipped"
    """The announcer does not deliver this transition."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """What one announcer did with one envelope."""

    announcer: str
    """The announcer's `name`."""
    transition: Transition
    """Which lifecycle step was announced."""
    status: DeliveryStatus
    """Delivered, failed, or skipped (the announcer does not deliver this transition)."""
    error: str | None = None
    """For a failure: the exception type and message (ids only, never question content)."""
    seconds: float = 0.0
    """Wall time spent in `deliver()`."""

    @property
    def ok(self) -> bool:
        return self.status is not DeliveryStatus.FAILED


@dataclass(slots=True)
class DeliveryStats:
    """Counters an announcer keeps about itself (thread-safe through the announcer's lock)."""

    delivered: int = 0
    failed: int = 0
    skipped: int = 0


class BaseAnnounce(ABC):
    """Put an envelope somewhere a person, or the system that nudges one, will find it.

    Subclasses set `name` and write `deliver()`. Raise from `deliver()` to report a failure: the base
    class logs it once, counts it and lets every other announcer deliver.

    Example:
        >>> class ListAnnounce(BaseAnnounce):
        ...     name = "list"
        ...     def __init__(self, **kwargs):
        ...         super().__init__(**kwargs)
        ...         self.items = []
        ...     def deliver(self, envelope, transition):
        ...         self.items.append(envelope.dedupe_key)

    Args:
        delivers: the transitions this announcer delivers (names such as `"created"` or `Transition`s);
            every transition by default. Others are skipped and reported as `skipped`.
    """

    name: ClassVar[str] = "announcer"

    def __init__(self, *, delivers: Iterable[Transition | str] | None = None) -> None:
        self.delivers: frozenset[Transition] = (
            ALL_TRANSITIONS if delivers is None else frozenset(Transition.parse(t) for t in delivers)
        )
        self.stats = DeliveryStats()
        self._stats_lock = threading.Lock()

    @abstractmethod
    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        """Deliver `envelope` for `transition`. Raise to report a failure; the base class contains it."""

    def announce(self, envelope: WaitEnvelope, transition: Transition | str | None = None) -> Delivery:
        """Deliver `envelope` if this announcer delivers its transition. Never raises."""
        step = Transition.parse(transition) if transition is not None else envelope.transition
        if step not in self.delivers:
            self._count(DeliveryStatus.SKIPPED)
            return Delivery(self.name, step, DeliveryStatus.SKIPPED)
        started = time.perf_counter()
        try:
            self.deliver(envelope, step)
        except Exception as exc:
            elapsed = time.perf_counter() - started
            self._count(DeliveryStatus.FAILED)
            reason = f"{type(exc).__name__}: {exc}"
            logger.warning(
                "announce failed: announcer=%s event=%s thread_id=%s question_id=%s error=%s",
                self.name,
                step.event_type,
                envelope.thread_id,
                envelope.question_id,
                reason,
            )
            return Delivery(self.name, step, DeliveryStatus.FAILED, reason, elapsed)
        self._count(DeliveryStatus.DELIVERED)
        return Delivery(self.name, step, DeliveryStatus.DELIVERED, None, time.perf_counter() - started)

    def _count(self, status: DeliveryStatus) -> None:
        with self._stats_lock:
            setattr(self.stats, status, getattr(self.stats, status) + 1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
