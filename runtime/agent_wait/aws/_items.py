"""JSON values to and from DynamoDB without losing a float or a falsy value (the announcer and the ledger)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from agent_wait._json import to_jsonable

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
    """Plain JSON values back from a DynamoDB item (Decimals become int or float)."""
    return {name: to_jsonable(_deserializer.deserialize(value), where=name) for name, value in item.items()}


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
