"""`DynamoDbLedger`: the question ledger on one DynamoDB table (see `agent_wait.contract.schema.QUESTION_TABLE`).

Long on purpose: one backend declares every capability of the ledger (`agent_wait.ledger.base`), each a few
conditional writes on the same items; reading the sharded indexes is apart (`agent_wait.aws._ledger_indexes`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from agent_wait.aws._ledger_indexes import (
    BY_DUE,
    BY_QUESTION,
    BY_STATUS,
    DUE,
    OPEN,
    OPEN_BY_AGE,
    START_PREFIX,
    STATUS_SHARD,
    ShardedIndexes,
    decode_cursor,
)
from agent_wait.aws.errors import (
    ServiceError,
    TransportError,
    condition_failed_item,
    error_code,
    error_message,
    is_condition_failed,
)
from agent_wait.aws.items import from_item, paginate, to_attribute, to_item
from agent_wait.common.times import NEVER, format_rfc3339
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import (
    QUESTION_TABLE,
    QuestionStatus,
    index_shards_or_env,
    question_key,
    shard_key,
    thread_key,
)
from agent_wait.errors import EnvelopeError, LedgerIndexMissingError, LedgerRejectedError, QuestionNotFoundError
from agent_wait.ledger import FullLedger, NoteLedger
from agent_wait.ledger.records import (
    CREATED_NOTICE,
    DECIDED,
    PROGRESS_ATTRIBUTES,
    AdvanceResult,
    DecideResult,
    Decision,
    FailureKind,
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
from agent_wait.policy.extension import Extended

__all__ = ("DynamoDbLedger",)

_PK, _SK = QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key
_BY_QUESTION = BY_QUESTION.name
_THREAD_ITEM = "~THREAD"
"""The thread's own item: its lease and its failure. `~` sorts after every `START#` and `WAIT#` key, so
"does this thread have starts or questions" is one query for keys below it."""
_CLOSED_REMOVES = "open_since, #due, due_at"
"""What a decision removes: a decided question is neither open nor due (unless handed over). It keeps
`announce_due`: a question decided before its `wait.created` went out still owes it (`owe_notices` takes it)."""
_HANDED_OVER_REMOVES = "open_since"
"""What a door's decision removes: it stays due, for its hand-over (`Decision.hand_over_at`)."""


class DynamoDbLedger(ShardedIndexes, FullLedger, NoteLedger):
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

    # -- I/O helpers ---------------------------------------------------------------------------------

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            if operation == "batch_get_item":  # names its tables in RequestItems
                return self._client.batch_get_item(**kwargs)
            return getattr(self._client, operation)(TableName=self.table_name, **kwargs)
        except TransportError as exc:  # DynamoDB never answered (connection, timeout, credentials)
            raise LedgerUnavailableError(
                f"question table {self.table_name}: {operation} got no answer ({type(exc).__name__}); SQS will retry",
                table=self.table_name,
                code=type(exc).__name__,
            ) from exc
        except ServiceError as exc:
            if is_condition_failed(exc):
                raise
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
        return {_PK: {"S": thread_key(thread_id)}, _SK: {"S": sort_key}}

    def _query(self, limit: int | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        for item in paginate(lambda **page: self._call("query", **page), kwargs, limit=limit):
            yield from_item(item)

    def _record(self, item: dict[str, Any]) -> QuestionRecord:
        return QuestionRecord.from_item(item)

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
            ExpressionAttributeNames={"#pk": _PK},
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
        state = decode_cursor(cursor) if cursor is not None else {}
        return self._with_fallback(BY_STATUS, lambda: self._page(status, limit, state, due_before, tag))

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

    def decide(self, thread_id: str, question_id: str, decision: Decision, *, now: datetime) -> DecideResult:
        sets, names, values, removes = self._decision_update(question_id, decision, now)
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=f"SET {', '.join(sets)} REMOVE {removes}",
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

    def mark_unannounced(self, thread_id: str, question_id: str, *, now: datetime) -> bool:
        # Due at once, keeping the shard the row is due under (a row with no follow-ups and no deadline gets one).
        done, _ = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression="SET announce_due = :marker, #due = :due, due_at = :now",
            ConditionExpression="#status = :open AND attribute_not_exists(announce_due)",
            ExpressionAttributeNames={"#status": "status", "#due": "due"},
            ExpressionAttributeValues={
                ":marker": {"S": DUE},
                ":due": self._shard(DUE, question_id),
                ":now": {"S": format_rfc3339(now)},
                ":open": {"S": QuestionStatus.OPEN.value},
            },
        )
        return done

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
            sets, names, values, removed = self._decision_update(question_id, decision, now)
            removes = [removed]
        else:
            sets, names, values = [], {"#status": "status", "#due": "due"}, {}
            removes = []
            if due_at is None:
                removes.append("#due, due_at")
            else:
                sets += ["#due = :due", "due_at = :due_at"]
                values |= {":due": self._shard(DUE, question_id), ":due_at": {"S": due_at}}
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

    def extend(
        self, thread_id: str, question_id: str, extended: Extended, *, expected_version: int, due_at: str | None
    ) -> AdvanceResult:
        names = {"#status": "status", "#version": "version", "#expires": "expires_at", "#due": "due"}
        values: dict[str, Any] = {
            ":open": {"S": QuestionStatus.OPEN.value},
            ":expected": {"N": str(expected_version)},
            ":next": {"N": str(expected_version + 1)},
            ":previous": {"S": extended.previous},
            ":until": {"S": extended.until},
            ":moved": {"L": [to_attribute(extended.to_item())]},
            ":none": {"L": []},
        }
        sets = [
            "#expires = :until",
            "#version = :next",
            "extensions = list_append(if_not_exists(extensions, :none), :moved)",
        ]
        if due_at is None:
            due = " REMOVE #due, due_at"
        else:
            sets += ["#due = :due", "due_at = :due_at"]
            values |= {":due": self._shard(DUE, question_id), ":due_at": {"S": due_at}}
            due = ""
        # A row opened before progress existed has no version: it is at version 0.
        version = (
            "(attribute_not_exists(#version) OR #version = :expected)"
            if expected_version == 0
            else "#version = :expected"
        )
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=f"SET {', '.join(sets)}{due}",
            ConditionExpression=f"#status = :open AND {version} AND #expires = :previous",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )
        return AdvanceResult(won, self._record(item) if item else None)

    def owe_notices(self, thread_id: str, question_id: str, notices: Sequence[str], *, now: datetime) -> None:
        if not notices:
            return
        # A string set: adding what is owed and taking off what went out commute, whoever writes first. Owing
        # `created` by name takes the unannounced mark off: the name says it from now on.
        removes = " REMOVE announce_due" if CREATED_NOTICE in notices else ""
        self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression=f"ADD notices :owed SET #due = :due, due_at = :now{removes}",
            ConditionExpression="attribute_exists(#pk)",
            ExpressionAttributeNames={"#due": "due", "#pk": _PK},
            ExpressionAttributeValues={
                ":owed": {"SS": sorted(set(notices))},
                ":due": self._shard(DUE, question_id),
                ":now": {"S": format_rfc3339(now)},
            },
        )

    def told(self, thread_id: str, question_id: str, notices: Sequence[str], *, due_at: str | None) -> bool:
        if not notices:
            return False
        key = self._key(thread_id, question_key(question_id))
        told = {"SS": sorted(set(notices))}
        # Owing exactly these: take them off and set the due time in one write.
        due = "REMOVE #due, due_at" if due_at is None else "SET #due = :due, due_at = :due_at"
        values: dict[str, Any] = {":told": told}
        if due_at is not None:
            values |= {":due": self._shard(DUE, question_id), ":due_at": {"S": due_at}}
        done, _ = self._conditional(
            "update_item",
            Key=key,
            UpdateExpression=f"DELETE notices :told {due}",
            ConditionExpression="notices = :told",
            ExpressionAttributeNames={"#due": "due"},
            ExpressionAttributeValues=values,
        )
        if done:
            return True
        # Owing more (added meanwhile): take off only these, and stay due for the rest. Owing none of them (another
        # run told them): nothing to take off.
        names = sorted(set(notices))
        owes_one = " OR ".join(f"contains(notices, :n{n})" for n in range(len(names)))
        done, _ = self._conditional(
            "update_item",
            Key=key,
            UpdateExpression="DELETE notices :told",
            ConditionExpression=owes_one,
            ExpressionAttributeValues={":told": told, **{f":n{n}": {"S": name} for n, name in enumerate(names)}},
        )
        return done

    def due(self, now: datetime, *, limit: int) -> list[QuestionRecord]:
        return self._with_fallback(BY_DUE, lambda: self._due(format_rfc3339(now), limit))

    def oldest_open(self) -> QuestionRecord | None:
        return self._with_fallback(OPEN_BY_AGE, self._oldest_open)

    def count_open(self) -> int:
        return self._with_fallback(OPEN_BY_AGE, self._count_open)

    def begin_start(self, thread_id: str, start_id: str, *, marker: str | None, now: datetime) -> StartRecord:
        attributes = {"state": "running", "marker": marker, "started_at": format_rfc3339(now)}
        created, old = self._conditional(
            "put_item",
            Item={**self._key(thread_id, START_PREFIX + start_id), **to_item(attributes)},
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": _PK},
        )
        if created:
            return StartRecord(thread_id, start_id, StartState.RUNNING, marker, created=True)
        if old is None:  # pragma: no cover
            raise LedgerUnavailableError(f"start {start_id} vanished while being recorded; SQS will retry")
        return _start_record(thread_id, start_id, old)

    def start_record(self, thread_id: str, start_id: str) -> StartRecord | None:
        response = self._call("get_item", Key=self._key(thread_id, START_PREFIX + start_id), ConsistentRead=True)
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
            Key=self._key(thread_id, START_PREFIX + start_id),
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
        # Encoded before anything is written: recording a failure must never fail on the values it records, or
        # the thread would be held with its start still `running` and nothing to retry.
        try:
            stored_input = to_attribute(start_input)
        except (EnvelopeError, ArithmeticError):
            stored_input = {"NULL": True}
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
                UpdateExpression=f"SET #status = :failed, {STATUS_SHARD} = :shard, failure = :failure",
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
                Key=self._key(failure.thread_id, START_PREFIX + failure.target_id),
                UpdateExpression=(
                    "SET #state = :failed, #status = :failed, #shard = :shard, expires_at = :never, "
                    "failure = :failure, #input = :input"
                ),
                ExpressionAttributeNames={
                    "#state": "state",
                    "#status": "status",
                    "#shard": STATUS_SHARD,
                    "#input": "input",
                },
                ExpressionAttributeValues={
                    **values,
                    ":shard": self._shard("failed", failure.target_id),
                    ":never": {"S": NEVER},
                    ":input": stored_input,
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
                UpdateExpression=f"SET #status = outcome, {STATUS_SHARD} = :shard, retry_id = :retry REMOVE failure",
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
                Key=self._key(failure.thread_id, START_PREFIX + failure.target_id),
                UpdateExpression=(
                    f"SET #state = :running, retry_id = :retry REMOVE #status, {STATUS_SHARD}, expires_at, failure"
                ),
                ConditionExpression="#state = :failed",
                ExpressionAttributeNames={"#state": "state", "#status": "status"},
                ExpressionAttributeValues={**values, ":running": {"S": "running"}},
            )
        return won or bool(item and item.get("retry_id") == retry_id)

    def finished_start(self, thread_id: str) -> str | None:
        response = self._call(
            "get_item",
            Key=self._key(thread_id, _THREAD_ITEM),
            ConsistentRead=True,
            ProjectionExpression="finished_start",
        )
        finished = from_item(response.get("Item") or {}).get("finished_start")
        return str(finished) if finished else None

    def clear_failure(self, thread_id: str) -> None:
        self._call("update_item", Key=self._key(thread_id, _THREAD_ITEM), UpdateExpression="REMOVE failure")

    def failures(self, *, limit: int = 100) -> list[ThreadFailure]:
        return self._with_fallback(BY_STATUS, lambda: self._failures(limit))

    # -- one thread at a time ---------------------------------------------------------------------------

    def acquire_lease(
        self, thread_id: str, holder: str, *, now: datetime, seconds: float, runs_agent: bool = True
    ) -> ThreadLease | None:
        until = now.timestamp() + seconds
        values: dict[str, dict[str, Any]] = {
            ":holder": {"S": holder},
            ":until": {"N": repr(round(until, 3))},
            ":now": {"N": repr(round(now.timestamp(), 3))},
        }
        # The note is taken: a delivery that dies before its release must leave none behind. `lease_runs_agent` says
        # whether this holder runs the agent, in the same write.
        if runs_agent:
            update = "SET lease_holder = :holder, lease_until = :until, lease_runs_agent = :runs REMOVE lease_note"
            values[":runs"] = {"BOOL": True}
            # Free, expired (its holder died), or already ours.
            condition = "attribute_not_exists(lease_holder) OR lease_until <= :now OR lease_holder = :holder"
        else:
            update = "SET lease_holder = :holder, lease_until = :until REMOVE lease_note, lease_runs_agent"
            # Free, already ours, or expired and its holder never ran the agent (one that died running it may have
            # left the thread's open questions stale: only a holder that runs the agent takes that over).
            condition = (
                "attribute_not_exists(lease_holder) OR lease_holder = :holder"
                " OR (lease_until <= :now AND attribute_not_exists(lease_runs_agent))"
            )
        won, item = self._conditional(
            "update_item",
            Key=self._key(thread_id, _THREAD_ITEM),
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_OLD",  # what the lease write leaves alone, and the note it removes
        )
        if not won:
            return None
        failure = (item or {}).get("failure")
        recorded = (item or {}).get("open_questions")
        handed_over = (item or {}).get("handed_over")
        # A note counts only if no lease was taken since the release that left it: every lease write sets
        # `lease_until` (ours and an earlier agent-wait's, which neither reads nor removes notes), and only a
        # release that leaves a note sets it to `_NOTED`.
        note = (item or {}).get("lease_note") if (item or {}).get("lease_until") == _NOTED else None
        return ThreadLease(
            thread_id,
            holder,
            until,
            ThreadFailure.from_item(thread_id, failure) if failure else None,
            tuple(str(q) for q in recorded) if isinstance(recorded, list) else None,
            note if isinstance(note, str) else None,
            tuple(str(q) for q in handed_over) if isinstance(handed_over, list) else (),
            str(finished) if (finished := (item or {}).get("finished_start")) else None,
        )

    def release_lease(
        self,
        thread_id: str,
        holder: str,
        *,
        open_questions: Sequence[str] | None = None,
        note: str | None = None,
        handed_over: Sequence[str] | None = None,
        finished_start: str | None = None,
    ) -> None:
        values: dict[str, Any] = {":holder": {"S": holder}}
        sets, removes = [], ["lease_holder", "lease_until", "lease_runs_agent"]
        if open_questions is not None:  # in the write the release makes anyway: no extra call
            sets.append("open_questions = :open")
            values[":open"] = to_attribute(list(open_questions))
        if finished_start is not None:  # the start's own record keeps `running`: this write finishes it
            sets.append("finished_start = :finished")
            values[":finished"] = {"S": finished_start}
        if handed_over:
            sets.append("handed_over = :handed")
            values[":handed"] = to_attribute(list(handed_over))
        elif handed_over is not None:
            removes.append("handed_over")
        if note is not None:
            sets += ["lease_note = :note", "lease_until = :noted"]
            values |= {":note": {"S": note}, ":noted": {"N": str(_NOTED)}}
            removes.remove("lease_until")
        update = f"REMOVE {', '.join(removes)}"
        if sets:
            update = f"SET {', '.join(sets)} {update}"
        self._conditional(
            "update_item",
            Key=self._key(thread_id, _THREAD_ITEM),
            UpdateExpression=update,
            ConditionExpression="lease_holder = :holder",
            ExpressionAttributeValues=values,
        )


_NOTED = 0
"""`lease_until` as a release that leaves a note sets it: long past, so the lease is free, and what any later lease
write replaces."""


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
