"""Web push to the inbox installed as an app: `PushProps`, the subscriptions table, the sends table, and what the
functions are told and may call (docs/phone.md).

`AgentWait(answer_api=True, push=PushProps(keys_secret=...))` creates `PushSubscriptionsTable` (partition key `person`,
sort key `device`) and `PushSendsTable` (a `ChannelRecordTable`); every function gets `AGENT_WAIT_PUSH_KEYS_ARN` and
`AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE` (and `AGENT_WAIT_PUSH_SUBJECT` when set), the router and the sweep also
`AGENT_WAIT_PUSH_SENDS_TABLE`. The answer API reads the secret (for its public key) and keeps subscriptions
(`PutItem`, `DeleteItem`, `Query`); the router and the sweep read the secret, read every subscription (`Scan`),
remove a gone one (`DeleteItem`) and claim each push (`UpdateItem` on the sends table). The secret is the operator's:
`agent-wait push keys --secret NAME` makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._tables import on_demand_table
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.channel_records import ChannelRecordTable

__all__ = (
    "PushProps",
    "PushSendsTable",
    "PushSubscriptionsTable",
    "check_push_props",
    "grant_push",
    "push_environment",
)


@dataclass(frozen=True)
class PushProps:
    """Web push: the VAPID key pair's secret, and whom push services may contact.

    Args:
        keys_secret: the Secrets Manager secret holding the VAPID key pair as JSON `{"public_key", "private_key"}`
            (`agent-wait push keys --secret NAME` makes it; `secretsmanager.Secret.from_secret_name_v2` imports it).
        subject: the VAPID `sub`, `mailto:<address>` or an `https://` URL. Default None: the answer API's URL.

    Example:
        AgentWait(self, "Approvals", graph="app.graph:graph", answer_api=True,
                  push=PushProps(keys_secret=secretsmanager.Secret.from_secret_name_v2(
                      self, "PushKeys", "agent-wait/push-keys")))
    """

    keys_secret: secretsmanager.ISecret
    subject: str | None = None


class PushSubscriptionsTable(Construct):
    """The inbox's push subscriptions: partition key `person`, sort key `device` (strings), on demand, encrypted,
    point-in-time recovery on. A subscription lives until its owner removes it or its push service says it is gone.

    Args:
        scope: the parent construct.
        id: the construct id.
        table_name: a fixed physical name. Default None: generated.
        removal_policy: Default RETAIN: without it, every person would have to subscribe again.
        encryption_key: a customer managed KMS key. Default None: the AWS managed key.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table_name: str | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        encryption_key: kms.IKey | None = None,
    ) -> None:
        super().__init__(scope, id)
        self.table = on_demand_table(
            self,
            partition_key="person",
            sort_key="device",
            ttl_attribute="ttl",
            table_name=table_name,
            removal_policy=removal_policy,
            encryption_key=encryption_key,
            point_in_time_recovery=True,
        )


class PushSendsTable(ChannelRecordTable):
    """Where each push is claimed before it is sent and marked after, so a redelivered event pushes nothing twice."""


def push_environment(
    push: PushProps, *, subscriptions: dynamodb.ITable, sends: dynamodb.ITable | None
) -> dict[str, str]:
    """The push variables of a function: the router's and the sweep's with `sends`, the answer API's without."""
    environment = {
        shapes.ENV_PUSH_KEYS_ARN: push.keys_secret.secret_arn,
        shapes.ENV_PUSH_SUBSCRIPTIONS_TABLE: subscriptions.table_name,
    }
    if sends is not None:
        environment[shapes.ENV_PUSH_SENDS_TABLE] = sends.table_name
    if push.subject:
        environment[shapes.ENV_PUSH_SUBJECT] = push.subject
    return environment


def grant_push(
    function: iam.IGrantable, push: PushProps, *, subscriptions: dynamodb.ITable, sends: dynamodb.ITable | None
) -> None:
    """The secret's value; with `sends` (the router, the sweep): read and prune subscriptions and claim pushes; else
    (the answer API): keep subscriptions."""
    _grants.grant_secret_value(function, push.keys_secret)
    if sends is None:
        _grants.grant_channel_record(function, subscriptions, _perms.PUSH_SUBSCRIPTIONS_KEEP)
        return
    _grants.grant_channel_record(function, subscriptions, _perms.PUSH_SUBSCRIPTIONS_READ)
    _grants.grant_channel_record(function, sends, _perms.PUSH_SENDS)


def check_push_props(checks: PropChecks, push: PushProps | None, *, answer_api: bool) -> None:
    """Push needs the answer API (people subscribe in its inbox); a subject is `mailto:` or `https://`."""
    if push is None:
        return
    if not answer_api:
        checks.fail("push", "needs answer_api=True: people subscribe to pushes in the answer API's inbox")
    subject = push.subject
    if subject is not None and not (subject.startswith("mailto:") or subject.startswith("https://")):
        checks.fail("push.subject", f"must be 'mailto:<address>' or an https:// URL (RFC 8292); got {subject!r}")
