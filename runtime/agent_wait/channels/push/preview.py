"""What a phone shows: the push channel's preview.

`preview(announcer, envelope)` is the JSON a device's service worker decrypts for `envelope` (its title and body
become the notification; its `url` is what a tap opens). `agent-wait dev` keeps every push its local push service
took, encrypted as a device gets it (`/dev/push/received.json`, `agent_wait.local.push_service`).
"""

from __future__ import annotations

import json

from agent_wait.channels.contract import Rendered
from agent_wait.channels.push.announce import PUSHED, PushAnnounce
from agent_wait.channels.push.payload import push_payload
from agent_wait.contract.envelope import WaitEnvelope

__all__ = ("preview",)


def preview(announcer: PushAnnounce, envelope: WaitEnvelope) -> Rendered | None:
    """The push `announcer` sends for `envelope`; None for a step that pushes nothing (an outcome, a vote)."""
    if envelope.transition not in PUSHED:
        return None
    payload = push_payload(envelope, envelope.transition, inbox_url=announcer.inbox_url, now=announcer.clock())
    return Rendered("application/json", json.dumps(payload, indent=2), title=payload["title"])
