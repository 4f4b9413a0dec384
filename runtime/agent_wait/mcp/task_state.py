"""What an `ask_person` task says, read from its question's row: the one mapping from a question to a Task.

    question                                  task
    open                                      working    ("waiting for a person; deadline <expires_at>")
    answered (then resumed)                   completed  with the person's answer
    expired: nobody answered by the deadline  completed  with the policy's default (`expired: true`)
    cancelled by a person, or by the asker    cancelled  ("cancelled by <who>: <reason>")
    withdrawn                                 cancelled
    failed while its decision was applied     failed     with the reason

The row is the task's only state: nothing else is stored, so every reader (any Lambda, any client) sees the same.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger.outcome import QuestionOutcome, question_outcome

if TYPE_CHECKING:
    from agent_wait.ledger.records import QuestionRecord

__all__ = ("TaskState", "TaskView", "task_view")


class TaskState(StrEnum):
    """A task's status, in the tasks extension's words (`mcp.types.TaskStatus`, less `input_required`: a person's
    answer comes from agent-wait's doors, never from the client)."""

    WORKING = "working"
    """The question is open: a person has not answered yet and the deadline has not passed."""
    COMPLETED = "completed"
    """Decided: a person's answer, or the deadline's default."""
    CANCELLED = "cancelled"
    """A person (or the asker, with `tasks/cancel`) cancelled the question."""
    FAILED = "failed"
    """The question could not be carried through (its `status_message` says why)."""


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task as `tasks/get` shows it. `repr` leaves out the answer (question content)."""

    task_id: str
    state: TaskState
    status_message: str
    created_at: str
    """When the question was asked (RFC 3339)."""
    last_updated_at: str
    """When it was decided, else when it was asked."""
    answer: Any = None
    """The decided answer (`completed`): the person's, or the default when `expired`."""
    expired: bool = False
    """True when nobody answered by the deadline and the default applied."""
    answered_by: str | None = None
    """Who decided it (a person's key), when a person did."""

    def __repr__(self) -> str:
        return f"TaskView(task_id={self.task_id!r}, state={self.state.value!r}, expired={self.expired!r})"


def task_view(record: QuestionRecord, task_id: str) -> TaskView:
    """The task `task_id` as its question's row `record` says it is (see the module's table)."""
    created = record.asked_at
    updated = record.decided_at or created
    outcome = question_outcome(record)
    if record.status is QuestionStatus.FAILED:
        error = record.failure.error if record.failure is not None else "an error"
        message = f"the decision could not be applied ({error}); an operator can retry it with agent-wait retry"
        return TaskView(task_id, TaskState.FAILED, message, created, updated, answered_by=record.answered_by)
    if outcome is None:
        deadline = f"; deadline {record.expires_at}" if record.expires_at else "; no deadline"
        return TaskView(task_id, TaskState.WORKING, f"waiting for a person to answer{deadline}", created, updated)
    if outcome is QuestionOutcome.ANSWERED:
        who = record.answered_by or "a person"
        return TaskView(
            task_id,
            TaskState.COMPLETED,
            f"answered by {who}",
            created,
            updated,
            answer=record.answer,
            answered_by=record.answered_by,
        )
    if outcome is QuestionOutcome.EXPIRED:
        message = f"nobody answered by the deadline ({record.expires_at}); the policy's default applies"
        return TaskView(task_id, TaskState.COMPLETED, message, created, updated, answer=record.answer, expired=True)
    if outcome is QuestionOutcome.CANCELLED:
        message = f"cancelled by {record.answered_by or 'a person'}: {record.reason or 'no reason given'}"
        return TaskView(task_id, TaskState.CANCELLED, message, created, updated, answered_by=record.answered_by)
    return TaskView(task_id, TaskState.CANCELLED, "withdrawn: nothing waits on this question", created, updated)
