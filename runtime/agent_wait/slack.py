"""Deprecated: `agent_wait.slack` moved to `agent_wait.channels.slack`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.slack import (
    MAX_SKEW_SECONDS,
    METADATA_EVENT,
    DynamoDbSlackMessages,
    InMemorySlackMessages,
    Post,
    PreviewMessage,
    SlackAnnounce,
    SlackInteractions,
    SlackMessages,
    SlackReply,
    SlackRouting,
    preview_modal,
    preview_page,
)

__all__ = (
    "MAX_SKEW_SECONDS",
    "METADATA_EVENT",
    "DynamoDbSlackMessages",
    "InMemorySlackMessages",
    "Post",
    "PreviewMessage",
    "SlackAnnounce",
    "SlackInteractions",
    "SlackMessages",
    "SlackReply",
    "SlackRouting",
    "preview_modal",
    "preview_page",
)

warnings.warn(
    "agent_wait.slack moved to agent_wait.channels.slack: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
