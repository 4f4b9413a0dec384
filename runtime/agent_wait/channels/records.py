"""The per-question channel record: what a channel sent for each question, so a redelivered event sends nothing twice.

Every channel that posts or sends keeps the same record under its own names (`RecordKind`): Slack its posts
(`post:<key>`, marked with the post's `ts` and `channel`), email and Teams their sends (`send:<key>`, marked with the
service's message id). An entry is claimed before it is sent and marked once the service took it. A claim that is
marked was sent: a redelivery skips it. A claim without its mark may or may not have reached the service (the
process died, or the service failed, in between): the channel looks for it where it can (Slack, by the metadata of
its posts) and sends it again where it cannot. That window is the only at-least-once part.

`DynamoDbChannelRecord` keeps one item per question in a table keyed by `question_id` (`schema.CHANNEL_RECORD`, the
constructs' `ChannelRecordTable`), one map attribute per entry, the item's `ttl` moved to `keep_for` (`KEEP_FOR`, 90
days, unless `AGENT_WAIT_CHANNEL_RECORD_RETENTION` says otherwise) after its last claim; its DynamoDB failures leave it
as `AwsDeliveryError` (the call, the table and AWS's code).
`InMemoryChannelRecord` is the same in a dict, for tests and the local previews.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Generic

from agent_wait.channels.contract import E, RecordKind
from agent_wait.common.times import utc_now
from agent_wait.contract.schema import CHANNEL_RECORD
from agent_wait.errors import AwsDeliveryError

__all__ = ("KEEP_FOR", "DynamoDbChannelRecord", "InMemoryChannelRecord")

KEEP_FOR = timedelta(days=90)
"""How long a question's record is kept after its last claim (the item's `ttl`), unless told otherwise."""


class InMemoryChannelRecord(Generic[E]):
    """`ChannelRecord` in a dict (tests, the local previews); thread-safe."""

    def __init__(self, kind: RecordKind[E]) -> None:
        self.kind = kind
        self._entries: dict[str, dict[str, E]] = {}
        self._lock = threading.Lock()

    def claim(self, question_id: str, entry: E) -> E | None:
        with self._lock:
            entries = self._entries.setdefault(question_id, {})
            if entry.key in entries:
                return entries[entry.key]
            entries[entry.key] = entry
            return None

    def mark(self, question_id: str, key: str, **marks: str) -> None:
        with self._lock:
            entries = self._entries[question_id]
            entries[key] = dataclasses.replace(entries[key], **marks)  # type: ignore[type-var]

    def read(self, question_id: str) -> dict[str, E]:
        with self._lock:
            return dict(self._entries.get(question_id, {}))


class DynamoDbChannelRecord(Generic[E]):
    """`ChannelRecord` in a DynamoDB table keyed by `question_id` (a string), with `ttl` enabled.

    Args:
        kind: the channel's names for its entries.
        table: the table's name (`AGENT_WAIT_SLACK_MESSAGES_TABLE`, `AGENT_WAIT_EMAIL_SENDS_TABLE`,
            `AGENT_WAIT_TEAMS_SENDS_TABLE`).
        client: a boto3 DynamoDB client.
        clock: returns now (UTC), for the `ttl`.
        keep_for: how long the record is kept after its last claim (`AGENT_WAIT_CHANNEL_RECORD_RETENTION`); None:
            kept for ever (no `ttl`).
    """

    def __init__(
        self,
        kind: RecordKind[E],
        table: str,
        *,
        client: Any,
        clock: Callable[[], datetime] = utc_now,
        keep_for: timedelta | None = KEEP_FOR,
    ) -> None:
        self.kind = kind
        self.table = table
        self.client = client
        self.clock = clock
        self.keep_for = keep_for

    def claim(self, question_id: str, entry: E) -> E | None:
        attribute = self.kind.attribute(entry.key)
        value = {name: {"S": text} for name, text in self.kind.fields_of(entry).items()}
        names: dict[str, str] = {"#entry": attribute}
        values: dict[str, Any] = {":entry": {"M": value}}
        update = "SET #entry = if_not_exists(#entry, :entry)"
        if self.keep_for is not None:
            update += ", #ttl = :ttl"
            names["#ttl"] = CHANNEL_RECORD.ttl_attribute
            values[":ttl"] = {"N": str(int((self.clock() + self.keep_for).timestamp()))}
        response = self._call(
            "update_item",
            question_id,
            Key=self._key(question_id),
            UpdateExpression=update,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            # The whole item as it was: UPDATED_OLD leaves out an attribute the update did not change, and on moto
            # an earlier claim kept by if_not_exists is such an attribute (DynamoDB returns it).
            ReturnValues="ALL_OLD",
        )
        old = (response.get("Attributes") or {}).get(attribute)
        return self.kind.entry_of(_texts(old["M"])) if old else None

    def mark(self, question_id: str, key: str, **marks: str) -> None:
        names = {f"#m{i}": name for i, name in enumerate(marks)}
        self._call(
            "update_item",
            question_id,
            Key=self._key(question_id),
            UpdateExpression="SET " + ", ".join(f"#entry.{alias} = :{alias[1:]}" for alias in names),
            ExpressionAttributeNames={"#entry": self.kind.attribute(key), **names},
            ExpressionAttributeValues={f":{alias[1:]}": {"S": marks[name]} for alias, name in names.items()},
        )

    def read(self, question_id: str) -> dict[str, E]:
        response = self._call("get_item", question_id, Key=self._key(question_id), ConsistentRead=True)
        item = response.get("Item") or {}
        found = (
            self.kind.entry_of(_texts(value["M"]))
            for name, value in item.items()
            if name.startswith(self.kind.prefix) and "M" in value
        )
        return {entry.key: entry for entry in found}

    def _key(self, question_id: str) -> dict[str, Any]:
        return {CHANNEL_RECORD.partition_key: {"S": question_id}}

    def _call(self, method: str, question_id: str, **request: Any) -> dict[str, Any]:
        """One DynamoDB call (`update_item`, `get_item`); an AWS failure leaves as `AwsDeliveryError` (its code kept,
        AWS's text not: it may quote a value). Anything else (a broken injected client) passes through as it is."""
        try:
            return getattr(self.client, method)(TableName=self.table, **request)
        except Exception as exc:
            code = _aws_code(exc)
            if code is None:
                raise
            raise AwsDeliveryError(
                f"DynamoDB {method} on the channel record table {self.table!r} failed with {code} "
                f"(question {question_id})",
                code=code,
            ) from exc


def _texts(value: Mapping[str, Any]) -> dict[str, str]:
    """A stored map's text fields."""
    return {name: field["S"] for name, field in value.items() if isinstance(field, Mapping) and "S" in field}


def _aws_code(exc: Exception) -> str | None:
    """AWS's error code when `exc` is an AWS failure, else None (without botocore nothing is AWS's)."""
    try:
        from agent_wait.aws.errors import AWS_ERRORS, error_code
    except ImportError:
        return None
    return error_code(exc) if isinstance(exc, AWS_ERRORS) else None
