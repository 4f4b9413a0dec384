"""What the plain announcers send, for one envelope: each one's preview.

A signed webhook POSTs the envelope as JSON (`WebhookAnnounce.body`), the log writes one line of ids and counts
(the question only at DEBUG), the in-memory announcer keeps the envelope itself. Nobody reads these in a chat
tool: they are what the receiving system gets.
"""

from __future__ import annotations

from agent_wait.channels.announce.log import LogAnnounce
from agent_wait.channels.announce.memory import InMemoryAnnounce
from agent_wait.channels.announce.webhook import WebhookAnnounce
from agent_wait.channels.contract import Rendered
from agent_wait.common.canonical_json import dumps
from agent_wait.contract.envelope import WaitEnvelope

__all__ = ("log_preview", "memory_preview", "webhook_preview")


def webhook_preview(announcer: WebhookAnnounce, envelope: WaitEnvelope) -> Rendered:
    """The body `announcer` POSTs for `envelope`."""
    return Rendered("application/json", announcer.body(envelope).decode("utf-8"), title=envelope.type)


def log_preview(announcer: LogAnnounce, envelope: WaitEnvelope) -> Rendered:
    """The line `announcer` writes for `envelope`."""
    return Rendered("text/plain", dumps(announcer.line(envelope)), title=envelope.type)


def memory_preview(announcer: InMemoryAnnounce, envelope: WaitEnvelope) -> Rendered:
    """The envelope `announcer` keeps, as JSON."""
    return Rendered("application/json", envelope.to_json(), title=envelope.type)
