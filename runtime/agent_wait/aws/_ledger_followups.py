"""What `DynamoDbLedger` writes for a question's follow-ups (`FollowUpLedger`): votes and follow-up claims (a
compare-and-set on the row's `version`, `advance`), a moved deadline (`extend`), and the envelopes a row owes by name
(`owe_notices`, `told`), each one conditional write; and the last answer refused on the queue (`note_refusal`,
`RefusalLedger`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent_wait.aws._ledger_table import DUE, PK, LedgerTable
from agent_wait.aws.items import to_attribute
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus, question_key
from agent_wait.ledger.records import CREATED_NOTICE, AdvanceResult, Decision, Progress, Refusal, check_advance
from agent_wait.policy.extension import Extended

__all__ = ("FollowUpWrites",)


class FollowUpWrites(LedgerTable):
    """`FollowUpLedger`'s writes on the question table, and `RefusalLedger`'s one."""

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
        request = self._advance_request(
            thread_id,
            question_id,
            progress,
            expected_version=expected_version,
            due_at=due_at,
            decision=decision,
            now=now,
        )
        won, item = self._conditional("update_item", ReturnValues="ALL_NEW", **request)
        return AdvanceResult(won, self._record(item) if item else None)

    def _advance_request(
        self,
        thread_id: str,
        question_id: str,
        progress: Progress,
        *,
        expected_version: int,
        due_at: str | None,
        decision: Decision | None,
        now: datetime,
    ) -> dict[str, Any]:
        """The conditional update that writes `progress` (and `decision`) on an open row still at `expected_version`
        (`advance`, and a deciding vote's hand-over)."""
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
        return {
            "Key": self._key(thread_id, question_key(question_id)),
            "UpdateExpression": f"SET {', '.join(sets)}" + (f" REMOVE {', '.join(removes)}" if removes else ""),
            "ConditionExpression": f"#status = :open AND {version}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }

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
            ExpressionAttributeNames={"#due": "due", "#pk": PK},
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

    def note_refusal(self, thread_id: str, question_id: str, refusal: Refusal) -> bool:
        # One attribute, whatever the status: no index key, due time or version moves.
        done, _ = self._conditional(
            "update_item",
            Key=self._key(thread_id, question_key(question_id)),
            UpdateExpression="SET last_refusal = :refusal",
            ConditionExpression=f"attribute_exists({PK})",
            ExpressionAttributeValues={":refusal": to_attribute(refusal.to_item())},
        )
        return done
