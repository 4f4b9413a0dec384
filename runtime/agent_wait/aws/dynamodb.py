"""`DynamoDbAnnounce`: the question as a row of the ledger table; later transitions update that row.

The row follows `agent_wait.contract.schema.QUESTION_TABLE`, the same table the host's ledger decides on:

```
pk = THREAD#<thread_id>   sk = WAIT#<question_id>   status = open | answered | expired | cancelled | resumed | failed
status_shard = <status>#<shard>   expires_at = RFC 3339 UTC, or "never"   closed_at, ttl (set when the row closes)
+ every envelope field
```

`type` and `event_id` are those of the latest transition applied to the row, so `envelope_from_row`
reads the row back as the envelope it last announced. A reminder, an escalation step or a vote
(`wait.reminder`, `wait.escalated`, `wait.voted`) sets `progress` to what happened and never the status.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from agent_wait.aws._clients import AwsDeliveryError, make_client, translate_errors
from agent_wait.aws.errors import CONDITION_FAILED, ServiceError, is_condition_failed
from agent_wait.aws.items import decimal_json
from agent_wait.common.times import NEVER, format_rfc3339, require_aware, utc_now
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import ENVELOPE_FIELDS, Transition, WaitEnvelope
from agent_wait.contract.schema import (
    QUESTION_TABLE,
    QuestionStatus,
    index_shards_from_env,
    index_shards_or_env,
    question_key,
    shard_key,
    thread_key,
)
from agent_wait.errors import ArgumentError

__all__ = ("DynamoDbAnnounce", "envelope_from_row", "row_from_envelope")

logger = logging.getLogger("agent_wait.channels.announce.aws")

PK = QUESTION_TABLE.partition_key
SK = QUESTION_TABLE.sort_key
TTL = QUESTION_TABLE.ttl_attribute
STATUS = "status"
STATUS_INDEX = QUESTION_TABLE.indexes[0].name
STATUS_SHARD = QUESTION_TABLE.indexes[0].partition_key
"""`<status>#<shard>`: the status index's partition key (`agent_wait.contract.schema.shard_key`)."""
EXPIRES_AT = QUESTION_TABLE.indexes[0].sort_key
CLOSED_AT = "closed_at"
"""RFC 3339 UTC time the row first left `open`; set once."""
PROGRESS = "progress"
"""The latest follow-up's facts (which reminder or escalation step, the votes so far): `WaitEnvelope.progress`."""

_CONDITION_FAILED = CONDITION_FAILED


def row_from_envelope(envelope: WaitEnvelope, *, index_shards: int | None = None) -> dict[str, Any]:
    """The row `wait.created` writes: keys, `status = open` and its `status_shard`, `expires_at` (or `never`),
    every envelope field. `index_shards` defaults to `AGENT_WAIT_INDEX_SHARDS`, else 8.

    Numbers go through a JSON round trip into `Decimal` (`parse_float=Decimal`), so a float is stored as
    the exact decimal text Python prints for it and reads back as the same float. Falsy values (`False`,
    `0`, `""`, `[]`, `None`) are stored as they are.
    """
    fields: dict[str, Any] = decimal_json(envelope.to_dict())
    # The GSI sort key must exist on every row; "never" sorts after every timestamp, so an overdue
    # query (expires_at < now) never returns a question without a deadline.
    fields[EXPIRES_AT] = envelope.expires_at or NEVER
    shards = index_shards_from_env() if index_shards is None else index_shards
    return {
        PK: thread_key(envelope.thread_id),
        SK: question_key(envelope.question_id),
        STATUS: QuestionStatus.OPEN.value,
        STATUS_SHARD: shard_key(QuestionStatus.OPEN.value, envelope.question_id, shards),
        **fields,
    }


def _plain(value: Any) -> Any:
    """DynamoDB's Decimals as int (when integral) or float, recursively; everything else unchanged."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def envelope_from_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope fields of a row (as `Table.get_item` or `DynamoDbAnnounce.get_row` returns it).

    Decimals become int or float; `expires_at = "never"` becomes None. The `type` is that of the latest
    transition applied to the row, `progress` that of the latest follow-up. Fields the row lacks are left out.
    """
    envelope = {name: _plain(row[name]) for name in (*ENVELOPE_FIELDS, PROGRESS) if name in row}
    if envelope.get("expires_at") == NEVER:
        envelope["expires_at"] = None
    return envelope


class DynamoDbAnnounce(BaseAnnounce):
    """Keep each question as a row an approvals UI or a host can query: the question is the row.

    `wait.created` writes the row (see `row_from_envelope`) only if it does not exist yet, so a republish
    never overwrites a status or outcome a host wrote and never moves `expires_at`; that republish is a
    successful delivery that changes nothing. Later transitions update the existing row: `status`
    becomes the transition's name, `type` and `event_id` follow the transition, and `closed_at` (plus
    `ttl`, with `ttl_seconds`) is set the first time the row closes. They never create a row: a
    transition for a question without one is a failed delivery that says so. A closing transition that
    arrives after the question was decided otherwise (`expired` after `answered`) keeps the first
    decision and changes nothing. A reminder, an escalation step or a vote updates only `type`, `event_id`
    and `progress`, and only while the row is open: one that arrives after the decision changes nothing.

    The `by_status` index (`status_shard`, `expires_at`; keys and `tags` only) answers "open questions"
    and "open and overdue": query each shard (`open#0` to `open#<index_shards - 1>`), merge by `expires_at`,
    and read the rows by key (`DynamoDbLedger.page` does all of it):

        from boto3.dynamodb.conditions import Key
        for shard in range(rows.index_shards):
            table.query(IndexName="by_status", KeyConditionExpression=Key("status_shard").eq(f"open#{shard}"))

    Example:
        >>> import boto3
        >>> rows = DynamoDbAnnounce("questions", client=boto3.client("dynamodb", "us-east-1"), ttl_seconds=7 * 86400)
        >>> rows.ttl_seconds
        604800

    Args:
        table_name: the question table (shape: `agent_wait.contract.schema.QUESTION_TABLE`).
        table: a boto3 `Table` resource for `table_name`; its client is used.
        client: a boto3 DynamoDB client; one is built (short timeouts, few retries) when neither is given.
        region_name: the region of the client built here; cannot be combined with `table` or `client`.
        ttl_seconds: when set, a closed row's `ttl` attribute is the close time plus this many seconds, so
            DynamoDB's TTL deletes closed rows on its own. Open rows never get one.
        delivers: the transitions to apply to the row; all by default.
        clock: the current time, for `closed_at` and `ttl`.
        index_shards: shards of the status index's key (`status_shard`). Default None: `AGENT_WAIT_INDEX_SHARDS`,
            else 8; the same number the ledger on this table uses.

    Raises:
        ArgumentError (a ValueError): `table` given with `client` or `region_name`, `table` is another table,
            `ttl_seconds` is not a positive whole number, or `index_shards` not a whole number from 1 to 1000.
    """

    name = "dynamodb"

    def __init__(
        self,
        table_name: str,
        *,
        table: Any = None,
        client: Any = None,
        region_name: str | None = None,
        ttl_seconds: int | None = None,
        delivers: Iterable[Transition | str] | None = None,
        clock: Callable[[], datetime] = utc_now,
        index_shards: int | None = None,
    ) -> None:
        super().__init__(delivers=delivers)
        index_shards = index_shards_or_env(index_shards, owner="DynamoDbAnnounce")
        if not isinstance(table_name, str) or not table_name:
            raise ArgumentError(f"DynamoDbAnnounce table_name must be a table name; got {table_name!r}")
        if table is not None:
            if client is not None or region_name is not None:
                raise ArgumentError(
                    "DynamoDbAnnounce: pass one of table=, client= or region_name=; a table brings its own client"
                )
            if getattr(table, "name", None) != table_name:
                raise ArgumentError(
                    f"DynamoDbAnnounce: table= is {getattr(table, 'name', None)!r} but table_name is {table_name!r}"
                )
            client = table.meta.client
        if ttl_seconds is not None and (
            isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int) or ttl_seconds <= 0
        ):
            raise ArgumentError(
                f"DynamoDbAnnounce ttl_seconds must be a positive whole number of seconds such as 7 * 86400, "
                f"or None for no TTL; got {ttl_seconds!r}"
            )
        self.table_name = table_name
        self.ttl_seconds = ttl_seconds
        self.index_shards = index_shards
        self.client = make_client("dynamodb", client=client, region_name=region_name, owner="DynamoDbAnnounce")
        # A Table resource's client (de)serializes Python values itself; a plain client takes AttributeValues.
        self._native = table is not None
        self._clock = clock
        self._serializer = TypeSerializer()
        self._deserializer = TypeDeserializer()

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if transition is Transition.CREATED:
            self._open(envelope)
        elif transition.repeats:
            self._follow_up(envelope)
        else:
            self._close(envelope, transition)

    def get_row(self, thread_id: str, question_id: str) -> dict[str, Any] | None:
        """The question's row (consistent read) with numbers as int or float, or None when there is none.

        Raises:
            AwsDeliveryError: DynamoDB refused the read.
        """
        with translate_errors(f"DynamoDB GetItem on {self.table_name}"):
            response = self.client.get_item(
                TableName=self.table_name, Key=self._wire(self._key(thread_id, question_id)), ConsistentRead=True
            )
        item = response.get("Item")
        if not item:
            return None
        return _plain(item if self._native else {name: self._deserializer.deserialize(v) for name, v in item.items()})

    def read(self, thread_id: str, question_id: str) -> dict[str, Any] | None:
        """The question's row as an envelope dict (`envelope_from_row`), or None when there is none."""
        row = self.get_row(thread_id, question_id)
        return envelope_from_row(row) if row is not None else None

    def _open(self, envelope: WaitEnvelope) -> None:
        item = self._wire(row_from_envelope(envelope, index_shards=self.index_shards))
        with translate_errors(f"DynamoDB PutItem on {self.table_name}"):
            try:
                self.client.put_item(
                    TableName=self.table_name,
                    Item=item,
                    ConditionExpression="attribute_not_exists(#pk)",
                    ExpressionAttributeNames={"#pk": PK},
                )
            except ServiceError as exc:
                if not is_condition_failed(exc):
                    raise
                logger.debug(
                    "dynamodb: row exists; the republish left it as it was: thread_id=%s question_id=%s",
                    envelope.thread_id,
                    envelope.question_id,
                )

    def _follow_up(self, envelope: WaitEnvelope) -> None:
        # Never the status nor the close time: a reminder, escalation or vote leaves the question open, and one
        # that lost a race with the decision must not make a decided row look open again.
        names = {"#pk": PK, "#status": STATUS, "#type": "type", "#event_id": "event_id", "#progress": PROGRESS}
        values: dict[str, Any] = {
            ":type": envelope.type,
            ":event_id": envelope.event_id,
            ":progress": decimal_json(dict(envelope.progress or {})),
            ":open": QuestionStatus.OPEN.value,
        }
        updates = ["#type = :type", "#event_id = :event_id", "#progress = :progress"]
        if envelope.transition is Transition.EXTENDED:  # the deadline moved: the row's follows it
            names["#expires"], values[":expires"] = EXPIRES_AT, envelope.expires_at or NEVER
            updates.append("#expires = :expires")
        self._update(
            envelope,
            updates=updates,
            condition="attribute_exists(#pk) AND #status = :open",
            names=names,
            values=values,
        )

    def _close(self, envelope: WaitEnvelope, transition: Transition) -> None:
        status = QuestionStatus(transition.value)
        now = require_aware(self._clock(), "clock()")
        names = {
            "#pk": PK,
            "#status": STATUS,
            "#shard": STATUS_SHARD,
            "#type": "type",
            "#event_id": "event_id",
            "#closed_at": CLOSED_AT,
        }
        values: dict[str, Any] = {
            ":status": status.value,
            ":shard": shard_key(status.value, envelope.question_id, self.index_shards),
            ":type": envelope.type,
            ":event_id": envelope.event_id,
            ":now": format_rfc3339(now),
        }
        # if_not_exists: a redelivered or later transition never moves the close time or the TTL.
        updates = [
            "#status = :status",
            "#shard = :shard",
            "#type = :type",
            "#event_id = :event_id",
            "#closed_at = if_not_exists(#closed_at, :now)",
        ]
        if envelope.progress is not None:
            # A quorum's `wait.answered` carries the votes that decided it.
            names["#progress"] = PROGRESS
            values[":progress"] = decimal_json(dict(envelope.progress))
            updates.append("#progress = :progress")
        if self.ttl_seconds is not None:
            names["#ttl"] = TTL
            values[":ttl"] = int(now.timestamp()) + self.ttl_seconds
            updates.append("#ttl = if_not_exists(#ttl, :ttl)")
        condition = "attribute_exists(#pk)"
        if status is QuestionStatus.FAILED:
            # A failure follows the decision it could not apply (or repeats itself).
            condition += " AND #status IN (:answered, :expired, :status)"
            values[":answered"] = QuestionStatus.ANSWERED.value
            values[":expired"] = QuestionStatus.EXPIRED.value
        elif status is not QuestionStatus.RESUMED:
            # One outcome per question: answered/expired/cancelled apply to an open row (or repeat themselves).
            condition += " AND (#status = :open OR #status = :status)"
            values[":open"] = QuestionStatus.OPEN.value
        self._update(envelope, updates=updates, condition=condition, names=names, values=values)

    def _update(
        self,
        envelope: WaitEnvelope,
        *,
        updates: list[str],
        condition: str,
        names: dict[str, str],
        values: dict[str, Any],
    ) -> None:
        """One conditional update of the question's row; a failed condition is a missing row (raise) or a row
        the transition no longer applies to (log, change nothing)."""
        action = f"DynamoDB UpdateItem on {self.table_name}"
        with translate_errors(action):
            try:
                self.client.update_item(
                    TableName=self.table_name,
                    Key=self._wire(self._key(envelope.thread_id, envelope.question_id)),
                    UpdateExpression="SET " + ", ".join(updates),
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=self._wire(values),
                )
                return
            except ServiceError as exc:
                if not is_condition_failed(exc):
                    raise
        # The condition failed: either there is no row, or the question was already decided otherwise.
        # One consistent read (only on this path) tells which.
        old = self.get_row(envelope.thread_id, envelope.question_id)
        if old is None:
            raise AwsDeliveryError(
                f"{action}: no row for thread_id={envelope.thread_id} question_id={envelope.question_id}; "
                f"{envelope.type} updates the row wait.created wrote and never creates one. Deliver 'created' "
                "with this announcer first, or have the host write the row",
                code=_CONDITION_FAILED,
            )
        logger.info(
            "dynamodb: kept status=%s; %s arrived after the question was decided and changed nothing: "
            "thread_id=%s question_id=%s",
            old.get(STATUS),
            envelope.type,
            envelope.thread_id,
            envelope.question_id,
        )

    @staticmethod
    def _key(thread_id: str, question_id: str) -> dict[str, str]:
        return {PK: thread_key(thread_id), SK: question_key(question_id)}

    def _wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values` as the client takes them: AttributeValues for a plain client, as they are for a Table's.

        Serialized either way, so a number DynamoDB cannot hold fails here with a clear reason.
        """
        try:
            typed = {name: self._serializer.serialize(value) for name, value in values.items()}
        except ArithmeticError as exc:  # decimal.Overflow, Rounded, ...: outside DynamoDB's number type
            raise AwsDeliveryError(
                "the envelope holds a number DynamoDB cannot store exactly (at most 38 significant digits, "
                "magnitude between 1E-130 and 1E+126); send such a number as a string"
            ) from exc
        return dict(values) if self._native else typed
