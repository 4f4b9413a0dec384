"""What a shaped webhook's receiver gets: the channel's preview.

`preview(announcer, envelope)` is the JSON `announcer` POSTs for `envelope`, as its transition's template (or
`default`) renders it. A chat tool shows it as its incoming webhook reads it; there is no `/dev` page of its own
(`agent-wait dev` keeps what the local receivers took: `/dev/webhooks/received.json`).
"""

from __future__ import annotations

from agent_wait.channels.contract import Rendered
from agent_wait.channels.shaped.announce import ShapedWebhookAnnounce
from agent_wait.contract.envelope import WaitEnvelope

__all__ = ("preview",)


def preview(announcer: ShapedWebhookAnnounce, envelope: WaitEnvelope) -> Rendered | None:
    """The body `announcer` POSTs for `envelope`; None for a transition it has no template for."""
    if envelope.transition not in announcer.delivers:
        return None
    return Rendered("application/json", announcer.body(envelope).decode("utf-8"), title=f"shaped · {envelope.type}")
