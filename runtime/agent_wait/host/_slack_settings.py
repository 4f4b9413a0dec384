"""The Slack settings of the host (`AGENT_WAIT_SLACK_*`), read and checked with the rest of `HostSettings`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agent_wait.contract.schema import Settings
from agent_wait.host._patterns import LOOPBACK_URL, SECRET_ARN

__all__ = ("SlackSettings", "slack_settings")

_SLACK_ID = re.compile(r"[A-Z0-9]{2,64}")
"""A Slack id: a channel (`C…`), a user group (`S…`), a user (`U…`)."""


@dataclass(frozen=True, slots=True)
class SlackSettings:
    """Slack as an answer channel: the app's secrets, where questions go, and who its user groups are."""

    bot_token_arn: str | None
    """The bot token's secret (`AGENT_WAIT_SLACK_BOT_TOKEN_ARN`)."""
    signing_secret_arn: str | None
    """The signing secret's secret (`AGENT_WAIT_SLACK_SIGNING_SECRET_ARN`); the answer API's endpoint needs it."""
    channels: Mapping[str, str]
    """A policy tag (`key:value`, or `*`) → the channel id its questions go to."""
    groups: Mapping[str, str]
    """An answerer group → its Slack user group id."""
    messages_table: str | None
    """The table of each question's Slack messages."""
    api_url: str | None = None
    """The Web API's base URL; None: Slack's own."""


def slack_settings(
    value: Mapping[Settings, str | None], problems: list[str], wrong: list[str], *, posts: bool
) -> SlackSettings | None:
    """The Slack settings when any is set, checked. A function that `posts` (the router, the sweep) needs the
    channels and the messages table beside the bot token; the answer API reads only people and groups with it."""
    names = (
        Settings.SLACK_BOT_TOKEN_ARN,
        Settings.SLACK_SIGNING_SECRET_ARN,
        Settings.SLACK_CHANNELS,
        Settings.SLACK_GROUPS,
        Settings.SLACK_MESSAGES_TABLE,
    )
    if all(value[name] is None for name in names):
        return None
    for name in (Settings.SLACK_BOT_TOKEN_ARN, Settings.SLACK_SIGNING_SECRET_ARN):
        arn = value[name]
        if arn is not None and not SECRET_ARN.fullmatch(arn):
            problems.append(f"{name.value} must be a Secrets Manager secret ARN; got {arn!r}")
            wrong.append(name.value)
    mappings: dict[Settings, dict[str, str]] = {}
    for name, example in (
        (Settings.SLACK_CHANNELS, '{"approver_group:finance": "C0123ABCD", "*": "C0456EFGH"}'),
        (Settings.SLACK_GROUPS, '{"finance": "S0123ABCD"}'),
    ):
        text = value[name]
        try:
            parsed = json.loads(text) if text else {}
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and _SLACK_ID.fullmatch(v) for k, v in parsed.items()
        ):
            problems.append(f"{name.value} must be a JSON object of Slack ids, such as {example}; got {text!r}")
            wrong.append(name.value)
            parsed = {}
        mappings[name] = parsed
    if posts and value[Settings.SLACK_BOT_TOKEN_ARN] is not None:
        for name in (Settings.SLACK_CHANNELS, Settings.SLACK_MESSAGES_TABLE):
            if value[name] is None:
                problems.append(f"{name.value} is not set: Slack's bot token is, and posting needs it")
                wrong.append(name.value)
    api_url = value[Settings.SLACK_API_URL]
    if api_url is not None and not (api_url.startswith("https://") or LOOPBACK_URL.fullmatch(api_url)):
        problems.append(f"{Settings.SLACK_API_URL.value} must be an https:// URL (http:// only on localhost)")
        wrong.append(Settings.SLACK_API_URL.value)
    return SlackSettings(
        bot_token_arn=value[Settings.SLACK_BOT_TOKEN_ARN],
        signing_secret_arn=value[Settings.SLACK_SIGNING_SECRET_ARN],
        channels=mappings[Settings.SLACK_CHANNELS],
        groups=mappings[Settings.SLACK_GROUPS],
        messages_table=value[Settings.SLACK_MESSAGES_TABLE],
        api_url=api_url,
    )
