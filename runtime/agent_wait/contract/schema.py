"""The shape of the AWS resources agent-wait reads and writes, in one place.

The question ledger (`DynamoDbAnnounce` writes it, the host decides on it), the checkpoint table
(`langgraph-checkpoint-aws`'s `DynamoDBSaver`), the entry queue and the settings the Lambda handlers
read (`Settings`, listed in `agent_wait.contract.settings` and exported here too). The CDK constructs synthesize
the same shapes; `tests/cdk` compares the two so they cannot drift. Standard library only.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_wait.contract.settings import Settings

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
