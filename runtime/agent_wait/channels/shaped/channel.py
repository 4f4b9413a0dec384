"""Shaped webhooks as a channel: the declaration, and how the host builds one from `AGENT_WAIT_SHAPED_WEBHOOK_*`
(the templates, and the URL read once from its secret, at cold start)."""

from __future__ import annotations

from agent_wait.channels.contract import Absent, Channel, ChannelHost, url_secret
from agent_wait.channels.shaped.announce import ShapedWebhookAnnounce
from agent_wait.channels.shaped.preview import preview
from agent_wait.contract.schema import Settings

__all__ = ("CHANNEL", "build")


def build(host: ChannelHost) -> ShapedWebhookAnnounce | None:
    """The shaped webhook: the templates of `AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES`, POSTed to the URL that is the
    `AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN` secret; None when it is not set."""
    shaped = host.settings.shaped_webhook
    if shaped is None:
        return None
    variable = Settings.SHAPED_WEBHOOK_URL_ARN.value
    url = url_secret(host, shaped.url_arn, variable, "the shaped webhook's URL")
    return ShapedWebhookAnnounce(url, templates=shaped.templates, inbox_url=host.inbox_url)


CHANNEL = Channel(
    name=ShapedWebhookAnnounce.name,
    announcer=ShapedWebhookAnnounce,
    build=build,
    preview=preview,
    door=Absent("answers come back through the links its templates carry (the answer API's link pages)"),
    record=Absent("each delivery is POSTed, as a signed webhook's; a chat tool's incoming webhook keeps no ids"),
)
"""Shaped webhooks: each envelope POSTed as the JSON its template renders (docs/announcers.md, "Shaped webhooks")."""
