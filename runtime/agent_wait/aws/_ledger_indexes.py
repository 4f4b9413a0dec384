"""The question table's sharded indexes, as `DynamoDbLedger` reads them (`agent_wait.contract.schema.QUESTION_TABLE`).

A key value every open question would share (`due`, `open`, a status) is `<value>#<shard>`; a read queries
every shard and merges them in key order, then reads the rows themselves by key (the indexes hold keys,
and `by_status` also `tags`). While a table being upgraded lacks a sharded index, its predecessor is
queried instead (for `by_status`: `by_status_shard`, its former name, then the unsharded `by_status`); rows
written before the shards keep their unsharded `due`/`open` values, which are read too.
"""

from __future__ import annotations

import base64
import heapq
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from agent_wait.aws._ledger_table import DUE, OPEN, PK, SK, START_PREFIX, STATUS_SHARD, LedgerTable
from agent_wait.aws.items import BATCH_GET_LIMIT, from_item, paginate, until_processed
from agent_wait.contract.schema import (
    LEGACY_QUESTION_INDEXES,
    QUESTION_TABLE,
    RENAMED_STATUS_INDEX,
    IndexShape,
    QuestionStatus,
    question_key,
    thread_key,
)
from agent_wait.errors import LedgerCursorError, LedgerIndexMissingError
from agent_wait.ledger.records import LedgerUnavailableError, QuestionPage, QuestionRecord, ThreadFailure

__all__ = ("ShardedIndexes",)

BY_STATUS, BY_DUE, OPEN_BY_AGE, BY_QUESTION = QUESTION_TABLE.indexes
_LEGACY = {
    index.name: ((RENAMED_STATUS_INDEX,) if index is BY_STATUS else ()) + (legacy,)
    for index, legacy in zip(QUESTION_TABLE.indexes, LEGACY_QUESTION_INDEXES, strict=False)
}
"""Each sharded index's predecessors, in the order they are tried while a table being upgraded lacks the index.
The unsharded `by_status` has the new index's name: a query on the wrong keys counts as the index missing."""
_T = TypeVar("_T")


class ShardedIndexes(LedgerTable):
    """What `DynamoDbLedger` does with its indexes: sharded queries merged in key order, rows read by key."""

    def _index(self, index: IndexShape) -> IndexShape:
        """The index to query: `index`, or a predecessor while the table lacks it (an upgrade in progress)."""
        at = self._legacy.get(index.name, 0)
        return _LEGACY[index.name][at - 1] if at else index

    def _partitions(self, index: IndexShape, value: str) -> list[str]:
        """Every partition key value holding `value`'s rows: each shard, and the unsharded value rows written
        before the keys were sharded still carry (`due`, `open`; an unsharded `by_status` holds only that one).

        A resumed question stays in the status index under its outcome (`mark_resumed` moves no key), so
        `resumed` is read from every decided status's partitions, and from its own (rows resumed before)."""
        values = _RESUMED_UNDER if index is BY_STATUS and value == QuestionStatus.RESUMED.value else (value,)
        if index is BY_STATUS and not self._index(index).sharded:
            return list(values)
        shards = [f"{v}#{n}" for v in values for n in range(self.index_shards)]
        return shards if index is BY_STATUS else [*shards, value]

    def _with_fallback(self, index: IndexShape, work: Callable[[], _T]) -> _T:
        """Run `work` on `index`, or on a predecessor while the table lacks `index` (an upgrade in progress).

        The index or predecessor in use is remembered; when it goes missing, the next is tried, round to `index`
        again: a warm ledger on a predecessor moves to `index` when a later deploy deletes the predecessor. With
        none of them, the error names `index`, the one to deploy.
        """
        chain = _LEGACY[index.name]
        names = {index.name, *(predecessor.name for predecessor in chain)}
        missing_new: LedgerIndexMissingError | None = None
        for _ in range(len(chain) + 1):
            try:
                return work()
            except LedgerIndexMissingError as missing:
                if missing.index not in names:
                    raise
                at = self._legacy.pop(index.name, 0)
                if at == 0:
                    missing_new = missing
                if at < len(chain):
                    self._legacy[index.name] = at + 1
        self._legacy.pop(index.name, None)
        if missing_new is None:  # pragma: no cover - one of the attempts was on `index`
            raise LedgerIndexMissingError(
                f"question table {self.table_name} has neither {index.name!r} nor its predecessors",
                index=index.name,
                table=self.table_name,
                code="ResourceNotFoundException",
            )
        raise missing_new

    def _partition_query(
        self, index: IndexShape, partition: str, *, sort: str = "", values: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """The query of one partition of `index` (or its predecessor), `sort` a condition on its sort key."""
        queried = self._index(index)
        condition = "#ip = :ip" + (f" AND #is {sort}" if sort else "")
        return {
            "IndexName": queried.name,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": {"#ip": queried.partition_key, **({"#is": queried.sort_key} if sort else {})},
            "ExpressionAttributeValues": {":ip": {"S": partition}, **(values or {})},
            **kwargs,
        }

    def _lazy(self, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """One partition's items, a page at a time, fetched only when the consumer gets that far."""
        while True:
            response = self._call("query", **kwargs)
            yield from response.get("Items", [])
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            kwargs = {**kwargs, "ExclusiveStartKey": last}

    def _merged(
        self, index: IndexShape, value: str, *, page: int, sort: str = "", values: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """`value`'s index items across every shard, in sort key order (`heapq.merge`); each shard is read a page
        of `page` at a time, and a next page only when the merge needs it."""
        sort_key = self._index(index).sort_key
        shards = [
            self._lazy(self._partition_query(index, partition, sort=sort, values=values, Limit=page))
            for partition in self._partitions(index, value)
        ]
        return heapq.merge(*shards, key=lambda item: (item[sort_key]["S"], item[PK]["S"], item[SK]["S"]))

    def _batch_get(
        self, keys: Sequence[dict[str, Any]], *, consistent: bool = True
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The rows at `keys` (100 a call), by (pk, sk); a missing row is left out. A consistent read costs twice an
        eventually consistent one."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(keys), BATCH_GET_LIMIT):
            wanted = [{PK: k[PK], SK: k[SK]} for k in keys[start : start + BATCH_GET_LIMIT]]
            responses, left = until_processed(
                lambda **request: self._call("batch_get_item", **request),
                {self.table_name: {"Keys": wanted, "ConsistentRead": consistent}},
                unprocessed="UnprocessedKeys",
            )
            for response in responses:
                for item in response.get("Responses", {}).get(self.table_name, []):
                    found[(item[PK]["S"], item[SK]["S"])] = item
            if left:
                raise LedgerUnavailableError(
                    f"question table {self.table_name}: BatchGetItem left {len(left[self.table_name]['Keys'])} keys "
                    "unprocessed; SQS will retry",
                    table=self.table_name,
                    code="UnprocessedKeys",
                )
        return found

    def _rows(self, index_items: Iterable[dict[str, Any]], *, consistent: bool = True) -> list[dict[str, Any]]:
        """The rows the index items point at, read by key, in the same order (missing ones left out)."""
        keys = list(index_items)
        rows = self._batch_get(keys, consistent=consistent)
        return [from_item(rows[key]) for key in ((k[PK]["S"], k[SK]["S"]) for k in keys) if key in rows]

    def _page(
        self,
        status: QuestionStatus,
        limit: int,
        state: dict[str, Any],
        due_before: str | None,
        tag: tuple[str, str] | None,
    ) -> QuestionPage:
        """One page merged across the status's shards, in `expires_at` order across pages too.

        Each shard not yet exhausted is read once (`Limit = limit`). An item is on the page only when every
        shard has been read past its `expires_at` (or is exhausted), so no later page holds an earlier item;
        the cursor keeps each shard's own position (`_DONE` once exhausted).

        A decided status's partitions also hold the questions resumed since, and `resumed` is read from every
        decided status's (see `_partitions`): the rows read are filtered by status, so such a page may hold fewer
        than `limit` questions, or none, and still have a cursor. Each page still reads at most `limit` rows.
        """
        queried = self._index(BY_STATUS)
        sort_key, values, kwargs = queried.sort_key, {}, {}
        if due_before is not None:
            values[":due"] = {"S": due_before}
        if tag is not None:
            kwargs["FilterExpression"] = "tags.#tag = :tag"
            values[":tag"] = {"S": tag[1]}
        read: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]] = []
        for partition in self._partitions(BY_STATUS, status.value):
            start = state.get(partition)
            if start == _DONE:
                continue
            query = self._partition_query(
                BY_STATUS, partition, sort="<= :due" if due_before else "", values=values, Limit=limit, **kwargs
            )
            if tag is not None:
                query["ExpressionAttributeNames"]["#tag"] = tag[0]
            if start is not None:
                query["ExclusiveStartKey"] = start
            response = self._call("query", **query)
            read.append((partition, response.get("Items", []), response.get("LastEvaluatedKey")))
        frontiers = [last[sort_key]["S"] for _, _, last in read if last]
        frontier = min(frontiers) if frontiers else None
        ordered = sorted(
            ((item[sort_key]["S"], item[PK]["S"], item[SK]["S"]), partition, item)
            for partition, items, _ in read
            for item in items
        )
        taken = [(partition, item) for order, partition, item in ordered if frontier is None or order[0] <= frontier][
            :limit
        ]
        next_state = dict(state)
        index_keys = (queried.partition_key, sort_key, PK, SK)
        for partition, items, last in read:
            mine = [item for owner, item in taken if owner == partition]
            if len(mine) == len(items):  # everything read from this shard is on the page: go on after it
                next_state[partition] = last or _DONE
            elif mine:
                next_state[partition] = {name: mine[-1][name] for name in index_keys}
        # A listing, read from an index that lags the table anyway: eventually consistent rows cost half, and what
        # acts on a question (an answer, the sweep) reads its row consistently by key.
        rows = self._rows((item for _, item in taken), consistent=False)
        records = [
            QuestionRecord.from_item(row)
            for row in rows
            if str(row.get(SK, "")).startswith(question_key("")) and row.get("status") == status.value
        ]
        more = any(next_state.get(partition) != _DONE for partition in self._partitions(BY_STATUS, status.value))
        return QuestionPage(records, encode_cursor(next_state) if more else None)

    def _due(self, now: str, limit: int) -> list[QuestionRecord]:
        # One page of `limit` from each shard is always enough (the merge takes the soonest `limit`): no shard is
        # read a second time, and each reads only what is due (`due_at <= now`), keys only.
        keys = itertools.islice(
            self._merged(BY_DUE, DUE, page=limit, sort="<= :now", values={":now": {"S": now}}), limit
        )
        # The index lags the table a little: a row is due by its own `due_at`, read consistently (what was decided,
        # resumed or moved on since has another, or none).
        records = [QuestionRecord.from_item(row) for row in self._rows(keys)]
        due = [r for r in records if r.due_at is not None and r.due_at <= now]
        return sorted(due, key=lambda r: (r.due_at or "", r.question_id))

    def _oldest_open(self) -> QuestionRecord | None:
        # The oldest key of each shard (one item each), then the rows in age order until one is still open.
        for key in self._merged(OPEN_BY_AGE, OPEN, page=1):
            rows = self._rows([key])
            if rows and rows[0].get("status") == QuestionStatus.OPEN.value:
                return QuestionRecord.from_item(rows[0])
        return None

    def _count_open(self) -> int:
        # `Select=COUNT` of every shard of the sparse open index: a decision removes the key, so what is left is open
        # (up to the index's lag). DynamoDB still reads the keys it counts: about 1 read unit per 50 open questions.
        total = 0
        for partition in self._partitions(OPEN_BY_AGE, OPEN):
            query = self._partition_query(OPEN_BY_AGE, partition, Select="COUNT")
            while True:
                response = self._call("query", **query)
                total += int(response.get("Count", 0))
                last = response.get("LastEvaluatedKey")
                if not last:
                    break
                query = {**query, "ExclusiveStartKey": last}
        return total

    def _failures(self, limit: int) -> list[ThreadFailure]:
        keys = itertools.islice(self._merged(BY_STATUS, QuestionStatus.FAILED.value, page=limit), limit)
        found = [
            ThreadFailure.from_item(str(row[PK]).removeprefix(thread_key("")), row["failure"])
            for row in self._rows(keys)
            if row.get("failure") and row.get("status") == QuestionStatus.FAILED.value
        ]
        return sorted(found, key=lambda f: (f.failed_at, f.thread_id))

    # -- upgrading a table whose rows predate the sharded indexes ---------------------------------------

    def upgrade_index_keys(self, *, page_size: int = 500) -> int:
        """Give every row written before the indexes were sharded its sharded keys; returns how many it changed.

        Scans the table (`dynamodb:Scan`, run it with an operator's credentials, once, after the sharded
        indexes exist): a question or failed start with a `status` but no `status_shard` gets one, and an open
        question's unsharded `due = "due"` / `open_since = "open"` become `due#<shard>` / `open#<shard>`. Each
        row is changed by a conditional update that only applies while it still lacks `status_shard`, so it is
        safe beside the running functions and safe to run again.
        """
        changed = 0
        scan: dict[str, Any] = {
            "FilterExpression": f"attribute_exists(#status) AND attribute_not_exists({STATUS_SHARD})",
            "ExpressionAttributeNames": {"#status": "status"},
            "Limit": page_size,
        }
        for row in map(from_item, paginate(lambda **page: self._call("scan", **page), scan)):
            sk, status = str(row[SK]), str(row["status"])
            item_id = sk.removeprefix(question_key("")).removeprefix(START_PREFIX)
            sets = [f"{STATUS_SHARD} = :shard"]
            values: dict[str, Any] = {":shard": self._shard(status, item_id), ":status": {"S": status}}
            names = {"#status": "status"}
            for attribute, value in (("due", DUE), ("open_since", OPEN)):
                if row.get(attribute) == value:
                    names[f"#{attribute}"] = attribute
                    sets.append(f"#{attribute} = :{attribute}")
                    values[f":{attribute}"] = self._shard(value, item_id)
            won, _ = self._conditional(
                "update_item",
                Key={PK: {"S": str(row[PK])}, SK: {"S": sk}},
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression=f"#status = :status AND attribute_not_exists({STATUS_SHARD})",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            changed += won
        return changed


_DONE = "done"
"""A shard the cursor has read to its end."""
_RESUMED_UNDER = tuple(
    status.value
    for status in (QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED, QuestionStatus.RESUMED)
)
"""Where the status index holds resumed questions: under their outcome, and (rows resumed before the status
stayed in place) under `resumed`."""


def encode_cursor(state: dict[str, Any]) -> str:
    """Each shard's position (its last key read, or `_DONE`), as opaque text."""
    return base64.urlsafe_b64encode(json.dumps(state, sort_keys=True).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> dict[str, Any]:
    try:
        state = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, UnicodeDecodeError):
        raise LedgerCursorError("the cursor is not one this ledger made; start without one") from None
    if not isinstance(state, dict) or not all(
        value == _DONE
        or (isinstance(value, dict) and all(isinstance(v, dict) and set(v) == {"S"} for v in value.values()))
        for value in state.values()
    ):
        raise LedgerCursorError("the cursor is not one this ledger made; start without one")
    return state
