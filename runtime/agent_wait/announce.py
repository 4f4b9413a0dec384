"""Deprecated: `agent_wait.announce` moved to `agent_wait.channels.announce`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.channels.announce import (
    ALL_TRANSITIONS,
    BaseAnnounce,
    Delivery,
    InMemoryAnnounce,
    LogAnnounce,
    WebhookAnnounce,
    WebhookDeliveryError,
    sign_standard_webhook,
    verify_signature,
    verify_standard_webhook,
    verify_timestamped_signature,
)

__all__ = (
    "ALL_TRANSITIONS",
    "BaseAnnounce",
    "Delivery",
    "InMemoryAnnounce",
    "LogAnnounce",
    "WebhookAnnounce",
    "WebhookDeliveryError",
    "sign_standard_webhook",
    "verify_signature",
    "verify_standard_webhook",
    "verify_timestamped_signature",
)

warnings.warn(
    "agent_wait.announce moved to agent_wait.channels.announce: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
