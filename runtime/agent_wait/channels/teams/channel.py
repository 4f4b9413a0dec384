"""Teams as a channel: its declaration, and how the host builds its announcer from `AGENT_WAIT_TEAMS_*`.

Cards go to the Workflows webhook whose URL is the `AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN` secret (read once, at cold
start), per person (`AGENT_WAIT_TEAMS_RECIPIENTS`) or per channel, recorded in the Teams sends table
(`AGENT_WAIT_TEAMS_SENDS_TABLE`). Their buttons are signed links the host makes, per card: bound to the card's
person (their principal and the answerer groups the recipients setting maps them to) in `people` mode, unbound in
`channel` mode (where unbound links cannot answer, named answerers or a quorum, the card carries none). Teams has
no door of its own: its buttons open the answer API's signed-link pages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agent_wait.channels.contract import Absent, Channel, ChannelHost, url_secret
from agent_wait.channels.teams.announce import TeamsAnnounce, TeamsRecipient
from agent_wait.channels.teams.preview import preview
from agent_wait.channels.teams.records import SENDS, DynamoDbSends
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import Settings

__all__ = ("CHANNEL", "build")

logger = logging.getLogger("agent_wait.channels.teams")


def build(host: ChannelHost) -> TeamsAnnounce | None:
    """The Teams announcer; None when `AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN` is not set."""
    teams = host.settings.teams
    if teams is None:
        return None
    variable = Settings.TEAMS_WEBHOOK_URL_ARN.value
    url = url_secret(host, teams.webhook_url_arn, variable, "the Teams webhook URL")
    routing = teams.recipients
    return TeamsAnnounce(
        url,
        mode=teams.mode,
        recipients=routing.recipients_for if routing is not None else None,
        links=_card_links(host),
        records=host.records,
        inbox_url=host.inbox_url,
        sends=_sends(host, teams.sends_table),
    )


def _card_links(host: ChannelHost) -> Callable[[WaitEnvelope, TeamsRecipient | None], dict[str, str]] | None:
    """Makes a card's links: bound to its person, or unbound for a channel; None, said once, when the host cannot
    sign them."""
    sign = host.links
    if sign is None:
        logger.warning(
            "Teams cards carry no answer buttons: %s and %s are needed to sign links to the answer API",
            Settings.LINK_KEYS_ARN.value,
            Settings.API_URL.value,
        )
        return None

    def links(envelope: WaitEnvelope, recipient: TeamsRecipient | None) -> dict[str, str]:
        if recipient is None:
            return sign(envelope)
        groups = tuple(getattr(recipient, "groups", ()) or ())
        return sign(envelope, approver=recipient.principal, groups=groups)

    return links


def _sends(host: ChannelHost, table: str | None) -> Any:
    """The record of the cards posted (`AGENT_WAIT_TEAMS_SENDS_TABLE`); None, said once, when it is not set."""
    if table is None:
        logger.warning(
            "Teams cards are posted again whenever an event is delivered again: set %s to a table that records "
            "them (the AgentWait construct creates one)",
            Settings.TEAMS_SENDS_TABLE.value,
        )
        return None
    return DynamoDbSends(table, client=host.client("dynamodb"), keep_for=host.settings.channel_record_retention)


CHANNEL = Channel(
    name=TeamsAnnounce.name,
    announcer=TeamsAnnounce,
    build=build,
    preview=preview,
    door=Absent("its buttons are signed links, answered by the answer API's link pages"),
    record=SENDS,
)
"""Teams: an Adaptive Card per question (and per person), posted through a Workflows webhook (docs/teams.md)."""
