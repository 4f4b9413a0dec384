"""Read the deferred tool calls a Pydantic AI run ended on, publish them, and build the results that answer them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from agent_wait.asking.flow import publish_questions, require_thread_id
from agent_wait.asking.wait import APPROVE, is_packed, plain, unpack_question
from agent_wait.common.canonical_json import dumps, to_jsonable
from agent_wait.contract.envelope import Question
from agent_wait.contract.publish import Announcers, PublishReport
from agent_wait.errors import EnvelopeError
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = (
    "deferred_requests_of",
    "deferred_tool_results",
    "denial_message",
    "is_approval",
    "publish_interrupts",
    "question_from_call",
    "questions_from_result",
)


def deferred_requests_of(result: Any) -> DeferredToolRequests | None:
    """The `DeferredToolRequests` a run ended on, or None when it finished (or `result` is None).

    Accepts what `agent.run` / `agent.run_sync` return (anything with an `.output`), or the
    `DeferredToolRequests` itself.

    Raises:
        EnvelopeError: `result` is neither a run result nor a `DeferredToolRequests`.
    """
    if result is None:
        return None
    if isinstance(result, DeferredToolRequests):
        return result
    if not hasattr(result, "output"):
        raise EnvelopeError(
            "publish_interrupts expects what agent.run_sync(...) returns (an AgentRunResult) or its "
            f"DeferredToolRequests output; got a {type(result).__name__}"
        )
    output = result.output
    return output if isinstance(output, DeferredToolRequests) else None


def question_from_call(call: ToolCallPart, metadata: Any, thread_id: str) -> Question:
    """The `Question` a deferred tool call stands for; its id is the call's `tool_call_id`.

    A `@wait` call carries its question and policy in its metadata. Any other deferred call (a
    `requires_approval=True` tool, an `ApprovalRequired` or `CallDeferred` raised by hand) is
    `{"function": tool_name, "args": {...}}`, plus `"metadata"` when the call has any, under the
    default policy.

    Raises:
        EnvelopeError: the call's arguments or metadata are not JSON, or the thread id is empty.
        QuestionTooLargeError: the question is over `MAX_QUESTION_BYTES`.
    """
    if is_packed(metadata):
        return unpack_question(metadata, thread_id, call.tool_call_id)
    question: dict[str, Any] = {"function": call.tool_name, "args": plain(call.args_as_dict())}
    if metadata:
        question["metadata"] = plain(metadata)
    return Question(thread_id, call.tool_call_id, question, WaitPolicy())


def questions_from_result(result: Any, thread_id: str) -> list[Question]:
    """Every question a run ended on: its approvals first, then its external calls; empty when none.

    Raises:
        EnvelopeError: `result` is not a run result, the thread id is empty, or a question is not JSON.
    """
    requests = deferred_requests_of(result)
    if requests is None:
        return []
    require_thread_id(thread_id)
    return [
        question_from_call(call, requests.metadata.get(call.tool_call_id), thread_id)
        for call in (*requests.approvals, *requests.calls)
    ]


def publish_interrupts(
    result: Any, thread_id: str, announce: Announcers, *, reply_to: Any = None, now: datetime | None = None
) -> list[PublishReport]:
    """Publish one `wait.created` envelope per deferred tool call the run ended on; nothing when none.

    Call it after `agent.run_sync(...)` returns (and after storing `result.all_messages()` under the
    thread). Announcer failures are in the reports, never raised.

    Raises:
        EnvelopeError: `result` is not a run result, or a question is not JSON or too large.
    """
    return publish_questions(questions_from_result(result, thread_id), announce, reply_to=reply_to, now=now)


def is_approval(answer: Any) -> bool:
    """True for an answer that approves: an object whose `action` is `"approve"`."""
    return isinstance(answer, Mapping) and answer.get("action") == APPROVE


def denial_message(answer: Any) -> str:
    """What the model reads when an answer denies a call: a string answer as is, anything else as JSON."""
    if isinstance(answer, str):
        return answer
    return dumps(to_jsonable(answer, where="answer"))


def deferred_tool_results(
    answers: Mapping[str, Any], *, requests: DeferredToolRequests | None = None
) -> DeferredToolResults:
    """The `DeferredToolResults` that resume a run with `answers` (`{question_id: answer}`).

    For a call that waits for approval: an approving answer (`{"action": "approve", ...}`) becomes
    `ToolApproved()` with the answer in `metadata`, where `@wait` reads it, so edits and decision
    parameters work as on every framework; any other answer becomes `ToolDenied(denial_message(answer))`
    and the tool never runs. For a `CallDeferred` call the answer is the call's result
    (`calls={question_id: answer}`). Without `requests` every id is treated as an approval; with it,
    ids the run deferred as external calls go to `calls`, and an approval edit for a plain
    `requires_approval=True` tool (no `@wait` to read the metadata) becomes `override_args`.

    Pydantic AI refuses a resume that does not answer every deferred call of the run (`UserError`):
    collect one answer per question before resuming.

    Args:
        answers: the answers, keyed by question id (the `tool_call_id`).
        requests: the `DeferredToolRequests` the run ended on, when the host still has it.

    Raises:
        EnvelopeError: an id is not a non-empty string, an id is not one `requests` deferred, or a
            denied answer is not JSON.
    """
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    calls: dict[str, Any] = {}
    metadata: dict[str, dict[str, Any]] = {}
    external = {call.tool_call_id for call in requests.calls} if requests is not None else set()
    pending = {call.tool_call_id: call for call in requests.approvals} if requests is not None else {}
    for question_id, answer in answers.items():
        if not isinstance(question_id, str) or not question_id:
            raise EnvelopeError(f"a question id must be a non-empty string; got {question_id!r}")
        if requests is not None and question_id not in external and question_id not in pending:
            raise EnvelopeError(
                f"question {question_id!r} is not one this run deferred; pending: {sorted([*pending, *external])}"
            )
        if question_id in external:
            calls[question_id] = answer
        elif is_approval(answer):
            approvals[question_id] = _approved(answer, pending.get(question_id), requests)
            metadata[question_id] = dict(answer)
        else:
            approvals[question_id] = ToolDenied(denial_message(answer))
    return DeferredToolResults(approvals=approvals, calls=calls, metadata=metadata)


def _approved(
    answer: Mapping[str, Any], call: ToolCallPart | None, requests: DeferredToolRequests | None
) -> ToolApproved:
    edits = answer.get("args")
    if call is None or requests is None or not isinstance(edits, Mapping):
        return ToolApproved()
    own = requests.metadata.get(call.tool_call_id)
    if is_packed(own):
        return ToolApproved()  # @wait applies the edit itself, with its rules
    return ToolApproved(override_args={**call.args_as_dict(), **edits})
