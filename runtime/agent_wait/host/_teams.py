"""Teams and shaped webhooks for the host: the announcers the router and the sweep use, built from
`HostSettings.teams` and `HostSettings.shaped_webhook`, with each URL read once from Secrets Manager (at cold start).

Teams cards carry signed links made here, per card: bound to the card's person (their principal and the answerer
groups the recipients setting maps them to) in `people` mode, unbound in `channel` mode (`answer_links` makes none
where unbound links cannot answer: named answerers, a quorum)."""

from __future__ import annotations

import logging
from typing import Any

from agent_wait.channels.announce.webhook import is_url
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host._clients import client, secret_string
from agent_wait.host.settings import HostSettings

__all__ = ("shaped_webhook_announcer", "teams_announcer", "url_secret")

logger = logging.getLogger("agent_wait.host")


def url_secret(secret_arn: str, variable: Settings, what: str, session: Any) -> str:
    """The URL stored as the secret's text, surrounding whitespace ignored; errors never show it (it carries a
    token or a signature).

    Raises:
        ConfigurationError: the secret cannot be read, or is not one http(s) URL.
    """

    url = (secret_string(secret_arn, variable.value, what, session) or "").strip()
    if not is_url(url):
        raise ConfigurationError(
            [
                f"{variable.value}={secret_arn!r}: the secret must be {what} itself, starting with https:// (its "
                "value is not shown: it carries a token)"
            ],
            variables=[variable.value],
        )
    return url


def _inbox(settings: HostSettings) -> str | None:
    return f"{settings.api_url.rstrip('/')}/inbox" if settings.api_url else None


def _links(settings: HostSettings, session: Any) -> Any:
    """Makes a card's links: `(envelope, recipient or None) -> {action: url}`; None without link keys or an API."""
    if not settings.link_keys_arn or not settings.api_url:
        logger.warning(
            "Teams cards carry no answer buttons: %s and %s are needed to sign links to the answer API",
            Settings.LINK_KEYS_ARN.value,
            Settings.API_URL.value,
        )
        return None
    from agent_wait.common.times import utc_now
    from agent_wait.host.links import answer_links, link_keyring

    ring = link_keyring(settings.link_keys_arn, client=client(session, "secretsmanager"))
    api_url = settings.api_url

    def links(envelope: Any, recipient: Any) -> dict[str, str]:
        if recipient is None:
            return answer_links(ring.keys(), api_url, envelope, now=utc_now())
        groups = tuple(getattr(recipient, "groups", ()) or ())
        return answer_links(ring.keys(), api_url, envelope, now=utc_now(), approver=recipient.principal, groups=groups)

    return links


def teams_announcer(settings: HostSettings, *, session: Any, records: Any = None) -> Any:
    """The Teams announcer: cards to the Workflows webhook whose URL is the `AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN`
    secret, per person (`AGENT_WAIT_TEAMS_RECIPIENTS`) or per channel."""
    from agent_wait.channels.teams import TeamsAnnounce

    teams = settings.teams
    if teams is None:  # HostSettings decides; say so if a caller ever does not
        raise ConfigurationError(
            [f"{Settings.TEAMS_WEBHOOK_URL_ARN.value} is not set"], variables=[Settings.TEAMS_WEBHOOK_URL_ARN.value]
        )
    url = url_secret(teams.webhook_url_arn, Settings.TEAMS_WEBHOOK_URL_ARN, "the Teams webhook URL", session)
    routing = teams.recipients
    return TeamsAnnounce(
        url,
        mode=teams.mode,
        recipients=routing.recipients_for if routing is not None else None,
        links=_links(settings, session),
        records=records,
        inbox_url=_inbox(settings),
        sends=_sends(teams.sends_table, session),
    )


def _sends(table: str | None, session: Any) -> Any:
    """The record of the cards posted (`AGENT_WAIT_TEAMS_SENDS_TABLE`); None, said once, when it is not set."""
    if table is None:
        logger.warning(
            "Teams cards are posted again whenever an event is delivered again: set %s to a table that records "
            "them (the AgentWait construct creates one)",
            Settings.TEAMS_SENDS_TABLE.value,
        )
        return None
    from agent_wait.channels.sends import DynamoDbSends

    return DynamoDbSends(table, client=client(session, "dynamodb"))


def shaped_webhook_announcer(settings: HostSettings, *, session: Any) -> Any:
    """The shaped webhook: the templates of `AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES`, POSTed to the URL that is the
    `AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN` secret."""
    from agent_wait.channels.shaped import ShapedWebhookAnnounce

    shaped = settings.shaped_webhook
    if shaped is None:
        raise ConfigurationError(
            [f"{Settings.SHAPED_WEBHOOK_URL_ARN.value} is not set"], variables=[Settings.SHAPED_WEBHOOK_URL_ARN.value]
        )
    url = url_secret(shaped.url_arn, Settings.SHAPED_WEBHOOK_URL_ARN, "the shaped webhook's URL", session)
    return ShapedWebhookAnnounce(url, templates=shaped.templates, inbox_url=_inbox(settings))
