"""`LogAnnounce`: one structured log line per envelope; the question itself only at DEBUG."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.common.canonical_json import dumps
from agent_wait.contract.envelope import Transition, WaitEnvelope

__all__ = ("LogAnnounce",)

_COUNTS = frozenset({"reminder", "escalation", "of", "after", "approvals", "needed", "remaining"})
"""The `progress` entries a log line carries (numbers and durations, never who voted or what they wrote)."""


class LogAnnounce(BaseAnnounce):
    """Write one JSON line per envelope: event, ids, allowed actions, expiry and tags.

    Questions may hold personal data, so the question is included only when the line is written at
    DEBUG (`LogAnnounce(level=logging.DEBUG)`), which is an explicit opt-in.

    Args:
        logger: where to write; `logging.getLogger("agent_wait.channels.announce")` by default.
        level: the level of each line.
        delivers: the transitions to log; all by default.
    """

    name = "log"

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        delivers: Iterable[Transition | str] | None = None,
    ) -> None:
        super().__init__(delivers=delivers)
        self.logger = logger or logging.getLogger("agent_wait.channels.announce")
        self.level = level

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if self.logger.isEnabledFor(self.level):
            self.logger.log(self.level, dumps(self.line(envelope)))

    def line(self, envelope: WaitEnvelope) -> dict[str, Any]:
        """What the line for `envelope` says (the question only at DEBUG)."""
        line: dict[str, Any] = {
            "event": envelope.type,
            "event_id": envelope.event_id,
            "thread_id": envelope.thread_id,
            "question_id": envelope.question_id,
            "allowed_actions": list(envelope.allowed_actions),
            "expires_at": envelope.expires_at,
            "tags": dict(envelope.tags),
        }
        if envelope.progress is not None:
            # Counts only: the votes name people and may carry their notes.
            line["progress"] = {k: v for k, v in envelope.progress.items() if k in _COUNTS}
        if self.level <= logging.DEBUG:
            line["question"] = envelope.question
        return line
