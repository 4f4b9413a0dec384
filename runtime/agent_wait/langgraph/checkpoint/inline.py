"""A payload kept in its head: one item where `DynamoDBSaver` writes two, when both fit in one.

`DynamoDBSaver` stores each checkpoint and each task's writes as a head (keys, type, where the payload is) and a
payload item (`<chunk key>`, `CHUNK`). DynamoDB bills a write per started KB of each item, so a small head and a
small payload cost two write units where one item holding both costs one: on the refund lifecycle, four of its
24 write units (bench/bench_lifecycle_calls.py). The saver therefore writes a payload the table keeps into its
head (`ref_loc` `INLINE`, the bytes in `payload`) whenever the two fit in one item, and reads every layout: a head
with its payload inline, with a payload item (as `DynamoDBSaver` and earlier versions of this saver wrote), or
with an S3 object. A reader of the table with plain `DynamoDBSaver` does not find inline payloads (it passes over
those checkpoints), as it does not unpack this saver's packed task writes.

The library's own reads (a checkpoint by id, `list`, a checkpoint's pending writes) go through `InlineReadingClient`,
which also asks for `payload` and keeps what it finds inline until the saver's storage retrieves it by its
`ref_key` (`InlinePayloads`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

__all__ = ("INLINE", "PAYLOAD", "InlinePayloads", "InlineReadingClient", "inline_payloads", "inlined")

INLINE = "INLINE"
"""The `ref_loc` of a head that holds its own payload."""
PAYLOAD = "payload"
"""The attribute holding a payload's bytes, on a payload item as on a head that holds its own."""
KEPT_BYTES = 8 * 1024 * 1024
"""Inline payloads the library's reads found and its storage has not retrieved yet, at most: eight 1 MB query pages
(the library retrieves each item's payload as it goes through a page, so more are never waiting)."""


def _size(item: dict[str, Any]) -> int:
    """DynamoDB's size of a head item (names and values of its string, number and binary attributes)."""
    total = 0
    for name, value in item.items():
        (kind, inner), *_ = value.items()
        total += len(name.encode()) + (len(inner) if kind == "B" else len(str(inner).encode()))
    return total


def inlined(items: Sequence[dict[str, Any]], *, limit: int) -> list[dict[str, Any]]:
    """`items` (heads and payload items of one save) with each payload the table keeps moved into its head, when
    the head and the payload fit in one item of at most `limit` bytes; a payload that does not stays its own item."""
    payloads = {item["PK"]["S"]: item for item in items if item["SK"]["S"] == "CHUNK"}
    merged: list[dict[str, Any]] = []
    moved: set[str] = set()
    for item in items:
        if item["SK"]["S"] == "CHUNK":
            continue
        key = item.get("ref_key", {}).get("S", "")
        payload = payloads.get(key) if item.get("ref_loc", {}).get("S") == "DYNAMODB" else None
        if payload is not None and _size(item) + len(PAYLOAD) + len(payload[PAYLOAD]["B"]) <= limit:
            merged.append({**item, "ref_loc": {"S": INLINE}, PAYLOAD: payload[PAYLOAD]})
            moved.add(key)
        else:
            merged.append(item)
    return merged + [item for key, item in payloads.items() if key not in moved]


def inline_payloads(heads: Sequence[dict[str, Any]]) -> dict[str, bytes]:
    """The payloads `heads` hold inline, by `ref_key`."""
    return {
        h["ref_key"]["S"]: h[PAYLOAD]["B"] for h in heads if h.get("ref_loc", {}).get("S") == INLINE and PAYLOAD in h
    }


class InlinePayloads:
    """Inline payloads the library's reads found, by `ref_key`, until its storage retrieves them (once each)."""

    def __init__(self, kept_bytes: int = KEPT_BYTES) -> None:
        self._found: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._kept_bytes = kept_bytes
        self._lock = threading.Lock()

    def found(self, items: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            for key, payload in inline_payloads(items).items():
                self._bytes += len(payload) - len(self._found.pop(key, b""))
                self._found[key] = payload
            while self._bytes > self._kept_bytes and self._found:
                self._bytes -= len(self._found.popitem(last=False)[1])

    def take(self, ref_key: str) -> bytes | None:
        with self._lock:
            payload = self._found.pop(ref_key, None)
            self._bytes -= len(payload or b"")
            return payload


class InlineReadingClient:
    """The library's DynamoDB client: a read of heads it will decode (its projection names `ref_loc` and the type)
    also reads `payload`, and each inline payload found waits in `found` for the storage to retrieve it."""

    def __init__(self, client: Any, found: InlinePayloads) -> None:
        self._client = client
        self.found = found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get_item(self, **params: Any) -> dict[str, Any]:
        response = self._client.get_item(**_with_payload(params))
        self.found.found([response["Item"]] if "Item" in response else [])
        return response

    def query(self, **params: Any) -> dict[str, Any]:
        response = self._client.query(**_with_payload(params))
        self.found.found(response.get("Items", []))
        return response


def _with_payload(params: dict[str, Any]) -> dict[str, Any]:
    projection = params.get("ProjectionExpression", "")
    if "ref_loc" in projection and "#t" in projection and PAYLOAD not in projection:
        return {**params, "ProjectionExpression": f"{projection}, {PAYLOAD}"}
    return params
