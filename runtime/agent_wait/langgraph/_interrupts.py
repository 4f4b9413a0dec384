"""Read what a LangGraph run is parked on, publish it, and tell answers from starts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from langgraph.types import Command, Interrupt

from agent_wait.asking.flow import publish_questions, require_thread_id
from agent_wait.asking.wait import unpack_question
from agent_wait.contract.envelope import Question
from agent_wait.contract.messages import is_answer, question_id_of
from agent_wait.contract.publish import Announcers, PublishReport
from agent_wait.dialects import translate
from agent_wait.errors import EnvelopeError

__all__ = (
    "is_answer",
    "publish_interrupts",
    "question_from_interrupt",
    "question_id_of",
    "questions_from_result",
    "resume_command",
)

_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")
"""The shape of `Interrupt.id`; LangGraph reads a resume map as one only when every key has it."""


def question_from_interrupt(item: Interrupt, thread_id: str) -> Question:
    """The `Question` an `Interrupt` stands for: `ask`/`@wait` carry their policy; a bare one gets the default.

    A bare `interrupt(value, response_schema=...)` keeps the JSON Schema LangGraph publishes for its answer.
    """
    schema = item.response_schema if isinstance(item.response_schema, Mapping) else None
    return unpack_question(item.value, thread_id, item.id, response_schema=schema)


def questions_from_result(result: Any, thread_id: str) -> list[Question]:
    """Every question a run result is parked on (`result["__interrupt__"]`); empty when none.

    Raises:
        EnvelopeError: `result` is not what `graph.invoke` returns, or an interrupt value is not JSON.
    """
    if result is None:
        return []
    if not isinstance(result, Mapping):
        raise EnvelopeError(
            f"publish_interrupts expects the dict graph.invoke(...) returns; got a {type(result).__name__}"
        )
    pending = result.get("__interrupt__")
    if pending is None:
        return []
    if not isinstance(pending, (list, tuple)) or not all(isinstance(item, Interrupt) for item in pending):
        raise EnvelopeError(
            "result['__interrupt__'] must be the list of langgraph.types.Interrupt that graph.invoke returns"
        )
    require_thread_id(thread_id)
    return [question_from_interrupt(item, thread_id) for item in pending]


def publish_interrupts(
    result: Any, thread_id: str, announce: Announcers, *, reply_to: Any = None, now: datetime | None = None
) -> list[PublishReport]:
    """Publish one `wait.created` envelope per question the run is parked on; nothing when none.

    Call it after `graph.invoke(...)` returns. Announcer failures are in the reports, never raised.

    Raises:
        EnvelopeError: `result` is not a `graph.invoke` result, or a question is not JSON or too large.
    """
    return publish_questions(questions_from_result(result, thread_id), announce, reply_to=reply_to, now=now)


def resume_command(message: Mapping[str, Any], parked: Any = None) -> Command[Any]:
    """`Command(resume={question_id: answer})` for an answer message.

    With `parked`, what the thread is parked on (the run's result, `graph.get_state(config)`, or its interrupts),
    the answer is first put in its question's dialect, as the router does (`agent_wait.dialects.translate`): our
    `{"action": "approve"}` reaches a `HumanInTheLoopMiddleware` question as its `{"decisions": [...]}`, and an
    Agent Inbox one as its response list. Without it, the answer is resumed as sent (right for `@wait`, `ask`
    and a bare `interrupt`).

    Only ids shaped like LangGraph's `Interrupt.id` (32 lowercase hex characters) are accepted:
    LangGraph 1.2 treats a resume map with any other key as one plain value and hands the whole
    `{question_id: answer}` map to whichever question the thread is parked on (pinned in
    tests/langgraph/test_langgraph_facts.py), so a wrong id would answer an unrelated question.

    Raises:
        EnvelopeError: the message has no usable question id, or one LangGraph would not read as an id; or
            `parked` is given and the thread is not parked on that question.
    """
    question_id = question_id_of(message)
    if not question_id:
        if is_answer(message):
            key = "question_id" if "question_id" in message else "interrupt_id"
            raise EnvelopeError(f"an answer needs a non-empty string {key!r}; got {message[key]!r}")
        raise EnvelopeError("an answer needs a non-empty string 'question_id'; this message looks like a start")
    if not _INTERRUPT_ID.fullmatch(question_id):
        raise EnvelopeError(
            f"question_id {question_id!r} is not a LangGraph interrupt id (32 lowercase hex characters), so LangGraph "
            "would hand the whole {question_id: answer} map to whichever question the thread is parked on. Resume "
            "only ids publish_interrupts published; an async-mode question is never resumed: deliver its decision "
            "as a new message"
        )
    answer = message.get("answer")
    if parked is not None:
        answer = _in_dialect(question_id, answer, parked)
    return Command(resume={question_id: answer})


def _in_dialect(question_id: str, answer: Any, parked: Any) -> Any:
    """`answer` as the question `question_id` among `parked`'s interrupts takes it."""
    if isinstance(parked, Mapping):
        pending = parked.get("__interrupt__") or ()
    else:
        pending = getattr(parked, "interrupts", parked)  # a StateSnapshot, or the interrupts themselves
    for item in pending if isinstance(pending, (list, tuple)) else ():
        if isinstance(item, Interrupt) and item.id == question_id:
            question = question_from_interrupt(item, "in-process")
            return translate(question.source, question.value, answer, question.policy.response_schema)
    raise EnvelopeError(
        f"the thread is not parked on question {question_id}: pass resume_command the result or state of the run "
        "that asked it (its interrupts name the questions it waits on)"
    )
