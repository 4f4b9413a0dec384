"""`QuestionTable`: the question ledger, one item per question."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk._shapes import (
    DUE_INDEX_NAME,
    DUE_INDEX_PARTITION_KEY,
    DUE_INDEX_SORT_KEY,
    OPEN_AGE_INDEX_NAME,
    OPEN_AGE_INDEX_PARTITION_KEY,
    OPEN_AGE_INDEX_SORT_KEY,
    QUESTION_INDEX_NAME,
    QUESTION_INDEX_PARTITION_KEY,
    QUESTION_INDEX_SORT_KEY,
    QUESTION_PARTITION_KEY,
    QUESTION_SORT_KEY,
    QUESTION_TTL_ATTRIBUTE,
    STATUS_INDEX_NAME,
    STATUS_INDEX_PARTITION_KEY,
    STATUS_INDEX_SORT_KEY,
)
from agent_wait_cdk._tables import on_demand_table
from agent_wait_cdk._validate import PropChecks

__all__ = ("QuestionTable", "grant_answer_api", "grant_read_questions", "grant_router", "grant_sweep")


class QuestionTable(Construct):
    """The question ledger: `pk`/`sk` strings, on demand, GSIs `by_status`, `by_due`, `open_by_age`,
    `by_question`.

    One item per question (`pk = THREAD#<thread_id>`, `sk = WAIT#<question_id>`); the router decides each
    question with a conditional update. The sweep finds every question something is due on (an announcement
    to retry, a reminder, an escalation step, a deadline) through the sparse `by_due` (`due`, `due_at`), hands
    over decisions through `by_status` (`status`, `expires_at`), and finds the oldest open question through
    the sparse `open_by_age` (`open_since`, `asked_at`); these project every attribute, because the sweep
    needs the envelope. `by_question` (`question_id`, `pk`) projects keys only: the answer API and signed
    links know a question by its id alone, find its thread there, then read the item by its key
    (consistently), so copying every attribute into that index would only cost storage and write capacity.
    TTL on `ttl` lets decided questions age out; point-in-time recovery and encryption at rest are on.

    Example:
        table = QuestionTable(self, "Questions", removal_policy=RemovalPolicy.DESTROY)
        table.grant_read_questions(dashboard_role)

    Args:
        scope: the parent construct.
        id: the construct id.
        table_name: a fixed physical name. Default None: CloudFormation generates one, so two stacks (or a
            replacement) never collide; the functions read the name from their environment anyway.
        removal_policy: what happens to the table when it leaves the stack. Default RETAIN: the ledger is
            the record of who decided what, so it outlives an accidental `cdk destroy`.
        encryption_key: a customer managed KMS key. Default None: the AWS managed key (`aws/dynamodb`),
            which encrypts at rest, shows its use in CloudTrail and needs no key policy of yours.
        point_in_time_recovery: continuous backups. Default True: a bad deploy that rewrites statuses can
            be undone to the second.
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
        string = dynamodb.AttributeType.STRING
        self.table = on_demand_table(
            self,
            partition_key=QUESTION_PARTITION_KEY,
            sort_key=QUESTION_SORT_KEY,
            ttl_attribute=QUESTION_TTL_ATTRIBUTE,
            table_name=table_name,
            removal_policy=removal_policy,
            encryption_key=encryption_key,
            point_in_time_recovery=point_in_time_recovery,
        )
        self.table.add_global_secondary_index(
            index_name=STATUS_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=STATUS_INDEX_PARTITION_KEY, type=string),
            sort_key=dynamodb.Attribute(name=STATUS_INDEX_SORT_KEY, type=string),
            projection_type=dynamodb.ProjectionType.ALL,
        )
        self.table.add_global_secondary_index(
            index_name=DUE_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=DUE_INDEX_PARTITION_KEY, type=string),
            sort_key=dynamodb.Attribute(name=DUE_INDEX_SORT_KEY, type=string),
            projection_type=dynamodb.ProjectionType.ALL,
        )
        self.table.add_global_secondary_index(
            index_name=OPEN_AGE_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=OPEN_AGE_INDEX_PARTITION_KEY, type=string),
            sort_key=dynamodb.Attribute(name=OPEN_AGE_INDEX_SORT_KEY, type=string),
            projection_type=dynamodb.ProjectionType.ALL,
        )
        self.table.add_global_secondary_index(
            index_name=QUESTION_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=QUESTION_INDEX_PARTITION_KEY, type=string),
            sort_key=dynamodb.Attribute(name=QUESTION_INDEX_SORT_KEY, type=string),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )

    @property
    def table_name(self) -> str:
        return self.table.table_name

    @property
    def table_arn(self) -> str:
        return self.table.table_arn

    def grant_read_questions(self, grantee: iam.IGrantable) -> iam.Grant:
        """`dynamodb:GetItem`, `BatchGetItem` and `Query` on the table and its `by_status` and `by_question`
        indexes; nothing else."""
        return grant_read_questions(grantee, self.table)

    def grant_answer_api(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the answer API needs: `GetItem` and `Query` on the table, `by_status` and `by_question`;
        `UpdateItem` (its conditional decision) on the table only."""
        return grant_answer_api(grantee, self.table)

    def grant_router(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the router needs: read by key and by thread, conditional `PutItem`/`UpdateItem`, on the table only."""
        return grant_router(grantee, self.table)

    def grant_sweep(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the sweep needs: `Query` on `by_status`, `by_due` and `open_by_age`, `GetItem`, and `UpdateItem` to
        record re-announcements, reminders and escalation steps."""
        return grant_sweep(grantee, self.table)


def grant_read_questions(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """Readers (a dashboard, an approvals UI) list open questions through `by_status` and find one by its id
    alone through `by_question`."""
    return _grants.grant_table(grantee, table, _perms.QUESTION_READ, indexes=(STATUS_INDEX_NAME, QUESTION_INDEX_NAME))


def grant_router(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The router's ledger calls (`open`, `get`, `questions`, `decide`, `mark_*`, starts) use keys, never an index."""
    return _grants.grant_table(grantee, table, _perms.QUESTION_ROUTER, kms_actions=_perms.KMS_READ_WRITE)


def grant_sweep(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The sweep's `due` queries `by_due`, its hand-over step `by_status`, `oldest_open` `open_by_age`; it records
    announcements, reminders and escalation steps (`mark_announced`, `advance`) with conditional updates."""
    return _grants.grant_table(
        grantee,
        table,
        _perms.QUESTION_SWEEP,
        indexes=(STATUS_INDEX_NAME, DUE_INDEX_NAME, OPEN_AGE_INDEX_NAME),
        kms_actions=_perms.KMS_READ_WRITE,
    )


def grant_answer_api(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The answer API lists (`by_status`), finds (`by_question`) and reads questions, and decides one with the
    router's conditional `UpdateItem`, on the table only; it never puts, deletes or scans."""
    read = _grants.grant_table(
        grantee, table, _perms.QUESTION_API_READ, indexes=(STATUS_INDEX_NAME, QUESTION_INDEX_NAME)
    )
    return read.combine(
        _grants.grant_table(grantee, table, _perms.QUESTION_API_DECIDE, kms_actions=_perms.KMS_READ_WRITE)
    )


def check_question_table_shape(checks: PropChecks, table: dynamodb.Table) -> None:
    """A table defined in this app can be checked against the question table's shape; an imported one cannot."""
    want = "the shape of agent_wait.schema.QUESTION_TABLE"
    keys = _key_names(table.schema())
    if keys != (QUESTION_PARTITION_KEY, QUESTION_SORT_KEY):
        checks.fail("existing_question_table", f"must have {want}: keys ('pk', 'sk'); its keys are {keys}")
        return
    for name, wanted in (
        (STATUS_INDEX_NAME, (STATUS_INDEX_PARTITION_KEY, STATUS_INDEX_SORT_KEY)),
        (DUE_INDEX_NAME, (DUE_INDEX_PARTITION_KEY, DUE_INDEX_SORT_KEY)),
        (OPEN_AGE_INDEX_NAME, (OPEN_AGE_INDEX_PARTITION_KEY, OPEN_AGE_INDEX_SORT_KEY)),
        (QUESTION_INDEX_NAME, (QUESTION_INDEX_PARTITION_KEY, QUESTION_INDEX_SORT_KEY)),
    ):
        try:
            index_keys = _key_names(table.schema(name))
        except RuntimeError:
            checks.fail("existing_question_table", f"must have {want}: it has no index {name!r} on {wanted}")
            continue
        if index_keys != wanted:
            checks.fail("existing_question_table", f"must have {want}: index {name!r} is on {index_keys}, not {wanted}")


def _key_names(schema: dynamodb.SchemaOptions) -> tuple[str | None, str | None]:
    partition, sort = schema.partition_key, schema.sort_key
    return (partition.name if partition else None, sort.name if sort else None)
