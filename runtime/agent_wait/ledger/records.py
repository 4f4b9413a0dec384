"""What the question ledger stores and returns: rows, decisions, votes, starts, failures and leases.

Long on purpose: every record a ledger writes and reads, with its item codec beside it, so a backend and the
contract agree on one shape; each record is small.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from agent_wait.asking.wait import approved_args
from agent_wait.common.times import NEVER, format_rfc3339, parse_rfc3339
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError, LedgerUnavailableError
from agent_wait.people.keys import person_keys
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
    "OpenResult",
    "Progress",
    "QuestionPage",
    "QuestionRecord",
    "StartRecord",
    "StartState",
    "ThreadFailure",
    "ThreadLease",
    "Vote",
    "check_advance",
)

DECIDED = frozenset({QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED})
"""Statuses that hold an outcome; only these can move on to `resumed`."""


class FailureKind(StrEnum):
    """What the agent was doing when it raised."""

    START = "start"
    """Running a start message's input."""
    ANSWER = "answer"
    """Resuming with a question's recorded decision."""


@dataclass(frozen=True, slots=True)
class ThreadFailure:
    """The agent raised on this thread; recorded once, held until an operator retries it.

    While a thread is failed the router applies nothing else to it: a new start or an answer to another
    question is dead-lettered with reason `thread_failed` (redrive it after the retry), and a redelivery
    of the message that failed runs nothing.
    """

    thread_id: str
    kind: FailureKind
    target_id: str
    """The question id for an answer's resume; the start id for a start."""
    message_id: str
    """The id of the message whose application raised (an answer id, a start id or a retry id)."""
    error: str
    """The exception's type name only: its text may quote the agent's input."""
    failed_at: str
    """RFC 3339 time the failure was recorded."""
    retries: int = 0
    """How many retries of this thread failed before this one."""

    @property
    def question_id(self) -> str | None:
        return self.target_id if self.kind is FailureKind.ANSWER else None

    def to_item(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "target_id": self.target_id,
            "message_id": self.message_id,
            "error": self.error,
            "failed_at": self.failed_at,
            "retries": self.retries,
        }

    @classmethod
    def from_item(cls, thread_id: str, item: Mapping[str, Any]) -> ThreadFailure:
        return cls(
            thread_id=thread_id,
            kind=FailureKind(item["kind"]),
            target_id=str(item["target_id"]),
            message_id=str(item["message_id"]),
            error=str(item["error"]),
            failed_at=str(item["failed_at"]),
            retries=int(item.get("retries") or 0),
        )


@dataclass(frozen=True, slots=True)
class ThreadLease:
    """One delivery's exclusive hold on a thread, until `until` (epoch seconds) or its release."""

    thread_id: str
    holder: str
    until: float
    failure: ThreadFailure | None = None
    """The thread's recorded failure, read in the same write that took the lease."""
    open_questions: tuple[str, ...] | None = None
    """The thread's open question ids as the last delivery that ran the agent recorded them at its release (read
    in the same write that took the lease, so finding what is open costs no query of the thread's history);
    None when none was recorded yet."""
    note: str | None = None
    """What the last delivery left for the next one at its release (the router's checkpoint saver: the keys of the
    thread's latest checkpoint), taken off the thread by the write that took this lease: a delivery that dies
    before its release leaves none. Opaque to the ledger."""
    handed_over: tuple[str, ...] = ()
    """Question ids a door (the answer API, a signed link) decided while it held the thread, that the agent has not
    received yet: the router applies them before anything else runs on the thread. Read in the same write."""
    finished_start: str | None = None
    """The start id the last release recorded as finished (`release_lease(finished_start=...)`): its own start
    record may still say `running`, and counts as `done`. Read in the same write."""


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


class Notice(StrEnum):
    """A follow-up the sweep has claimed on a question but not yet announced (it announces it until one succeeds)."""

    REMINDER = "reminder"
    ESCALATED = "escalated"


@dataclass(frozen=True, slots=True)
class Vote:
    """One answerer's vote on a quorum question."""

    voter: str
    """Tells answerers apart: the person's key (`Answerer.identity`; rows written before the one person key hold an
    API user's `iss#sub` here)."""
    by: str | None
    """Who voted, as recorded (`answered_by`)."""
    answer: Any
    """The vote as given (`{"action": ...}`)."""
    answer_id: str
    """The message's identity; a redelivered vote has the same one."""
    at: str
    """RFC 3339 time the vote was recorded."""
    via: str | None = None
    sender: str | None = None
    subject: str | None = None
    """The voter's own proven subject (`iss#sub`, `slack:T:U`), when their door proves one."""

    @property
    def keys(self) -> frozenset[str]:
        """Every name this vote is known by: the voter's key, who it is recorded as, their proven subject."""
        return person_keys((self.voter, self.by, self.subject))

    @property
    def action(self) -> str | None:
        action = self.answer.get("action") if isinstance(self.answer, Mapping) else None
        return action if isinstance(action, str) else None

    def summary(self) -> dict[str, Any]:
        """What an envelope and the agent see: who, when, and their answer's fields (`action` first)."""
        answer = dict(self.answer) if isinstance(self.answer, Mapping) else {"answer": self.answer}
        return {"action": answer.pop("action", None), **answer, "by": self.by, "at": self.at}

    def to_item(self) -> dict[str, Any]:
        item = {
            "voter": self.voter,
            "by": self.by,
            "answer": self.answer,
            "answer_id": self.answer_id,
            "at": self.at,
            "via": self.via,
            "sender": self.sender,
        }
        if self.subject is not None:
            item["subject"] = self.subject
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Vote:
        return cls(
            voter=str(item["voter"]),
            by=item.get("by"),
            answer=item.get("answer"),
            answer_id=str(item["answer_id"]),
            at=str(item["at"]),
            via=item.get("via"),
            sender=item.get("sender"),
            subject=item.get("subject"),
        )


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an open question's follow-ups stand: reminders sent, escalation steps in effect, votes cast.

    `version` grows by one with every change, so each change is a compare-and-set (`Ledger.advance`): the
    sweep and an answer racing on one question never both win, and a decided question never changes.
    """

    reminders: int = 0
    """Reminders claimed so far (announced, or `notice` while the announcement is pending)."""
    escalations: int = 0
    """Escalation steps in effect."""
    notice: Notice | None = None
    """A claimed reminder or escalation whose announcement has not succeeded yet."""
    votes: tuple[Vote, ...] = ()
    """Votes cast on a quorum question, in order."""
    version: int = 0

    def to_item(self) -> dict[str, Any]:
        """Row attributes (flat: `progress` is an envelope field name)."""
        return {
            "reminders_sent": self.reminders,
            "escalations": self.escalations,
            "notice": self.notice.value if self.notice else None,
            "votes": [vote.to_item() for vote in self.votes],
            "version": self.version,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Progress:
        notice = item.get("notice")
        return cls(
            reminders=int(item.get("reminders_sent") or 0),
            escalations=int(item.get("escalations") or 0),
            notice=Notice(notice) if notice else None,
            votes=tuple(Vote.from_item(vote) for vote in item.get("votes") or ()),
            version=int(item.get("version") or 0),
        )

    def voted(self, *names: str | None) -> Vote | None:
        """The vote cast by the person any of `names` names (their key, their proven subject), or None. One person
        is one vote however they answer: their sign-in, a link made for their address, Slack, compared by key
        (`agent_wait.people.keys`), so case, whitespace and an `email:` prefix never make a second person."""
        wanted = person_keys(names)
        return next((vote for vote in self.votes if vote.keys & wanted), None)

    def vote_with(self, answer_id: str) -> Vote | None:
        """The vote that message `answer_id` cast, or None (a redelivery or a hand-over finds its own vote)."""
        return next((vote for vote in self.votes if vote.answer_id == answer_id), None)


def check_advance(progress: Progress, expected_version: int) -> None:
    """Refuse an `advance` whose new version does not follow the expected one (a caller's bug, not a race)."""
    if progress.version != expected_version + 1:
        raise ArgumentError(
            f"advance writes version {progress.version} over expected version {expected_version}; "
            "the new progress must be version expected_version + 1",
            argument="progress",
        )


CREATED_NOTICE = "created"
"""The name a question owes its `wait.created` under (`QuestionRecord.notices`); owing it takes the unannounced mark
off (`FollowUpLedger.owe_notices`)."""

PROGRESS_ATTRIBUTES = ("reminders_sent", "escalations", "notice", "votes", "version")
"""The row attributes `Progress` is stored in."""


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
            **self.progress.to_item(),
            "trace": dict(self.trace) if self.trace else None,
            "extensions": [e.to_item() for e in self.extensions] or None,
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


class StartState(StrEnum):
    """Where applying one start message stands."""

    RUNNING = "running"
    """The run began; its questions are not recorded yet."""
    DONE = "done"
    """The run's questions are recorded (or it finished without asking)."""
    FAILED = "failed"
    """The agent raised; the start waits for an operator's retry."""


@dataclass(frozen=True, slots=True)
class StartRecord:
    """A start message the router has begun or finished applying."""

    thread_id: str
    start_id: str
    state: StartState
    """`running` until the run's questions are recorded, then `done`; `failed` when the agent raised."""
    marker: str | None = None
    """The agent's progress marker (checkpoint id) before the run; tells whether the run happened."""
    created: bool = False
    question_ids: tuple[str, ...] = field(default_factory=tuple)
    input: Any = None
    """The start's input, kept only once it failed, so a retry can run it again."""
    retry_id: str | None = None
    """The retry that last re-ran this start, if any."""
