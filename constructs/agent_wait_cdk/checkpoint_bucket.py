"""`CheckpointBucket`: where the router's checkpoint saver puts a checkpoint too large for a DynamoDB item."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from agent_wait_cdk import _perms
from agent_wait_cdk._defaults import THIRTY_DAYS
from agent_wait_cdk._grants import _with_key  # pyright: ignore[reportPrivateUsage]
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.retention import CHECKPOINT_OBJECT_TAG, object_days

__all__ = ("CheckpointBucket", "check_checkpoint_bucket", "grant_checkpoint_bucket")


class CheckpointBucket(Construct):
    """The S3 bucket `langgraph_checkpoint_aws.DynamoDBSaver` offloads to (`AGENT_WAIT_CHECKPOINT_BUCKET`).

    A checkpoint, or one step's writes, over 12 KB (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`) is stored here as one
    object, and the checkpoint table keeps a reference to it; smaller ones stay in the table. Without it, a
    thread whose state passes DynamoDB's 400 KB item limit (a long chat) fails (`checkpoint_too_large`).

    Encrypted at rest (SSE-S3, or SSE-KMS with a bucket key under `encryption_key`), SSL enforced, public
    access blocked, ACLs off (bucket owner enforced). No versioning: the saver never rewrites an object it needs.

    One lifecycle rule, `CheckpointRetention`: an object tagged `ttl-days=<N>` expires N days after it was written,
    N being `retention`'s days plus one. The router's saver tags every object it writes so (with the same
    `AGENT_WAIT_CHECKPOINT_RETENTION`), a day after the checkpoint items that name it expire. It takes the tag off the
    objects of a checkpoint a thread still waits on (a question without a deadline, or one further out than the
    retention; a failed thread), and no rule expires an untagged object; once the thread moves on, it copies them onto
    themselves with the tag, so their days count from then (docs/operate.md, "What is kept, and for how long"). A
    retention changed later applies to what is written after: objects tagged for the old one are kept.

    Example:
        bucket = CheckpointBucket(self, "CheckpointBucket")
        bucket.grant_read_write(router_function)

    Args:
        scope: the parent construct.
        id: the construct id.
        bucket_name: a fixed physical name. Default None: generated, so stacks never collide.
        removal_policy: Default RETAIN, like the checkpoint table: its objects are part of the checkpoints.
        encryption_key: a customer managed KMS key. Default None: S3 managed keys (SSE-S3), which need no
            key policy.
        retention: how long the router keeps checkpoints (`RetentionProps.checkpoints`, whole days). Default 30
            days, the runtime's own. None: no lifecycle rule, every object is kept.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket_name: str | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        encryption_key: kms.IKey | None = None,
        retention: Duration | None = THIRTY_DAYS,
    ) -> None:
        super().__init__(scope, id)
        self.bucket = s3.Bucket(
            self,
            "Resource",
            bucket_name=bucket_name,
            encryption=s3.BucketEncryption.KMS if encryption_key else s3.BucketEncryption.S3_MANAGED,
            encryption_key=encryption_key,
            bucket_key_enabled=True if encryption_key else None,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=removal_policy,
            lifecycle_rules=[_retention_rule(retention)] if retention is not None else None,
        )
        Validations.of(self.bucket).acknowledge(
            Acknowledgment(
                id="AwsSolutions-S1",
                reason=(
                    "Only the router's role reads and writes it, through the checkpoint saver; server access logs "
                    "would need a second bucket per stack. Turn on CloudTrail S3 data events to audit access."
                ),
            )
        )

    @property
    def bucket_name(self) -> str:
        return self.bucket.bucket_name

    def grant_read_write(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the saver calls: get, put and delete objects, and list the bucket (see `grant_checkpoint_bucket`)."""
        return grant_checkpoint_bucket(grantee, self.bucket)


def _retention_rule(retention: Duration) -> s3.LifecycleRule:
    """Expire the objects the saver tagged for this retention, a day after their checkpoints' items."""
    days = object_days(retention)
    return s3.LifecycleRule(
        id="CheckpointRetention",
        tag_filters={CHECKPOINT_OBJECT_TAG: str(days)},
        expiration=Duration.days(days),
    )


def grant_checkpoint_bucket(grantee: iam.IGrantable, bucket: s3.IBucket) -> iam.Grant:
    """`s3:GetObject`, `PutObject`, `DeleteObject` and the object tagging the saver's retention writes on the bucket's
    objects, and `s3:ListBucket` on the bucket.

    `ListBucket` makes a missing object read as `NoSuchKey` (404), which the saver takes for a checkpoint whose
    payload never arrived (a crash between its two writes); without it S3 answers `AccessDenied` and the
    message would be retried until dead-lettered. With a customer managed key, the key's read/write actions.
    """
    objects = bucket.arn_for_objects("*")
    actions = list(_perms.CHECKPOINT_OBJECTS)
    grant = iam.Grant.add_to_principal(grantee=grantee, actions=actions, resource_arns=[objects])
    principal = grantee.grant_principal
    if isinstance(principal, Construct):  # a role in this app: acknowledge this one `/*`, no other wildcard
        finding = _flattened(Stack.of(principal).resolve(objects))
        Validations.of(principal).acknowledge(
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::{finding}]",
                reason=(
                    "The checkpoint saver names its objects by thread and checkpoint id (<thread>/checkpoints/...), "
                    "so no statement can list them; the grant is the saver's object calls on this bucket alone."
                ),
            )
        )
    grant = grant.combine(
        iam.Grant.add_to_principal(
            grantee=grantee, actions=list(_perms.CHECKPOINT_BUCKET_LIST), resource_arns=[bucket.bucket_arn]
        )
    )
    return _with_key(grant, grantee, bucket.encryption_key, _perms.KMS_READ_WRITE)


def _flattened(node: Any) -> str:
    """A resolved ARN as cdk-nag names it in a finding (`<Logical.Arn>/*`, `arn:<AWS::Partition>:s3:::name/*`)."""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict) and "Fn::Join" in node:
        delimiter, items = node["Fn::Join"]
        return str(delimiter).join(_flattened(item) for item in items)
    if isinstance(node, dict) and "Fn::GetAtt" in node:
        resource, attribute = node["Fn::GetAtt"]
        return f"<{_flattened(resource)}.{_flattened(attribute)}>"
    if isinstance(node, dict) and "Ref" in node:
        return f"<{_flattened(node['Ref'])}>"
    return str(node)


def check_checkpoint_bucket(checks: PropChecks, *, switch: bool, existing: s3.IBucket | None) -> None:
    """`existing_checkpoint_bucket` (`existing`) cannot go with `checkpoint_bucket=False` (`switch`)."""
    if existing is not None and not switch:
        checks.fail(
            "existing_checkpoint_bucket",
            "cannot go with checkpoint_bucket=False; pass existing_checkpoint_bucket to offload to it, or neither",
        )
