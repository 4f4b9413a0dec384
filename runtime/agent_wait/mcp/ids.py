"""The ids of an `ask_person` task: derived from who asked and the call's key, so a retry finds the same task.

A retried `tools/call` (the same JSON-RPC request id and the same arguments, or the same `idempotency_key`) from the
same caller, even from a second client of theirs, gets the same task id; another caller never does, since the
caller's person key is part of the seed. The question id is the task id (one question per task, findable by either
name), and the thread id is synthetic: `mcp:<task id>`, one thread per question, which nothing resumes
(`agent_wait.asking.polled`). Standard library only.

Example:
    >>> first = task_id_for("ana@example.com", idempotency_key="refund-7")
    >>> first == task_id_for("ana@example.com", idempotency_key="refund-7"), first.startswith("mcp-")
    (True, True)
    >>> thread_id_for("mcp-0f3a")
    'mcp:mcp-0f3a'
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agent_wait.errors import ArgumentError

__all__ = ("TASK_ID_PREFIX", "THREAD_PREFIX", "question_id_for", "task_id_for", "thread_id_for")

TASK_ID_PREFIX = "mcp-"
"""Every `ask_person` task id (and question id) starts so: the inbox and the audit tell them apart at a glance."""
THREAD_PREFIX = "mcp:"
"""The synthetic thread id of an `ask_person` question is this and its task id."""


def task_id_for(
    caller: str, *, idempotency_key: str | None = None, request_id: str | int | None = None, arguments: Any = None
) -> str:
    """The task id of `caller`'s `ask_person` call: sha256 over the caller and the call's key, 40 hex digits.

    With an `idempotency_key`, the key alone names the call (the same key with another question is refused by the
    tool, as a payment API refuses a key reused with another body). Without one, the JSON-RPC `request_id` and the
    `arguments` (canonical JSON) name it: a retry resends both, while two clients whose counters both start at 1
    asking different questions get different tasks.

    Raises:
        ArgumentError: `caller` is blank, or neither a key nor a request id is given.
    """
    if not caller or not caller.strip():
        raise ArgumentError("a task belongs to a caller; got no caller", argument="caller")
    if idempotency_key:
        seed = f"key\0{idempotency_key}"
    elif request_id is not None:
        canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        seed = f"request\0{type(request_id).__name__}:{request_id}\0{canonical}"
    else:
        raise ArgumentError("a task id needs an idempotency_key or the request's id", argument="idempotency_key")
    digest = hashlib.sha256(f"mcp-task\0{caller}\0{seed}".encode()).hexdigest()
    return TASK_ID_PREFIX + digest[:40]


def question_id_for(task_id: str) -> str:
    """The question id of task `task_id`: the task id itself."""
    return task_id


def thread_id_for(task_id: str) -> str:
    """The synthetic thread id of task `task_id`'s question: `mcp:<task id>` (nothing runs on it)."""
    return THREAD_PREFIX + task_id
