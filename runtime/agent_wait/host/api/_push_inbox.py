"""What the answer API's push routes work with (`ApiContext.push`): the VAPID public key and the subscriptions, built
once per cold start from the settings (`push_inbox`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_wait.channels.push.subscriptions import PushSubscriptions

__all__ = ("PushInbox", "push_inbox")


@dataclass(frozen=True, slots=True)
class PushInbox:
    """What the push routes need: the VAPID public key and the subscriptions."""

    public_key: str
    """The VAPID public key (base64url), given to the page."""
    subscriptions: PushSubscriptions
    allow_loopback: bool = False
    """Take `http://127.0.0.1` endpoints (`agent-wait dev`'s local push service): only when the API itself is local."""


def push_inbox(settings: Any, *, session: Any) -> PushInbox | None:
    """The push routes' part of the API's context from its settings (the keys read once); None when push is off.

    Raises:
        ConfigurationError: the keys' secret cannot be read or is not a VAPID key pair.
    """
    push = settings.push
    if push is None:
        return None
    from agent_wait.channels.push.keys import VapidKeys
    from agent_wait.channels.push.subscriptions import DynamoDbPushSubscriptions
    from agent_wait.contract.schema import Settings
    from agent_wait.host._clients import client, secret_string

    variable = Settings.PUSH_KEYS_ARN.value
    text = secret_string(push.keys_arn, variable, "the VAPID key pair", session) or ""
    keys = VapidKeys.parse(text, variable=variable)
    local = (settings.api_url or "").startswith("http://127.0.0.1:")
    table = DynamoDbPushSubscriptions(push.subscriptions_table, client=client(session, "dynamodb"))
    return PushInbox(keys.public_key, table, allow_loopback=local)
