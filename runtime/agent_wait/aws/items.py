"""JSON values to and from DynamoDB without losing a float or a falsy value (the announcer and the ledger)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from agent_wait.common.canonical_json import to_jsonable

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def decimal_json(value: Any) -> Any:
    """`value` as JSON types with every float a Decimal parsed from its JSON text, so 0.1 stays 0.1."""
    return json.loads(json.dumps(to_jsonable(value)), parse_float=Decimal)


def to_attribute(value: Any) -> dict[str, Any]:
    """One DynamoDB attribute value (numbers through `decimal_json`)."""
    return _serializer.serialize(decimal_json(value))


def to_item(attributes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: to_attribute(value) for name, value in attributes.items()}


def from_item(item: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Plain JSON values back from a DynamoDB item (Decimals become int or float, a string set a sorted list)."""
    return {name: to_jsonable(_plain(_deserializer.deserialize(value)), where=name) for name, value in item.items()}


def _plain(value: Any) -> Any:
    return sorted(value) if isinstance(value, (set, frozenset)) else value


def paginate(
    call: Callable[..., dict[str, Any]], request: Mapping[str, Any], *, limit: int | None = None
) -> Iterator[dict[str, Any]]:
    """Every raw item of a DynamoDB `Query` or `Scan`, page after page (`LastEvaluatedKey`), at most `limit`.

    Args:
        call: makes one call with the request's keyword arguments (and translates its errors).
        request: the call's arguments, without `ExclusiveStartKey` or `Limit`.
        limit: the most items to read in all; each call asks only for what is still missing.
    """
    seen = 0
    start: dict[str, Any] | None = None
    while True:
        page = dict(request)
        if start:
            page["ExclusiveStartKey"] = start
        if limit is not None:
            page["Limit"] = limit - seen
        response = call(**page)
        for item in response.get("Items", []):
            seen += 1
            yield item
        start = response.get("LastEvaluatedKey")
        if not start or (limit is not None and seen >= limit):
            return


BATCH_GET_LIMIT = 100
"""DynamoDB's most keys in one `BatchGetItem`."""
BATCH_WRITE_LIMIT = 25
"""DynamoDB's most items in one `BatchWriteItem`."""


def until_processed(
    call: Callable[..., dict[str, Any]],
    request_items: dict[str, Any],
    *,
    unprocessed: str,
    attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A DynamoDB batch call (`BatchGetItem`, `BatchWriteItem`), made again with what DynamoDB left unprocessed
    (`unprocessed`: `UnprocessedKeys` or `UnprocessedItems`), after a pause that doubles from 50 ms to 1 s, at
    most `attempts` calls in all.

    Returns every response, and the request items still left after the last call (empty when all was done):
    the caller raises its own error for those.
    """
    responses: list[dict[str, Any]] = []
    delay = 0.05
    for attempt in range(attempts):
        if attempt:
            sleep(delay)  # DynamoDB asks for a backoff before the rest (throttling)
            delay = min(delay * 2, 1.0)
        response = call(RequestItems=request_items)
        responses.append(response)
        request_items = {table: left for table, left in (response.get(unprocessed) or {}).items() if left}
        if not request_items:
            break
    return responses, request_items
