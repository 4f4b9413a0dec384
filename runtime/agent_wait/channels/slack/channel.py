"""Slack as a channel: its declaration, and how the host builds its announcer and its door from `AGENT_WAIT_SLACK_*`.

The announcer posts with the app's bot token (`AGENT_WAIT_SLACK_BOT_TOKEN_ARN`) and remembers its posts in the
Slack messages table (`AGENT_WAIT_SLACK_MESSAGES_TABLE`); the door (the answer API's `POST /slack/interactions`)
verifies Slack's requests with the app's signing secret (`AGENT_WAIT_SLACK_SIGNING_SECRET_ARN`). Each secret is read
once, when the host builds them (at cold start).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent_wait.channels.contract import Channel, ChannelHost, Door, text_secret
from agent_wait.channels.slack.announce import SlackAnnounce, SlackRouting
from agent_wait.channels.slack.interactions import SlackInteractions
from agent_wait.channels.slack.preview import preview
from agent_wait.channels.slack.records import POSTS, DynamoDbSlackMessages
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError

__all__ = ("CHANNEL", "SLACK_API", "build", "build_door", "web_client")

SLACK_API = "https://slack.com/api/"
_INTERACTION_TIMEOUT = 1
"""Seconds the Slack door's Web API reads (`users.info`, `usergroups.users.list`, `views.open`) may take."""


def build(host: ChannelHost) -> SlackAnnounce | None:
    """The Slack announcer: posts in the routed channels, remembers its posts in the Slack messages table; None
    without a bot token or the table (the answer API's settings, which only answer)."""
    slack = host.settings.slack
    if slack is None or not slack.bot_token_arn or not slack.messages_table:
        return None
    messages = DynamoDbSlackMessages(
        slack.messages_table, client=host.client("dynamodb"), keep_for=host.settings.channel_record_retention
    )
    return SlackAnnounce(
        web_client(host, slack), _routing(slack), messages, records=host.records, inbox_url=host.inbox_url
    )


def build_door(
    host: ChannelHost, *, service: Any, find: Callable[[str], Any], clock: Callable[[], datetime]
) -> SlackInteractions | None:
    """The answer API's Slack endpoint, deciding through `service`; None when no signing secret is set (the
    endpoint then refuses every request)."""
    slack = host.settings.slack
    if slack is None or not slack.signing_secret_arn:
        return None
    variable = Settings.SLACK_SIGNING_SECRET_ARN.value
    secret = text_secret(host, slack.signing_secret_arn, variable, "the Slack signing secret")
    return SlackInteractions(
        signing_secret=secret,
        service=service,
        find=find,
        # Slack waits 3 s for the answer: a slow or rate-limited read refuses the click ("try again") instead
        client=web_client(host, slack, timeout=_INTERACTION_TIMEOUT, retry_rate_limits=False),
        routing=_routing(slack),
        clock=clock,
    )


def web_client(host: ChannelHost, slack: Any, *, timeout: int = 10, retry_rate_limits: bool = True) -> Any:
    """A `slack_sdk.WebClient` with the bot token from its secret; it retries Slack's rate limits (429) unless told
    not to (a caller that must answer Slack within its 3 seconds cannot sleep out a `Retry-After`)."""
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    variable = Settings.SLACK_BOT_TOKEN_ARN.value
    if not slack.bot_token_arn:
        raise ConfigurationError([f"{variable} is not set: Slack needs the app's bot token"], variables=[variable])
    token = text_secret(host, slack.bot_token_arn, variable, "the Slack bot token")
    # A 429 was not acted on, so it is safe to send again; a connection reset may have posted (chat.postMessage is
    # not idempotent), so that is left to the announcer, which finds a post it may have made by its metadata.
    return WebClient(
        token=token,
        base_url=slack.api_url or SLACK_API,
        timeout=timeout,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)] if retry_rate_limits else [],
    )


def _routing(slack: Any) -> SlackRouting:
    return SlackRouting(channels=dict(slack.channels), mentions=dict(slack.groups))


CHANNEL = Channel(
    name=SlackAnnounce.name,
    announcer=SlackAnnounce,
    build=build,
    preview=preview,
    door=Door(handler=SlackInteractions, build=build_door),
    record=POSTS,
)
"""Slack: a Block Kit message per question, answered with its buttons and form (docs/slack.md)."""
