"""The checks every answer passes before it may decide a question, whichever way it came (queue, API, link).

The router and the answer API call the same function, so a question refuses the same answers however
they reach it. Each check returns a typed `RefusalReason` with one sentence of ids and rules, never the
answer's content.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.dialects import answer_problem, is_native_answer, response_schema_of, resume_value
from agent_wait.engine._answer_schema import edit_problem, schema_problem
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.ledger import QuestionRecord

__all__ = ("HANDED_OVER", "Answerer", "Refusal", "answerer_refusal", "check_answer", "principal_of")

HANDED_OVER = frozenset({"api", "link", "slack"})
"""`via` of decisions made before the router saw them (the answer API, a signed link, Slack): it resumes them, and until
it has, the decided question stays due (`Decision.hand_over_at`) so the sweep hands it over."""

Refusal = tuple[RefusalReason, str]
"""A refusal reason and its one-sentence detail."""


@dataclass(frozen=True, slots=True)
class Answerer:
    """Who is answering, as far as it is proven, and how the answer came."""

    answered_by: str | None
    """Recorded as the answerer: an API user, a trusted sender's claim, or the sender itself."""
    via: str
    """`queue`, `api`, `link`, `deadline`, ..."""
    sender: str | None = None
    """The identity the transport authenticated (SQS `SenderId`, the JWT subject)."""
    groups: tuple[str, ...] = ()
    """Proven group memberships (JWT claims, or what a trusted sender says)."""
    principal: str | None = None
    """The queue sender's IAM unique id (`AROA...`), checked against the policy's `answerer_principals`."""
    claimed_by: str | None = None
    """An untrusted sender's claimed `answered_by`, recorded for audit only."""
    vouched: bool = True
    """Whether `answered_by` names the person who answers, as proven by the door (a JWT, a link made for them, a
    trusted sender's claim). False for a queue sender that is not trusted: its role is not a person, so it cannot
    vote on a quorum question, which counts people."""

    @property
    def hands_over(self) -> bool:
        """True for a door that cannot run the agent (`HANDED_OVER`): its decision is handed over to the router."""
        return self.via in HANDED_OVER

    @property
    def identity(self) -> str:
        """Tells answerers apart (a quorum counts distinct ones): an API user's issuer and subject, else who
        answered, else the sender. Unnamed signed links all share one identity."""
        if self.via == "api" and self.sender:
            return self.sender
        return self.answered_by or self.sender or "anonymous"


def principal_of(sender: str | None) -> str | None:
    """The IAM unique id in an SQS `SenderId` (`AROAEXAMPLE:session` -> `AROAEXAMPLE`)."""
    return sender.split(":", 1)[0] if sender else None


def check_answer(
    record: QuestionRecord,
    answer: Any,
    answerer: Answerer,
    *,
    received_at: datetime,
    valid_until: datetime | None = None,
) -> Refusal | None:
    """Why `answer` may not decide `record`'s open question, or None when it may.

    Args:
        record: the open question's ledger row (its envelope carries `allowed_actions`, `rules`, and in
            `source` the dialect the question is written in).
        answer: the answer, as sent.
        answerer: who sends it, as far as it is proven.
        received_at: when the transport received it (an answer counts from then, not from when it is handled).
        valid_until: the answer's own expiry, if it has one.
    """
    if record.is_overdue(received_at):
        return RefusalReason.EXPIRED, f"deadline passed at {record.expires_at}; the default applies"
    if valid_until is not None and valid_until <= received_at:
        return RefusalReason.ANSWER_STALE, "the answer's valid_until has passed"
    envelope = record.envelope
    native = is_native_answer(envelope, answer)  # a dialect's own answer carries no action of ours
    if not native:
        action = answer.get("action") if isinstance(answer, Mapping) else None
        allowed = list(envelope.allowed_actions)
        if action not in allowed:
            return RefusalReason.ACTION_NOT_ALLOWED, f"answer must be an object whose action is one of {allowed}"
    # Before any decision: an answer the agent could not apply would burn the question.
    problem = answer_problem(envelope, answer) or edit_problem(envelope.source, answer)
    schema = response_schema_of(envelope)
    if problem is None and schema is not None:
        problem = schema_problem(schema, resume_value(envelope, answer))  # what the agent would receive
    if problem is not None:
        return RefusalReason.INVALID_ANSWER, problem
    if not native and isinstance(answer, Mapping) and "args" in answer and not envelope.rules.get("edits", True):
        return RefusalReason.EDIT_NOT_ALLOWED, "this question's policy does not allow edited arguments"
    return answerer_refusal(record, answerer, at=received_at)


def answerer_refusal(
    record: QuestionRecord, answerer: Answerer, *, at: datetime, verb: str = "answer"
) -> Refusal | None:
    """Why `answerer` may not `verb` (answer, cancel) `record`'s question at `at` (the policy's answerers, escalation
    steps included), or None when they may."""
    answerers = record.answerers_at(at)  # escalation steps widen or hand over the audience
    if answerers is not None and not _may_answer(answerer, answerers):
        return (
            RefusalReason.ANSWERER_NOT_ALLOWED,
            f"only {_who(answerers)} may {verb} this question; {answerer.answered_by or 'the sender'} is not one",
        )
    return None


def _may_answer(answerer: Answerer, answerers: Mapping[str, Any]) -> bool:
    groups: Collection[str] = answerers.get("groups") or ()
    principals: Collection[str] = answerers.get("principals") or ()
    return bool(set(answerer.groups) & set(groups)) or (
        answerer.principal is not None and answerer.principal in principals
    )


def _who(answerers: Mapping[str, Any]) -> str:
    parts = []
    if answerers.get("groups"):
        parts.append(f"members of {', '.join(answerers['groups'])}")
    if answerers.get("principals"):
        parts.append(f"the principals {', '.join(answerers['principals'])}")
    return " or ".join(parts) or "nobody"
