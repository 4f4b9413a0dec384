"""Agent state kept in the checkpoint table: one JSON document per item, compressed when large.

The Pydantic AI history store and the Strands session repository both keep their items in the
checkpoint table the stack already deploys (`schema.CHECKPOINT_TABLE`: string keys `PK`/`SK`), each
under its own `PK` prefix, so they never meet LangGraph's checkpoints. This module holds what they
share: the body encoding, the 400 KB item limit, and the calls, with driver errors translated on the
spot (`ThreadState*Error`), so callers never import botocore. Standard library only: the DynamoDB
client is passed in.

Only `GetItem`, `PutItem` (conditional) and `Query` are called — actions the checkpoint
table's read/write grant already includes.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from agent_wait.contract.schema import CHECKPOINT_TABLE
from agent_wait.errors import (
    ArgumentError,
    ThreadStateConflictError,
    ThreadStateTooLargeError,
    ThreadStateUnavailableError,
)

__all__ = ("ITEM_LIMIT", "PK", "SK", "StateTable", "decode_body", "encode_body")

ITEM_LIMIT = 400 * 1024
"""DynamoDB's item size limit, in bytes (names and values of every attribute)."""

BODY_LIMIT = ITEM_LIMIT - 8 * 1024
"""The most a stored body may take; the rest of the item (keys, version, encoding) fits in what is left."""

COMPRESS_OVER = 32 * 1024
"""Bodies longer than this are stored zlib-compressed (binary `body_z`); shorter ones as readable JSON (`body`)."""

PK, SK = CHECKPOINT_TABLE.partition_key, CHECKPOINT_TABLE.sort_key


def encode_body(value: Any, *, thread_id: str, what: str, table: str | None = None) -> dict[str, dict[str, Any]]:
    """`value` as DynamoDB attributes: `{"body": {"S": json}}`, or `{"body_z": {"B": zlib(json)}}` when large.

    Raises:
        ThreadStateTooLargeError: the body is over `BODY_LIMIT` even compressed.
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    raw = text.encode("utf-8")
    if len(raw) <= COMPRESS_OVER:
        return {"body": {"S": text}}
    packed = zlib.compress(raw, 6)
    if len(packed) > BODY_LIMIT:
        raise ThreadStateTooLargeError(
            f"the {what} of thread {thread_id!r} is {len(raw)} bytes ({len(packed)} compressed); a DynamoDB item holds "
            f"at most {BODY_LIMIT} bytes of it. Keep the thread shorter (a history processor or conversation "
            "manager that trims old messages), or start a new thread",
            thread_id=thread_id,
            table=table,
            size=len(packed),
            limit=BODY_LIMIT,
        )
    return {"body_z": {"B": packed}}


def decode_body(item: Mapping[str, Any]) -> Any:
    """The value `encode_body` stored in `item` (a DynamoDB item in the client's attribute-value form)."""
    if "body_z" in item:
        return json.loads(zlib.decompress(item["body_z"]["B"]).decode("utf-8"))
    return json.loads(item["body"]["S"])


class StateTable:
    """Items under one key prefix in the checkpoint table, through a boto3 DynamoDB client.

    Args:
        table_name: the checkpoint table.
        client: a boto3 DynamoDB client (`boto3.client("dynamodb")`).
        prefix: what every partition key starts with (`PYDANTIC_AI#`, `STRANDS#`).
    """

    def __init__(self, table_name: str, *, client: Any, prefix: str) -> None:
        if not table_name:
            raise ArgumentError("table_name must name the checkpoint table")
        if client is None:
            raise ArgumentError("client must be a boto3 DynamoDB client, e.g. boto3.client('dynamodb')")
        self.table_name = table_name
        self.prefix = prefix
        self._client = client

    def key(self, thread_id: str, sort_key: str) -> dict[str, dict[str, str]]:
        return {PK: {"S": f"{self.prefix}{thread_id}"}, SK: {"S": sort_key}}

    def get(self, thread_id: str, sort_key: str) -> dict[str, Any] | None:
        """The item, read consistently; None when there is none."""
        try:
            response = self._client.get_item(
                TableName=self.table_name, Key=self.key(thread_id, sort_key), ConsistentRead=True
            )
        except self._client.exceptions.ClientError as exc:
            raise self._unavailable(thread_id, "GetItem", exc) from exc
        return response.get("Item")

    def put(
        self,
        thread_id: str,
        sort_key: str,
        attributes: Mapping[str, Any],
        *,
        condition: str | None = None,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
        conflict: str = "",
    ) -> None:
        """Write one item; with `condition` (and its `names` and `values`), only if it holds.

        Raises:
            ThreadStateConflictError: the condition did not hold (`conflict` says what that means).
            ThreadStateUnavailableError: DynamoDB refused or failed.
        """
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "Item": {**self.key(thread_id, sort_key), **attributes},
        }
        if condition:
            request["ConditionExpression"] = condition
        if names:
            request["ExpressionAttributeNames"] = dict(names)
        if values:
            request["ExpressionAttributeValues"] = dict(values)
        try:
            self._client.put_item(**request)
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            raise ThreadStateConflictError(
                f"thread {thread_id!r}: {conflict or 'the conditional write lost'}; nothing was written",
                thread_id=thread_id,
                table=self.table_name,
            ) from exc
        except self._client.exceptions.ClientError as exc:
            raise self._unavailable(thread_id, "PutItem", exc) from exc

    def query(self, thread_id: str, sort_key_prefix: str) -> Iterator[dict[str, Any]]:
        """Every item of the thread whose sort key starts with `sort_key_prefix`, in sort-key order."""
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
            "ExpressionAttributeNames": {"#pk": PK, "#sk": SK},
            "ExpressionAttributeValues": {
                ":pk": {"S": f"{self.prefix}{thread_id}"},
                ":prefix": {"S": sort_key_prefix},
            },
            "ConsistentRead": True,
        }
        while True:
            try:
                response = self._client.query(**request)
            except self._client.exceptions.ClientError as exc:
                raise self._unavailable(thread_id, "Query", exc) from exc
            yield from response.get("Items", [])
            if "LastEvaluatedKey" not in response:
                return
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def _unavailable(self, thread_id: str, operation: str, exc: Any) -> ThreadStateUnavailableError:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
        return ThreadStateUnavailableError(
            f"table {self.table_name}: {operation} failed for thread {thread_id!r} ({code}); SQS will retry",
            thread_id=thread_id,
            table=self.table_name,
        )
