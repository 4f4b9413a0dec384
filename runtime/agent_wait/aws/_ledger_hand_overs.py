"""What `DynamoDbLedger` reads and writes for a door's decision (`HandOverLedger`).

The question and its thread's item are read in one `BatchGetItem` (consistent), after one query of `by_question` when
only the question id is known. The decision and its hand-over are one `TransactWriteItems` of two conditional
updates: the question's row (open; for a quorum's deciding vote also at the version read) and the thread's item (no
running lease, not failed, the agent parked on the question), which appends the question to `handed_over`. Either
both land or neither does, so a door never leaves a lease behind, and a decision is never without its hand-over.

A transactional write costs twice a plain write's units (2 for each item up to 1 KB; the status and due index writes
the decision makes cost as they always do): one unit more than the lease taken and released around a plain
decision, for three calls fewer (issue 46; `bench/bench_lifecycle_calls.py` prices it).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from agent_wait.aws._ledger_followups import FollowUpWrites
from agent_wait.aws._ledger_indexes import BY_QUESTION
from agent_wait.aws._ledger_table import PK, SK, THREAD_ITEM, TRANSACTION_CANCELLED
from agent_wait.aws.errors import ServiceError, error_code
from agent_wait.aws.items import from_item, until_processed
from agent_wait.contract.schema import question_key, thread_key
from agent_wait.errors import LedgerRejectedError, QuestionNotFoundError
from agent_wait.ledger.hand_overs import AnswerView, HandOverResult
from agent_wait.ledger.records import (
    Decision,
    LedgerUnavailableError,
    Progress,
    QuestionRecord,
    ThreadFailure,
    check_advance,
)

__all__ = ("HandOverWrites",)

FREE_FOR_A_DOOR = (
    "(attribute_not_exists(lease_holder) OR (lease_until <= :now AND attribute_not_exists(lease_runs_agent)))"
)
"""The thread item's condition for a door: no lease, or one run out whose holder never ran the agent (a run that died
holding it may have left the open questions stale; its redelivery takes it over, never a door)."""
_MOVED = frozenset({"ConditionalCheckFailed", "TransactionConflict"})
"""Why the thread's update may cancel a transaction and a second look may help: its condition no longer holds, or
another write to it was in flight."""


class HandOverWrites(FollowUpWrites):
    """`HandOverLedger` on the question table."""

    def answer_view(self, question_id: str, *, now: datetime, thread_id: str | None = None) -> AnswerView | None:
        thread_id = thread_id or self._thread_of(question_id)
        if thread_id is None:
            return None
        keys = [self._key(thread_id, question_key(question_id)), self._key(thread_id, THREAD_ITEM)]
        responses, left = until_processed(
            lambda **request: self._call("batch_get_item", **request),
            {self.table_name: {"Keys": keys, "ConsistentRead": True}},
            unprocessed="UnprocessedKeys",
        )
        if left:
            raise LedgerUnavailableError(
                f"question table {self.table_name}: BatchGetItem left a question unread; try again",
                table=self.table_name,
                code="UnprocessedKeys",
            )
        items = {
            item[SK]["S"]: from_item(item)
            for response in responses
            for item in response.get("Responses", {}).get(self.table_name, [])
        }
        row, thread = items.get(question_key(question_id)), items.get(THREAD_ITEM) or {}
        if row is None:
            return None
        failure, recorded = thread.get("failure"), thread.get("open_questions")
        return AnswerView(
            self._record(row),
            ThreadFailure.from_item(thread_id, failure) if failure else None,
            tuple(str(q) for q in recorded) if isinstance(recorded, list) else None,
            busy=_held(thread, now),
        )

    def hand_over(
        self, read: QuestionRecord, decision: Decision, *, now: datetime, progress: Progress | None = None
    ) -> HandOverResult:
        thread_id, question_id = read.thread_id, read.question_id
        if progress is None:
            question = self._decide_request(thread_id, question_id, decision, now)
        else:
            version = read.progress.version
            check_advance(progress, version)
            question = self._advance_request(
                thread_id, question_id, progress, expected_version=version, due_at=None, decision=decision, now=now
            )
        # On failure, the question's row as it was: who decided first, or the vote that landed first.
        question |= {"TableName": self.table_name, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        thread = self._thread_hand_over(thread_id, question_id, now)
        try:
            self._call("transact_write_items", TransactItems=[{"Update": question}, {"Update": thread}])
        except ServiceError as exc:  # `_call` lets through only a cancelled transaction
            return self._cancelled(exc, read)
        written = replace(read, progress=progress) if progress is not None else read
        return HandOverResult(True, written.with_decision(decision, now))

    def _thread_hand_over(self, thread_id: str, question_id: str, now: datetime) -> dict[str, Any]:
        """The thread item's part: the question added to the hand-overs, while a door may decide on the thread."""
        return {
            "TableName": self.table_name,
            "Key": self._key(thread_id, THREAD_ITEM),
            "UpdateExpression": "SET handed_over = list_append(if_not_exists(handed_over, :none), :question)",
            "ConditionExpression": (
                f"{FREE_FOR_A_DOOR} AND attribute_not_exists(failure)"
                " AND (attribute_not_exists(open_questions) OR contains(open_questions, :question_id))"
            ),
            "ExpressionAttributeValues": {
                ":none": {"L": []},
                ":question": {"L": [{"S": question_id}]},
                ":question_id": {"S": question_id},
                ":now": {"N": repr(round(now.timestamp(), 3))},
            },
        }

    def _cancelled(self, exc: ServiceError, read: QuestionRecord) -> HandOverResult:
        """What a cancelled hand-over says: the question decided first (or another vote landed), the thread moved, or a
        failure of DynamoDB's own."""
        reasons = getattr(exc, "response", {}).get("CancellationReasons") or [{}, {}]
        question, thread = [*reasons, {}, {}][:2]
        where = f"question table {self.table_name}: TransactWriteItems"
        if question.get("Code") == "ConditionalCheckFailed":
            if not question.get("Item"):
                raise QuestionNotFoundError(read.thread_id, read.question_id, table=self.table_name) from None
            return HandOverResult(False, self._record(from_item(question["Item"])))
        if thread.get("Code") in _MOVED or question.get("Code") == "TransactionConflict":
            return HandOverResult(False, read, thread_moved=True)
        codes = sorted({str(r.get("Code")) for r in reasons if r.get("Code") not in (None, "None")})
        if "ValidationError" in codes:  # the request itself is wrong: sending it again cannot help
            detail = f"{where} was refused as invalid ({codes}); retrying cannot help"
            raise LedgerRejectedError(detail, table=self.table_name, code="ValidationError") from exc
        raise LedgerUnavailableError(
            f"{where} was cancelled ({codes or error_code(exc)}); try again",
            table=self.table_name,
            code=TRANSACTION_CANCELLED,
        ) from exc

    def _thread_of(self, question_id: str) -> str | None:
        """The thread a question is on, by its id alone: `by_question` projects keys only, which say so."""
        keys = list(
            self._query(
                limit=1,
                IndexName=BY_QUESTION.name,
                KeyConditionExpression="question_id = :q",
                ExpressionAttributeValues={":q": {"S": question_id}},
            )
        )
        return str(keys[0][PK]).removeprefix(thread_key("")) if keys else None


def _held(thread: dict[str, Any], now: datetime) -> bool:
    """Whether the thread item's lease keeps a door out at `now` (the negation of `FREE_FOR_A_DOOR`)."""
    if "lease_holder" not in thread:
        return False
    return float(thread.get("lease_until") or 0) > now.timestamp() or "lease_runs_agent" in thread
