"""`ChannelRecordTable`: where an answer channel records what it sent for each question.

A channel that posts or sends (Slack's messages, email's sends, Teams' cards) keeps one item per question, keyed
by `question_id` (a string), with one map attribute per post or send under a key the channel names
(`created:<address>`, `reminder:<n>:<address>`, `<dedupe_key>|<address or channel>`, ...). Each is claimed before
it is sent and marked after with what the service gave back (Slack's `ts`, SES's message id, the webhook's
acceptance), so a redelivered event sends nothing twice and a later step updates the message it posted. Items
expire on `ttl`.

`SlackMessagesTable`, `EmailSendsTable` and `TeamsSendsTable` are this construct under each channel's name, as
`AgentWait` creates them (`slack.py`, `email.py`, `teams.py`); a table a user brings instead must have the same
partition key (`check_channel_record_table`). What each channel may call on it is in `_perms.py`, granted with
`_grants.grant_channel_record`.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from agent_wait_cdk._shapes import CHANNEL_RECORD_PARTITION_KEY, CHANNEL_RECORD_TTL_ATTRIBUTE
from agent_wait_cdk._tables import on_demand_table
from agent_wait_cdk._validate import PropChecks

__all__ = ("ChannelRecordTable", "check_channel_record_table")


class ChannelRecordTable(Construct):
    """One channel's record of what it sent: `question_id` string key, TTL on `ttl`, on demand.

    One item per question, one map attribute per post or send, each claimed before it is sent (the module
    docstring says how). Point-in-time recovery and encryption at rest are on.

    Args:
        scope: the parent construct.
        id: the construct id.
        table_name: a fixed physical name. Default None: generated.
        removal_policy: Default RETAIN, as the question table's: without the record, a redelivered event could send
            again, and an open question's message could no longer be updated.
        encryption_key: a customer managed KMS key. Default None: the AWS managed key (`aws/dynamodb`).
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
            partition_key=CHANNEL_RECORD_PARTITION_KEY,
            sort_key=None,
            ttl_attribute=CHANNEL_RECORD_TTL_ATTRIBUTE,
            table_name=table_name,
            removal_policy=removal_policy,
            encryption_key=encryption_key,
            point_in_time_recovery=True,
        )


def check_channel_record_table(checks: PropChecks, field: str, table: dynamodb.ITable | None) -> None:
    """A brought record table defined in this app must be keyed by `question_id`; an imported one is trusted."""
    if not isinstance(table, dynamodb.Table):
        return
    partition = table.schema().partition_key
    name = partition.name if partition else None
    if name != CHANNEL_RECORD_PARTITION_KEY:
        checks.fail(
            field,
            f"must have the partition key {CHANNEL_RECORD_PARTITION_KEY!r} (a string); its partition key is {name!r}",
        )
