"""DynamoDB capacity units as DynamoDB bills them, computed from item sizes.

moto reports `ConsumedCapacity` as a constant 1.0 whatever the item's size or indexes, so the benches compute
capacity here, from the wire-format items a call wrote or read. `tests/bench/test_capacity.py` pins these
rules on known items.

- Item size: attribute names plus values (`item_size`).
- Reads (`read_units`): `GetItem` and `BatchGetItem` round **each item** up to 4 KB (a batch is billed as
  its items read one by one), at least one unit per item asked for; `Query` and `Scan` round the **sum** of
  the items returned up to 4 KB, at least one unit. An eventually consistent read costs half.
- Writes (`write_units`): 1 WRU per KB of the larger of the item before and after the write, at least one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ("item_size", "read_units", "write_units")

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024
PER_ITEM_READS = frozenset({"GetItem", "BatchGetItem", "TransactGetItems"})
"""Operations billed item by item; `Query` and `Scan` are billed on the sum of what they return."""


def item_size(item: dict[str, Any]) -> int:
    """DynamoDB's item size in bytes (attribute names plus values), from wire-format attribute values."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: dict[str, Any]) -> int:
    (kind, inner), *_ = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return math.ceil(len(inner.lstrip("-").replace(".", "").lstrip("0") or "0") / 2) + 1
    if kind == "B":
        return len(inner) if isinstance(inner, bytes) else len(inner) * 3 // 4
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "M":
        return 3 + sum(len(k.encode()) + _value_size(v) + 1 for k, v in inner.items())
    if kind == "L":
        return 3 + sum(_value_size(v) + 1 for v in inner)
    return sum(len(str(x).encode()) for x in inner)  # SS, NS, BS


def read_units(operation: str, items: Sequence[dict[str, Any]], *, consistent: bool, asked: int | None = None) -> float:
    """The read capacity `operation` consumed returning `items`.

    Args:
        operation: `GetItem`, `BatchGetItem`, `TransactGetItems`, `Query` or `Scan`.
        items: the items returned (wire format).
        consistent: a strongly consistent read (`ConsistentRead=True`); eventually consistent costs half.
        asked: for item-by-item reads, how many keys were asked for: a key with no item still costs a unit.
    """
    if operation in PER_ITEM_READS:
        found = [max(1, math.ceil(item_size(item) / READ_UNIT_BYTES)) for item in items]
        units = float(sum(found) + max((asked or 0) - len(items), 0))
    else:
        units = float(max(1, math.ceil(sum(item_size(item) for item in items) / READ_UNIT_BYTES)))
    return units if consistent else units / 2


def write_units(before: dict[str, Any] | None, after: dict[str, Any] | None) -> int:
    """The write capacity of one item's write, by the larger of the item before and after (indexes apart)."""
    return math.ceil(max(item_size(before or {}), item_size(after or {}), 1) / WRITE_UNIT_BYTES)
