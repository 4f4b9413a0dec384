"""`QuestionTable`: the question ledger, one item per question."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct, IConstruct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk._shapes import (
    DUE_INDEX_NAME,
    DUE_INDEX_PARTITION_KEY,
    DUE_INDEX_SORT_KEY,
    LEGACY_INDEXES,
    OPEN_AGE_INDEX_NAME,
    OPEN_AGE_INDEX_PARTITION_KEY,
    OPEN_AGE_INDEX_SORT_KEY,
    QUESTION_INDEX_NAME,
    QUESTION_INDEX_PARTITION_KEY,
    QUESTION_INDEX_SORT_KEY,
    QUESTION_INDEXES_CONTEXT,
    QUESTION_PARTITION_KEY,
    QUESTION_SORT_KEY,
    QUESTION_TTL_ATTRIBUTE,
    RENAMED_STATUS_INDEX_NAME,
    STATUS_INDEX_INCLUDE,
    STATUS_INDEX_NAME,
    STATUS_INDEX_PARTITION_KEY,
    STATUS_INDEX_SORT_KEY,
    UNSHARDED_STATUS_INDEX,
)
from agent_wait_cdk._tables import on_demand_table
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "QuestionTable",
    "grant_answer_api",
    "grant_find_question",
    "grant_read_questions",
    "grant_router",
    "grant_sweep",
)


_STATUS = (STATUS_INDEX_PARTITION_KEY, STATUS_INDEX_SORT_KEY, dynamodb.ProjectionType.INCLUDE, STATUS_INDEX_INCLUDE)
_INDEXES: dict[str, tuple[str, str, str, dynamodb.ProjectionType, tuple[str, ...]]] = {
    STATUS_INDEX_NAME: (STATUS_INDEX_NAME, *_STATUS),
    DUE_INDEX_NAME: (
        DUE_INDEX_NAME,
        DUE_INDEX_PARTITION_KEY,
        DUE_INDEX_SORT_KEY,
        dynamodb.ProjectionType.KEYS_ONLY,
        (),
    ),
    OPEN_AGE_INDEX_NAME: (
        OPEN_AGE_INDEX_NAME,
        OPEN_AGE_INDEX_PARTITION_KEY,
        OPEN_AGE_INDEX_SORT_KEY,
        dynamodb.ProjectionType.KEYS_ONLY,
        (),
    ),
    QUESTION_INDEX_NAME: (
        QUESTION_INDEX_NAME,
        QUESTION_INDEX_PARTITION_KEY,
        QUESTION_INDEX_SORT_KEY,
        dynamodb.ProjectionType.KEYS_ONLY,
        (),
    ),
    RENAMED_STATUS_INDEX_NAME: (RENAMED_STATUS_INDEX_NAME, *_STATUS),
    **{
        UNSHARDED_STATUS_INDEX if name == STATUS_INDEX_NAME else name: (
            name,
            partition,
            sort,
            dynamodb.ProjectionType.ALL,
            (),
        )
        for name, partition, sort in LEGACY_INDEXES.values()
    },
}
"""Every index the question table can have, by its name in the upgrade context: (index name, partition key, sort
key, projection, projected attributes). The current four; `by_status_shard`, the current status index under its
former name; and the three from before the shards (the unsharded `by_status` as `by_status_unsharded`)."""
_PREDECESSORS = {
    STATUS_INDEX_NAME: (RENAMED_STATUS_INDEX_NAME, LEGACY_INDEXES[STATUS_INDEX_NAME][0]),
    DUE_INDEX_NAME: (LEGACY_INDEXES[DUE_INDEX_NAME][0],),
    OPEN_AGE_INDEX_NAME: (LEGACY_INDEXES[OPEN_AGE_INDEX_NAME][0],),
}
"""The indexes the runtime queries, in order, while the table lacks the current one (an upgrade in progress)."""


class QuestionTable(Construct):
    """The question ledger: `pk`/`sk` strings, on demand, GSIs `by_status`, `by_due_shard`,
    `open_by_age_shard`, `by_question`.

    One item per question (`pk = THREAD#<thread_id>`, `sk = WAIT#<question_id>`); the router decides each
    question with a conditional update. Each index projects only what its queries read, so an update of a
    question writes an index only when that index's key (or `tags`) changes; a query that needs whole
    questions reads them by key afterwards. The keys every open question would share are sharded
    (`<value>#<shard>`, `AGENT_WAIT_INDEX_SHARDS`, default 8), and the runtime queries every shard. The sweep
    finds every question something is due on (an announcement to retry, a reminder, an escalation step, a
    deadline) through the sparse `by_due_shard` (`due`, `due_at`, keys only), hands over decisions through
    `by_status` (`status_shard`, `expires_at`, keys and `tags`), and finds the oldest open question
    through the sparse `open_by_age_shard` (`open_since`, `asked_at`, keys only). `by_question`
    (`question_id`, `pk`) projects keys only: the answer API and signed links know a question by its id
    alone, find its thread there, then read the item by its key (consistently). TTL on `ttl` lets decided
    questions age out; point-in-time recovery and encryption at rest are on.

    A table deployed before the indexes were sharded is upgraded one index per deploy (CloudFormation adds
    or deletes one index per stack update) with the CDK context `agent-wait:question-table-indexes`; see
    docs/constructs.md, "Upgrading the question table's indexes".

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

    Raises:
        ValueError: the context `agent-wait:question-table-indexes` names an index the table cannot have.
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
        for listed in deployed_indexes(self):
            name, partition, sort, projection, include = _INDEXES[listed]
            self.table.add_global_secondary_index(
                index_name=name,
                partition_key=dynamodb.Attribute(name=partition, type=string),
                sort_key=dynamodb.Attribute(name=sort, type=string),
                projection_type=projection,
                non_key_attributes=list(include) or None,
            )

    @property
    def table_name(self) -> str:
        return self.table.table_name

    @property
    def table_arn(self) -> str:
        return self.table.table_arn

    def grant_read_questions(self, grantee: iam.IGrantable) -> iam.Grant:
        """`dynamodb:GetItem`, `BatchGetItem` and `Query` on the table and its `by_status` and
        `by_question` indexes; nothing else."""
        return grant_read_questions(grantee, self.table)

    def grant_answer_api(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the answer API needs: `GetItem`, `BatchGetItem` and `Query` on the table, `by_status` and
        `by_question`; `UpdateItem` (its conditional decision) on the table only."""
        return grant_answer_api(grantee, self.table)

    def grant_router(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the router needs: read by key and by thread, conditional `PutItem`/`UpdateItem`, on the table only."""
        return grant_router(grantee, self.table)

    def grant_sweep(self, grantee: iam.IGrantable) -> iam.Grant:
        """What the sweep needs: `Query` on `by_status`, `by_due_shard` and `open_by_age_shard`, `GetItem`
        and `BatchGetItem`, and `UpdateItem` to record re-announcements, reminders and escalation steps."""
        return grant_sweep(grantee, self.table)


def deployed_indexes(scope: IConstruct) -> list[str]:
    """The question table's indexes by their name in the upgrade context (`_INDEXES`): the current four, or those
    the upgrade context names (in its order)."""
    listed = scope.node.try_get_context(QUESTION_INDEXES_CONTEXT)
    if listed is None:
        return [STATUS_INDEX_NAME, DUE_INDEX_NAME, OPEN_AGE_INDEX_NAME, QUESTION_INDEX_NAME]
    names = [n.strip() for n in (listed.split(",") if isinstance(listed, str) else listed) if str(n).strip()]
    unknown = [n for n in names if n not in _INDEXES]
    if unknown or not names:
        raise ValueError(
            f"context {QUESTION_INDEXES_CONTEXT} must list index names from {sorted(_INDEXES)}, separated by "
            f"commas; got {listed!r}"
        )
    if STATUS_INDEX_NAME in names and UNSHARDED_STATUS_INDEX in names:
        raise ValueError(
            f"context {QUESTION_INDEXES_CONTEXT}: {STATUS_INDEX_NAME} and {UNSHARDED_STATUS_INDEX} are both the index "
            f"named {STATUS_INDEX_NAME!r}, so a table has one or the other; list one (docs/constructs.md, "
            f'"Upgrading the question table\'s indexes"); got {listed!r}'
        )
    return names


def _granted(scope: IConstruct, *names: str) -> tuple[str, ...]:
    """`names`, and while an upgrade is under way (the context is set) the legacy index each replaces: the
    runtime queries the legacy one until the new one exists."""
    if scope.node.try_get_context(QUESTION_INDEXES_CONTEXT) is None:
        return names
    predecessors = (before for name in names for before in _PREDECESSORS.get(name, ()))
    return tuple(dict.fromkeys((*names, *predecessors)))


def grant_read_questions(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """Readers (a dashboard, an approvals UI) list a status's questions through `by_status` and find one
    by its id alone through `by_question`."""
    return _grants.grant_table(
        grantee, table, _perms.QUESTION_READ, indexes=_granted(table, STATUS_INDEX_NAME, QUESTION_INDEX_NAME)
    )


def grant_find_question(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """A channel's announcer (Slack, Teams, email) in the router or the sweep finds a question's row by its id alone:
    `Query` on `by_question`, then `GetItem` by key (which the router's and the sweep's grants hold)."""
    return _grants.grant_table(grantee, table, ("dynamodb:Query",), indexes=_granted(table, QUESTION_INDEX_NAME))


def grant_router(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The router's ledger calls (`open`, `get`, `questions`, `decide`, `mark_*`, starts) use keys, never an index."""
    return _grants.grant_table(grantee, table, _perms.QUESTION_ROUTER, kms_actions=_perms.KMS_READ_WRITE)


def grant_sweep(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The sweep's `due` queries `by_due_shard`, its hand-over step `by_status`, `oldest_open`
    `open_by_age_shard`, each then reading the rows by key (`BatchGetItem`); it records announcements,
    reminders and escalation steps (`mark_announced`, `advance`) with conditional updates."""
    return _grants.grant_table(
        grantee,
        table,
        _perms.QUESTION_SWEEP,
        indexes=_granted(table, STATUS_INDEX_NAME, DUE_INDEX_NAME, OPEN_AGE_INDEX_NAME),
        kms_actions=_perms.KMS_READ_WRITE,
    )


def grant_answer_api(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The answer API lists (`by_status`, then the rows by key), finds (`by_question`) and reads questions,
    and decides one with the router's conditional `UpdateItem`, on the table only; it never puts, deletes or
    scans."""
    read = _grants.grant_table(
        grantee, table, _perms.QUESTION_API_READ, indexes=_granted(table, STATUS_INDEX_NAME, QUESTION_INDEX_NAME)
    )
    return read.combine(
        _grants.grant_table(grantee, table, _perms.QUESTION_API_DECIDE, kms_actions=_perms.KMS_READ_WRITE)
    )


def check_question_table_shape(checks: PropChecks, table: dynamodb.Table) -> None:
    """A table defined in this app can be checked against the question table's shape; an imported one cannot."""
    want = "the shape of agent_wait.contract.schema.QUESTION_TABLE"
    keys = _key_names(table.schema())
    if keys != (QUESTION_PARTITION_KEY, QUESTION_SORT_KEY):
        checks.fail("existing_question_table", f"must have {want}: keys ('pk', 'sk'); its keys are {keys}")
        return
    for listed in deployed_indexes(table):
        name, *wanted_keys = _INDEXES[listed][:3]
        wanted = tuple(wanted_keys)
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
