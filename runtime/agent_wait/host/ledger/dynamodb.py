"""`DynamoDbLedger`: the question ledger on one DynamoDB table (see `agent_wait.schema.QUESTION_TABLE`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from agent_wait._time import format_rfc3339
from agent_wait.aws._items import from_item, to_attribute, to_item
from agent_wait.envelope import WaitEnvelope
from agent_wait.errors import LedgerIndexMissingError, LedgerRejectedError
from agent_wait.host.ledger.base import (
    DECIDED,
    DecideResult,
    Decision,
    Ledger,
    LedgerUnavailableError,
    OpenResult,
    QuestionRecord,
    StartRecord,
)
from agent_wait.schema import QUESTION_TABLE, QuestionStatus, question_key, thread_key

__all__ = ("DynamoDbLedger",)

_PK, _SK = QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key
_BY_STATUS, _BY_ANNOUNCE_DUE, _OPEN_BY_AGE = (index.name for index in QUESTION_TABLE.indexes)
_START_PREFIX = "START#"
_DUE = "due"
_OPEN = "open"


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "Unknown"))


class DynamoDbLedger(Ledger):
    """The ledger on DynamoDB: every transition is one conditional write.

    Args:
        table_name: the question table (GSIs `by_status` and `by_announce_due`).
        client: a boto3 DynamoDB client; one is created for `region_name` when omitted.
        region_name: region for the client created here.
        closed_ttl: when set, a decided question gets a TTL this long after it closes.
    """

    def __init__(
        self,
        table_name: str,
        *,
        client: Any = None,
        region_name: str | None = None,
        closed_ttl: timedelta | None = None,
    ) -> None:
        if client is None:
            import boto3

            client = boto3.client("dynamodb", region_name=region_name)
        self.table_name = table_name
        self._client = client
        self._closed_ttl = closed_ttl

    # -- I/O helpers ---------------------------------------------------------------------------------

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            return getattr(self._client, operation)(TableName=self.table_name, **kwargs)
        except ClientError as exc:
            code = _error_code(exc)
            if code == "ConditionalCheckFailedException":
                raise
            where = f"question table {self.table_name}: {operation}"
            index = kwargs.get("IndexName")
            text = str(exc.response.get("Error", {}).get("Message", ""))
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
        except ClientError as exc:
            old = exc.response.get("Item")
            return False, from_item(old) if old else None
        attributes = response.get("Attributes")
        return True, from_item(attributes) if attributes else None

    def _key(self, thread_id: str, sort_key: str) -> dict[str, Any]:
        return {_PK: {"S": thread_key(thread_id)}, _SK: {"S": sort_key}}

    def _query(self, limit: int | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        seen = 0
        start: dict[str, Any] | None = None
        while True:
            page_kwargs = dict(kwargs)
            if start:
                page_kwargs["ExclusiveStartKey"] = start
            if limit is not None:
                page_kwargs["Limit"] = limit - seen
            response = self._call("query", **page_kwargs)
            for item in response.get("Items", []):
                seen += 1
                yield from_item(item)
            start = response.get("LastEvaluatedKey")
            if not start or (limit is not None and seen >= limit):
                return

    def _record(self, item: dict[str, Any]) -> QuestionRecord:
        return QuestionRecord.from_item(item)

    # -- Ledger --------------------------------------------------------------------------------------

    def open(self, envelope: WaitEnvelope, *, now: datetime) -> OpenResult:
        record = QuestionRecord(envelope=envelope, status=QuestionStatus.OPEN, asked_at=format_rfc3339(now))
        attributes = {
            key: value
            for key, value in record.to_item().items()
            if value is not None
            or key not in {"outcome", "answer", "answer_id", "answered_by", "decided_at", "resumed_at"}
        }
        item = {
            **self._key(envelope.thread_id, question_key(envelope.question_id)),
            # Sparse index keys: present only while due for announcement / while open.
            **to_item({**attributes, "announce_due": _DUE, "open_since": _OPEN}),
        }
        created, old = self._conditional(
            "put_item",
            Item=item,
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": _PK},
        )
        if created:
            return OpenResult(QuestionRecord.from_item({**attributes, "announce_due": _DUE}), created=True)
        existing = self._record(old) if old else self.get(envelope.thread_id, envelope.question_id)
        if existing is None:  # pragma: no cover - condition failed yet no row: a concurrent delete
            raise LedgerUnavailableError(f"question {envelope.question_id} vanished while being opened; SQS will retry")
        return OpenResult(existing, created=False)

    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:
        response = self._call("get_item", Key=self._key(thread_id, question_key(question_id)), ConsistentRead=True)
        item = response.get("Item")
        return self._record(from_item(item)) if item else None

    def thread_exists(self, thread_id: str) -> bool:
        response = self._call(
            "query",
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": _PK},
            ExpressionAttributeValues={":pk": {"S": thread_key(thread_id)}},
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

    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        values: dict[str, Any] = {
            ":open": {"S": QuestionStatus.OPEN.value},
            ":status": {"S": decision.status.value},
            ":answer": to_attribute(decision.answer),
            ":answer_id": {"S": decision.answer_id},
            ":by": to_attribute(decision.answered_by),
            ":at": {"S": format_rfc3339(now)},
        }
        update = (
            "SET #status = :status, outcome = :status, answer = :answer, answer_id = :answer_id, "
            "answered_by = :by, decided_at = :at"
        )
        names = {"#status": "status"}
        if self._closed_ttl is not None:
            update += ", #ttl = :ttl"
            names["#ttl"] = QUESTION_TABLE.ttl_attribute
            values[":ttl"] = {"N": str(int((now + self._closed_ttl).timestamp()))}
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=update + " REMOVE announce_due, open_since",
            ConditionExpression="#status = :open",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )
        if item is None:
            if won:  # pragma: no cover - ALL_NEW always returns attributes
                raise LedgerUnavailableError("update returned no attributes; SQS will retry")
            raise KeyError(f"question {question_id} on thread {thread_id} is not in the ledger")
        return DecideResult(won=won, record=self._record(item))

    def mark_resumed(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        decided = {f":{status.value}": {"S": status.value} for status in DECIDED}
        won, _ = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression="SET #status = :resumed, resumed_at = :at",
            ConditionExpression=f"#status IN ({', '.join(decided)})",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":resumed": {"S": QuestionStatus.RESUMED.value},
                ":at": {"S": format_rfc3339(now)},
                **decided,
            },
        )
        return won

    def mark_announced(self, thread_id: str, question_id: str) -> None:
        self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression="REMOVE announce_due",
            ConditionExpression="attribute_exists(#pk)",
            ExpressionAttributeNames={"#pk": _PK},
        )

    def overdue(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        return [
            self._record(item)
            for item in self._query(
                limit=limit,
                IndexName=_BY_STATUS,
                KeyConditionExpression="#status = :open AND expires_at <= :now",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={
                    ":open": {"S": QuestionStatus.OPEN.value},
                    ":now": {"S": format_rfc3339(now)},
                },
            )
        ]

    def oldest_open(self) -> QuestionRecord | None:
        items = list(
            self._query(
                limit=1,
                IndexName=_OPEN_BY_AGE,
                KeyConditionExpression="open_since = :open",
                ExpressionAttributeValues={":open": {"S": _OPEN}},
            )
        )
        return self._record(items[0]) if items else None

    def announce_due(self, *, limit: int) -> list[QuestionRecord]:
        return [
            self._record(item)
            for item in self._query(
                limit=limit,
                IndexName=_BY_ANNOUNCE_DUE,
                KeyConditionExpression="announce_due = :due",
                ExpressionAttributeValues={":due": {"S": _DUE}},
            )
        ]

    def begin_start(self, thread_id: str, start_id: str, *, marker: str | None, now: datetime) -> StartRecord:
        attributes = {"state": "running", "marker": marker, "started_at": format_rfc3339(now)}
        created, old = self._conditional(
            "put_item",
            Item={**self._key(thread_id, _START_PREFIX + start_id), **to_item(attributes)},
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": _PK},
        )
        if created:
            return StartRecord(thread_id, start_id, "running", marker, created=True)
        if old is None:  # pragma: no cover
            raise LedgerUnavailableError(f"start {start_id} vanished while being recorded; SQS will retry")
        return StartRecord(
            thread_id,
            start_id,
            str(old.get("state")),
            old.get("marker"),
            created=False,
            question_ids=tuple(old.get("question_ids") or ()),
        )

    def finish_start(
        self, thread_id: str, start_id: str, question_ids: tuple[str, ...], *, now: datetime, state: str = "done"
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
