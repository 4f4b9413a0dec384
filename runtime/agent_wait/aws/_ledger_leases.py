"""What `DynamoDbLedger` writes for one delivery per thread (`LeaseLedger`, `NoteLedger`): the lease on the thread's
own item, taken and released each in one conditional write that also reads and records what the next delivery needs
(the failure, the open questions, the hand-overs, the finished start, the note).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent_wait.aws._ledger_table import THREAD_ITEM, LedgerTable
from agent_wait.aws.items import from_item, to_attribute
from agent_wait.ledger.records import ThreadFailure, ThreadLease

__all__ = ("LeaseWrites",)


class LeaseWrites(LedgerTable):
    """`LeaseLedger`'s and `NoteLedger`'s writes on the thread's item."""

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
            Key=self._key(thread_id, THREAD_ITEM),
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
            Key=self._key(thread_id, THREAD_ITEM),
            UpdateExpression=update,
            ConditionExpression="lease_holder = :holder",
            ExpressionAttributeValues=values,
        )

    def finished_start(self, thread_id: str) -> str | None:
        response = self._call(
            "get_item",
            Key=self._key(thread_id, THREAD_ITEM),
            ConsistentRead=True,
            ProjectionExpression="finished_start",
        )
        finished = from_item(response.get("Item") or {}).get("finished_start")
        return str(finished) if finished else None


_NOTED = 0
"""`lease_until` as a release that leaves a note sets it: long past, so the lease is free, and what any later lease
write replaces."""
