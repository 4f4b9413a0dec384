"""Where one lifecycle's write units go: every DynamoDB write of the refund stack as synthesized, item by item.

Run: uv run --frozen python bench/bench_write_units.py [queue|api ...]

The same emulated stack and counter as `bench_lifecycle_calls.py` (`_doors.py`); for each write of one warm
lifecycle through each door named (default: the queue and the answer API): who made it, the operation, the table,
the item's kind (its key's prefix), its size before and after in bytes, and its write units (the item's, then its
index writes'). A `BatchWriteItem` or a transaction is shown item by item. Figures, not a test.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _capacity import item_size, write_units
from _refund_stack import REGION, CallCounter

Row = tuple[str, str, str, str, int, int, int, int]
"""Who, operation, table, item kind, bytes before, bytes after, item WRU, index WRU."""


def _kind(key: dict[str, Any]) -> str:
    """An item's kind from its key: `~THREAD`, `WAIT#`, `START#`, `CHECKPOINT_`, `WRITES_`, `CHUNK_`, ..."""
    pk = str(next(iter(key.get("pk", key.get("PK", {"S": ""})).values())))
    sk = str(next(iter(key.get("sk", key.get("SK", {"S": ""})).values())))
    if pk.startswith("THREAD#"):
        return sk if sk.startswith("~") else sk.split("#", 1)[0] + "#"
    return pk.split("_", 1)[0] + "_"


class ItemCounter(CallCounter):
    """`CallCounter` that also keeps each write's items (`rows`)."""

    rows: list[Row]

    def after(self, event_name: str, parsed: dict[str, Any], context: dict[str, Any], **kwargs: Any) -> None:
        counted = len(self.calls)
        super().after(event_name, parsed, context, **kwargs)
        if len(self.calls) == counted or self.calls[-1].service != "dynamodb":
            return
        call, params = self.calls[-1], context.get("bench_params", {})
        table = call.resource.rsplit("-", 1)[0][-24:]
        if call.operation in ("PutItem", "UpdateItem", "DeleteItem"):
            self._row(call.role, call.operation, table, params, context.get("bench_before") or {}, 1)
        elif call.operation == "TransactWriteItems":
            for item, before in zip(params["TransactItems"], context.get("bench_before") or [], strict=False):
                (kind, write), *_ = item.items()
                self._row(call.role, f"Transact {kind}", table, write, before or {}, 2)
        elif call.operation == "BatchWriteItem":
            for request in params["RequestItems"][call.resource]:
                item = request.get("PutRequest", {}).get("Item")
                if item is not None:
                    size = item_size(item)
                    self.rows.append(
                        (call.role, "BatchWriteItem", table, _kind(item), 0, size, write_units(None, item), 0)
                    )

    def _row(
        self, role: str, operation: str, table: str, write: dict[str, Any], before: dict[str, Any], times: int
    ) -> None:
        after = self._current(write) or {}
        key = write.get("Key") or write.get("Item") or {}
        units = times * write_units(before, after)
        self.rows.append(
            (
                role,
                operation,
                table,
                _kind(key),
                item_size(before),
                item_size(after),
                units,
                self._index_writes(before, after),
            )
        )


def main() -> int:
    import boto3

    from _doors import Emulated, only_channels, refund_template
    from agent_wait.contract.schema import QUESTION_TABLE

    doors = sys.argv[1:] or ["queue", "api"]
    counter = ItemCounter(None, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
    counter.rows = []
    counter.register_everywhere()
    with Emulated(refund_template(), counter) as emulated:
        counter.reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=emulated.local.endpoint_url)
        with only_channels(emulated):
            for door in doors:
                emulated.lifecycle(door, 0)  # warms the handlers
                counter.rows.clear()
                emulated.lifecycle(door, 1)
                _print(door, counter.rows)
    return 0


def _print(door: str, rows: list[Row]) -> None:
    print(f"\nThe {door} door, every DynamoDB write of one lifecycle, item by item:")
    print(f"{'who':<8}{'operation':<26}{'table':<26}{'item':<13}{'bytes before':>13}{'after':>7}{'WRU':>5}{'index':>7}")
    for who, operation, table, kind, before, after, units, index in rows:
        print(f"{who:<8}{operation:<26}{table:<26}{kind:<13}{before:>13,}{after:>7,}{units:>5}{index:>7}")
    print(f"{'':<73}{'in all':>7}{sum(r[6] for r in rows):>5}{sum(r[7] for r in rows):>7}")


if __name__ == "__main__":
    raise SystemExit(main())
