"""The shape of the AWS resources agent-wait reads and writes, in one place.

The question ledger (`DynamoDbAnnounce` writes it, the host decides on it), the checkpoint table
(`langgraph-checkpoint-aws`'s `DynamoDBSaver`), the entry queue and the settings the Lambda handlers
read. The CDK constructs synthesize the same shapes; `tests/cdk` compares the two so they cannot drift.
Standard library only.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = (
    "CHANNEL_RECORD",
    "CHECKPOINT_TABLE",
    "DEFAULT_INDEX_SHARDS",
    "ENTRY_QUEUE",
    "LEGACY_QUESTION_INDEXES",
    "MAX_INDEX_SHARDS",
    "QUESTION_TABLE",
    "RENAMED_STATUS_INDEX",
    "QuestionStatus",
    "Settings",
    "index_shards_from_env",
    "question_key",
    "shard_key",
    "shard_of",
    "thread_key",
)


@dataclass(frozen=True, slots=True)
class IndexShape:
    name: str
    partition_key: str
    sort_key: str
    keys_only: bool = False
    """Project only the keys (a lookup index: read the item itself afterwards)."""
    include: tuple[str, ...] = ()
    """With `keys_only` False: project the keys and these attributes only (`INCLUDE`); empty: every attribute."""
    sharded: bool = False
    """The partition key's value is `<value>#<shard>` (`shard_key`), so no one value takes every write."""

    @property
    def projection(self) -> dict[str, Any]:
        """DynamoDB's `Projection` for this index."""
        if self.keys_only:
            return {"ProjectionType": "KEYS_ONLY"}
        if self.include:
            return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(self.include)}
        return {"ProjectionType": "ALL"}


@dataclass(frozen=True, slots=True)
class TableShape:
    partition_key: str
    sort_key: str
    ttl_attribute: str
    indexes: tuple[IndexShape, ...] = ()
    """Every key attribute is a string (`S`)."""

    def create_table_request(self, table_name: str) -> dict[str, Any]:
        """Keyword arguments for DynamoDB `CreateTable` of this shape, on demand (for tests and local stacks).

        Example:
            >>> request = QUESTION_TABLE.create_table_request("questions")
            >>> [index["IndexName"] for index in request["GlobalSecondaryIndexes"]]
            ['by_status', 'by_due_shard', 'open_by_age_shard', 'by_question']
        """
        keys = {self.partition_key, self.sort_key}
        for index in self.indexes:
            keys |= {index.partition_key, index.sort_key}
        request: dict[str, Any] = {
            "TableName": table_name,
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": key, "AttributeType": "S"} for key in sorted(keys)],
            "KeySchema": _key_schema(self.partition_key, self.sort_key),
        }
        if self.indexes:
            request["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.name,
                    "KeySchema": _key_schema(index.partition_key, index.sort_key),
                    "Projection": index.projection,
                }
                for index in self.indexes
            ]
        return request


def _key_schema(partition: str, sort: str) -> list[dict[str, str]]:
    return [{"AttributeName": partition, "KeyType": "HASH"}, {"AttributeName": sort, "KeyType": "RANGE"}]


@dataclass(frozen=True, slots=True)
class QueueShape:
    fifo: bool
    content_based_deduplication: bool
    max_receive_count: int
    """Receives before SQS moves a message to the dead-letter queue."""
    deduplication_scope: str
    """SQS `DeduplicationScope`: `messageGroup` (an id is unique within its group) or `queue`."""
    fifo_throughput_limit: str
    """SQS `FifoThroughputLimit`: `perMessageGroupId` (high-throughput FIFO) or `perQueue`."""


DEFAULT_INDEX_SHARDS = 8
"""Shards of each shared index key value (`AGENT_WAIT_INDEX_SHARDS`): 8 take 8,000 index writes a second."""


MAX_INDEX_SHARDS = 1000


def index_shards_from_env(environ: Mapping[str, str] | None = None) -> int:
    """`AGENT_WAIT_INDEX_SHARDS` as a number of shards, or 8 (`DEFAULT_INDEX_SHARDS`) when it is unset.

    Raises:
        ConfigurationError: it is set to anything but a whole number from 1 to 1000.
    """
    name = Settings.INDEX_SHARDS.value
    text = (os.environ if environ is None else environ).get(name, "").strip()
    if not text:
        return DEFAULT_INDEX_SHARDS
    if not text.isdigit() or not 1 <= int(text) <= MAX_INDEX_SHARDS:
        from agent_wait.errors import ConfigurationError

        raise ConfigurationError(
            [f"{name} must be a whole number from 1 to {MAX_INDEX_SHARDS} (the same for every function); got {text!r}"],
            variables=[name],
        )
    return int(text)


def index_shards_or_env(value: int | None, *, owner: str) -> int:
    """`value` checked as a number of shards, or `AGENT_WAIT_INDEX_SHARDS` (`index_shards_from_env`) when None.

    Raises:
        ArgumentError: `value` is not a whole number from 1 to 1000 (`owner` names who was given it).
        ConfigurationError: `value` is None and the setting is not such a number.
    """
    if value is None:
        return index_shards_from_env()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INDEX_SHARDS:
        from agent_wait.errors import ArgumentError

        raise ArgumentError(
            f"{owner} index_shards must be a whole number from 1 to {MAX_INDEX_SHARDS}, such as 8; got {value!r}",
            argument="index_shards",
        )
    return value


def shard_of(item_id: str, shards: int) -> int:
    """The shard (0 to `shards` - 1) of a question or start id: a stable hash (CRC-32), the same in every process."""
    return zlib.crc32(item_id.encode()) % shards


def shard_key(value: str, item_id: str, shards: int) -> str:
    """A sharded index key value, `<value>#<shard>`, e.g. `shard_key("due", question_id, 8) == "due#3"`."""
    return f"{value}#{shard_of(item_id, shards)}"


QUESTION_TABLE = TableShape(
    partition_key="pk",
    sort_key="sk",
    ttl_attribute="ttl",
    indexes=(
        IndexShape("by_status", "status_shard", "expires_at", include=("tags",), sharded=True),
        IndexShape("by_due_shard", "due", "due_at", keys_only=True, sharded=True),
        IndexShape("open_by_age_shard", "open_since", "asked_at", keys_only=True, sharded=True),
        IndexShape("by_question", "question_id", "pk", keys_only=True),
    ),
)
"""One item per question: `pk = THREAD#<thread_id>`, `sk = WAIT#<question_id>`.

Each index projects only what its queries read; a query that needs whole questions reads them by key
afterwards (`BatchGetItem`, consistent), so an update of a question writes an index only when that
index's key or a projected attribute changes. The three indexes every open question shares are sharded:
their partition key is `<value>#<shard>` (`shard_key`; the shard a stable hash of the question id, 0 to
`AGENT_WAIT_INDEX_SHARDS` - 1), and a query reads every shard and merges them in key order.

GSI `by_status` (status_shard = `<status>#<shard>`, expires_at) lists a status's questions by deadline (the
answer API, the CLI, the sweep's hand-over of `answered` questions, failed rows); it projects `tags`, so a tag
filter runs in the index. GSI `by_due_shard` (due = `due#<shard>`, due_at, keys only) is sparse: an open
question carries `due` exactly while it has a next due time `due_at` (its announcement retry, a claimed
reminder or escalation notice, its next reminder, its next escalation step, or its deadline, whichever comes
first), so the sweep reads only what is due, at a cost proportional to it, not to every open question.
`announce_due` (not indexed) marks a question whose announcement failed and waits for the sweep (the router
puts rows without it). GSI `open_by_age_shard` (open_since = `open#<shard>`, asked_at, keys only) is sparse
too: only an open question carries `open_since`, so the oldest open question is one item per shard. A decision
removes `due`, `due_at` and `open_since`. GSI `by_question` (question_id, pk) projects keys only: it finds a
question's thread from its id alone (the answer API's `/questions/{id}`, a signed link), and the item is then
read by its key.

Rows written before the indexes were sharded carry `due = "due"` and `open_since = "open"` (still read,
as one more partition) and no `status_shard` (`DynamoDbLedger.upgrade_index_keys` adds it); see
`LEGACY_QUESTION_INDEXES`.
"""

LEGACY_QUESTION_INDEXES = (
    IndexShape("by_status", "status", "expires_at"),
    IndexShape("by_due", "due", "due_at"),
    IndexShape("open_by_age", "open_since", "asked_at"),
)
"""The indexes the question table had before they were sharded (every attribute projected), by the name of
the index that replaced each. The ledger falls back to them while a table is being upgraded."""

RENAMED_STATUS_INDEX = IndexShape("by_status_shard", "status_shard", "expires_at", include=("tags",), sharded=True)
"""The sharded status index under the name it had before it took `by_status` (the unsharded index's name, as
the product's card names it): same keys, same projection. The ledger falls back to it while a table deployed
with it gets `by_status` (docs/constructs.md, "Upgrading the question table's indexes")."""

CHECKPOINT_TABLE = TableShape(partition_key="PK", sort_key="SK", ttl_attribute="ttl")
"""What `langgraph_checkpoint_aws.DynamoDBSaver` needs."""


@dataclass(frozen=True, slots=True)
class RecordShape:
    """A table of one item per key (a string), with no sort key, expiring on its TTL attribute."""

    partition_key: str
    ttl_attribute: str


CHANNEL_RECORD = RecordShape(partition_key="question_id", ttl_attribute="ttl")
"""A channel's record of what it sent (`agent_wait.channels.records`): one item per question, one map per entry."""

ENTRY_QUEUE = QueueShape(
    fifo=True,
    content_based_deduplication=True,
    max_receive_count=5,
    deduplication_scope="messageGroup",
    fifo_throughput_limit="perMessageGroupId",
)
"""Starts and answers, grouped by thread; a message that keeps failing goes to the FIFO dead-letter queue.

High-throughput FIFO: deduplication ids are scoped to the message group (one group per thread,
`agent_wait.contract.messages.group_id_for`), and every id a sender makes is for one thread's message, so two
threads may use the same id without one swallowing the other. The dead-letter queue has the same mode.
"""


class QuestionStatus(StrEnum):
    """A question's status in the ledger: `open` until exactly one outcome, then `resumed`."""

    OPEN = "open"
    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    RESUMED = "resumed"
    FAILED = "failed"
    """The question was decided but the agent raised while resuming with it; `agent-wait retry` applies it again."""


def thread_key(thread_id: str) -> str:
    return f"THREAD#{thread_id}"


def question_key(question_id: str) -> str:
    return f"WAIT#{question_id}"


class Settings(StrEnum):
    """Environment variables the Lambda handlers read (the constructs set them)."""

    GRAPH = "AGENT_WAIT_GRAPH"
    """`module:attribute`: a compiled LangGraph graph or a factory that takes a checkpointer, a Pydantic AI
    agent, or a `hosted(...)` value from `agent_wait.pydantic_ai` / `agent_wait.strands`."""
    TABLE = "AGENT_WAIT_TABLE"
    """The question ledger table name."""
    CHECKPOINT_TABLE = "AGENT_WAIT_CHECKPOINT_TABLE"
    """The checkpoint table name."""
    QUEUE_URL = "AGENT_WAIT_QUEUE_URL"
    """The entry FIFO queue (the sweep sends defaults here)."""
    DLQ_URL = "AGENT_WAIT_DLQ_URL"
    """The entry queue's dead-letter queue (malformed messages go here with their reason)."""
    TOPIC_ARN = "AGENT_WAIT_TOPIC_ARN"
    """Optional: announce on this SNS topic."""
    BUS_NAME = "AGENT_WAIT_BUS_NAME"
    """Optional: announce on this EventBridge bus."""
    WEBHOOK_URL = "AGENT_WAIT_WEBHOOK_URL"
    """Optional: announce to this webhook, named in plain text. A webhook URL usually carries a token (Slack, Teams):
    prefer `AGENT_WAIT_WEBHOOK_URL_SECRET_ARN`; the two are not set together."""
    WEBHOOK_URL_SECRET_ARN = "AGENT_WAIT_WEBHOOK_URL_SECRET_ARN"
    """Optional: announce to the webhook whose URL is this Secrets Manager secret's value (read once at cold start)."""
    SWEEP_LIMIT = "AGENT_WAIT_SWEEP_LIMIT"
    """Optional: the most due questions one sweep run handles (default 100); the next run picks up the rest."""
    WEBHOOK_SECRET_ARN = "AGENT_WAIT_WEBHOOK_SECRET_ARN"
    """Optional: a Secrets Manager secret whose value signs webhook deliveries (read once at cold start)."""
    LEASE_SECONDS = "AGENT_WAIT_LEASE_SECONDS"
    """Optional: how long the router holds a thread's lease (default 900, Lambda's longest timeout); the
    construct sets the router's timeout plus a margin. A lease outliving a dead holder blocks that long."""
    TRUSTED_SENDERS = "AGENT_WAIT_TRUSTED_SENDERS"
    """Optional: comma-separated IAM unique ids (`AROA...` of a role, `AIDA...` of a user) whose queue messages
    may claim `answered_by`, `via` and `origin: deadline`: the answer API's and the sweep's roles. Matched
    against the part of SQS's `SenderId` before any `:`. Unset: every sender is trusted (a warning at cold start)."""
    START_SENDERS = "AGENT_WAIT_START_SENDERS"
    """Optional: comma-separated IAM unique ids allowed to send starts; unset, any sender the queue lets in."""
    ANSWER_SENDERS = "AGENT_WAIT_ANSWER_SENDERS"
    """Optional: comma-separated IAM unique ids allowed to send answers; unset, any sender the queue lets in."""
    API_URL = "AGENT_WAIT_API_URL"
    """Optional: the answer API's base URL; envelopes carry it in `reply_to`, and signed links point at it."""
    LINK_KEYS_ARN = "AGENT_WAIT_LINK_KEYS_ARN"
    """Optional: a Secrets Manager secret with the keys that sign answer links (the newest signs, all verify)."""
    LINK_ANNOUNCERS = "AGENT_WAIT_LINK_ANNOUNCERS"
    """Optional: comma-separated announcer names (`sns`, `eventbridge`, `webhook`) whose envelopes carry signed
    answer links; never the log announcer. Unset: no announcer carries links."""
    GROUPS_CLAIM = "AGENT_WAIT_GROUPS_CLAIM"
    """Optional: the JWT claim that lists a user's groups (default `cognito:groups`, then `groups`)."""
    SIGN_IN_URL = "AGENT_WAIT_SIGN_IN_URL"
    """Optional: the OIDC authorization endpoint the inbox page signs people in at, with the authorization code
    flow and PKCE (Cognito: `https://<domain>/oauth2/authorize`). With `AGENT_WAIT_SIGN_IN_TOKEN_URL` and
    `AGENT_WAIT_SIGN_IN_CLIENT_ID`; unset, the page asks for a bearer token instead."""
    SIGN_IN_TOKEN_URL = "AGENT_WAIT_SIGN_IN_TOKEN_URL"
    """Optional: the OIDC token endpoint the inbox page exchanges its code at (Cognito: `https://<domain>/oauth2/token`);
    the page's Content-Security-Policy lets it connect to this origin."""
    SIGN_IN_CLIENT_ID = "AGENT_WAIT_SIGN_IN_CLIENT_ID"
    """Optional: the public OIDC client (no secret) the inbox page signs in as; the API's JWT authorizer must accept
    its tokens (its audience, or the user pool client). Its callback URL is the API's URL + `/inbox`."""
    SIGN_IN_SCOPES = "AGENT_WAIT_SIGN_IN_SCOPES"
    """Optional: the space-separated scopes the inbox page asks for (default `openid email`)."""
    MAX_RECEIVE_COUNT = "AGENT_WAIT_MAX_RECEIVE_COUNT"
    """Optional: the entry queue's `maxReceiveCount`; on the last receive the router dead-letters a message it
    still cannot apply, with its reason, instead of leaving SQS to move it without one (default 5)."""
    INDEX_SHARDS = "AGENT_WAIT_INDEX_SHARDS"
    """Optional: how many shards each shared index key value of the question table has (default 8). Every
    function that uses the ledger must have the same value; raise it (never lower it: rows in the shards
    dropped would no longer be found) for more than about 2,000 lifecycles a second (see docs/scaling.md)."""
    SLACK_BOT_TOKEN_ARN = "AGENT_WAIT_SLACK_BOT_TOKEN_ARN"
    """Optional: a Secrets Manager secret whose value is the Slack app's bot token (`xoxb-...`). Set, the router and
    the sweep post each question to Slack (`agent_wait.channels.slack`), and the answer API reads people's emails and
    groups there. Needs `AGENT_WAIT_SLACK_CHANNELS` and `AGENT_WAIT_SLACK_MESSAGES_TABLE`."""
    SLACK_SIGNING_SECRET_ARN = "AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"
    """Optional: a Secrets Manager secret whose value is the Slack app's signing secret: the answer API's
    `POST /slack/interactions` takes only requests it signed, and refuses them all without it."""
    SLACK_CHANNELS = "AGENT_WAIT_SLACK_CHANNELS"
    """Optional: a JSON object from a policy tag (`"approver_group:finance"`) to the Slack channel id its questions
    go to (`"C0123ABCD"`), with `"*"` for every other question."""
    SLACK_GROUPS = "AGENT_WAIT_SLACK_GROUPS"
    """Optional: a JSON object from an answerer group (`"finance"`) to its Slack user group id (`"S0123ABCD"`):
    Slack mentions it, and its members answer as members of the group."""
    SLACK_MESSAGES_TABLE = "AGENT_WAIT_SLACK_MESSAGES_TABLE"
    """Optional: the DynamoDB table (partition key `question_id`) that remembers each question's Slack messages."""
    SLACK_API_URL = "AGENT_WAIT_SLACK_API_URL"
    """Optional: the Slack Web API's base URL (default `https://slack.com/api/`); a local fake in tests and dev."""
    TEAMS_WEBHOOK_URL_ARN = "AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN"
    """Optional: a Secrets Manager secret whose value is a Teams Workflows webhook's URL (its trigger URL, with its
    signature). Set, the router and the sweep post each question, its follow-ups and its outcome to Teams as
    Adaptive Cards (`agent_wait.channels.teams`)."""
    TEAMS_MODE = "AGENT_WAIT_TEAMS_MODE"
    """Optional: `people` (default: one card per recipient, with links bound to that person; needs
    `AGENT_WAIT_TEAMS_RECIPIENTS`) or `channel` (one card, with unbound links only where anyone may answer)."""
    TEAMS_RECIPIENTS = "AGENT_WAIT_TEAMS_RECIPIENTS"
    """Optional: who each question's Teams cards go to, as JSON `{"groups": {group: [address, ...]}, "tags":
    {"key:value" or "*": [address, ...]}}` (besides `email:` answerer principals); addresses are Teams sign-ins."""
    TEAMS_SENDS_TABLE = "AGENT_WAIT_TEAMS_SENDS_TABLE"
    """Optional: a DynamoDB table (partition key `question_id`, string; TTL on `ttl`) where each Teams card is claimed
    before it is posted and marked accepted after, so a redelivered event never posts a card twice. Unset, every
    delivery posts every card (the `AgentWait` construct creates and sets it)."""
    SHAPED_WEBHOOK_URL_ARN = "AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN"
    """Optional: a Secrets Manager secret whose value is the URL a shaped webhook POSTs to (a chat tool's incoming
    webhook). Needs `AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES`."""
    SHAPED_WEBHOOK_TEMPLATES = "AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES"
    """Optional: the shaped webhook's templates as JSON, a transition (`created`, ...) or `default` → a Jinja2
    template that renders the JSON to POST (`agent_wait.channels.shaped`)."""
    EMAIL_FROM = "AGENT_WAIT_EMAIL_FROM"
    """Optional: the `From` of the question emails, a verified Amazon SES identity (`Approvals <ask@example.com>`).
    Set, the router and the sweep email each question to its recipients (`agent_wait.channels.email`); needs
    `AGENT_WAIT_EMAIL_SENDS_TABLE`, and for buttons `AGENT_WAIT_LINK_KEYS_ARN` and `AGENT_WAIT_API_URL`."""
    EMAIL_RECIPIENTS = "AGENT_WAIT_EMAIL_RECIPIENTS"
    """Optional: JSON `{"groups": {group: [address, ...]}, "tags": {"key:value" or "*": [address, ...]}}`: who an
    answerer group's members are, and who reads questions whose policy names no answerers."""
    EMAIL_CONFIGURATION_SET = "AGENT_WAIT_EMAIL_CONFIGURATION_SET"
    """Optional: the SES configuration set every question email is sent with (bounce and complaint events)."""
    EMAIL_REPLY_TO = "AGENT_WAIT_EMAIL_REPLY_TO"
    """Optional: comma-separated `Reply-To` addresses of the question emails (default: the `From`)."""
    EMAIL_SENDS_TABLE = "AGENT_WAIT_EMAIL_SENDS_TABLE"
    """Optional: the DynamoDB table (partition key `question_id`) that records each question's emails, so a
    redelivered event emails nobody twice."""
    METRIC_TAGS = "AGENT_WAIT_METRIC_TAGS"
    """Optional, the router's: a JSON object from a policy tag key to the values time to answer is drawn for
    (`{"team": ["payments", "support"]}`), at most 3 keys of 10 values. `TimeToAnswerSeconds` is then also emitted
    per outcome and key, a value not listed as `other`, a question without the tag as `none`. Unset: by outcome only."""
    CHECKPOINT_BUCKET = "AGENT_WAIT_CHECKPOINT_BUCKET"
    """Optional: an S3 bucket name; the router's LangGraph checkpoint saver stores a checkpoint (or a step's
    writes) over `AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES` there, so a state past DynamoDB's 400 KB item limit still
    checkpoints. Unset: such a checkpoint fails its thread (dead letter `checkpoint_too_large`)."""
    CHECKPOINT_OFFLOAD_BYTES = "AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES"
    """Optional, with `AGENT_WAIT_CHECKPOINT_BUCKET`: the size in bytes over which the saver stores a checkpoint (or
    a step's writes) in the bucket rather than the table, from 1 to 408576 (default 12288, 12 KB; see
    docs/scaling.md, "Checkpoint offload threshold")."""
    AUDIT_GROUP = "AGENT_WAIT_AUDIT_GROUP"
    """Optional: the group (from the JWT's groups claim) whose members may read the audit trail, `GET /audit`; one
    name, without spaces or commas; unset, the route refuses everyone (403 `audit_not_enabled`)."""
    DECIDED_RETENTION = "AGENT_WAIT_DECIDED_RETENTION"
    """Optional: how long a decided question's row is kept after its decision, an ISO 8601 duration (`P400D`):
    the decision sets the table's TTL attribute (`ttl`) that far ahead, and DynamoDB deletes the row some time
    after. Unset (the default): decided rows are kept until deleted by hand."""
    SCHEDULE_GROUP = "AGENT_WAIT_SCHEDULE_GROUP"
    """Optional, with the next two (`AgentWait(precise_deadlines=True)` sets all three): the EventBridge Scheduler
    group where each open question gets one-time schedules at its deadline and next follow-ups, so they happen
    within seconds instead of at the sweep's next minute (docs/host.md, "Precise deadlines")."""
    SCHEDULE_TARGET_ARN = "AGENT_WAIT_SCHEDULE_TARGET_ARN"
    """With `AGENT_WAIT_SCHEDULE_GROUP`: the sweep function's ARN, which each schedule invokes for its question."""
    SCHEDULE_ROLE_ARN = "AGENT_WAIT_SCHEDULE_ROLE_ARN"
    """With `AGENT_WAIT_SCHEDULE_GROUP`: the IAM role Scheduler assumes to invoke the sweep."""
    SCHEDULE_EARLY_WAIT = "AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS"
    """Optional, the sweep's, with `AGENT_WAIT_SCHEDULE_GROUP`: how long a schedule's wake-up that came before its
    question's time (Scheduler fires anywhere in the minute) waits for it, 0 to 60 seconds (default 60). Less costs
    less Lambda time and leaves more to the minute sweep (docs/scaling.md, "Deadline lateness and cost")."""
    ON_NEW_VERSION = "AGENT_WAIT_ON_NEW_VERSION"
    """Optional, the router's: what resuming a question asked under another version of the agent does when its
    policy does not say (`WaitPolicy(on_new_version=...)`): `resume` (the default) while the waiting node and
    `@wait` function still exist with the same parameters, else fail the thread `version_changed`; `fail` on any
    change (docs/versions.md)."""
