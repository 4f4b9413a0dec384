"""The answer a person's cancel gives the agent when its question's policy declares no `on_cancel`: ours, before a
dialect translates it (`resume_value`). Standard library only.

`{"action": "cancelled", "reason": ..., "by": ...}` is never an approval, so a `@wait` body does not run on it, and it
says who cancelled and why, so the agent can tell it apart from an answer (compare `_wait.EXPIRED_WITHOUT_DEFAULT`).
A dialect turns it into its own refusal: LangChain's HITL middleware a `reject` decision carrying the reason, Agent
Inbox an `ignore` response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ("CANCELLED", "cancellation", "cancellation_message", "is_cancellation")

CANCELLED = "cancelled"
"""The `action` of the cancellation a cancelled question gives its agent."""


def cancellation(reason: str | None, by: str | None) -> dict[str, Any]:
    """The cancellation the agent receives: why, in the canceller's words, and who cancelled (their person key)."""
    return {"action": CANCELLED, "reason": reason, "by": by}


def is_cancellation(answer: Any) -> bool:
    """True for a value `cancellation` made (an object whose `action` is `"cancelled"`)."""
    return isinstance(answer, Mapping) and answer.get("action") == CANCELLED


def cancellation_message(answer: Mapping[str, Any]) -> str:
    """The cancellation as one line for a dialect's message field: `Cancelled: <reason>`."""
    reason = answer.get("reason")
    return f"Cancelled: {reason}" if isinstance(reason, str) and reason else "Cancelled"
