"""Deprecated: `agent_wait.asked` moved to `agent_wait.channels.asked`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.asked import (
    PROMPT_KEYS,
    UNNAMED_CALL,
    Call,
    Decided,
    call_of,
    decided_of,
    prompt_of,
    summary,
)

__all__ = (
    "PROMPT_KEYS",
    "UNNAMED_CALL",
    "Call",
    "Decided",
    "call_of",
    "decided_of",
    "prompt_of",
    "summary",
)

warnings.warn(
    "agent_wait.asked moved to agent_wait.channels.asked: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
