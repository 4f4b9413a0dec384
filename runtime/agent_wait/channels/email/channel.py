"""Email as a channel: its declaration, and how the host builds its announcer from `AGENT_WAIT_EMAIL_*`.

The announcer sends through SES v2 and records each email in the email sends table
(`AGENT_WAIT_EMAIL_SENDS_TABLE`); each recipient's buttons are their own signed links, made by the host from the
link keys (`AGENT_WAIT_LINK_KEYS_ARN`) and the answer API's URL. Email has no door of its own: its buttons open the
answer API's signed-link pages.
"""

from __future__ import annotations

from datetime import datetime

from agent_wait.channels.contract import Absent, Channel, ChannelHost, LinkSigner
from agent_wait.channels.email.announce import EmailAnnounce, LinkMaker
from agent_wait.channels.email.preview import preview
from agent_wait.channels.email.records import SENDS, DynamoDbEmailSends
from agent_wait.channels.recipients import Recipient
from agent_wait.contract.envelope import WaitEnvelope

__all__ = ("CHANNEL", "build", "recipient_links")


def build(host: ChannelHost) -> EmailAnnounce | None:
    """The email announcer: SES v2, sends recorded in the sends table, links when the host can sign them; None
    without the sends table."""
    email = host.settings.email
    if email is None or not email.sends_table:
        return None
    return EmailAnnounce(
        host.client("sesv2"),
        email.routing,
        DynamoDbEmailSends(
            email.sends_table, client=host.client("dynamodb"), keep_for=host.settings.channel_record_retention
        ),
        sender=email.sender,
        links=recipient_links(host.links) if host.links is not None else None,
        records=host.records,
        configuration_set=email.configuration_set,
        reply_to=email.reply_to,
        inbox_url=host.inbox_url,
    )


def recipient_links(sign: LinkSigner) -> LinkMaker:
    """A recipient's own signed links: bound to their principal and the groups the routing vouches for, counted
    from `issued_at`, so an email sent again carries the same links."""

    def links(envelope: WaitEnvelope, recipient: Recipient, issued_at: datetime) -> dict[str, str]:
        return sign(envelope, approver=recipient.principal, groups=recipient.groups, issued_at=issued_at)

    return links


CHANNEL = Channel(
    name=EmailAnnounce.name,
    announcer=EmailAnnounce,
    build=build,
    preview=preview,
    door=Absent("its buttons are signed links, answered by the answer API's link pages"),
    record=SENDS,
)
"""Email: an email per person, with their own signed links (docs/email.md)."""
