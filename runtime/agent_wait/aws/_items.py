"""JSON values to and from DynamoDB without losing a float or a falsy value (the announcer and the ledger)."""

from __future__ import annotations

import json
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
