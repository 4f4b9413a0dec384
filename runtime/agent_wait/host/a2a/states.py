"""An A2A task's state, read from the ledger: the thread's questions and failure, and what the task item says.

    canceled        CancelTask cancelled the question it waited on (the task item says `canceled`)
    failed          the thread failed (the agent raised); an operator's `agent-wait retry` runs it again
    input-required  the thread waits on an open question: the status message carries it
    completed       the run ended (the task item keeps its result, the task's one artifact)
    working         anything else: the start is queued or running, or an answer is being carried to the agent

Each state is also a *change*, named so that the same change is told once (`TaskView.change`): `working:start`, then
`input-required:<question id>`, `working:<question id>` once it is decided, ..., and `completed`, `failed:<id of
the message that failed>` or `canceled`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from a2a.types.a2a_pb2 import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

from agent_wait.channels.asked import call_of, summary
from agent_wait.contract.schema import QuestionStatus
from agent_wait.host.a2a.tasks import TaskItem
from agent_wait.ledger import QuestionRecord, ThreadFailure

__all__ = ("TaskView", "answer_form", "as_task", "task_view")


@dataclass(frozen=True, slots=True)
class TaskView:
    """A task as it stands: its A2A state, the change that state is, and what it carries."""

    state: TaskState
    change: str
    """The state change this is, named once per change (`input-required:<question id>`)."""
    question: QuestionRecord | None = None
    """The open question (`input-required`)."""
    failure: ThreadFailure | None = None
    """Why the thread failed (`failed`)."""

    @property
    def interrupted(self) -> bool:
        """True while the task waits on a person."""
        return self.state == TaskState.TASK_STATE_INPUT_REQUIRED


def task_view(item: TaskItem, records: Sequence[QuestionRecord], failure: ThreadFailure | None) -> TaskView:
    """The task's state from its item, its thread's question rows and its thread's failure (module docstring)."""
    if item.ended == "canceled":
        return TaskView(TaskState.TASK_STATE_CANCELED, "canceled")
    if failure is not None:
        return TaskView(TaskState.TASK_STATE_FAILED, f"failed:{failure.message_id}", failure=failure)
    ordered = sorted(records, key=lambda record: (record.asked_at, record.question_id))
    waiting = [record for record in ordered if record.status is QuestionStatus.OPEN]
    if waiting:
        question = waiting[0]
        return TaskView(TaskState.TASK_STATE_INPUT_REQUIRED, f"input-required:{question.question_id}", question)
    if item.ended == "completed":
        return TaskView(TaskState.TASK_STATE_COMPLETED, "completed")
    decided = [record for record in ordered if record.decided_at]
    last = max(decided, key=lambda record: str(record.decided_at)).question_id if decided else "start"
    return TaskView(TaskState.TASK_STATE_WORKING, f"working:{last}")


def answer_form(record: QuestionRecord) -> dict[str, Any]:
    """What an answer to `record` may be: its allowed actions, and its answer schema when it has one."""
    envelope = record.envelope
    form: dict[str, Any] = {"allowed_actions": list(envelope.allowed_actions)}
    schema = envelope.rules.get("response_schema")
    if schema is not None:
        form["response_schema"] = schema
    return form


def as_task(item: TaskItem, view: TaskView, *, timestamp: str | None = None) -> Task:
    """The A2A `Task` for `item` as `view` says it stands."""
    task = Task(id=item.task_id, context_id=item.context_id, status=TaskStatus(state=view.state))
    message = _status_message(item, view)
    if message is not None:
        task.status.message.CopyFrom(message)
    if timestamp:
        task.status.timestamp.FromJsonString(timestamp)
    if view.state == TaskState.TASK_STATE_COMPLETED and item.result is not None:
        task.artifacts.append(Artifact(artifact_id="result", name="result", parts=[_data_part(item.result)]))
    return task


def _status_message(item: TaskItem, view: TaskView) -> Message | None:
    """The status message: the question (text, then its id, call and answer form as data), or why it failed."""
    parts: list[Part] = []
    if view.question is not None:
        record = view.question
        call = call_of(record.envelope)
        asked = {
            "question_id": record.question_id,
            "question": record.envelope.question,
            "call": {"name": call.name, "arguments": dict(call.args)} if call is not None else None,
            "answer_form": answer_form(record),
            "expires_at": record.envelope.expires_at,
        }
        choices = " or ".join(record.envelope.allowed_actions) or "an answer"
        parts = [Part(text=f"{summary(record.envelope)} (answer {choices})"), _data_part(asked)]
    elif view.failure is not None:
        failure = view.failure
        text = (
            f"the agent failed on thread {failure.thread_id} ({failure.error}); an operator runs it again with "
            f"agent-wait retry {failure.thread_id}"
        )
        parts = [Part(text=text)]
    elif view.state == TaskState.TASK_STATE_CANCELED:
        parts = [Part(text="cancelled: the question it waited on was cancelled")]
    if not parts:
        return None
    return Message(
        message_id=f"{item.task_id}:{view.change}",
        task_id=item.task_id,
        context_id=item.context_id,
        role=Role.ROLE_AGENT,
        parts=parts,
    )


def _data_part(value: Any) -> Part:
    """A data part holding `value` as JSON holds it (a value JSON cannot hold is its text)."""
    data = struct_pb2.Value()
    ParseDict(_jsonable(value), data)
    return Part(data=data)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
