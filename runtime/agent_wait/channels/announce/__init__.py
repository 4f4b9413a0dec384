"""Announcers in the core: webhook, log and in-memory (standard library only)."""

from agent_wait.channels.announce._signing import (
    sign_standard_webhook,
    verify_signature,
    verify_standard_webhook,
    verify_timestamped_signature,
)
from agent_wait.channels.announce.log import LogAnnounce
from agent_wait.channels.announce.memory import InMemoryAnnounce
from agent_wait.channels.announce.webhook import WebhookAnnounce, WebhookDeliveryError
from agent_wait.contract.announcer import ALL_TRANSITIONS, BaseAnnounce, Delivery

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
