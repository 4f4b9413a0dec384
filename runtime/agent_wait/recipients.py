"""Deprecated: `agent_wait.recipients` moved to `agent_wait.channels.recipients`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.recipients import (
    ANY_TAG,
    EMAIL_PRINCIPAL,
    MAX_ADDRESS_CHARS,
    Recipient,
    RecipientRouting,
    email_address,
)

__all__ = (
    "ANY_TAG",
    "EMAIL_PRINCIPAL",
    "MAX_ADDRESS_CHARS",
    "Recipient",
    "RecipientRouting",
    "email_address",
)

warnings.warn(
    "agent_wait.recipients moved to agent_wait.channels.recipients: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
