"""The checks every answer passes before it may decide a question, whichever way it came (queue, API, link).

The router and the answer API call the same function, so a question refuses the same answers however
they reach it. Each check returns a typed `RefusalReason` with one sentence of ids and rules, never the
answer's content.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.dialects import answer_problem, is_native_answer, schema_checks
from agent_wait.engine._answer_schema import checks_problem, edit_problem
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.ledger import QuestionRecord
from agent_wait.people.keys import person_key, person_keys

__all__ = (
    "HANDED_OVER",
    "Answerer",
    "Refusal",
    "answerer_for",
    "answerer_refusal",
    "check_answer",
    "content_refusal",
    "principal_of",
)

HANDED_OVER = frozenset({"api", "link", "slack", "grant"})
"""`via` of decisions made before the router saw them (the answer API, a signed link, Slack): it resumes them, and until
it has, the decided question stays due (`Decision.hand_over_at`) so the sweep hands it over."""

Refusal = tuple[RefusalReason, str]
"""A refusal reason and its one-sentence detail."""


@dataclass(frozen=True, slots=True)
class Answerer:
    """Who is answering, as far as it is proven, and how the answer came. Doors build it with `answerer_for`."""

    answered_by: str | None
    """The person's key (`agent_wait.people.keys.person_key`): the address the door proved, else the subject it proved
    (`iss#sub`, `slack:T:U`), never a username; a trusted sender's claim; `sqs:<principal>` for an untrusted sender."""
    via: str
    """`queue`, `api`, `link`, `deadline`, ..."""
    sender: str | None = None
    """The identity the transport authenticated (SQS `SenderId`, the JWT's `iss#sub`, `slack:T:U`, `link:<kid>`), kept
    for the audit beside the key."""
    groups: tuple[str, ...] = ()
    """Proven group memberships (JWT claims, or what a trusted sender says)."""
    principal: str | None = None
    """Another name the door proved that a policy's `answerer_principals` may use: the queue sender's IAM unique id
    (`AROA...`), a Slack user's `slack:U...`."""
    claimed_by: str | None = None
    """An untrusted sender's claimed `answered_by`, recorded for audit only."""
    vouched: bool = True
    """Whether `answered_by` names the person who answers, as proven by the door (a JWT, a link made for them, a
    trusted sender's claim). False for a queue sender that is not trusted: its role is not a person, so it cannot
    vote on a quorum question, which counts people."""
    subject: str | None = None
    """The person's own subject as the door proved it, when the door proves one per person (a token's `iss#sub`, a
    Slack user's `slack:T:U`): the same subject is the same person even when the key differs (a token without its
    address). None for a link, the queue and the deadline, whose senders are shared."""

    @property
    def hands_over(self) -> bool:
        """True for a door that cannot run the agent (`HANDED_OVER`): its decision is handed over to the router."""
        return self.via in HANDED_OVER

    @property
    def identity(self) -> str:
        """Tells answerers apart (a quorum counts distinct ones): the person's key, else the sender. Unnamed signed
        links all share one identity."""
        return self.answered_by or self.sender or "anonymous"

    @property
    def keys(self) -> frozenset[str]:
        """Every name that is this person: their key and their proven subject (what a vote is matched by)."""
        return person_keys((self.answered_by, self.subject))

    def is_named(self, names: Iterable[object]) -> bool:
        """Whether a list of people (a policy's answerer principals, an extension's people) names this answerer: by
        their key, their proven subject, or the principal the door proved (an IAM id, `slack:U...`)."""
        return bool(person_keys(names) & (self.keys | person_keys((self.principal,))))


def answerer_for(
    via: str,
    *,
    person: str | None,
    subject: str | None = None,
    sender: str | None = None,
    groups: Iterable[str] = (),
    principal: str | None = None,
    claimed_by: str | None = None,
    vouched: bool = True,
) -> Answerer:
    """The one way every door says who answers: the person under one key, whatever the door.

    Args:
        via: the door (`api`, `link`, `slack`, `queue`, `deadline`, ...).
        person: what the door proved names this person: an address it proved (a verified token email, a Slack
            profile's email, the address a link was made for, a trusted sender's claim), else its own subject
            (`iss#sub`, `slack:T:U`). Recorded as its key (`agent_wait.people.keys.person_key`): an address trimmed,
            lower-cased and without `email:`. Never pass a username: anyone may pick one shaped like an address.
        subject: the person's own subject when the door proves one per person (`iss#sub`, `slack:T:U`).
        sender: what the transport authenticated, for the audit; defaults to `subject`.
        groups: proven group memberships.
        principal: another proven name a policy may list (an IAM unique id, `slack:U...`).
        claimed_by: an untrusted sender's claim, kept for audit only.
        vouched: False when the door cannot say which person answers (an untrusted queue sender).

    Example:
        >>> who = answerer_for("link", person="email:Ana@Example.com", sender="link:k1")
        >>> who.answered_by, who.is_named(["ana@example.com"])
        ('ana@example.com', True)
    """
    subject = subject.strip() if subject and subject.strip() else None
    return Answerer(
        answered_by=person_key(person),
        via=via,
        sender=sender or subject,
        groups=tuple(groups),
        principal=principal,
        claimed_by=claimed_by,
        vouched=vouched,
        subject=subject,
    )


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
    return content_refusal(record, answer) or answerer_refusal(record, answerer, at=received_at)


def content_refusal(record: QuestionRecord, answer: Any) -> Refusal | None:
    """Why `answer` does not fit `record`'s question, whoever sends it and whenever: its action, its edits, the
    dialect's shape, the answer or edit schema. None when it fits. A sender checks this before it sends (the CLI)."""
    envelope = record.envelope
    native = is_native_answer(envelope, answer)  # a dialect's own answer carries no action of ours
    if not native:
        action = answer.get("action") if isinstance(answer, Mapping) else None
        allowed = list(envelope.allowed_actions)
        if action not in allowed:
            return RefusalReason.ACTION_NOT_ALLOWED, f"answer must be an object whose action is one of {allowed}"
    # Before any decision: an answer the agent could not apply would burn the question.
    problem = answer_problem(envelope, answer) or edit_problem(envelope.source, answer)
    if problem is None:
        problem = checks_problem(schema_checks(envelope, answer))  # what the agent (or its MCP server) receives
    if problem is not None:
        return RefusalReason.INVALID_ANSWER, problem
    if not native and isinstance(answer, Mapping) and "args" in answer and not envelope.rules.get("edits", True):
        return RefusalReason.EDIT_NOT_ALLOWED, "this question's policy does not allow edited arguments"
    return None


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
    return bool(set(answerer.groups) & set(groups)) or answerer.is_named(answerers.get("principals") or ())


def _who(answerers: Mapping[str, Any]) -> str:
    parts = []
    if answerers.get("groups"):
        parts.append(f"members of {', '.join(answerers['groups'])}")
    if answerers.get("principals"):
        parts.append(f"the principals {', '.join(answerers['principals'])}")
    return " or ".join(parts) or "nobody"
