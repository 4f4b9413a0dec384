"""`InMemoryAnnounce`: keeps every envelope in a list, for tests."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope

__all__ = ("InMemoryAnnounce",)


class InMemoryAnnounce(BaseAnnounce):
    """Records `(transition, envelope)` pairs in `.events`.

    Example:
        >>> memory = InMemoryAnnounce()
        >>> memory.of("created"), memory.last()
        ([], None)
    """

    name = "memory"

    def __init__(self, *, delivers: Iterable[Transition | str] | None = None) -> None:
        super().__init__(delivers=delivers)
        self.events: list[tuple[Transition, WaitEnvelope]] = []
        self._lock = threading.Lock()

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        with self._lock:
            self.events.append((transition, envelope))

    def of(self, transition: Transition | str) -> list[WaitEnvelope]:
        """The envelopes delivered for one transition, oldest first."""
        step = Transition.parse(transition)
        return [envelope for t, envelope in self.events if t is step]

    def last(self) -> WaitEnvelope | None:
        """The most recent envelope, or None."""
        return self.events[-1][1] if self.events else None

    def clear(self) -> None:
        with self._lock:
            self.events.clear()
