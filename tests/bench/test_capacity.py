"""The benches' capacity units are DynamoDB's billing rules, pinned on known items (moto reports a constant 1.0)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "_capacity.py"
_SPEC = importlib.util.spec_from_file_location("bench_capacity", _PATH)
assert _SPEC is not None
assert _SPEC.loader is not None
capacity: Any = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(capacity)


def item_of(size: int) -> dict[str, Any]:
    """An item of exactly `size` bytes: the one-letter name `v` and a string of `size - 1` characters."""
    return {"v": {"S": "x" * (size - 1)}}


def test_item_size_counts_names_and_values_as_dynamodb_does() -> None:
    assert (
        capacity.item_size({"pk": {"S": "order-1"}, "n": {"N": "12345"}, "ok": {"BOOL": True}}) == 2 + 7 + 1 + 4 + 2 + 1
    )
    assert capacity.item_size(item_of(1000)) == 1000


def test_a_batch_get_rounds_each_item_up_to_4_kb_as_dynamodb_bills_it() -> None:
    # three items of 1 KB, 1 KB and 5 KB: billed 1 + 1 + 2 read units, not ceil(7 KB / 4 KB) = 2
    items = [item_of(1024), item_of(1024), item_of(5 * 1024)]
    assert capacity.read_units("BatchGetItem", items, consistent=True, asked=3) == 4
    assert capacity.read_units("BatchGetItem", items, consistent=False, asked=3) == 2
    # a key asked for and not found still costs its unit
    assert capacity.read_units("BatchGetItem", items[:2], consistent=True, asked=3) == 3


def test_a_query_rounds_the_sum_of_what_it_returned() -> None:
    items = [item_of(1024)] * 7  # 7 KB in all: 2 units, however many items
    assert capacity.read_units("Query", items, consistent=True) == 2
    assert capacity.read_units("Query", items, consistent=False) == 1
    assert capacity.read_units("Query", [], consistent=False) == 0.5


@pytest.mark.parametrize(
    ("before", "after", "units"), [(None, 900, 1), (900, 1060, 2), (2048, 100, 2), (None, None, 1)]
)
def test_a_write_is_a_unit_per_kb_of_the_larger_of_before_and_after(
    before: int | None, after: int | None, units: int
) -> None:
    assert capacity.write_units(item_of(before) if before else None, item_of(after) if after else None) == units


def test_a_sweep_of_a_hundred_due_rows_is_billed_per_row() -> None:
    # The sweep reads due rows by key in batches of 100: 3.5 KB rows are one unit each, not 88 KB / 4 KB
    rows = [item_of(3584)] * 100
    assert capacity.read_units("BatchGetItem", rows, consistent=False, asked=100) == 50
    assert capacity.read_units("Query", rows, consistent=False) == 44
