"""Questions nobody's code waits on: the asker polls the row (an MCP client's `ask_person` Task), so nothing resumes.

An MCP client asks a person through agent-wait's MCP server (`agent_wait.mcp`): the question is recorded and
announced like every other, decided through the one desk by any door, and the client reads the decision by polling
(`tasks/get`). There is no agent thread to resume and no callback to complete, so the router marks such a question
resumed as soon as the decision is recorded (announcing `wait.resumed`), and runs nothing. The row says so in its
envelope's `source`:

    {"resume": "polled", "via": "mcp", "asked_by": "<the asker's person key>", "task_id": "<the task's id>"}

`asked_by` is who asked (`agent_wait.people.keys.person_key`): it bounds who may read the task and who may withdraw
the question (`agent_wait.engine.cancelling.cancel_refusal`). The thread id of such a question is synthetic
(`agent_wait.mcp.ids.thread_id_for`: `mcp:<task id>`), one thread per question, so no other question ever shares
its thread and nothing ever holds it. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ("POLLED_RESUME", "asked_by_of", "is_polled", "polled_source")

POLLED_RESUME = "polled"
"""`source["resume"]` of a question whose asker polls for the decision: nothing is resumed."""


def polled_source(*, via: str, asked_by: str, task_id: str) -> dict[str, str]:
    """The envelope `source` of a question `asked_by` asked through `via` (`mcp`) and polls as `task_id`."""
    return {"resume": POLLED_RESUME, "via": via, "asked_by": asked_by, "task_id": task_id}


def is_polled(source: Mapping[str, Any] | None) -> bool:
    """Whether an envelope's `source` says its asker polls for the decision (nothing to resume)."""
    return source is not None and source.get("resume") == POLLED_RESUME


def asked_by_of(source: Mapping[str, Any] | None) -> str | None:
    """The person key of who asked a polled question, or None (not a polled question, or none recorded)."""
    if source is None or not is_polled(source):
        return None
    asked_by = source.get("asked_by")
    return asked_by if isinstance(asked_by, str) and asked_by else None
