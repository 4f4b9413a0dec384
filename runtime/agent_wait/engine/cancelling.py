"""A person cancels an open question: the rules of a cancel attempt, which `AnswerDesk.decide` applies.

A cancel is an answer of its own kind (`AnswerAttempt(cancel=True, reason=...)`), decided through the one desk like
any other: the first decision wins, so a cancel after an answer is refused and an answer after a cancel is refused.
The agent receives the policy's `on_cancel` when it declares one; else a cancellation, `{"action": "cancelled",
"reason": ..., "by": ...}` (`agent_wait.dialects.cancellation`), never the `default`: a default that approves would
otherwise turn one person's cancel into an approval (a `@wait` body would run). A question in a dialect receives the
dialect's own refusal (a HITL `reject` carrying the reason, an Agent Inbox `ignore`); one the cancellation cannot
reach (a tool that allows approve alone, an answer schema it does not fit) cannot be cancelled without `on_cancel`,
and stays open. A quorum question's cancel decides at once, by the same rule, and counts as no vote. It is recorded
`cancelled` with who cancelled it and why (`QuestionRecord.answered_by`, `.reason`), and announced `wait.cancelled`
by the router when it resumes the agent.

Who may cancel: whoever may answer the question now (the policy's answerers, escalation steps included; anyone
signed in when the policy names nobody). Cancelling decides the question for the agent, so it needs the same right
as answering, and no more. One more person may cancel a polled question (`agent_wait.asking.polled`, an MCP
client's `ask_person` Task): the one who asked it (`tasks/cancel`), as the agent itself may stop waiting.

The router also cancels a question, for another reason: the agent moved past it unanswered
(`AskedQuestions.cancel`, `answered_by` `agent-wait:moved-on`). Nothing resumes such a question; a person's cancel
(`cancelled_by_person`) resumes the agent like an answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_wait.asking.polled import asked_by_of
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.dialects import cancellation, cancellation_problem, schema_checks
from agent_wait.engine._answer_schema import checks_problem
from agent_wait.engine.checks import Answerer, Refusal, answerer_refusal
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.ledger import QuestionRecord

__all__ = (
    "MAX_REASON_LENGTH",
    "awaits_resume",
    "cancel_refusal",
    "cancellation_answer",
    "cancelled_by_person",
    "reason_problem",
    "undeliverable_problem",
)

MAX_REASON_LENGTH = 500
"""The longest reason a cancel may give, in characters: one or two sentences for the audit trail."""


def cancellation_answer(envelope: WaitEnvelope, *, reason: str | None, by: str | None) -> Any:
    """What the agent receives when `by` cancels its question for `reason`: the policy's `on_cancel` when it declares
    one, else the cancellation `{"action": "cancelled", "reason": reason, "by": by}`; never the `default`."""
    declared = envelope.rules.get("on_cancel")
    return declared if declared is not None else cancellation(reason, by)


def reason_problem(reason: object) -> str | None:
    """Why `reason` cannot be a cancel's reason (one sentence, never the reason itself), or None when it can."""
    if not isinstance(reason, str) or not reason.strip():
        return 'a cancel needs a reason: say why in a sentence, e.g. {"reason": "the customer withdrew the request"}'
    if len(reason) > MAX_REASON_LENGTH:
        return f"the reason is {len(reason)} characters; the most is {MAX_REASON_LENGTH}"
    return None


def cancel_refusal(record: QuestionRecord, answerer: Answerer, reason: str | None, *, at: datetime) -> Refusal | None:
    """Why `answerer` may not cancel `record`'s open question at `at`, or None when they may.

    Past the deadline the default applies (`expired`); a blank or too long reason is `invalid_answer`; a person the
    policy does not let answer now may not cancel either (`answerer_not_allowed`); without `on_cancel`, a question
    the cancellation cannot reach cannot be cancelled (`action_not_allowed`, `undeliverable_problem`).
    """
    if record.is_overdue(at):
        return RefusalReason.EXPIRED, f"deadline passed at {record.expires_at}; the default applies"
    problem = reason_problem(reason)
    if problem is not None:
        return RefusalReason.INVALID_ANSWER, problem
    refused = None if _asked_it(record, answerer) else answerer_refusal(record, answerer, at=at, verb="cancel")
    if refused is not None or record.envelope.rules.get("on_cancel") is not None:
        return refused
    problem = undeliverable_problem(record.envelope, cancellation(reason, answerer.answered_by))
    return (RefusalReason.ACTION_NOT_ALLOWED, problem) if problem is not None else None


def _asked_it(record: QuestionRecord, answerer: Answerer) -> bool:
    """Whether `answerer` is who asked `record`'s polled question (who may always withdraw it)."""
    asker = asked_by_of(record.envelope.source)
    return asker is not None and answerer.answered_by == asker


def undeliverable_problem(envelope: WaitEnvelope, cancelled: Any) -> str | None:
    """Why the cancellation `cancelled` cannot reach the question's agent as anything but an approval or a failure,
    or None when it can.

    A dialect with no refusal its agent accepts (a HITL tool that allows approve alone) has none to deliver it as;
    and a question with an answer schema (a per-call HITL decision schema, `interrupt(value, response_schema=...)`)
    must receive a value that fits it, since LangGraph and LangChain validate the resume inside the agent and
    raise. Either way the cancel would burn the question, so it is refused and the question stays open.
    """
    problem = cancellation_problem(envelope)
    if problem is None:
        misfit = checks_problem(schema_checks(envelope, cancelled), fits="a cancellation does not fit")
        if misfit is not None:
            problem = (
                f"{misfit}; the question's answer schema admits no cancellation: answer it instead, or declare "
                "WaitPolicy(on_cancel=...) with a value that fits"
            )
    return problem


def cancelled_by_person(record: QuestionRecord) -> bool:
    """Whether `record` was cancelled by a person (its agent is owed the cancellation answer), not by the router
    because the agent moved past it (which nothing resumes)."""
    return record.outcome is QuestionStatus.CANCELLED and record.reason is not None


def awaits_resume(record: QuestionRecord) -> bool:
    """Whether `record` is decided and the agent has not received the decision yet: answered, or cancelled by a
    person. (A door's such decision waits for its hand-over to the router.)"""
    return record.status is QuestionStatus.ANSWERED or (
        record.status is QuestionStatus.CANCELLED and cancelled_by_person(record)
    )
