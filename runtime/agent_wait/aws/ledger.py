"""`DynamoDbLedger`: the question ledger on one DynamoDB table (see `agent_wait.contract.schema.QUESTION_TABLE`).

This module holds the ledger's core (`agent_wait.ledger.Ledger`: open, read, decide, mark resumed and announced) and
the reads it serves from the indexes. Each capability it declares is a class of its own, on the same table
(`agent_wait.aws._ledger_table.LedgerTable`): the sharded indexes (`_ledger_indexes`), the follow-up and notice writes
(`_ledger_followups`), starts and failures (`_ledger_failures`), the thread's lease (`_ledger_leases`) and a door's
decision handed over in one write (`_ledger_hand_overs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from agent_wait.aws._ledger_failures import StartsAndFailures
from agent_wait.aws._ledger_grants import GrantWrites
from agent_wait.aws._ledger_hand_overs import HandOverWrites
from agent_wait.aws._ledger_indexes import BY_DUE, BY_STATUS, OPEN_BY_AGE, ShardedIndexes, decode_cursor
from agent_wait.aws._ledger_leases import LeaseWrites
from agent_wait.aws._ledger_table import DUE, OPEN, OPEN_COUNT_KEY, PK, SK, STATUS_SHARD, THREAD_ITEM
from agent_wait.aws.items import from_item, to_item
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus, index_shards_or_env, question_key, shard_key, thread_key
from agent_wait.errors import QuestionNotFoundError
from agent_wait.ledger import FullLedger, HandOverLedger, NoteLedger, RefusalLedger
from agent_wait.ledger.records import (
    DECIDED,
    PROGRESS_ATTRIBUTES,
    DecideResult,
    Decision,
    LedgerUnavailableError,
    OpenCount,
    OpenResult,
    QuestionPage,
    QuestionRecord,
    ThreadFailure,
)

__all__ = ("DynamoDbLedger",)

_OPEN_COUNT_ITEM = {PK: {"S": OPEN_COUNT_KEY[0]}, SK: {"S": OPEN_COUNT_KEY[1]}}


class DynamoDbLedger(
    ShardedIndexes,
    HandOverWrites,
    StartsAndFailures,
    LeaseWrites,
    GrantWrites,
    FullLedger,
    NoteLedger,
    RefusalLedger,
    HandOverLedger,
):
    """The ledger on DynamoDB: every transition is one conditional write.

    Args:
        table_name: the question table (shape: `agent_wait.contract.schema.QUESTION_TABLE`; GSIs `by_status`,
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
        index_shards = index_shards_or_env(index_shards, owner="DynamoDbLedger")
        if client is None:
            import boto3

            client = boto3.client("dynamodb", region_name=region_name)
        self.table_name = table_name
        self.index_shards = index_shards
        """Shards of each shared index key value (`agent_wait.contract.schema.shard_key`)."""
        self._client = client
        self._closed_ttl = closed_ttl
        self._legacy: dict[str, int] = {}
        """Indexes this table lacks (an upgrade in progress), each with the predecessor queried instead (1 = first)."""

    # -- Ledger --------------------------------------------------------------------------------------

    def open(
        self,
        envelope: WaitEnvelope,
        *,
        now: datetime,
        unannounced: bool = True,
        trace: Mapping[str, str] | None = None,
    ) -> OpenResult:
        asked_at = format_rfc3339(now)
        record = QuestionRecord(
            envelope=envelope, status=QuestionStatus.OPEN, asked_at=asked_at, trace=dict(trace) if trace else None
        )
        # A lean row (under 1 KB for the refund example, decided and resumed): no null attribute, nothing its keys
        # say, no progress attributes until the first follow-up (absent reads as the default).
        attributes = {
            key: value
            for key, value in record.to_lean_item().items()
            if key not in PROGRESS_ATTRIBUTES and key != "notices"  # a string set, written only by owe_notices
        }
        # Sparse index keys: open, and due at the time it has once announced (its first reminder, escalation step
        # or deadline), so a successful announcement moves no index key. Put announced (`unannounced=False`), it
        # costs no write at all; else it only removes the marker. A failed one makes the row due at once
        # (`AskedQuestions`: `mark_unannounced`, or `advance`); a crash before it is redelivered by SQS.
        question_id = envelope.question_id
        due_at = record.next_due(announced=True)
        markers: dict[str, Any] = {
            "open_since": shard_key(OPEN, question_id, self.index_shards),
            STATUS_SHARD: shard_key(QuestionStatus.OPEN.value, question_id, self.index_shards),
        }
        if unannounced:
            markers["announce_due"] = DUE
        if due_at is not None:
            markers |= {"due": shard_key(DUE, question_id, self.index_shards), "due_at": due_at}
        item = {**self._key(envelope.thread_id, question_key(question_id)), **to_item(attributes | markers)}
        created, old = self._conditional(
            "put_item",
            Item=item,
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": PK},
        )
        if created:
            return OpenResult(QuestionRecord.from_item(from_item(item)), created=True)
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
        thread_id = self._thread_of(question_id)
        return self.get(thread_id, question_id) if thread_id is not None else None

    def thread_exists(self, thread_id: str) -> bool:
        # Starts and questions only: every message takes the thread item's lease before it is checked.
        response = self._call(
            "query",
            KeyConditionExpression="#pk = :pk AND #sk < :thread_item",
            ExpressionAttributeNames={"#pk": PK, "#sk": SK},
            ExpressionAttributeValues={":pk": {"S": thread_key(thread_id)}, ":thread_item": {"S": THREAD_ITEM}},
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
                ExpressionAttributeNames={"#pk": PK, "#sk": SK},
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
        state = decode_cursor(cursor) if cursor is not None else {}
        return self._with_fallback(BY_STATUS, lambda: self._page(status, limit, state, due_before, tag))

    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        request = self._decide_request(thread_id, question_id, decision, now)
        won, item = self._conditional("update_item", ReturnValues="ALL_NEW", **request)
        if item is None:
            if won:  # pragma: no cover - ALL_NEW always returns attributes
                raise LedgerUnavailableError("update returned no attributes; SQS will retry")
            raise QuestionNotFoundError(thread_id, question_id, table=self.table_name)
        return DecideResult(won=won, record=self._record(item))

    def mark_resumed(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        decided = {f":{status.value}": {"S": status.value} for status in DECIDED}
        # In place: `status_shard` stays where the decision put it (`<outcome>#<shard>`), so the status index is not
        # written (a key change would be a delete and a put); `page` filters its rows by status.
        update = "SET #status = :resumed, resumed_at = :at"
        request: dict[str, Any] = {
            "Key": self._key(thread_id, question_key(question_id)),
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {
                ":resumed": {"S": QuestionStatus.RESUMED.value},
                ":at": {"S": format_rfc3339(now)},
                **decided,
            },
        }
        is_decided = f"#status IN ({', '.join(decided)})"
        # Due no more (a door's decision was waiting for its hand-over), unless it owes notices: then the sweep
        # tells them and takes the due time off.
        won, old = self._conditional(
            "update_item",
            UpdateExpression=f"{update} REMOVE #due, due_at",
            ConditionExpression=f"{is_decided} AND attribute_not_exists(notices)",
            **{**request, "ExpressionAttributeNames": {"#status": "status", "#due": "due"}},
        )
        if won or old is None or old.get("status") not in {s.value for s in DECIDED}:
            return won  # resumed already, or never decided
        # Owes notices (or a row from before lean rows holds `notices: null`): the due time stays.
        won, _ = self._conditional("update_item", UpdateExpression=update, ConditionExpression=is_decided, **request)
        return won

    def mark_announced(self, thread_id: str, question_id: str, *, due_at: str | None) -> None:
        key = self._key(thread_id, question_key(question_id))
        values: dict[str, Any] = {":open": {"S": QuestionStatus.OPEN.value}}
        unannounced = "#status = :open AND attribute_exists(announce_due)"
        # Already due then (it was put so): only the marker goes, and no index key moves.
        if due_at is None:
            same = "attribute_not_exists(due_at)"
        else:
            same, values[":due_at"] = "due_at = :due_at", {"S": due_at}
        done, old = self._conditional(
            "update_item",
            Key=key,
            UpdateExpression="REMOVE announce_due",
            ConditionExpression=f"{unannounced} AND {same}",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=values,
        )
        if done or old is None or old.get("status") != QuestionStatus.OPEN.value or "announce_due" not in old:
            return  # announced already (a redelivery), or decided meanwhile (never due again)
        # Made due at once after an announcement failed (or a row from before due times were put): set it again.
        if due_at is None:
            update = "REMOVE announce_due, #due, due_at"
        else:
            update = "SET #due = :due, due_at = :due_at REMOVE announce_due"
            values[":due"] = self._shard(DUE, question_id)
        self._conditional(
            "update_item",
            Key=key,
            UpdateExpression=update,
            ConditionExpression=unannounced,
            ExpressionAttributeNames={"#status": "status", "#due": "due"},
            ExpressionAttributeValues=values,
        )

    # -- what the indexes serve (`ShardedIndexes`) ------------------------------------------------------

    def due(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        return self._with_fallback(BY_DUE, lambda: self._due(format_rfc3339(now), limit))

    def oldest_open(self) -> QuestionRecord | None:
        return self._with_fallback(OPEN_BY_AGE, self._oldest_open)

    def count_open(self) -> int:
        return self._with_fallback(OPEN_BY_AGE, self._count_open)

    # -- the sweep's last count of open questions, on an item of its own -----------------------------------------

    def open_count(self) -> OpenCount | None:
        # Eventually consistent (half a unit): a stale read only loses its claim's compare-and-set.
        item = self._call("get_item", Key=_OPEN_COUNT_ITEM).get("Item")
        if not item:
            return None
        kept = from_item(item)
        counted = kept.get("open_questions")
        return OpenCount(
            version=int(kept["version"]),
            claimed_at=str(kept["claimed_at"]),
            open_questions=None if counted is None else int(counted),
            counted_at=kept.get("counted_at"),
        )

    def claim_open_count(self, *, now: datetime, last: OpenCount | None) -> OpenCount | None:
        version = last.version if last else 0
        claimed_at = format_rfc3339(now)
        won, _ = self._conditional(
            "update_item",
            Key=_OPEN_COUNT_ITEM,
            UpdateExpression="SET #version = :next, claimed_at = :at",
            ConditionExpression="attribute_not_exists(#version)" if last is None else "#version = :seen",
            ExpressionAttributeNames={"#version": "version"},
            ExpressionAttributeValues={
                ":next": {"N": str(version + 1)},
                ":at": {"S": claimed_at},
                **({} if last is None else {":seen": {"N": str(version)}}),
            },
        )
        if not won:
            return None
        kept = {"open_questions": last.open_questions, "counted_at": last.counted_at} if last else {}
        return OpenCount(version=version + 1, claimed_at=claimed_at, **kept)

    def record_open_count(self, claim: OpenCount, open_questions: int) -> bool:
        won, _ = self._conditional(
            "update_item",
            Key=_OPEN_COUNT_ITEM,
            UpdateExpression="SET open_questions = :open, counted_at = :at",
            ConditionExpression="#version = :claim",
            ExpressionAttributeNames={"#version": "version"},
            ExpressionAttributeValues={
                ":open": {"N": str(open_questions)},
                ":at": {"S": claim.claimed_at},
                ":claim": {"N": str(claim.version)},
            },
        )
        return won

    def failures(self, *, limit: int = 100) -> list[ThreadFailure]:
        return self._with_fallback(BY_STATUS, lambda: self._failures(limit))
