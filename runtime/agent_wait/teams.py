"""Deprecated: `agent_wait.teams` moved to `agent_wait.channels.teams`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.teams import (
    CARD_CONTENT_TYPE,
    CARD_VERSION,
    DEFAULT_TRANSITIONS,
    Decided,
    TeamsAnnounce,
    TeamsMode,
    TeamsRecipient,
    outcome_card,
    question_card,
    webhook_body,
)

__all__ = (
    "CARD_CONTENT_TYPE",
    "CARD_VERSION",
    "DEFAULT_TRANSITIONS",
    "Decided",
    "TeamsAnnounce",
    "TeamsMode",
    "TeamsRecipient",
    "outcome_card",
    "question_card",
    "webhook_body",
)

warnings.warn(
    "agent_wait.teams moved to agent_wait.channels.teams: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
