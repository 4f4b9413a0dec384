"""Slack as an answer channel: `SlackProps`, the table of each question's Slack messages, and the app manifest.

`AgentWait(answer_api=True, slack=SlackProps(...))` posts each question to Slack from the router and the sweep
(`agent_wait.channels.slack`), and takes button clicks and modal submissions on the answer API's
`POST /slack/interactions`, which Slack signs with the app's signing secret (so it carries no authorizer).
The Slack app itself is made from `slack_app_manifest`, which `AgentWait` puts in the `SlackAppManifest` output
with the deployed API's URL: creating the app is one paste.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aws_cdk import Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_secretsmanager as secretsmanager

from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.channel_records import ChannelRecordTable, check_channel_record_table

__all__ = (
    "SLACK_BOT_SCOPES",
    "SLACK_INTERACTIONS_PATH",
    "SLACK_ROUTES",
    "SlackMessagesTable",
    "SlackProps",
    "check_slack_props",
    "slack_app_manifest",
)

SLACK_INTERACTIONS_PATH = "/slack/interactions"
"""Where Slack sends button clicks and modal submissions (the manifest's `settings.interactivity.request_url`)."""
SLACK_ROUTES = (("POST", SLACK_INTERACTIONS_PATH),)
"""The answer API's Slack route: no authorizer, because Slack signs every request with the app's signing secret
(`X-Slack-Signature`, HMAC-SHA256), which the function checks, refusing requests over 5 minutes old."""
SLACK_ROUTES_OPEN = (
    "Slack cannot send a JWT: it signs each interactivity request with the app's signing secret instead "
    "(X-Slack-Signature, HMAC-SHA256 over the timestamp and body), and the function refuses every request whose "
    "signature does not verify or whose timestamp is over 5 minutes old, before it reads anything. The stage is "
    "throttled and its access log never records a header or a body."
)
"""Why the Slack route needs no authorizer (cdk-nag AwsSolutions-APIG4)."""
SLACK_BOT_SCOPES = (
    "chat:write",
    "channels:history",
    "groups:history",
    "users:read",
    "users:read.email",
    "usergroups:read",
)
"""The bot token's scopes: post and update messages; find a post again after a crash (public and private
channels' history); read who clicked (their email) and which user groups they are in."""
SLACK_APP_NAME = "agent-wait"

_TAG = re.compile(r"[^:]+:.*", re.DOTALL)
_CHANNEL = re.compile(r"[CGD][A-Z0-9]{2,63}")
_USER_GROUP = re.compile(r"S[A-Z0-9]{2,63}")
_APP_NAME_MAX = 35
"""Slack's limit for `display_information.name`."""


@dataclass(frozen=True, kw_only=True)
class SlackProps:
    """Slack as an answer channel, as `AgentWait(answer_api=True, slack=SlackProps(...))` takes it.

    Create the app from the `SlackAppManifest` output, install it, and put its bot token and signing secret in
    two Secrets Manager secrets (their text, not key/value), outside the stack so neither enters a template.

    Example:
        SlackProps(
            bot_token=secretsmanager.Secret.from_secret_name_v2(self, "SlackBotToken", "agent-wait/slack-bot-token"),
            signing_secret=secretsmanager.Secret.from_secret_name_v2(
                self, "SlackSigningSecret", "agent-wait/slack-signing-secret"
            ),
            channels={"approver_group:finance": "C0123ABCD", "*": "C0456EFGH"},
            groups={"finance": "S0123ABCD"},
        )
    """

    bot_token: secretsmanager.ISecret
    """The secret whose value is the app's bot token (`xoxb-...`): `AGENT_WAIT_SLACK_BOT_TOKEN_ARN` on the router,
    the sweep and the answer API, which may read it."""
    signing_secret: secretsmanager.ISecret
    """The secret whose value is the app's signing secret: `AGENT_WAIT_SLACK_SIGNING_SECRET_ARN` on the answer API
    only, which may read it."""
    channels: Mapping[str, str]
    """A policy tag `"key:value"` (or `"*"` for every other question) to the Slack channel id its questions are
    posted to (`C...`, `G...`, or `D...`): `AGENT_WAIT_SLACK_CHANNELS` on the router and the sweep. At least one."""
    groups: Mapping[str, str] = field(default_factory=dict[str, str])
    """An answerer group to its Slack user group id (`S...`): mentioned in messages, and its members answer as
    members of the group. `AGENT_WAIT_SLACK_GROUPS` on the router, the sweep and the answer API. Default none."""
    messages_table: dynamodb.ITable | None = None
    """Where each question's Slack messages are remembered (partition key `question_id`, a string; TTL on `ttl`).
    Default None: `SlackMessagesTable` is created."""
    app_name: str = SLACK_APP_NAME
    """The Slack app's name in the manifest (`display_information.name`), 1 to 35 characters."""


def check_slack_props(checks: PropChecks, slack: SlackProps | None, *, answer_api: bool) -> None:
    """Every problem of `slack`, as `slack.<field>`; Slack's buttons need the answer API."""
    if slack is None:
        return
    if not answer_api:
        checks.fail(
            "slack",
            "needs answer_api=True: Slack's buttons and modals post to the answer API's POST /slack/interactions; "
            "pass answer_api=True with answer_api_props, or drop slack",
        )
    checks = checks.prefixed("slack.")
    if not slack.channels:
        checks.fail(
            "channels",
            "must route at least one policy tag to a channel, such as {'*': 'C0123ABCD'} for every question; got {}",
        )
    for tag, channel in slack.channels.items():
        if not _known(tag) or not (tag == "*" or _TAG.fullmatch(tag)):
            checks.fail(
                "channels",
                f"keys must be a policy tag 'key:value' (such as 'approver_group:finance') or '*'; got {tag!r}",
            )
        if _known(channel) and not _CHANNEL.fullmatch(channel):
            checks.fail(
                "channels",
                f"values must be Slack channel ids (C..., G... or D..., in capitals: the channel's details show it, "
                f"not its name); got {channel!r} for {tag!r}",
            )
    for group, user_group in slack.groups.items():
        if _known(group) and not group:
            checks.fail("groups", "keys must be answerer group names; got ''")
        if _known(user_group) and not _USER_GROUP.fullmatch(user_group):
            checks.fail(
                "groups",
                f"values must be Slack user group ids (S..., in capitals: not the @handle); got {user_group!r} for "
                f"{group!r}",
            )
    check_channel_record_table(checks, "messages_table", slack.messages_table)
    if _known(slack.app_name) and not 1 <= len(slack.app_name) <= _APP_NAME_MAX:
        checks.fail("app_name", f"must be 1 to {_APP_NAME_MAX} characters (Slack's limit); got {slack.app_name!r}")


def _known(value: str) -> bool:
    return not Token.is_unresolved(value)


def slack_app_manifest(api_url: str, *, name: str = SLACK_APP_NAME) -> dict[str, Any]:
    """The Slack app manifest (JSON, version 1) for an answer API at `api_url`: paste it at
    https://api.slack.com/apps, "Create New App", "From a manifest".

    A bot user with `SLACK_BOT_SCOPES`, interactivity on at `<api_url>/slack/interactions`, no Events API, no
    socket mode, no token rotation (the bot token in Secrets Manager does not expire).

    Args:
        api_url: the answer API's base URL (the `AnswerApiUrl` output; a trailing slash is dropped). A CDK token
            works: `AgentWait` passes the API's endpoint and serializes with `Stack.to_json_string`.
        name: the app's name, as people see it in Slack.
    """
    return {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {
            "name": name,
            "description": "Answer AI agents' questions: approve, reject or edit what they are about to do.",
        },
        "features": {"bot_user": {"display_name": SLACK_APP_NAME, "always_online": False}},
        "oauth_config": {"scopes": {"bot": list(SLACK_BOT_SCOPES)}},
        "settings": {
            "interactivity": {"is_enabled": True, "request_url": api_url.rstrip("/") + SLACK_INTERACTIONS_PATH},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


def slack_environment(slack: SlackProps, *, for_api: bool) -> dict[str, str]:
    """The `AGENT_WAIT_SLACK_*` variables of the router and the sweep (`for_api=False`: the bot token, channels,
    groups; the messages table is added by whoever knows it) or of the answer API (the bot token, the signing
    secret, groups)."""
    environment = {shapes.ENV_SLACK_BOT_TOKEN_ARN: slack.bot_token.secret_arn}
    if for_api:
        environment[shapes.ENV_SLACK_SIGNING_SECRET_ARN] = slack.signing_secret.secret_arn
    else:
        environment[shapes.ENV_SLACK_CHANNELS] = _json(slack.channels)
    if slack.groups:
        environment[shapes.ENV_SLACK_GROUPS] = _json(slack.groups)
    return environment


def _json(mapping: Mapping[str, str]) -> str:
    return json.dumps(dict(mapping), separators=(",", ":"))


class SlackMessagesTable(ChannelRecordTable):
    """Where each question's Slack messages are remembered: Slack's `ChannelRecordTable` (`question_id` string key,
    TTL on `ttl`, on demand, point-in-time recovery, encrypted at rest, RETAIN by default).

    One item per question, one map attribute per post (its channel and `ts`), claimed before it is posted, so a
    redelivered event never posts twice and a later step updates the message it posted (`agent_wait.channels.slack`).
    The router and the sweep may `GetItem` and `UpdateItem` it (`_perms.SLACK_MESSAGES`).
    """
