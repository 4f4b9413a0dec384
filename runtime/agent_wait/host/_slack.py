"""Slack for the host: the announcer the router and the sweep use, and the answer API's interactions, built from
`HostSettings.slack` with the app's secrets read once from Secrets Manager (at cold start)."""

from __future__ import annotations

from typing import Any

from agent_wait.channels.slack.announce import SlackAnnounce, SlackRouting
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host._clients import client, secret_string
from agent_wait.host._slack_settings import SlackSettings
from agent_wait.host.settings import HostSettings

__all__ = ("slack_announcer", "slack_interactions", "web_client")

SLACK_API = "https://slack.com/api/"
_INTERACTION_TIMEOUT = 1
"""Seconds the Slack door's Web API reads (`users.info`, `usergroups.users.list`, `views.open`) may take."""


def _secret(secret_arn: str, variable: Settings, what: str, session: Any) -> str:

    text = (secret_string(secret_arn, variable.value, what, session) or "").strip()
    if not text:
        raise ConfigurationError(
            [f"{variable.value}={secret_arn!r}: the secret is empty or binary; store {what} as its text"],
            variables=[variable.value],
        )
    return text


def web_client(slack: SlackSettings, session: Any, *, timeout: int = 10, retry_rate_limits: bool = True) -> Any:
    """A `slack_sdk.WebClient` with the bot token from its secret; it retries Slack's rate limits (429) unless told
    not to (a caller that must answer Slack within its 3 seconds cannot sleep out a `Retry-After`)."""
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    if not slack.bot_token_arn:
        raise ConfigurationError(
            [f"{Settings.SLACK_BOT_TOKEN_ARN.value} is not set: Slack needs the app's bot token"],
            variables=[Settings.SLACK_BOT_TOKEN_ARN.value],
        )
    token = _secret(slack.bot_token_arn, Settings.SLACK_BOT_TOKEN_ARN, "the Slack bot token", session)
    # A 429 was not acted on, so it is safe to send again; a connection reset may have posted (chat.postMessage is
    # not idempotent), so that is left to the announcer, which finds a post it may have made by its metadata.
    return WebClient(
        token=token,
        base_url=slack.api_url or SLACK_API,
        timeout=timeout,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)] if retry_rate_limits else [],
    )


def _routing(slack: SlackSettings) -> SlackRouting:
    return SlackRouting(channels=dict(slack.channels), mentions=dict(slack.groups))


def slack_announcer(settings: HostSettings, *, session: Any, records: Any = None, clock: Any = None) -> SlackAnnounce:
    """The Slack announcer: posts in the routed channels, remembers messages in the Slack messages table."""
    from agent_wait.channels.slack.messages import DynamoDbSlackMessages

    slack = settings.slack
    if slack is None or not slack.messages_table:  # HostSettings checks this; say so if it ever does not
        raise ConfigurationError(
            [f"{Settings.SLACK_MESSAGES_TABLE.value} is not set"], variables=[Settings.SLACK_MESSAGES_TABLE.value]
        )
    messages = DynamoDbSlackMessages(slack.messages_table, client=client(session, "dynamodb"))
    inbox = f"{settings.api_url.rstrip('/')}/inbox" if settings.api_url else None
    options: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return SlackAnnounce(
        web_client(slack, session), _routing(slack), messages, records=records, inbox_url=inbox, **options
    )


def slack_interactions(settings: HostSettings, *, session: Any, service: Any, find: Any, clock: Any) -> Any:
    """The answer API's Slack endpoint; None when no signing secret is set (the endpoint then refuses all)."""
    from agent_wait.channels.slack.interactions import SlackInteractions

    slack = settings.slack
    if slack is None or not slack.signing_secret_arn:
        return None
    secret = _secret(slack.signing_secret_arn, Settings.SLACK_SIGNING_SECRET_ARN, "the Slack signing secret", session)
    return SlackInteractions(
        signing_secret=secret,
        service=service,
        find=find,
        # Slack waits 3 s for the answer: a slow or rate-limited read refuses the click ("try again") instead
        client=web_client(slack, session, timeout=_INTERACTION_TIMEOUT, retry_rate_limits=False),
        routing=_routing(slack),
        clock=clock,
    )
