"""Email for the host: the announcer the router and the sweep use, built from `HostSettings.email`, with each
recipient's signed links made from the link keys (`AGENT_WAIT_LINK_KEYS_ARN`) and the answer API's URL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_wait.channels.email import DynamoDbEmailSends, EmailAnnounce
from agent_wait.channels.email.announce import LinkMaker
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host._clients import client
from agent_wait.host.settings import HostSettings
from agent_wait.people.recipients import Recipient

__all__ = ("email_announcer", "recipient_links")


def recipient_links(keyring: Any, api_url: str, *, clock: Any = None) -> LinkMaker:
    """A recipient's own signed links: bound to their principal and the groups the routing vouches for, counted
    from `issued_at`, so an email sent again carries the same links (`answer_links`)."""
    from agent_wait.common.times import utc_now
    from agent_wait.host.links import LinkKeys, answer_links

    now = clock or utc_now

    def links(envelope: WaitEnvelope, recipient: Recipient, issued_at: datetime) -> dict[str, str]:
        keys = keyring if isinstance(keyring, LinkKeys) else keyring.keys()
        return answer_links(
            keys,
            api_url,
            envelope,
            now=now(),
            approver=recipient.principal,
            groups=recipient.groups,
            issued_at=min(issued_at, now()),
        )

    return links


def email_announcer(
    settings: HostSettings, *, session: Any, records: Any = None, keyring: Any = None, clock: Any = None
) -> EmailAnnounce:
    """The email announcer: SES v2 from the session, sends recorded in the sends table, links when keys are set."""

    email = settings.email
    if email is None or not email.sends_table:  # HostSettings checks this; say so if it ever does not
        raise ConfigurationError(
            [f"{Settings.EMAIL_SENDS_TABLE.value} is not set"], variables=[Settings.EMAIL_SENDS_TABLE.value]
        )
    if keyring is None and settings.link_keys_arn and settings.api_url:
        from agent_wait.host.links import link_keyring

        keyring = link_keyring(settings.link_keys_arn, client=client(session, "secretsmanager"))
    links = recipient_links(keyring, settings.api_url, clock=clock) if keyring and settings.api_url else None
    options: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return EmailAnnounce(
        client(session, "sesv2"),
        email.routing,
        DynamoDbEmailSends(email.sends_table, client=client(session, "dynamodb")),
        sender=email.sender,
        links=links,
        records=records,
        configuration_set=email.configuration_set,
        reply_to=email.reply_to,
        inbox_url=f"{settings.api_url.rstrip('/')}/inbox" if settings.api_url else None,
        **options,
    )
