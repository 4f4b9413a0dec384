"""How `agent-wait dev` pushes by itself: VAPID keys of its own, the subscriptions and sends tables, the settings.

A stack whose template sets no `AGENT_WAIT_PUSH_KEYS_ARN` gets a generated key pair in the emulator's Secrets Manager
(as `agent-wait push keys` stores one on AWS), a subscriptions table and a sends table of its own, so the inbox offers
"Notify me on this device" and every question is pushed to the subscribed people who may answer it. Pushes go to the
endpoints subscriptions name: locally, the stack's own push service (`agent_wait.local.push_service`), which takes
them over real HTTP as a browser's push service would. Settings given by the template or `extra_environment` are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.local.tables import question_keyed_table

__all__ = ("LOCAL_PUSH_SUBJECT", "local_push_settings", "push_subscriptions_table")

LOCAL_PUSH_SUBJECT = "mailto:approvals@example.com"
"""The VAPID `sub` the local stack pushes with."""


def local_push_settings(
    environment: Mapping[str, str], client: Callable[[str], Any], stack_name: str
) -> dict[str, str]:
    """The `AGENT_WAIT_PUSH_*` settings to add to `environment`, after creating what they name in the emulator."""
    from agent_wait.channels.push.keys import VapidKeys

    added: dict[str, str] = {}
    if not environment.get(Settings.PUSH_KEYS_ARN.value):
        secret = client("secretsmanager").create_secret(
            Name=f"{stack_name}-push-keys", SecretString=VapidKeys.generate().to_secret()
        )
        added[Settings.PUSH_KEYS_ARN.value] = secret["ARN"]
    if not environment.get(Settings.PUSH_SUBSCRIPTIONS_TABLE.value):
        table = push_subscriptions_table(client("dynamodb"), f"{stack_name}-push-subscriptions")
        added[Settings.PUSH_SUBSCRIPTIONS_TABLE.value] = table
    if not environment.get(Settings.PUSH_SENDS_TABLE.value):
        table = question_keyed_table(client("dynamodb"), f"{stack_name}-push-sends")
        added[Settings.PUSH_SENDS_TABLE.value] = table
    if not environment.get(Settings.PUSH_SUBJECT.value):
        added[Settings.PUSH_SUBJECT.value] = LOCAL_PUSH_SUBJECT
    return added


def push_subscriptions_table(dynamodb: Any, name: str) -> str:
    """Create a subscriptions table (partition key `person`, sort key `device`) in the emulator; returns its name."""
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "person", "KeyType": "HASH"}, {"AttributeName": "device", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "person", "AttributeType": "S"},
            {"AttributeName": "device", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    return name
