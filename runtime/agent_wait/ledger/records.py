"""What the question ledger stores and returns for a question: its row (`QuestionRecord`, with its item codec), the
decision a message wants to record on it, and what each call returns.

What a row's follow-ups stand at is `agent_wait.ledger.progress`; what the ledger keeps for a thread (its starts, its
failure, its lease) `agent_wait.ledger.threads`. Every record imports from here and from `agent_wait.ledger`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from agent_wait.common.times import NEVER, format_rfc3339, parse_rfc3339
from agent_wait.contract.bound_call import approved_args
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import LedgerUnavailableError
from agent_wait.ledger.progress import PROGRESS_ATTRIBUTES, Notice, Progress, Vote, check_advance
from agent_wait.ledger.threads import FailureKind, StartRecord, StartState, ThreadFailure, ThreadLease
from agent_wait.policy.extension import Extended, shifted
from agent_wait.policy.followup import FollowUps

__all__ = (
    "CREATED_NOTICE",
    "DECIDED",
    "PROGRESS_ATTRIBUTES",
    "AdvanceResult",
    "DecideResult",
    "Decision",
    "FailureKind",
    "LedgerUnavailableError",
    "Notice",
    "OpenCount",
    "OpenResult",
    "Progress",
    "QuestionPage",
    "QuestionRecord",
    "Refusal",
    "StartRecord",
    "StartState",
    "ThreadFailure",
    "ThreadLease",
    "Vote",
    "check_advance",
)

DECIDED = frozenset({QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED})
"""Statuses that hold an outcome; only these can move on to `resumed`."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome a message wants to record on a question."""

    status: QuestionStatus
    """`answered`, `expired` or `cancelled`."""
    answer: Any
    """The answer, verbatim (the policy default for an expiry)."""
    answer_id: str
    """Identity of the message that carries it; a redelivery has the same id."""
    answered_by: str | None = None
    """Who answered: proven (an API user, a trusted sender's claim) or the transport's own identity."""
    sender: str | None = None
    """The identity the transport authenticated (SQS `SenderId`, the API's JWT subject), beside the claim."""
    via: str | None = None
    """How the answer came: `queue`, `api`, `link`, `deadline`, or what a trusted sender says."""
    claimed_by: str | None = None
    """What an untrusted sender claimed as `answered_by`; kept for audit, never used as the answerer."""
    hand_over_at: str | None = None
    """For a decision made where the agent cannot run (the answer API, a signed link): the decided question stays
    due from this RFC 3339 time until the agent has it (`Ledger.mark_resumed`), so the sweep hands it over to the
    router if nothing else did. None: never due once decided."""
    reason: str | None = None
    """Why, in the decider's words: a person's reason for cancelling (a cancel attempt). None otherwise."""
    passkey: Mapping[str, Any] | None = None
    """For an answer confirmed with a passkey (`require_passkey`): the assertion, the credential's public key and the
    digest's inputs (`agent_wait.engine.proof`), kept so the decision can be verified offline. None otherwise."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """An answer the router refused on the queue, kept on the question's row so the sender can see why
    (`agent-wait questions show`, `GET /questions/{id}`): nothing else answers a message on a queue. Only the last
    one is kept; the log and the `AnswersRefused` metric count them all."""

    reason: str
    """The `RefusalReason` value: `action_not_allowed`, `invalid_answer`, `already_decided`, ..."""
    detail: str
    """What was wrong and what to do, in the router's words (ids and rule names, never the answer itself)."""
    at: str
    """When the router refused it (RFC 3339)."""
    answer_id: str | None = None
    """The refused message's id (SQS `MessageDeduplicationId`, else its message id)."""
    by: str | None = None
    """Who the answer was credited to (the person key), when the router could tell."""
    via: str | None = None
    """How it came (`queue`, or what a trusted sender says)."""

    def to_item(self) -> dict[str, Any]:
        item = {"reason": self.reason, "detail": self.detail, "at": self.at}
        item |= {
            name: value for name, value in (("answer_id", self.answer_id), ("by", self.by), ("via", self.via)) if value
        }
        return item

    @classmethod
    def from_item(cls, item: Any) -> Refusal | None:
        """Read a row's `last_refusal`; None for none, or for one that is not a map with the three required keys."""
        if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("reason", "detail", "at")):
            return None
        optional = {k: str(item[k]) for k in ("answer_id", "by", "via") if isinstance(item.get(k), str)}
        return cls(str(item["reason"]), str(item["detail"]), str(item["at"]), **optional)


CREATED_NOTICE = "created"
"""The name a question owes its `wait.created` under (`QuestionRecord.notices`); owing it takes the unannounced mark
off (`FollowUpLedger.owe_notices`)."""


@dataclass(frozen=True, slots=True)
class QuestionRecord:
    """One question as the ledger holds it: the envelope fields plus status and outcome."""

    envelope: WaitEnvelope
    status: QuestionStatus
    asked_at: str
    """RFC 3339 time the question was first recorded."""
    announced: bool = False
    """True once an announcement succeeded on every announcer."""
    outcome: QuestionStatus | None = None
    """What decided the question (`answered`, `expired`, `cancelled`); kept once the status moves to `resumed`."""
    answer: Any = None
    answer_id: str | None = None
    answered_by: str | None = None
    sender: str | None = None
    via: str | None = None
    claimed_by: str | None = None
    decided_at: str | None = None
    resumed_at: str | None = None
    failure: ThreadFailure | None = None
    """Set while the agent's resume with this question's decision has failed (`status` is `failed`)."""
    retry_id: str | None = None
    """The retry that last re-applied the decision, if any."""
    progress: Progress = field(default_factory=Progress)
    """Reminders, escalation steps and votes so far (see `Progress`)."""
    due_at: str | None = None
    """When the sweep must next act on this question (RFC 3339), or None; kept by every transition. A decided
    question is due only while it owes `notices`, or while a door's decision waits to be handed over to the agent
    (`Decision.hand_over_at`)."""
    notices: tuple[str, ...] = ()
    """Lifecycle envelopes owed, by name (`created`, `reminder:1`, `voted:2`, `answered`, `resumed`, ...;
    `agent_wait.engine.owed`): whose publishing failed, or that wait for one owed before them. The sweep tells them
    in lifecycle order until they go out (`FollowUpLedger.owe_notices`)."""
    trace: Mapping[str, str] | None = None
    """The trace context the question was asked in (`traceparent`, `tracestate`, `xray`), put with the row by
    `Ledger.open` and never changed: the answer's spans link to it (`agent_wait.engine.tracing`). None: untraced."""
    extensions: tuple[Extended, ...] = ()
    """Each move of the deadline, in order (`FollowUpLedger.extend`); `expires_at` is the deadline after the last."""
    reason: str | None = None
    """Why it was decided so, in the decider's words: the reason a person gave for cancelling it. None otherwise."""
    last_refusal: Refusal | None = None
    """The last answer the router refused on the queue, and why (`RefusalLedger.note_refusal`). None: none yet."""
    passkey: Mapping[str, Any] | None = None
    """The passkey proof of the answer that decided it (`Decision.passkey`), for a `require_passkey` question."""

    @property
    def thread_id(self) -> str:
        return self.envelope.thread_id

    @property
    def question_id(self) -> str:
        return self.envelope.question_id

    @property
    def expires_at(self) -> str | None:
        return self.envelope.expires_at

    def is_overdue(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= format_rfc3339(now)

    @property
    def followups(self) -> FollowUps:
        return FollowUps.of(self.envelope.rules)

    @property
    def asked_deadline(self) -> str | None:
        """The deadline the question was asked with, before any extension (RFC 3339), or None."""
        return self.extensions[0].previous if self.extensions else self.expires_at

    def reminder_times(self) -> tuple[datetime, ...]:
        """When each reminder is due, in order, moved by the extensions made before it was sent."""
        asked = parse_rfc3339(self.asked_at)
        first = self.asked_deadline
        times = self.followups.reminder_times(asked, parse_rfc3339(first) if first else None)
        return shifted(times, self.extensions, sent="reminders")

    def escalation_times(self) -> tuple[datetime, ...]:
        """When each escalation step is due, in order, moved by the extensions made before it took effect."""
        times = self.followups.escalation_times(parse_rfc3339(self.asked_at))
        return shifted(times, self.extensions, sent="escalations")

    def steps_due(self, at: datetime) -> int:
        """How many escalation steps' times have come by `at`."""
        return sum(1 for t in self.escalation_times() if t <= at)

    def reminders_due(self, at: datetime) -> int:
        """How many reminders' times have come by `at`."""
        return sum(1 for t in self.reminder_times() if t <= at)

    def escalation_level(self, at: datetime) -> int:
        """How many escalation steps are in effect at `at`: those the sweep applied, and those whose time has come."""
        return max(self.progress.escalations, self.steps_due(at))

    def answerers_at(self, at: datetime) -> dict[str, list[str]] | None:
        """Who may answer at `at` (`{"groups", "principals"}`), escalation steps included; None: anyone."""
        return self.answerers_for(self.escalation_level(at))

    def answerers_for(self, level: int) -> dict[str, list[str]] | None:
        """Who may answer once `level` escalation steps are in effect; None: anyone."""
        answerers = self.envelope.rules.get("answerers")
        return self.followups.answerers_at(answerers if isinstance(answerers, Mapping) else None, level)

    def next_due(self, progress: Progress | None = None, *, announced: bool | None = None) -> str | None:
        """When the sweep must next act on this question, given `progress` (default: its own), or None.

        Due at once (`asked_at`) while the announcement is pending. While a claimed follow-up's notice is pending, or
        while it owes `notices`, it stays due where it is (its `due_at`, which has come), so the claim moves no index
        key. Else at the next reminder, the next escalation step or the deadline, whichever comes first. A decided
        question is never due.
        """
        progress = progress if progress is not None else self.progress
        announced = self.announced if announced is None else announced
        if self.status is not QuestionStatus.OPEN:
            return None
        if not announced:
            return self.asked_at
        if progress.notice is not None or self.notices:
            return self.due_at or self.asked_at
        times = [format_rfc3339(t) for t in self.reminder_times()[progress.reminders :][:1]]
        times += [format_rfc3339(t) for t in self.escalation_times()[progress.escalations :][:1]]
        if self.expires_at is not None:
            times.append(self.expires_at)
        return min(times, default=None)

    @property
    def approved_args(self) -> dict[str, Any] | None:
        """For a decided `@wait` question whose answer approves: the arguments its body runs with, as asked or as
        edited (the resume runs it with exactly these, `agent_wait.asking.wait.bind_answer`). None otherwise. Read from
        what the decision recorded (the asked call and the answer with its edits), so the row holds no copy."""
        if self.outcome is None:
            return None
        return approved_args(self.envelope.question, self.envelope.source, self.answer)

    def with_decision(self, decision: Decision, now: datetime) -> QuestionRecord:
        return replace(
            self,
            status=decision.status,
            outcome=decision.status,
            answer=decision.answer,
            answer_id=decision.answer_id,
            answered_by=decision.answered_by,
            sender=decision.sender,
            via=decision.via,
            claimed_by=decision.claimed_by,
            decided_at=format_rfc3339(now),
            due_at=decision.hand_over_at,
            reason=decision.reason,
            passkey=decision.passkey,
        )

    def to_item(self) -> dict[str, Any]:
        """Plain attributes in the ledger schema (keys excluded)."""
        item: dict[str, Any] = {
            **self.envelope.to_dict(),
            "status": self.status.value,
            "expires_at": self.expires_at or NEVER,
            "asked_at": self.asked_at,
            "outcome": self.outcome.value if self.outcome else None,
            "answer": self.answer,
            "answer_id": self.answer_id,
            "answered_by": self.answered_by,
            "sender": self.sender,
            "via": self.via,
            "claimed_by": self.claimed_by,
            "decided_at": self.decided_at,
            "resumed_at": self.resumed_at,
            "failure": self.failure.to_item() if self.failure else None,
            "retry_id": self.retry_id,
            "notices": list(self.notices) or None,
            "reason": self.reason,
            "last_refusal": self.last_refusal.to_item() if self.last_refusal else None,
            **self.progress.to_item(),
            "trace": dict(self.trace) if self.trace else None,
            "extensions": [e.to_item() for e in self.extensions] or None,
            "passkey": dict(self.passkey) if self.passkey else None,
        }
        return item

    def to_lean_item(self) -> dict[str, Any]:
        """`to_item` as a table row stores it: no null attribute, and nothing the row's keys say (`thread_id`) or
        that is rebuilt on reading (`reply_with` as `WaitEnvelope.create` makes it, `type` `wait.created`);
        `from_item` reads both shapes (rows written before are full)."""
        item = {key: value for key, value in self.to_item().items() if value is not None}
        if item.get("reply_with") == _reply_with(self.thread_id, self.question_id):
            del item["reply_with"]
        if item.get("type") == _CREATED_TYPE:
            del item["type"]
        item.pop("thread_id", None)
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> QuestionRecord:
        """Read a row: a full one, or a lean one (`to_lean_item`) with its keys (`pk`)."""
        fields: dict[str, Any] = dict.fromkeys(_NULLABLE) | dict(item)
        thread_id = str(item["thread_id"] if "thread_id" in item else str(item["pk"]).removeprefix(_THREAD_PREFIX))
        fields["thread_id"] = thread_id
        fields.setdefault("type", _CREATED_TYPE)
        fields.setdefault("reply_with", _reply_with(thread_id, str(fields["question_id"])))
        fields["expires_at"] = None if item.get("expires_at") in (None, NEVER) else item["expires_at"]
        return cls(
            envelope=WaitEnvelope.from_dict(fields),
            status=QuestionStatus(item["status"]),
            asked_at=item["asked_at"],
            announced="announce_due" not in item,
            outcome=QuestionStatus(item["outcome"]) if item.get("outcome") else None,
            answer=item.get("answer"),
            answer_id=item.get("answer_id"),
            answered_by=item.get("answered_by"),
            sender=item.get("sender"),
            via=item.get("via"),
            claimed_by=item.get("claimed_by"),
            decided_at=item.get("decided_at"),
            resumed_at=item.get("resumed_at"),
            failure=ThreadFailure.from_item(thread_id, item["failure"]) if item.get("failure") else None,
            retry_id=item.get("retry_id"),
            progress=Progress.from_item(item),
            due_at=item.get("due_at"),
            notices=tuple(dict.fromkeys(str(n) for n in item.get("notices") or ())),
            trace=_trace(item.get("trace")),
            extensions=tuple(Extended.from_item(e) for e in item.get("extensions") or ()),
            reason=item.get("reason"),
            last_refusal=Refusal.from_item(item.get("last_refusal")),
            passkey=dict(item["passkey"]) if isinstance(item.get("passkey"), Mapping) else None,
        )


_CREATED_TYPE = "wait.created"
_THREAD_PREFIX = "THREAD#"
"""`agent_wait.contract.schema.thread_key("")`: a lean row's thread id is its partition key's."""
_NULLABLE = ("question", "default", "answer_ttl", "source", "reply_to", "correlation")
"""Envelope fields a lean row leaves off when they are null."""


def _trace(stored: Any) -> Mapping[str, str] | None:
    """A row's `trace` as strings (a row written by hand may hold anything: what is not a string is left out)."""
    if not isinstance(stored, Mapping):
        return None
    kept = {str(key): value for key, value in stored.items() if isinstance(value, str)}
    return MappingProxyType(kept) if kept else None


def _reply_with(thread_id: str, question_id: str) -> dict[str, Any]:
    """The `reply_with` `WaitEnvelope.create` makes, rebuilt from the ids."""
    return {"thread_id": thread_id, "question_id": question_id, "answer": None}


@dataclass(frozen=True, slots=True)
class OpenResult:
    record: QuestionRecord
    created: bool
    """False when the question was already in the ledger (a republish); nothing was overwritten."""


@dataclass(frozen=True, slots=True)
class QuestionPage:
    """One page of questions with one status, soonest deadline first."""

    records: list[QuestionRecord]
    cursor: str | None
    """Pass it back for the next page; None on the last one. Opaque."""


@dataclass(frozen=True, slots=True)
class AdvanceResult:
    won: bool
    """True when this call's change was written: the question was open at the `version` it expected."""
    record: QuestionRecord | None
    """The row after the call (None only when there is no such question)."""


@dataclass(frozen=True, slots=True)
class DecideResult:
    won: bool
    """True when this call moved the question from open to its outcome."""
    record: QuestionRecord
    """The row after the call: the winner's outcome either way."""


@dataclass(frozen=True, slots=True)
class OpenCount:
    """The sweep's last count of open questions, kept so that it counts rarely (`FollowUpLedger.open_count`)."""

    version: int
    """Counts claimed so far: a claim is a compare-and-set on it, so two runs never both count."""
    claimed_at: str
    """When the latest count was claimed (RFC 3339 UTC); the next one is due a while after it."""
    open_questions: int | None = None
    """How many questions were open, by the last count recorded; None until one is."""
    counted_at: str | None = None
    """When that count was claimed (RFC 3339 UTC): its figure is as of then."""
