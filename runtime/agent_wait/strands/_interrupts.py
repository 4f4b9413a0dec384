"""Read what a Strands run is parked on, publish it, and build the responses that answer it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from strands.interrupt import Interrupt
from strands.types.interrupt import InterruptResponseContent

from agent_wait.asking.flow import publish_questions, require_thread_id
from agent_wait.asking.wait import unpack_question
from agent_wait.contract.envelope import Question
from agent_wait.contract.publish import Announcers, PublishReport
from agent_wait.errors import EnvelopeError

__all__ = (
    "interrupt_responses",
    "interrupts_of",
    "publish_interrupts",
    "question_from_interrupt",
    "questions_from_result",
)


def question_from_interrupt(item: Interrupt, thread_id: str) -> Question:
    """The `Question` an `Interrupt` stands for; its id is the interrupt's id.

    A `@wait` interrupt carries its question and policy in its reason. Any other interrupt (a bare
    `tool_context.interrupt(name, reason=...)` or a hook's `event.interrupt(...)`) asks its `reason`
    as is, under the default policy.

    Raises:
        EnvelopeError: the reason is not JSON, or the thread id is empty.
        QuestionTooLargeError: the question is over `MAX_QUESTION_BYTES`.
    """
    return unpack_question(item.reason, thread_id, item.id)


def interrupts_of(result: Any) -> list[Interrupt]:
    """The interrupts a run stopped on (`result.interrupts` when `stop_reason == "interrupt"`); empty when none.

    Raises:
        EnvelopeError: `result` is not what calling a Strands `Agent` returns.
    """
    if result is None:
        return []
    if not hasattr(result, "stop_reason") or not hasattr(result, "interrupts"):
        raise EnvelopeError(
            f"publish_interrupts expects the AgentResult that agent(...) returns; got a {type(result).__name__}"
        )
    if result.stop_reason != "interrupt" or not result.interrupts:
        return []
    pending = result.interrupts
    if not isinstance(pending, Sequence) or not all(isinstance(item, Interrupt) for item in pending):
        raise EnvelopeError("result.interrupts must be the list of strands.interrupt.Interrupt an AgentResult holds")
    return list(pending)


def questions_from_result(result: Any, thread_id: str) -> list[Question]:
    """Every question a run result is parked on, in the order Strands reports them; empty when none.

    Raises:
        EnvelopeError: `result` is not an `AgentResult`, the thread id is empty, or a reason is not JSON.
    """
    pending = interrupts_of(result)
    if not pending:
        return []
    require_thread_id(thread_id)
    return [question_from_interrupt(item, thread_id) for item in pending]


def publish_interrupts(
    result: Any, thread_id: str, announce: Announcers, *, reply_to: Any = None, now: datetime | None = None
) -> list[PublishReport]:
    """Publish one `wait.created` envelope per interrupt the run stopped on; nothing when none.

    Call it after `agent(...)` returns; `thread_id` is usually the session manager's session id.
    Announcer failures are in the reports, never raised.

    Raises:
        EnvelopeError: `result` is not an `AgentResult`, or a question is not JSON or too large.
    """
    return publish_questions(questions_from_result(result, thread_id), announce, reply_to=reply_to, now=now)


def interrupt_responses(answers: Mapping[str, Any]) -> list[InterruptResponseContent]:
    """The prompt that resumes a parked agent: one `interruptResponse` block per `{question_id: answer}`.

    The answer goes back verbatim. Strands treats a `None` response as no response at all (the tool
    parks again under the same id), so a null answer is refused here.

    Raises:
        EnvelopeError: an id is not a non-empty string, an answer is None, or there are no answers.
    """
    if not answers:
        raise EnvelopeError("interrupt_responses needs at least one answer; an empty prompt would not resume the run")
    blocks: list[InterruptResponseContent] = []
    for question_id, answer in answers.items():
        if not isinstance(question_id, str) or not question_id:
            raise EnvelopeError(f"a question id must be a non-empty string; got {question_id!r}")
        if answer is None:
            raise EnvelopeError(
                f"the answer to {question_id!r} is null; Strands takes a null response as no response and parks the "
                "tool again. Send a value (for an expiry, the policy's default, or {'action': 'reject'})"
            )
        blocks.append({"interruptResponse": {"interruptId": question_id, "response": answer}})
    return blocks
