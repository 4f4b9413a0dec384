"""The question table as `DynamoDbLedger`'s parts call it: one request with its failures turned into the ledger's
errors, a conditional write's winner or loser, the keys of a thread's items, and what a decision writes on a row.

`DynamoDbLedger` (`agent_wait.aws.ledger`) is this table with the ledger's capabilities, each a class of its own:
the sharded indexes (`_ledger_indexes`), the follow-up and notice writes (`_ledger_followups`), starts and failures
(`_ledger_failures`) and the thread's lease (`_ledger_leases`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from agent_wait.aws.errors import (
    ServiceError,
    TransportError,
    condition_failed_item,
    error_code,
    error_message,
    is_condition_failed,
)
from agent_wait.aws.items import from_item, paginate, to_attribute
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QUESTION_TABLE, QuestionStatus, question_key, shard_key, thread_key
from agent_wait.errors import LedgerIndexMissingError, LedgerRejectedError
from agent_wait.ledger.records import Decision, LedgerUnavailableError, QuestionRecord

__all__ = (
    "DUE",
    "OPEN",
    "OPEN_COUNT_KEY",
    "PK",
    "SK",
    "START_PREFIX",
    "STATUS_SHARD",
    "THREAD_ITEM",
    "TRANSACTION_CANCELLED",
    "LedgerTable",
)

PK, SK = QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key
STATUS_SHARD = QUESTION_TABLE.indexes[0].partition_key
"""The status index's key on a row: `<status>#<shard>`."""
START_PREFIX = "START#"
DUE = "due"
"""The value of the sparse key `announce_due` (only its presence counts), and of `due` before it is sharded."""
OPEN = "open"
THREAD_ITEM = "~THREAD"
"""The thread's own item: its lease and its failure. `~` sorts after every `START#` and `WAIT#` key, so
"does this thread have starts or questions" is one query for keys below it."""
OPEN_COUNT_KEY = ("~SWEEP", "~OPEN_COUNT")
"""(pk, sk) of the sweep's own item: its last count of open questions and the latest claim to count (`open_count`).
No thread's key (`THREAD#...`), and in no index."""
TRANSACTION_CANCELLED = "TransactionCanceledException"
"""DynamoDB's code for a transaction that wrote nothing; its `CancellationReasons` say why, item by item."""
_CLOSED_REMOVES = "open_since, #due, due_at"
"""What a decision removes: a decided question is neither open nor due (unless handed over). It keeps
`announce_due`: a question decided before its `wait.created` went out still owes it (`owe_notices` takes it)."""
_HANDED_OVER_REMOVES = "open_since"
"""What a door's decision removes: it stays due, for its hand-over (`Decision.hand_over_at`)."""


class LedgerTable:
    """The calls every part of `DynamoDbLedger` makes on the question table (`DynamoDbLedger.__init__` sets the
    attributes)."""

    table_name: str
    index_shards: int
    """Shards of each shared index key value (`agent_wait.contract.schema.shard_key`)."""
    _client: Any
    _closed_ttl: timedelta | None
    _legacy: dict[str, int]
    """Indexes this table lacks (an upgrade in progress), each with the predecessor queried instead (1 = first)."""

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            if operation in ("batch_get_item", "transact_write_items"):  # each names its table in its items
                return getattr(self._client, operation)(**kwargs)
            return getattr(self._client, operation)(TableName=self.table_name, **kwargs)
        except TransportError as exc:  # DynamoDB never answered (connection, timeout, credentials)
            raise LedgerUnavailableError(
                f"question table {self.table_name}: {operation} got no answer ({type(exc).__name__}); SQS will retry",
                table=self.table_name,
                code=type(exc).__name__,
            ) from exc
        except ServiceError as exc:
            if is_condition_failed(exc) or error_code(exc) == TRANSACTION_CANCELLED:
                raise  # a lost race: the caller reads who won (a transaction's reasons, item by item)
            code = error_code(exc)
            where = f"question table {self.table_name}: {operation}"
            index = kwargs.get("IndexName")
            text = error_message(exc)
            # DynamoDB answers a query on a missing index with ValidationException, moto with
            # ResourceNotFoundException; both name the index. An index of that name on other keys (the unsharded
            # `by_status` of a table not yet upgraded) "missed key schema element": for the query, it is missing too.
            missing = "index" in text.lower() or "key schema element" in text.lower()
            if index and code in ("ValidationException", "ResourceNotFoundException") and missing:
                raise LedgerIndexMissingError(
                    f"{where} needs index {index!r} on its keys, which the table does not have; deploy the table shape "
                    "in agent_wait.contract.schema.QUESTION_TABLE (the AgentWait construct creates it)",
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
        return {PK: {"S": thread_key(thread_id)}, SK: {"S": sort_key}}

    def _query(self, limit: int | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        for item in paginate(lambda **page: self._call("query", **page), kwargs, limit=limit):
            yield from_item(item)

    def _record(self, item: dict[str, Any]) -> QuestionRecord:
        return QuestionRecord.from_item(item)

    def _shard(self, value: str, item_id: str) -> dict[str, str]:
        return {"S": shard_key(value, item_id, self.index_shards)}

    def _decide_request(self, thread_id: str, question_id: str, decision: Decision, now: datetime) -> dict[str, Any]:
        """The conditional update that records `decision` on the row while it is open (`decide`, and a door's
        hand-over)."""
        sets, names, values, removes = self._decision_update(question_id, decision, now)
        return {
            "Key": self._key(thread_id, question_key(question_id)),
            "UpdateExpression": f"SET {', '.join(sets)} REMOVE {removes}",
            "ConditionExpression": "#status = :open",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {**values, ":open": {"S": QuestionStatus.OPEN.value}},
        }

    def _decision_update(
        self, question_id: str, decision: Decision, now: datetime
    ) -> tuple[list[str], dict[str, str], dict[str, Any], str]:
        """The SET clauses, names, values and REMOVE list that record `decision` (shared by `decide` and `advance`).

        The status index key (`status_shard`) moves to the outcome here, once: `mark_resumed` leaves it there.
        """
        values: dict[str, Any] = {
            ":status": {"S": decision.status.value},
            ":status_shard": self._shard(decision.status.value, question_id),
            ":answer_id": {"S": decision.answer_id},
            ":at": {"S": format_rfc3339(now)},
        }
        sets = [
            "#status = :status",
            f"{STATUS_SHARD} = :status_shard",
            "outcome = :status",
            "answer_id = :answer_id",
            "decided_at = :at",
        ]
        removes = [_CLOSED_REMOVES]
        names = {"#status": "status", "#due": "due"}
        # A lean row: what is unset is left off (absent reads back as None), never stored as NULL.
        optional = {
            "answer": decision.answer,
            "answered_by": decision.answered_by,
            "sender": decision.sender,
            "via": decision.via,
            "claimed_by": decision.claimed_by,
            "reason": decision.reason,
            "passkey": dict(decision.passkey) if decision.passkey else None,
        }
        for name, value in optional.items():
            if value is not None:
                sets.append(f"{name} = :{name}")
                values[f":{name}"] = to_attribute(value)
        if decision.hand_over_at is not None:
            sets += ["#due = :due", "due_at = :due_at"]
            values |= {":due": self._shard(DUE, question_id), ":due_at": {"S": decision.hand_over_at}}
            removes = [_HANDED_OVER_REMOVES]
        if self._closed_ttl is not None:
            sets.append("#ttl = :ttl")
            names["#ttl"] = QUESTION_TABLE.ttl_attribute
            values[":ttl"] = {"N": str(int((now + self._closed_ttl).timestamp()))}
        return sets, names, values, ", ".join(removes)
