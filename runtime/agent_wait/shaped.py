"""Deprecated: `agent_wait.shaped` moved to `agent_wait.channels.shaped`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.shaped import (
    ShapedWebhookAnnounce,
    check_templates,
)

__all__ = (
    "ShapedWebhookAnnounce",
    "check_templates",
)

warnings.warn(
    "agent_wait.shaped moved to agent_wait.channels.shaped: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
