"""The table settings AgentWait's tables share: string keys, on demand, TTL, PITR, encryption."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct


def on_demand_table(
    scope: Construct,
    *,
    partition_key: str,
    sort_key: str | None,
    ttl_attribute: str,
    table_name: str | None,
    removal_policy: RemovalPolicy,
    encryption_key: kms.IKey | None,
    point_in_time_recovery: bool,
) -> dynamodb.Table:
    """A `dynamodb.Table` as child "Resource": string keys (no sort key if None), pay per request, encrypted at rest."""
    string = dynamodb.AttributeType.STRING
    return dynamodb.Table(
        scope,
        "Resource",
        table_name=table_name,
        partition_key=dynamodb.Attribute(name=partition_key, type=string),
        sort_key=dynamodb.Attribute(name=sort_key, type=string) if sort_key else None,
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        time_to_live_attribute=ttl_attribute,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=point_in_time_recovery
        ),
        encryption=dynamodb.TableEncryption.CUSTOMER_MANAGED
        if encryption_key
        else dynamodb.TableEncryption.AWS_MANAGED,
        encryption_key=encryption_key,
        removal_policy=removal_policy,
    )
