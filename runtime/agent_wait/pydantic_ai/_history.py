"""Where a hosted Pydantic AI agent's threads live: the message history, the deferred calls, the answers so far.

Pydantic AI has no checkpointer: the host keeps `result.all_messages()` under the thread id. A host
also needs two things the history does not hold — which calls the run deferred and whether each is
an approval or an external call (the approval metadata, where `@wait` keeps the question, is only on
the run's output), and the answers collected so far (Pydantic AI takes every answer of a run at
once). `StoredHistory` keeps all three together, so one conditional write moves a thread forward.

Backends: `InMemoryHistoryStore` (tests, one process) and `DynamoDbHistoryStore` (the checkpoint table).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent_wait.asking.stored import PK, StateTable, decode_body, encode_body
from agent_wait.errors import ThreadStateConflictError

__all__ = ("DynamoDbHistoryStore", "HistoryStore", "InMemoryHistoryStore", "StoredHistory")

PREFIX = "PYDANTIC_AI#"
"""Partition-key prefix of every history item in the checkpoint table (LangGraph's items never use it)."""
SORT_KEY = "HISTORY"
FORMAT = "pydantic_ai.history.v1"


@dataclass(frozen=True, slots=True)
class StoredHistory:
    """One thread as the store keeps it. Every field is JSON, so any backend can store it as is."""

    version: int = 0
    """How many times the thread was written; 0 for a thread never stored. A write must name the version it read."""
    messages: Sequence[Any] = ()
    """The run's `all_messages()`, as `ModelMessagesTypeAdapter.dump_python(..., mode="json")`."""
    deferred: Mapping[str, Any] | None = None
    """The `DeferredToolRequests` the last run ended on (JSON), or None when it finished."""
    answers: Mapping[str, Any] = field(default_factory=dict)
    """Answers received for deferred calls, by question id, not yet given to the agent."""

    def document(self) -> dict[str, Any]:
        return {"messages": list(self.messages), "deferred": self.deferred, "answers": dict(self.answers)}


class HistoryStore(ABC):
    """One `StoredHistory` per thread; a write succeeds only on the version it read, so two writers never both win."""

    @abstractmethod
    def load(self, thread_id: str) -> StoredHistory:
        """The thread's state; `StoredHistory()` (version 0) for a thread never stored."""

    @abstractmethod
    def save(self, thread_id: str, history: StoredHistory, *, expected_version: int) -> StoredHistory:
        """Store `history` as version `expected_version + 1`, only if the stored version is still `expected_version`.

        Returns:
            What was stored (with its new version).

        Raises:
            ThreadStateConflictError: another writer stored a newer version first; nothing was written.
            ThreadStateTooLargeError: the state does not fit the backend.
            ThreadStateUnavailableError: the backend failed.
        """


class InMemoryHistoryStore(HistoryStore):
    """Histories in a dict, for tests and single-process hosts."""

    def __init__(self) -> None:
        self._threads: dict[str, StoredHistory] = {}
        self._lock = threading.Lock()

    def load(self, thread_id: str) -> StoredHistory:
        with self._lock:
            return self._threads.get(thread_id, StoredHistory())

    def save(self, thread_id: str, history: StoredHistory, *, expected_version: int) -> StoredHistory:
        with self._lock:
            current = self._threads.get(thread_id, StoredHistory()).version
            if current != expected_version:
                raise ThreadStateConflictError(
                    f"thread {thread_id!r}: expected history version {expected_version}, found {current}; "
                    "another writer moved the thread first; nothing was written",
                    thread_id=thread_id,
                )
            stored = replace(history, version=expected_version + 1)
            self._threads[thread_id] = stored
            return stored


class DynamoDbHistoryStore(HistoryStore):
    """Histories in the checkpoint table: `PK = "PYDANTIC_AI#<thread_id>"`, `SK = "HISTORY"`.

    The item holds `version` (a number; the write is conditional on it) and the state as JSON in
    `body`, or zlib-compressed in `body_z` once it is over 32 KB. A state over DynamoDB's 400 KB item
    limit even compressed is refused with `ThreadStateTooLargeError`: trim the history (Pydantic AI's
    `history_processors`) or start a new thread. Calls `GetItem` and a conditional `PutItem` only.

    Example:
        >>> import boto3  # doctest: +SKIP
        >>> store = DynamoDbHistoryStore("agent-wait-checkpoints", client=boto3.client("dynamodb"))  # doctest: +SKIP

    Args:
        table_name: the checkpoint table (`AGENT_WAIT_CHECKPOINT_TABLE`).
        client: a boto3 DynamoDB client.
    """

    def __init__(self, table_name: str, *, client: Any) -> None:
        self._table = StateTable(table_name, client=client, prefix=PREFIX)
        self.table_name = table_name

    def load(self, thread_id: str) -> StoredHistory:
        item = self._table.get(thread_id, SORT_KEY)
        if item is None:
            return StoredHistory()
        body = decode_body(item)
        return StoredHistory(
            version=int(item["version"]["N"]),
            messages=body.get("messages") or [],
            deferred=body.get("deferred"),
            answers=body.get("answers") or {},
        )

    def save(self, thread_id: str, history: StoredHistory, *, expected_version: int) -> StoredHistory:
        body = encode_body(history.document(), thread_id=thread_id, what="message history", table=self.table_name)
        version = expected_version + 1
        attributes = {"version": {"N": str(version)}, "format": {"S": FORMAT}, **body}
        if expected_version == 0:
            condition, names, values = "attribute_not_exists(#pk)", {"#pk": PK}, None
        else:
            condition, names, values = "#v = :v", {"#v": "version"}, {":v": {"N": str(expected_version)}}
        self._table.put(
            thread_id,
            SORT_KEY,
            attributes,
            condition=condition,
            names=names,
            values=values,
            conflict=f"expected history version {expected_version}, but another writer moved the thread first",
        )
        return replace(history, version=version)
