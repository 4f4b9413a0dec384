"""Deprecated: `agent_wait.email` moved to `agent_wait.channels.email`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.email import (
    DynamoDbEmailSends,
    EmailAnnounce,
    EmailContent,
    EmailSends,
    InMemoryEmailSends,
    Send,
    outcome_email,
    question_email,
)

__all__ = (
    "DynamoDbEmailSends",
    "EmailAnnounce",
    "EmailContent",
    "EmailSends",
    "InMemoryEmailSends",
    "Send",
    "outcome_email",
    "question_email",
)

warnings.warn(
    "agent_wait.email moved to agent_wait.channels.email: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
