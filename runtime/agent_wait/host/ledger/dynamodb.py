"""`DynamoDbLedger`: the question ledger on one DynamoDB table (see `agent_wait.schema.QUESTION_TABLE`)."""

from __future__ import annotations

import base64
import heapq
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from agent_wait._time import NEVER, format_rfc3339
from agent_wait.aws._errors import ServiceError, condition_failed_item, error_code, error_message, is_condition_failed
from agent_wait.aws._items import from_item, paginate, to_attribute, to_item
from agent_wait.envelope import WaitEnvelope
from agent_wait.errors import (
    ArgumentError,
    LedgerCursorError,
    LedgerIndexMissingError,
    LedgerRejectedError,
    QuestionNotFoundError,
)
from agent_wait.ledger.base import (
    DECIDED,
    PROGRESS_ATTRIBUTES,
    AdvanceResult,
    DecideResult,
    Decision,
    FailureKind,
    Ledger,
    LedgerUnavailableError,
    OpenResult,
    Progress,
    QuestionPage,
    QuestionRecord,
    StartRecord,
    StartState,
    ThreadFailure,
    ThreadLease,
    check_advance,
)
from agent_wait.schema import (
    LEGACY_QUESTION_INDEXES,
    MAX_INDEX_SHARDS,
    QUESTION_TABLE,
    IndexShape,
    QuestionStatus,
    index_shards_from_env,
    question_key,
    shard_key,
    thread_key,
)

__all__ = ("DynamoDbLedger",)

_PK, _SK = QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key
_BY_STATUS, _BY_DUE, _OPEN_BY_AGE, _BY_QUESTION_INDEX = QUESTION_TABLE.indexes
_BY_QUESTION = _BY_QUESTION_INDEX.name
_LEGACY = {index.name: legacy for index, legacy in zip(QUESTION_TABLE.indexes, LEGACY_QUESTION_INDEXES, strict=False)}
"""Each sharded index's predecessor, queried instead while a table being upgraded lacks the new index."""
_STATUS_SHARD = _BY_STATUS.partition_key
_BATCH_GET = 100
"""DynamoDB's most keys in one `BatchGetItem`."""
_T = TypeVar("_T")
_START_PREFIX = "START#"
_THREAD_ITEM = "~THREAD"
"""The thread's own item: its lease and its failure. `~` sorts after every `START#` and `WAIT#` key, so
"does this thread have starts or questions" is one query for keys below it."""
_DUE = "due"
"""The value of the sparse key `announce_due` (only its presence counts), and of `due` before it is sharded."""
_OPEN = "open"
_OUTCOME_ATTRIBUTES = frozenset(
    {
        "outcome",
        "answer",
        "answer_id",
        "answered_by",
        "sender",
        "via",
        "claimed_by",
        "decided_at",
        "resumed_at",
        "failure",
        "retry_id",
    }
)
"""Left off a new row while unset; absent reads back as None."""
_CLOSED_REMOVES = "announce_due, open_since, #due, due_at"
"""What a decision removes: a decided question is neither unannounced, nor open, nor ever due."""


class DynamoDbLedger(Ledger):
    """The ledger on DynamoDB: every transition is one conditional write.

    Args:
        table_name: the question table (shape: `agent_wait.schema.QUESTION_TABLE`; GSIs `by_status_shard`,
            `by_due_shard`, `open_by_age_shard`, `by_question`).
        client: a boto3 DynamoDB client; one is created for `region_name` when omitted.
        region_name: region for the client created here.
        closed_ttl: when set, a decided question gets a TTL this long after it closes.
        index_shards: shards of each shared index key value. Default None: `AGENT_WAIT_INDEX_SHARDS`, else 8.
            Every writer and reader of one table must use the same number.

    Raises:
        ArgumentError: `index_shards` is not a whole number from 1 to 1000.
        ConfigurationError: `AGENT_WAIT_INDEX_SHARDS` is set to something else.
    """

    def __init__(
        self,
        table_name: str,
        *,
        client: Any = None,
        region_name: str | None = None,
        closed_ttl: timedelta | None = None,
        index_shards: int | None = None,
    ) -> None:
        if index_shards is None:
            index_shards = index_shards_from_env()
        elif (
            isinstance(index_shards, bool)
            or not isinstance(index_shards, int)
            or not 1 <= index_shards <= MAX_INDEX_SHARDS
        ):
            raise ArgumentError(
                f"index_shards must be a whole number from 1 to {MAX_INDEX_SHARDS}, such as 8; got {index_shards!r}",
                argument="index_shards",
            )
        if client is None:
            import boto3

            client = boto3.client("dynamodb", region_name=region_name)
        self.table_name = table_name
        self.index_shards = index_shards
        """Shards of each shared index key value (`agent_wait.schema.shard_key`)."""
        self._client = client
        self._closed_ttl = closed_ttl
        self._legacy: set[str] = set()
        """Sharded indexes this table lacks (an upgrade in progress): their predecessors are queried instead."""

    # -- I/O helpers ---------------------------------------------------------------------------------

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            if operation == "batch_get_item":  # names its tables in RequestItems
                return self._client.batch_get_item(**kwargs)
            return getattr(self._client, operation)(TableName=self.table_name, **kwargs)
        except ServiceError as exc:
            if is_condition_failed(exc):
                raise
            code = error_code(exc)
            where = f"question table {self.table_name}: {operation}"
            index = kwargs.get("IndexName")
            text = error_message(exc)
            # DynamoDB answers a query on a missing index with ValidationException, moto with
            # ResourceNotFoundException; both name the index.
            if index and code in ("ValidationException", "ResourceNotFoundException") and "index" in text.lower():
                raise LedgerIndexMissingError(
                    f"{where} needs index {index!r}, which the table does not have; deploy the table shape "
                    "in agent_wait.schema.QUESTION_TABLE (the AgentWait construct creates it)",
                    index=str(index),
                    table=self.table_name,
                    code=code,
                ) from exc
            if code == "ValidationException":
                # The request itself is wrong (an item too large, a bad value); sending it again cannot help.
                # DynamoDB's text may quote a value, so it is not repeated here.
                raise LedgerRejectedError(
                    f"{where} was refused as invalid ({code}); retrying cannot help", table=self.table_name, code=code
                ) from exc
            raise LedgerUnavailableError(
                f"{where} failed with {code}; SQS will retry", table=self.table_name, code=code
            ) from exc

    def _conditional(self, operation: str, **kwargs: Any) -> tuple[bool, dict[str, Any] | None]:
        """Run a conditional write; return (succeeded, the item: new on success, old on failure)."""
        try:
            response = self._call(operation, ReturnValuesOnConditionCheckFailure="ALL_OLD", **kwargs)
        except ServiceError as exc:  # only a failed condition gets here: `_call` translated the rest
            old = condition_failed_item(exc)
            return False, from_item(old) if old else None
        attributes = response.get("Attributes")
        return True, from_item(attributes) if attributes else None

    def _key(self, thread_id: str, sort_key: str) -> dict[str, Any]:
        return {_PK: {"S": thread_key(thread_id)}, _SK: {"S": sort_key}}

    def _query(self, limit: int | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        for item in paginate(lambda **page: self._call("query", **page), kwargs, limit=limit):
            yield from_item(item)

    def _record(self, item: dict[str, Any]) -> QuestionRecord:
        return QuestionRecord.from_item(item)

    # -- sharded indexes -----------------------------------------------------------------------------

    def _shard(self, value: str, item_id: str) -> dict[str, str]:
        return {"S": shard_key(value, item_id, self.index_shards)}

    def _index(self, index: IndexShape) -> IndexShape:
        """The index to query: `index`, or its predecessor while the table lacks it (an upgrade in progress)."""
        return _LEGACY[index.name] if index.name in self._legacy else index

    def _partitions(self, index: IndexShape, value: str) -> list[str]:
        """Every partition key value holding `value`'s rows: each shard, and the unsharded value rows written
        before the keys were sharded still carry (`due`, `open`; a legacy `by_status` holds only that one)."""
        if index is _BY_STATUS and index.name in self._legacy:
            return [value]
        shards = [f"{value}#{n}" for n in range(self.index_shards)]
        return shards if index is _BY_STATUS else [*shards, value]

    def _with_fallback(self, index: IndexShape, work: Callable[[], _T]) -> _T:
        """Run `work`; if the table lacks `index` but has its predecessor, remember that and run it again."""
        try:
            return work()
        except LedgerIndexMissingError as missing:
            if index.name in self._legacy or missing.index != index.name:
                raise
            self._legacy.add(index.name)
            try:
                return work()
            except LedgerIndexMissingError:
                self._legacy.discard(index.name)
                raise missing from None

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
        return heapq.merge(*shards, key=lambda item: (item[sort_key]["S"], item[_PK]["S"], item[_SK]["S"]))

    def _batch_get(self, keys: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The rows at `keys` (consistent reads, 100 a call), by (pk, sk); a missing row is left out."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(keys), _BATCH_GET):
            pending: list[dict[str, Any]] = [{_PK: k[_PK], _SK: k[_SK]} for k in keys[start : start + _BATCH_GET]]
            for attempt in range(8):
                response = self._call(
                    "batch_get_item", RequestItems={self.table_name: {"Keys": pending, "ConsistentRead": True}}
                )
                for item in response.get("Responses", {}).get(self.table_name, []):
                    found[(item[_PK]["S"], item[_SK]["S"])] = item
                pending = response.get("UnprocessedKeys", {}).get(self.table_name, {}).get("Keys", [])
                if not pending:
                    break
                time.sleep(min(0.05 * 2**attempt, 1.0))  # DynamoDB asks for a backoff before the rest
            else:
                raise LedgerUnavailableError(
                    f"question table {self.table_name}: BatchGetItem left {len(pending)} keys unprocessed; "
                    "SQS will retry",
                    table=self.table_name,
                    code="UnprocessedKeys",
                )
        return found

    def _rows(self, index_items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows the index items point at, read consistently by key, in the same order (missing ones left out)."""
        keys = list(index_items)
        rows = self._batch_get(keys)
        return [from_item(rows[key]) for key in ((k[_PK]["S"], k[_SK]["S"]) for k in keys) if key in rows]

    # -- Ledger --------------------------------------------------------------------------------------

    def open(self, envelope: WaitEnvelope, *, now: datetime) -> OpenResult:
        asked_at = format_rfc3339(now)
        record = QuestionRecord(envelope=envelope, status=QuestionStatus.OPEN, asked_at=asked_at)
        # A lean row: unset outcome fields and the progress attributes are left off (absent reads as the default).
        attributes = {
            key: value
            for key, value in record.to_item().items()
            if key not in PROGRESS_ATTRIBUTES and (value is not None or key not in _OUTCOME_ATTRIBUTES)
        }
        # Sparse index keys: unannounced, open, and due at once (the sweep announces it until that succeeds).
        question_id = envelope.question_id
        markers = {
            "announce_due": _DUE,
            "open_since": shard_key(_OPEN, question_id, self.index_shards),
            "due": shard_key(_DUE, question_id, self.index_shards),
            "due_at": asked_at,
            _STATUS_SHARD: shard_key(QuestionStatus.OPEN.value, question_id, self.index_shards),
        }
        item = {**self._key(envelope.thread_id, question_key(question_id)), **to_item(attributes | markers)}
        created, old = self._conditional(
            "put_item",
            Item=item,
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": _PK},
        )
        if created:
            return OpenResult(QuestionRecord.from_item(attributes | markers), created=True)
        existing = self._record(old) if old else self.get(envelope.thread_id, envelope.question_id)
        if existing is None:  # pragma: no cover - condition failed yet no row: a concurrent delete
            raise LedgerUnavailableError(f"question {envelope.question_id} vanished while being opened; SQS will retry")
        return OpenResult(existing, created=False)

    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:
        response = self._call("get_item", Key=self._key(thread_id, question_key(question_id)), ConsistentRead=True)
        item = response.get("Item")
        return self._record(from_item(item)) if item else None

    def find(self, question_id: str) -> QuestionRecord | None:
        # by_question projects keys only: it says which thread; the row is then read consistently by its key.
        keys = list(
            self._query(
                limit=1,
                IndexName=_BY_QUESTION,
                KeyConditionExpression="question_id = :q",
                ExpressionAttributeValues={":q": {"S": question_id}},
            )
        )
        if not keys:
            return None
        return self.get(str(keys[0][_PK]).removeprefix(thread_key("")), question_id)

    def thread_exists(self, thread_id: str) -> bool:
        # Starts and questions only: every message takes the thread item's lease before it is checked.
        response = self._call(
            "query",
            KeyConditionExpression="#pk = :pk AND #sk < :thread_item",
            ExpressionAttributeNames={"#pk": _PK, "#sk": _SK},
            ExpressionAttributeValues={":pk": {"S": thread_key(thread_id)}, ":thread_item": {"S": _THREAD_ITEM}},
            ProjectionExpression="#pk",
            Limit=1,
            ConsistentRead=True,
        )
        return bool(response.get("Items"))

    def questions(self, thread_id: str, *, status: QuestionStatus | None = None) -> list[QuestionRecord]:
        records = [
            self._record(item)
            for item in self._query(
                KeyConditionExpression="#pk = :pk AND begins_with(#sk, :wait)",
                ExpressionAttributeNames={"#pk": _PK, "#sk": _SK},
                ExpressionAttributeValues={":pk": {"S": thread_key(thread_id)}, ":wait": {"S": question_key("")}},
                ConsistentRead=True,
            )
        ]
        return [record for record in records if status is None or record.status is status]

    def page(
        self,
        status: QuestionStatus,
        *,
        limit: int,
        cursor: str | None = None,
        due_before: str | None = None,
        tag: tuple[str, str] | None = None,
    ) -> QuestionPage:
        state = _decode_cursor(cursor) if cursor is not None else {}
        return self._with_fallback(_BY_STATUS, lambda: self._page(status, limit, state, due_before, tag))

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
        """
        queried = self._index(_BY_STATUS)
        sort_key, values, kwargs = queried.sort_key, {}, {}
        if due_before is not None:
            values[":due"] = {"S": due_before}
        if tag is not None:
            kwargs["FilterExpression"] = "tags.#tag = :tag"
            values[":tag"] = {"S": tag[1]}
        read: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]] = []
        for partition in self._partitions(_BY_STATUS, status.value):
            start = state.get(partition)
            if start == _DONE:
                continue
            query = self._partition_query(
                _BY_STATUS, partition, sort="<= :due" if due_before else "", values=values, Limit=limit, **kwargs
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
            ((item[sort_key]["S"], item[_PK]["S"], item[_SK]["S"]), partition, item)
            for partition, items, _ in read
            for item in items
        )
        taken = [(partition, item) for order, partition, item in ordered if frontier is None or order[0] <= frontier][
            :limit
        ]
        next_state = dict(state)
        index_keys = (queried.partition_key, sort_key, _PK, _SK)
        for partition, items, last in read:
            mine = [item for owner, item in taken if owner == partition]
            if len(mine) == len(items):  # everything read from this shard is on the page: go on after it
                next_state[partition] = last or _DONE
            elif mine:
                next_state[partition] = {name: mine[-1][name] for name in index_keys}
        rows = self._rows(item for _, item in taken)
        records = [
            self._record(row)
            for row in rows
            if str(row.get(_SK, "")).startswith(question_key("")) and row.get("status") == status.value
        ]
        more = any(next_state.get(partition) != _DONE for partition in self._partitions(_BY_STATUS, status.value))
        return QuestionPage(records, _encode_cursor(next_state) if more else None)

    def _decision_update(
        self, question_id: str, decision: Decision, now: datetime
    ) -> tuple[list[str], dict[str, str], dict[str, Any]]:
        """The SET clauses, names and values that record `decision` (shared by `decide` and `advance`)."""
        values: dict[str, Any] = {
            ":status": {"S": decision.status.value},
            ":status_shard": self._shard(decision.status.value, question_id),
            ":answer": to_attribute(decision.answer),
            ":answer_id": {"S": decision.answer_id},
            ":by": to_attribute(decision.answered_by),
            ":sender": to_attribute(decision.sender),
            ":via": to_attribute(decision.via),
            ":claimed": to_attribute(decision.claimed_by),
            ":at": {"S": format_rfc3339(now)},
        }
        sets = [
            "#status = :status",
            f"{_STATUS_SHARD} = :status_shard",
            "outcome = :status",
            "answer = :answer",
            "answer_id = :answer_id",
            "answered_by = :by",
            "sender = :sender",
            "via = :via",
            "claimed_by = :claimed",
            "decided_at = :at",
        ]
        names = {"#status": "status", "#due": "due"}
        if self._closed_ttl is not None:
            sets.append("#ttl = :ttl")
            names["#ttl"] = QUESTION_TABLE.ttl_attribute
            values[":ttl"] = {"N": str(int((now + self._closed_ttl).timestamp()))}
        return sets, names, values

    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        sets, names, values = self._decision_update(question_id, decision, now)
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=f"SET {', '.join(sets)} REMOVE {_CLOSED_REMOVES}",
            ConditionExpression="#status = :open",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={**values, ":open": {"S": QuestionStatus.OPEN.value}},
            ReturnValues="ALL_NEW",
        )
        if item is None:
            if won:  # pragma: no cover - ALL_NEW always returns attributes
                raise LedgerUnavailableError("update returned no attributes; SQS will retry")
            raise QuestionNotFoundError(thread_id, question_id, table=self.table_name)
        return DecideResult(won=won, record=self._record(item))

    def mark_resumed(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        decided = {f":{status.value}": {"S": status.value} for status in DECIDED}
        won, _ = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=f"SET #status = :resumed, {_STATUS_SHARD} = :shard, resumed_at = :at",
            ConditionExpression=f"#status IN ({', '.join(decided)})",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":resumed": {"S": QuestionStatus.RESUMED.value},
                ":shard": self._shard(QuestionStatus.RESUMED.value, question_id),
                ":at": {"S": format_rfc3339(now)},
                **decided,
            },
        )
        return won

    def mark_announced(self, thread_id: str, question_id: str, *, due_at: str | None) -> None:
        values: dict[str, Any] = {":open": {"S": QuestionStatus.OPEN.value}}
        if due_at is None:
            update = "REMOVE announce_due, #due, due_at"
        else:
            update = "SET #due = :due, due_at = :due_at REMOVE announce_due"
            values |= {":due": self._shard(_DUE, question_id), ":due_at": {"S": due_at}}
        # A failed condition is fine: already announced (a redelivery), or decided meanwhile (never due again).
        self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=update,
            ConditionExpression="#status = :open AND attribute_exists(announce_due)",
            ExpressionAttributeNames={"#status": "status", "#due": "due"},
            ExpressionAttributeValues=values,
        )

    def advance(
        self,
        thread_id: str,
        question_id: str,
        progress: Progress,
        *,
        expected_version: int,
        due_at: str | None,
        decision: Decision | None = None,
        now: datetime,
    ) -> AdvanceResult:
        check_advance(progress, expected_version)
        if decision is not None:
            sets, names, values = self._decision_update(question_id, decision, now)
            removes = [_CLOSED_REMOVES]
        else:
            sets, names, values = [], {"#status": "status", "#due": "due"}, {}
            removes = []
            if due_at is None:
                removes.append("#due, due_at")
            else:
                sets += ["#due = :due", "due_at = :due_at"]
                values |= {":due": self._shard(_DUE, question_id), ":due_at": {"S": due_at}}
        # Every progress attribute is written (or removed when unset), so the row holds exactly `progress`.
        for n, (name, value) in enumerate(progress.to_item().items()):
            names[f"#p{n}"] = name
            if value is None:
                removes.append(f"#p{n}")
            else:
                sets.append(f"#p{n} = :p{n}")
                values[f":p{n}"] = to_attribute(value)
        names["#version"] = "version"
        values |= {":open": {"S": QuestionStatus.OPEN.value}, ":expected": {"N": str(expected_version)}}
        # A row opened before progress existed has no version: it is at version 0.
        version = (
            "(attribute_not_exists(#version) OR #version = :expected)"
            if expected_version == 0
            else ("#version = :expected")
        )
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=f"SET {', '.join(sets)}" + (f" REMOVE {', '.join(removes)}" if removes else ""),
            ConditionExpression=f"#status = :open AND {version}",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )
        return AdvanceResult(won, self._record(item) if item else None)

    def due(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        return self._with_fallback(_BY_DUE, lambda: self._due(format_rfc3339(now), limit))

    def _due(self, now: str, limit: int) -> list[QuestionRecord]:
        # One page of `limit` from each shard is always enough (the merge takes the soonest `limit`): no shard is
        # read a second time, and each reads only what is due (`due_at <= now`), keys only.
        keys = itertools.islice(
            self._merged(_BY_DUE, _DUE, page=limit, sort="<= :now", values={":now": {"S": now}}), limit
        )
        # The index lags the table a little: what was decided or moved on since is left for the next run.
        records = [self._record(row) for row in self._rows(keys) if row.get("status") == QuestionStatus.OPEN.value]
        due = [r for r in records if r.due_at is not None and r.due_at <= now]
        return sorted(due, key=lambda r: (r.due_at or "", r.question_id))

    def oldest_open(self) -> QuestionRecord | None:
        return self._with_fallback(_OPEN_BY_AGE, self._oldest_open)

    def _oldest_open(self) -> QuestionRecord | None:
        # The oldest key of each shard (one item each), then the rows in age order until one is still open.
        for key in self._merged(_OPEN_BY_AGE, _OPEN, page=1):
            rows = self._rows([key])
            if rows and rows[0].get("status") == QuestionStatus.OPEN.value:
                return self._record(rows[0])
        return None

    def begin_start(self, thread_id: str, start_id: str, *, marker: str | None, now: datetime) -> StartRecord:
        attributes = {"state": "running", "marker": marker, "started_at": format_rfc3339(now)}
        created, old = self._conditional(
            "put_item",
            Item={**self._key(thread_id, _START_PREFIX + start_id), **to_item(attributes)},
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": _PK},
        )
        if created:
            return StartRecord(thread_id, start_id, StartState.RUNNING, marker, created=True)
        if old is None:  # pragma: no cover
            raise LedgerUnavailableError(f"start {start_id} vanished while being recorded; SQS will retry")
        return _start_record(thread_id, start_id, old)

    def start_record(self, thread_id: str, start_id: str) -> StartRecord | None:
        response = self._call("get_item", Key=self._key(thread_id, _START_PREFIX + start_id), ConsistentRead=True)
        item = response.get("Item")
        return _start_record(thread_id, start_id, from_item(item)) if item else None

    def finish_start(
        self,
        thread_id: str,
        start_id: str,
        question_ids: tuple[str, ...],
        *,
        now: datetime,
        state: StartState = StartState.DONE,
    ) -> None:
        self._call(
            "update_item",
            Key=self._key(thread_id, _START_PREFIX + start_id),
            UpdateExpression="SET #state = :state, question_ids = :ids, finished_at = :at",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues={
                ":state": {"S": state},
                ":ids": to_attribute(list(question_ids)),
                ":at": {"S": format_rfc3339(now)},
            },
        )

    # -- failures and retries --------------------------------------------------------------------------

    def mark_failed(self, failure: ThreadFailure, *, start_input: Any = None) -> None:
        values: dict[str, Any] = {":failure": to_attribute(failure.to_item()), ":failed": {"S": "failed"}}
        # The thread first: a crash before the row is written leaves the thread held, and the redelivery
        # that finds it so writes the row (a row written first would leave the thread running on).
        self._call(
            "update_item",
            Key=self._key(failure.thread_id, _THREAD_ITEM),
            UpdateExpression="SET failure = :failure",
            ExpressionAttributeValues={":failure": values[":failure"]},
        )
        if failure.kind is FailureKind.ANSWER:
            values |= {
                ":answered": {"S": QuestionStatus.ANSWERED.value},
                ":expired": {"S": QuestionStatus.EXPIRED.value},
            }
            won, item = self._conditional(
                "update_item",
                Key=self._key(failure.thread_id, question_key(failure.target_id)),
                UpdateExpression=f"SET #status = :failed, {_STATUS_SHARD} = :shard, failure = :failure",
                # From the decision it failed to apply, or again (a redelivery records the same failure).
                ConditionExpression="#status IN (:answered, :expired, :failed)",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={**values, ":shard": self._shard("failed", failure.target_id)},
            )
            if not won and item is None:
                raise QuestionNotFoundError(failure.thread_id, failure.target_id, table=self.table_name)
        else:
            # `status_shard` and `expires_at` put a failed start in the status index beside failed questions.
            self._call(
                "update_item",
                Key=self._key(failure.thread_id, _START_PREFIX + failure.target_id),
                UpdateExpression=(
                    "SET #state = :failed, #status = :failed, #shard = :shard, expires_at = :never, "
                    "failure = :failure, #input = :input"
                ),
                ExpressionAttributeNames={
                    "#state": "state",
                    "#status": "status",
                    "#shard": _STATUS_SHARD,
                    "#input": "input",
                },
                ExpressionAttributeValues={
                    **values,
                    ":shard": self._shard("failed", failure.target_id),
                    ":never": {"S": NEVER},
                    ":input": to_attribute(start_input),
                },
            )

    def thread_failure(self, thread_id: str) -> ThreadFailure | None:
        response = self._call("get_item", Key=self._key(thread_id, _THREAD_ITEM), ConsistentRead=True)
        item = from_item(response.get("Item") or {})
        return ThreadFailure.from_item(thread_id, item["failure"]) if item.get("failure") else None

    def begin_retry(self, failure: ThreadFailure, retry_id: str, *, now: datetime) -> bool:
        values = {":failed": {"S": "failed"}, ":retry": {"S": retry_id}}
        if failure.kind is FailureKind.ANSWER:
            # The row goes back to its outcome, and its status shard with it: an update expression cannot build
            # `<outcome>#<shard>`, so the outcome is read first and the write is conditional on it.
            row = self.get(failure.thread_id, failure.target_id)
            if row is None or row.status is not QuestionStatus.FAILED or row.outcome is None:
                return bool(row and row.retry_id == retry_id)
            won, item = self._conditional(
                "update_item",
                Key=self._key(failure.thread_id, question_key(failure.target_id)),
                UpdateExpression=f"SET #status = outcome, {_STATUS_SHARD} = :shard, retry_id = :retry REMOVE failure",
                ConditionExpression="#status = :failed AND outcome = :outcome",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={
                    **values,
                    ":outcome": {"S": row.outcome.value},
                    ":shard": self._shard(row.outcome.value, failure.target_id),
                },
            )
        else:
            won, item = self._conditional(
                "update_item",
                Key=self._key(failure.thread_id, _START_PREFIX + failure.target_id),
                UpdateExpression=(
                    f"SET #state = :running, retry_id = :retry REMOVE #status, {_STATUS_SHARD}, expires_at, failure"
                ),
                ConditionExpression="#state = :failed",
                ExpressionAttributeNames={"#state": "state", "#status": "status"},
                ExpressionAttributeValues={**values, ":running": {"S": "running"}},
            )
        return won or bool(item and item.get("retry_id") == retry_id)

    def clear_failure(self, thread_id: str) -> None:
        self._call("update_item", Key=self._key(thread_id, _THREAD_ITEM), UpdateExpression="REMOVE failure")

    def failures(self, *, limit: int = 100) -> list[ThreadFailure]:
        return self._with_fallback(_BY_STATUS, lambda: self._failures(limit))

    def _failures(self, limit: int) -> list[ThreadFailure]:
        keys = itertools.islice(self._merged(_BY_STATUS, QuestionStatus.FAILED.value, page=limit), limit)
        found = [
            ThreadFailure.from_item(str(row[_PK]).removeprefix(thread_key("")), row["failure"])
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
            "FilterExpression": f"attribute_exists(#status) AND attribute_not_exists({_STATUS_SHARD})",
            "ExpressionAttributeNames": {"#status": "status"},
            "Limit": page_size,
        }
        for row in map(from_item, paginate(lambda **page: self._call("scan", **page), scan)):
            sk, status = str(row[_SK]), str(row["status"])
            item_id = sk.removeprefix(question_key("")).removeprefix(_START_PREFIX)
            sets = [f"{_STATUS_SHARD} = :shard"]
            values: dict[str, Any] = {":shard": self._shard(status, item_id), ":status": {"S": status}}
            names = {"#status": "status"}
            for attribute, value in (("due", _DUE), ("open_since", _OPEN)):
                if row.get(attribute) == value:
                    names[f"#{attribute}"] = attribute
                    sets.append(f"#{attribute} = :{attribute}")
                    values[f":{attribute}"] = self._shard(value, item_id)
            won, _ = self._conditional(
                "update_item",
                Key={_PK: {"S": str(row[_PK])}, _SK: {"S": sk}},
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression=f"#status = :status AND attribute_not_exists({_STATUS_SHARD})",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            changed += won
        return changed

    # -- one thread at a time ---------------------------------------------------------------------------

    def acquire_lease(self, thread_id: str, holder: str, *, now: datetime, seconds: float) -> ThreadLease | None:
        until = now.timestamp() + seconds
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, _THREAD_ITEM),
            UpdateExpression="SET lease_holder = :holder, lease_until = :until",
            # Free, expired (its holder died), or already ours.
            ConditionExpression="attribute_not_exists(lease_holder) OR lease_until <= :now OR lease_holder = :holder",
            ExpressionAttributeValues={
                ":holder": {"S": holder},
                ":until": {"N": repr(round(until, 3))},
                ":now": {"N": repr(round(now.timestamp(), 3))},
            },
            ReturnValues="ALL_NEW",
        )
        if not won:
            return None
        failure = (item or {}).get("failure")
        recorded = (item or {}).get("open_questions")
        return ThreadLease(
            thread_id,
            holder,
            until,
            ThreadFailure.from_item(thread_id, failure) if failure else None,
            tuple(str(q) for q in recorded) if isinstance(recorded, list) else None,
        )

    def release_lease(self, thread_id: str, holder: str, *, open_questions: Sequence[str] | None = None) -> None:
        update, values = "REMOVE lease_holder, lease_until", {":holder": {"S": holder}}
        if open_questions is not None:  # in the write the release makes anyway: no extra call
            update = "SET open_questions = :open " + update
            values[":open"] = to_attribute(list(open_questions))
        self._conditional(
            "update_item",
            Key=self._key(thread_id, _THREAD_ITEM),
            UpdateExpression=update,
            ConditionExpression="lease_holder = :holder",
            ExpressionAttributeValues=values,
        )


_DONE = "done"
"""A shard the cursor has read to its end."""


def _encode_cursor(state: dict[str, Any]) -> str:
    """Each shard's position (its last key read, or `_DONE`), as opaque text."""
    return base64.urlsafe_b64encode(json.dumps(state, sort_keys=True).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> dict[str, Any]:
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


def _start_record(thread_id: str, start_id: str, item: dict[str, Any]) -> StartRecord:
    return StartRecord(
        thread_id,
        start_id,
        StartState(str(item.get("state"))),
        item.get("marker"),
        created=False,
        question_ids=tuple(item.get("question_ids") or ()),
        input=item.get("input"),
        retry_id=item.get("retry_id"),
    )
