"""`CheckpointTable`: where LangGraph keeps each thread's checkpoints."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk._shapes import CHECKPOINT_PARTITION_KEY, CHECKPOINT_SORT_KEY, CHECKPOINT_TTL_ATTRIBUTE
from agent_wait_cdk._tables import on_demand_table

__all__ = ("CheckpointTable",)


class CheckpointTable(Construct):
    """The table `langgraph_checkpoint_aws.DynamoDBSaver` needs: `PK`/`SK` strings, TTL on `ttl`, on demand.

    Point-in-time recovery and encryption at rest are on. Items over DynamoDB's 400 KB limit need the
    saver's S3 offload, into a `CheckpointBucket` (AgentWait creates one by default).

    Example:
        checkpoints = CheckpointTable(self, "Checkpoints")
        checkpoints.grant_read_write(my_host_role)

    Args:
        scope: the parent construct.
        id: the construct id.
        table_name: a fixed physical name. Default None: generated, so stacks never collide.
        removal_policy: Default RETAIN: a parked thread's checkpoint is the only way to resume it.
        encryption_key: a customer managed KMS key. Default None: the AWS managed key (`aws/dynamodb`).
        point_in_time_recovery: Default True, for the same reason as the question table.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table_name: str | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        encryption_key: kms.IKey | None = None,
        point_in_time_recovery: bool = True,
    ) -> None:
        super().__init__(scope, id)
        self.table = on_demand_table(
            self,
            partition_key=CHECKPOINT_PARTITION_KEY,
            sort_key=CHECKPOINT_SORT_KEY,
            ttl_attribute=CHECKPOINT_TTL_ATTRIBUTE,
            table_name=table_name,
            removal_policy=removal_policy,
            encryption_key=encryption_key,
            point_in_time_recovery=point_in_time_recovery,
        )

    @property
    def table_name(self) -> str:
        return self.table.table_name

    def grant_read_write(self, grantee: iam.IGrantable) -> iam.Grant:
        """The calls `DynamoDBSaver` makes: Get/BatchGet/Query, Put/BatchWrite, Delete; and Update, with which the
        router's saver holds the TTL of what a waiting thread needs, and lets it go. Nothing else."""
        return _grants.grant_table(grantee, self.table, _perms.CHECKPOINT_READ_WRITE, kms_actions=_perms.KMS_READ_WRITE)
