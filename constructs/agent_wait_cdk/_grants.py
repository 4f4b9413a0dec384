"""Grants built from explicit action lists on explicit ARNs, so no statement holds a `*`.

The L2 grants are close but broader: `Table.grant_read_data` adds `Scan` and `index/*`, and the L2 KMS
grants use `kms:GenerateDataKey*`. These helpers take any `ITable`/`IQueue`/`ITopic`, so they work the
same on resources AgentWait created and on ones the caller brought (`existing_*`). For the same reason
secrets are read with `GetSecretValue` alone, not `grant_read`'s `DescribeSecret` besides.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs

from agent_wait_cdk import _perms


def grant_table(
    grantee: iam.IGrantable,
    table: dynamodb.ITable,
    actions: Sequence[str],
    *,
    indexes: Sequence[str] = (),
    kms_actions: Sequence[str] = _perms.KMS_READ,
) -> iam.Grant:
    """`actions` on the table and on each named index (never `index/*`), plus the table's key if it has one."""
    arns = [table.table_arn, *(f"{table.table_arn}/index/{name}" for name in indexes)]
    grant = iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=arns)
    return _with_key(grant, grantee, table.encryption_key, kms_actions)


def grant_channel_record(grantee: iam.IGrantable, table: dynamodb.ITable, actions: Sequence[str]) -> iam.Grant:
    """`actions` on a channel's record table (`ChannelRecordTable`, or one brought), and read and write with its
    customer managed key, if any: a channel claims and marks its sends there."""
    return grant_table(grantee, table, actions, kms_actions=_perms.KMS_READ_WRITE)


def grant_send(grantee: iam.IGrantable, queue: sqs.IQueue, *, actions: Sequence[str] = _perms.SQS_SEND) -> iam.Grant:
    """Send messages to `queue` (and use its customer managed key, if any)."""
    grant = iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=[queue.queue_arn])
    return _with_key(grant, grantee, queue.encryption_master_key, _perms.KMS_SEND)


def grant_secret_value(grantee: iam.IGrantable, secret: secretsmanager.ISecret) -> iam.Grant:
    """`secretsmanager:GetSecretValue` on `secret` only (and decrypt with its customer managed key, if any).

    `ISecret.grant_read` also grants `DescribeSecret`, which nothing here calls. A secret imported by name
    has no full ARN; like `grant_read`, the statement then matches Secrets Manager's 6-character suffix.
    """
    arn = secret.secret_full_arn or f"{secret.secret_arn}-??????"
    grant = iam.Grant.add_to_principal(grantee=grantee, actions=list(_perms.SECRET_READ), resource_arns=[arn])
    return _with_key(grant, grantee, secret.encryption_key, _perms.KMS_DECRYPT)


def grant_publish(grantee: iam.IGrantable, topic: sns.ITopic) -> iam.Grant:
    """Publish to `topic` (and use its customer managed key, if any)."""
    grant = iam.Grant.add_to_principal(
        grantee=grantee, actions=list(_perms.SNS_PUBLISH), resource_arns=[topic.topic_arn]
    )
    return _with_key(grant, grantee, topic.master_key, _perms.KMS_SEND)


def _with_key(grant: iam.Grant, grantee: iam.IGrantable, key: kms.IKey | None, actions: Sequence[str]) -> iam.Grant:
    if key is None or _is_aws_managed(key):
        # An AWS managed key (alias/aws/...) authorizes through the service's own key policy; an IAM
        # statement on its alias ARN would grant nothing.
        return grant
    return grant.combine(key.grant(grantee, *actions))


def _is_aws_managed(key: kms.IKey) -> bool:
    alias_name = getattr(key, "alias_name", None)
    return isinstance(alias_name, str) and not Token.is_unresolved(alias_name) and alias_name.startswith("alias/aws/")
