"""A person cancels an open question: the rules of a cancel attempt, which `AnswerDesk.decide` applies.

A cancel is an answer of its own kind (`AnswerAttempt(cancel=True, reason=...)`), decided through the one desk like
any other: the first decision wins, so a cancel after an answer is refused and an answer after a cancel is refused.
The agent receives the policy's cancellation answer (`WaitPolicy(on_cancel=...)`, else its `default`), recorded
`cancelled` with who cancelled it and why (`QuestionRecord.answered_by`, `.reason`), and announced `wait.cancelled`
by the router when it resumes the agent with it.

Who may cancel: whoever may answer the question now (the policy's answerers, escalation steps included; anyone
signed in when the policy names nobody). Cancelling hands the agent an answer the policy's author chose, so it
needs the same right as answering, and no more.

The router also cancels a question, for another reason: the agent moved past it unanswered
(`AskedQuestions.cancel`, `answered_by` `agent-wait:moved-on`). Nothing resumes such a question; a person's cancel
(`cancelled_by_person`) resumes the agent like an answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_wait.engine.checks import Answerer, Refusal, answerer_refusal
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.envelope import WaitEnvelope
from agent_wait.ledger import QuestionRecord
from agent_wait.schema import QuestionStatus

__all__ = (
    "MAX_REASON_LENGTH",
    "awaits_resume",
    "cancel_refusal",
    "cancellation_answer",
    "cancelled_by_person",
    "reason_problem",
)

MAX_REASON_LENGTH = 500
"""The longest reason a cancel may give, in characters: one or two sentences for the audit trail."""


def cancellation_answer(envelope: WaitEnvelope) -> Any:
    """What the agent receives when its question is cancelled: the policy's `on_cancel`, else its `default`."""
    rules = envelope.rules
    return rules["on_cancel"] if rules.get("on_cancel") is not None else envelope.default


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
    policy does not let answer now may not cancel either (`answerer_not_allowed`).
    """
    if record.is_overdue(at):
        return RefusalReason.EXPIRED, f"deadline passed at {record.expires_at}; the default applies"
    problem = reason_problem(reason)
    if problem is not None:
        return RefusalReason.INVALID_ANSWER, problem
    return answerer_refusal(record, answerer, at=at, verb="cancel")


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
