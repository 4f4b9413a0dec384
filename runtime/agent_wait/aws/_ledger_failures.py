"""What `DynamoDbLedger` writes for starts and failed threads (`StartLedger`, `FailureLedger`): a start applied
once (its `START#` item), a failure recorded on the thread, then on the row or the start it failed, and a retry
applied once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_wait.aws._ledger_table import PK, START_PREFIX, STATUS_SHARD, THREAD_ITEM, LedgerTable
from agent_wait.aws.items import from_item, to_attribute, to_item
from agent_wait.common.times import NEVER, format_rfc3339
from agent_wait.contract.schema import QuestionStatus, question_key
from agent_wait.errors import EnvelopeError, QuestionNotFoundError
from agent_wait.ledger.records import (
    FailureKind,
    LedgerUnavailableError,
    QuestionRecord,
    StartRecord,
    StartState,
    ThreadFailure,
)

__all__ = ("StartsAndFailures",)


class StartsAndFailures(LedgerTable):
    """`StartLedger`'s and `FailureLedger`'s writes on the question table."""

    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:  # pragma: no cover - the ledger's
        raise NotImplementedError

    def begin_start(self, thread_id: str, start_id: str, *, marker: str | None, now: datetime) -> StartRecord:
        attributes = {"state": "running", "marker": marker, "started_at": format_rfc3339(now)}
        created, old = self._conditional(
            "put_item",
            Item={**self._key(thread_id, START_PREFIX + start_id), **to_item(attributes)},
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": PK},
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
            Key=self._key(failure.thread_id, THREAD_ITEM),
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
        response = self._call("get_item", Key=self._key(thread_id, THREAD_ITEM), ConsistentRead=True)
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

    def clear_failure(self, thread_id: str) -> None:
        self._call("update_item", Key=self._key(thread_id, THREAD_ITEM), UpdateExpression="REMOVE failure")


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
