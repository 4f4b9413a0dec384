"""Entry queues that fail the way SQS can, for the tests of what survives a failed send."""

from __future__ import annotations

from typing import Any

from agent_wait.engine import InMemoryEntryQueue

__all__ = ("FailingOnce",)


class FailingOnce(InMemoryEntryQueue):
    """An entry queue whose first single send fails (the API's resume hand-over), as SQS can."""

    def __init__(self) -> None:
        super().__init__()
        self.failures_left = 1

    def send(self, message: dict[str, Any], *, group_id: str, deduplication_id: str) -> None:
        if self.failures_left:
            self.failures_left -= 1
            raise ConnectionError("sqs unreachable")
        super().send(message, group_id=group_id, deduplication_id=deduplication_id)
