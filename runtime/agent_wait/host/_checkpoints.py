"""The router's checkpoint saver: `DynamoDBSaver`, with each task's writes stored as one write.

LangGraph counts a task as done as soon as any of its writes is in the checkpointer, and then applies
whatever writes it finds, so the writes of one task must land together. `DynamoDBSaver` stores each
write as its own items, one `PutItem` after another. A Lambda that dies between two of them leaves a
task that looks done with writes missing: a state key lost, or the edge to the next node lost, so the
run silently ends early (found by the crash-injection tests in tests/host). Packing a task's writes
into one write makes them land together; a write whose payload never arrived is ignored by
`DynamoDBSaver`, so the task runs again instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple
from langgraph_checkpoint_aws import DynamoDBSaver

__all__ = ("PACKED_WRITES", "TaskAtomicDynamoDBSaver")

PACKED_WRITES = "__agent_wait_task_writes__"
"""The channel name one packed write is stored under; never seen by LangGraph."""


def _unpack(found: CheckpointTuple | None) -> CheckpointTuple | None:
    if found is None or not found.pending_writes:
        return found
    writes: list[tuple[str, str, Any]] = []
    for task_id, channel, value in found.pending_writes:
        if channel == PACKED_WRITES:
            writes.extend((task_id, packed_channel, packed_value) for packed_channel, packed_value in value)
        else:
            writes.append((task_id, channel, value))
    return found._replace(pending_writes=writes)


class TaskAtomicDynamoDBSaver(DynamoDBSaver):
    """`DynamoDBSaver` whose `put_writes` for one task is all or nothing (same arguments)."""

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        # Special writes (interrupt, resume, error) keep their own slots: LangGraph overwrites those.
        if len(writes) > 1 and not all(channel in WRITES_IDX_MAP for channel, _ in writes):
            writes = [(PACKED_WRITES, [[channel, value] for channel, value in writes])]
        super().put_writes(config, writes, task_id, task_path)

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        return _unpack(super().get_tuple(config))

    def list(self, config: Any, **kwargs: Any) -> Iterator[CheckpointTuple]:
        for found in super().list(config, **kwargs):
            unpacked = _unpack(found)
            if unpacked is not None:  # never None for a found checkpoint; the check is for the type
                yield unpacked
