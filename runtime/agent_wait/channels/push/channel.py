"""Web push as a channel: its declaration, and how the host builds its announcer from `AGENT_WAIT_PUSH_*`.

The announcer pushes with `pywebpush`, signed with the VAPID keys read once from Secrets Manager
(`AGENT_WAIT_PUSH_KEYS_ARN`), to the subscriptions the inbox keeps (`AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE`), and
records each push (`AGENT_WAIT_PUSH_SENDS_TABLE`). Push has no door of its own: a tap opens the question in the inbox,
which answers through the answer API.
"""

from __future__ import annotations

from agent_wait.channels.contract import Absent, Channel, ChannelHost, text_secret
from agent_wait.channels.push.announce import PushAnnounce
from agent_wait.channels.push.keys import VapidKeys
from agent_wait.channels.push.preview import preview
from agent_wait.channels.push.records import SENDS, DynamoDbPushSends
from agent_wait.channels.push.send import WebPushSender
from agent_wait.channels.push.subscriptions import DynamoDbPushSubscriptions
from agent_wait.contract.schema import Settings

__all__ = ("CHANNEL", "build", "vapid_subject")


def build(host: ChannelHost) -> PushAnnounce | None:
    """The push announcer; None without the sends table (the answer API keeps subscriptions but pushes nothing)."""
    push = host.settings.push
    if push is None or not push.sends_table:
        return None
    variable = Settings.PUSH_KEYS_ARN.value
    keys = VapidKeys.parse(text_secret(host, push.keys_arn, variable, "the VAPID key pair"), variable=variable)
    dynamodb = host.client("dynamodb")
    return PushAnnounce(
        DynamoDbPushSubscriptions(push.subscriptions_table, client=dynamodb),
        DynamoDbPushSends(push.sends_table, client=dynamodb, keep_for=host.settings.channel_record_retention),
        WebPushSender(keys, vapid_subject(push.subject, host.settings.api_url)),
        inbox_url=host.inbox_url,
    )


def vapid_subject(subject: str | None, api_url: str | None) -> str:
    """The VAPID `sub`: the setting, else the answer API's URL (a push service may contact its operator there)."""
    return subject or (api_url if api_url and api_url.startswith("https://") else "mailto:operator@example.invalid")


CHANNEL = Channel(
    name=PushAnnounce.name,
    announcer=PushAnnounce,
    build=build,
    preview=preview,
    door=Absent("a tap opens the question in the inbox, which answers through the answer API"),
    record=SENDS,
)
"""Web push: each question to the devices of the people who may answer it (docs/phone.md)."""
