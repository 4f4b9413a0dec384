"""Web push as a channel: each question pushed to the phones (and desktops) of the people who may answer it, from the
inbox installed as an app (docs/phone.md).

The channel's parts, declared in `channel.py` (`agent_wait.channels.contract`): `announce.py`, `PushAnnounce`, the
announcer (the host builds it from `AGENT_WAIT_PUSH_*`); `payload.py`, what a push says; `send.py`, one push with
`pywebpush`; `subscriptions.py`, the inbox's subscriptions, one per person and device; `keys.py`, the VAPID key pair;
`records.py` remembers what was pushed, so nothing is pushed twice; `preview.py` shows a push as a device decrypts it.
`pywebpush` (the `push` extra) is imported only when a push is sent.
"""

from agent_wait.channels.push.announce import PushAnnounce, audience
from agent_wait.channels.push.keys import VapidKeys
from agent_wait.channels.push.payload import push_payload
from agent_wait.channels.push.records import DynamoDbPushSends, InMemoryPushSends, PushSends
from agent_wait.channels.push.send import PushRefused, WebPushSender
from agent_wait.channels.push.subscriptions import (
    DynamoDbPushSubscriptions,
    InMemoryPushSubscriptions,
    PushSubscriptions,
    Subscription,
    parse_subscription,
)

__all__ = (
    "DynamoDbPushSends",
    "DynamoDbPushSubscriptions",
    "InMemoryPushSends",
    "InMemoryPushSubscriptions",
    "PushAnnounce",
    "PushRefused",
    "PushSends",
    "PushSubscriptions",
    "Subscription",
    "VapidKeys",
    "WebPushSender",
    "audience",
    "parse_subscription",
    "push_payload",
)
