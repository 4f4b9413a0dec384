"""The one decision every answer goes through, whatever door it came in by.

The doors: the entry queue (the router), the answer API and its inbox page, AG-UI, signed links, the sweep's
deadlines (sent through the queue) and every channel added later. Each turns what it received into an
`AnswerAttempt` and says what it can see of the thread (`ThreadState`); `AnswerDesk.decide` then reads the
question's row, checks the answer (`agent_wait.engine.checks`: actions, answerers, edits, schema, dialect
shape), and decides it or records a vote with one conditional write, or refuses with one typed reason. No door
keeps a rule of its own. The desk never runs the agent and never announces: after a decision the router resumes
the agent (or completes the durable function's callback the question waits on, `agent_wait.asking.callbacks`) and
announces, for every door.

A door that cannot run the agent decides through `AnswerService` (`agent_wait.engine.handover`): it reads the question
with its thread, and the desk writes the decision with its hand-over to the router in one write that lands only
while the thread is as read (`ThreadState.hands_over`, `agent_wait.ledger.HandOverLedger`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from agent_wait.asking.callbacks import callback_id_of
from agent_wait.asking.polled import is_polled
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import tracing
from agent_wait.engine.cancelling import cancel_refusal, cancellation_answer
from agent_wait.engine.checks import Answerer, check_answer
from agent_wait.engine.granting import grant_for, split_grant
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.engine.proof import PasskeyAssertion, PasskeyCheck, PasskeyVerifier, confirm_passkey
from agent_wait.engine.votes import VoteStatus, cast_vote
from agent_wait.errors import GrantError
from agent_wait.ledger import (
    AnswerView,
    Capability,
    DecideResult,
    Decision,
    Grant,
    GrantLedger,
    HandOverLedger,
    Ledger,
    QuestionRecord,
    ThreadFailure,
    ThreadLease,
    Vote,
    require_capabilities,
)
from agent_wait.policy.grants import GrantRequest

__all__ = ("THREAD_MOVED", "AnswerAttempt", "AnswerDesk", "ThreadState", "Verdict", "VerdictKind")

THREAD_MOVED = "the agent is running on this thread, or its last run has not finished yet; try again shortly"
"""Why a door's answer is refused `thread_busy`: a run holds the thread, or took it before the decision was written."""
_REFUSAL_FOR_OUTCOME = {
    QuestionStatus.EXPIRED: RefusalReason.EXPIRED,
    QuestionStatus.CANCELLED: RefusalReason.CANCELLED,
}


@dataclass(frozen=True, slots=True)
class AnswerAttempt:
    """One answer as a door received it."""

    thread_id: str
    question_id: str
    answer: Any
    """As sent; for a deadline, ignored: the question's own default applies."""
    answer_id: str
    """This answer's identity: the same id again repeats its outcome, never decides twice."""
    answerer: Answerer
    """Who answers, as far as the door proved it, and how the answer came (`via`)."""
    received_at: datetime
    """When the door received it: the answer is judged against the deadline by this."""
    valid_until: datetime | None = None
    """The answer's own expiry, if it has one."""
    deadline: bool = False
    """The sweep's deadline answer (`origin: deadline`): the default applies, recorded `expired`."""
    cancel: bool = False
    """A person's cancel (`agent_wait.engine.cancelling`): the policy's `on_cancel` applies, else a cancellation
    (`{"action": "cancelled", "reason", "by"}`, never the default), recorded `cancelled` with `reason`; `answer` is
    ignored."""
    reason: str | None = None
    """Why, in the person's words (a cancel's reason); recorded on the row."""
    passkey: PasskeyAssertion | None = None
    """The WebAuthn assertion that confirms this answer, for a question that needs one (`require_passkey`); only the
    answer API carries one (`agent_wait.engine.proof`)."""


def _unknown(question_id: str) -> bool | None:
    return None


@dataclass(frozen=True, slots=True)
class ThreadState:
    """What a door can see of the thread the question is on."""

    failure: ThreadFailure | None = None
    """The thread's failure: nothing is decided on a failed thread until it is retried."""
    parked: Callable[[str], bool | None] = _unknown
    """Whether the agent waits on a question: True or False, or None when the door cannot tell (the row then
    decides). Called only for an open question that passed its checks."""
    read: QuestionRecord | None = None
    """The question's row as the door read it with its thread (`HandOverLedger.answer_view`); None: the desk reads
    it."""
    hands_over: bool = False
    """The door holds no lease: the decision is written with its hand-over, and lands only while the thread is still
    as read (`HandOverLedger.hand_over`); one that moved meanwhile is refused `thread_busy` (the door looks again)."""

    @classmethod
    def from_lease(cls, lease: ThreadLease) -> ThreadState:
        """The thread as its lease tells it: the failure, and the question ids the last run left open."""
        return cls(lease.failure, _parked_in(lease.open_questions))

    @classmethod
    def from_view(cls, view: AnswerView) -> ThreadState:
        """The thread as a door read it with the question, to decide and hand over in one write."""
        return cls(view.failure, _parked_in(view.open_questions), read=view.record, hands_over=True)


def _parked_in(recorded: tuple[str, ...] | None) -> Callable[[str], bool | None]:
    """Whether the agent waits on a question, by the open question ids the last run recorded (None: unknown)."""
    return (lambda question_id: None) if recorded is None else recorded.__contains__


class VerdictKind(StrEnum):
    """What became of an answer."""

    DECIDED = "decided"
    """This answer decided the question (for a quorum, this vote completed it) in this call."""
    VOTED = "voted"
    """This vote on a quorum question was recorded; the question waits for more."""
    REPEATED = "repeated"
    """This same answer (its answer id) decided the question, or cast this vote, earlier; nothing changed."""
    REFUSED = "refused"
    """Refused with `reason`; nothing was written. A decided question says who won in `record`."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The one result of `AnswerDesk.decide`, for every door."""

    kind: VerdictKind
    record: QuestionRecord | None
    """The question's row after the attempt (the winner's outcome when another answer won); None when unknown."""
    reason: RefusalReason | None = None
    """Why it was refused (`REFUSED` only)."""
    detail: str = ""
    """One sentence with ids and rules, never the answer's content."""
    vote: Vote | None = None
    """For a vote: the answerer's vote on the row (this one, or an earlier one)."""
    grant: Grant | None = None
    """The standing grant this approval made (its `grant` field), as kept; None when it asked for none."""

    @classmethod
    def refused(cls, reason: RefusalReason, detail: str, record: QuestionRecord | None = None) -> Verdict:
        return cls(VerdictKind.REFUSED, record, reason, detail)


class AnswerDesk:
    """Decide one answer for any door: the rules live here, once.

    Args:
        ledger: the question ledger; quorum votes need its follow-ups (`FollowUpLedger`).
        passkeys: verifies the passkey assertion an answer to a `require_passkey` question carries (the host's
            `agent_wait.host.passkeys.WebAuthnPasskeys`); None: every such answer is refused `passkey_required`.
    """

    def __init__(self, ledger: Ledger, *, passkeys: PasskeyVerifier | None = None) -> None:
        self.ledger = require_capabilities(ledger, Capability.FOLLOW_UPS, user="AnswerDesk")
        self.passkeys = passkeys

    def decide(self, attempt: AnswerAttempt, thread: ThreadState) -> Verdict:
        """Check `attempt` against its question and thread, then decide, vote, or refuse; see `Verdict`."""
        via = attempt.answerer.via
        with tracing.decision_span(attempt.thread_id, attempt.question_id, via) as span:  # linked to where it was asked
            verdict = self._decide(attempt, thread)
            reason = verdict.reason.value if verdict.reason is not None else None
            tracing.verdict(span, verdict.kind.value, reason, verdict.record)
            return verdict

    def _decide(self, attempt: AnswerAttempt, thread: ThreadState) -> Verdict:
        request = None
        if not (attempt.deadline or attempt.cancel):
            try:
                answer, request = split_grant(attempt.answer)
            except GrantError as exc:
                return Verdict.refused(RefusalReason.GRANT_REFUSED, _grant_detail(exc))
            attempt = replace(attempt, answer=answer) if request is not None else attempt
        verdict = self._decide_answer(attempt, thread, request)
        if request is None or verdict.kind not in (VerdictKind.DECIDED, VerdictKind.REPEATED):
            return verdict
        if verdict.record is None or verdict.record.answer_id != attempt.answer_id:
            return verdict  # a vote that did not decide: a quorum question takes no grant (refused before)
        try:  # the same answer again keeps the grant its first delivery may have died before keeping
            grant = grant_for(verdict.record, request, attempt.answer, attempt.answerer, now=attempt.received_at)
        except GrantError:
            return verdict  # decided before by this answer without a grant it could make: nothing to keep
        return replace(verdict, grant=self._grants().add_grant(grant))

    def _decide_answer(self, attempt: AnswerAttempt, thread: ThreadState, request: GrantRequest | None) -> Verdict:
        if thread.failure is not None:
            return Verdict.refused(RefusalReason.THREAD_FAILED, _failed_detail(thread.failure, attempt.question_id))
        record = thread.read if thread.read is not None else self.ledger.get(attempt.thread_id, attempt.question_id)
        if record is None:
            if self.ledger.thread_exists(attempt.thread_id):
                return Verdict.refused(RefusalReason.UNKNOWN_QUESTION, "no such question on this thread")
            return Verdict.refused(RefusalReason.UNKNOWN_THREAD, "no question was ever asked on this thread")
        if record.status is QuestionStatus.OPEN:
            earlier = record.progress.vote_with(attempt.answer_id)
            if earlier is not None:  # this vote again (a redelivery, or the router told of the API's vote)
                return Verdict(VerdictKind.REPEATED, record, vote=earlier)
            refusal = self._check(record, attempt)
            if refusal is not None:
                return refusal
            signed = self._confirmed(record, attempt)
            if isinstance(signed, Verdict):
                return signed
            # A durable function's callback waits while its question is open (its own timeout comes after the
            # deadline), and a polled question's asker polls until it is decided: only a graph's can be moved past.
            if not _waited_outside_agent(record) and thread.parked(record.question_id) is False:
                # Nothing can resume a question the agent is not waiting on: deciding it would tell a person their
                # answer took effect when it never will. (The router cancels it; other doors only refuse.)
                detail = "the agent is not waiting on this question any more (it moved past it)"
                return Verdict.refused(RefusalReason.NOT_PARKED, detail, record)
            if request is not None:  # the whole answer is refused when its grant may not be made: nothing half-done
                try:
                    self._grants()
                    grant_for(record, request, attempt.answer, attempt.answerer, now=attempt.received_at)
                except GrantError as exc:
                    return Verdict.refused(RefusalReason.GRANT_REFUSED, _grant_detail(exc), record)
            if record.followups.voting and not (attempt.deadline or attempt.cancel):
                return self._vote(record, attempt, thread)
            decided = self._write(record, _decision(record, attempt, signed), attempt.received_at, thread)
            if decided is None:
                return Verdict.refused(RefusalReason.THREAD_BUSY, THREAD_MOVED, record)
            if decided.won:
                if signed is not None and self.passkeys is not None:
                    self.passkeys.used(signed, attempt.answerer)
                return Verdict(VerdictKind.DECIDED, decided.record)
            record = decided.record
        earlier = record.progress.vote_with(attempt.answer_id)
        if earlier is not None and record.answer_id != attempt.answer_id:
            # A vote recorded before a later vote or answer decided: still this vote (told, never applied).
            return Verdict(VerdictKind.REPEATED, record, vote=earlier)
        return _settled(record, attempt)

    def _check(self, record: QuestionRecord, attempt: AnswerAttempt) -> Verdict | None:
        if attempt.deadline:
            if not record.is_overdue(attempt.received_at):
                return Verdict.refused(RefusalReason.NOT_DUE, f"deadline is {record.expires_at}", record)
            return None
        if attempt.cancel:
            refusal = cancel_refusal(record, attempt.answerer, attempt.reason, at=attempt.received_at)
            return Verdict.refused(refusal[0], refusal[1], record) if refusal is not None else None
        refusal = check_answer(
            record, attempt.answer, attempt.answerer, received_at=attempt.received_at, valid_until=attempt.valid_until
        )
        return Verdict.refused(refusal[0], refusal[1], record) if refusal is not None else None

    def _confirmed(self, record: QuestionRecord, attempt: AnswerAttempt) -> Verdict | PasskeyCheck | None:
        """A person's answer to a question that needs a passkey: refused unless it carries an assertion the injected
        verifier finds signs exactly this answer (`agent_wait.engine.proof`); the check with its proof when it does."""
        if attempt.deadline or attempt.cancel:
            return None  # the default at the deadline, and a cancel's `on_cancel`, are the policy's, not a signature's
        refusal, check = confirm_passkey(
            record, attempt.answer, attempt.answerer, attempt.passkey, self.passkeys, received_at=attempt.received_at
        )
        return Verdict.refused(refusal[0], refusal[1], record) if refusal is not None else check

    def _write(
        self, record: QuestionRecord, decision: Decision, now: datetime, thread: ThreadState
    ) -> DecideResult | None:
        """Decide the open question `record`: with its hand-over when the door holds no lease; None when its thread
        moved meanwhile (nothing written)."""
        if not thread.hands_over:
            return self.ledger.decide(record.thread_id, record.question_id, decision, now=now)
        handed = self._hand_overs().hand_over(record, decision, now=now)
        return None if handed.thread_moved else DecideResult(handed.won, handed.record)

    def _grants(self) -> GrantLedger:
        if not isinstance(self.ledger, GrantLedger):
            raise GrantError("grants_off", "this deployment's ledger keeps no standing grants; answer without one")
        return self.ledger

    def _hand_overs(self) -> HandOverLedger:
        require_capabilities(self.ledger, Capability.HAND_OVERS, user="a door's hand-over")
        return cast(HandOverLedger, self.ledger)

    def _vote(self, record: QuestionRecord, attempt: AnswerAttempt, thread: ThreadState) -> Verdict:
        answerer = attempt.answerer
        if not answerer.vouched:
            detail = (
                f"a quorum counts people: {answerer.answered_by or 'this sender'} is not trusted to name who votes; "
                "vote through the answer API, a link made for you, or a trusted sender that names you"
            )
            return Verdict.refused(RefusalReason.NOT_TRUSTED, detail, record)
        voted = cast_vote(
            self.ledger,
            record,
            attempt.answer,
            answerer,
            answer_id=attempt.answer_id,
            now=attempt.received_at,
            hand_over=self._hand_overs() if thread.hands_over else None,
        )
        if voted.status is VoteStatus.THREAD_MOVED:
            return Verdict.refused(RefusalReason.THREAD_BUSY, THREAD_MOVED, voted.record)
        if voted.status is VoteStatus.DECIDED:
            return Verdict(VerdictKind.DECIDED, voted.record, vote=voted.vote)
        if voted.status is VoteStatus.RECORDED:
            return Verdict(VerdictKind.VOTED, voted.record, vote=voted.vote)
        if voted.status is VoteStatus.REPEATED:
            return Verdict(VerdictKind.REPEATED, voted.record, vote=voted.vote)
        if voted.status is VoteStatus.ALREADY_VOTED:
            who = answerer.answered_by or "this answerer"
            earlier = f" ({voted.vote.action})" if voted.vote is not None and voted.vote.action else ""
            detail = f"{who} voted already{earlier}; a second vote changes nothing"
            return Verdict(VerdictKind.REFUSED, voted.record, RefusalReason.ALREADY_VOTED, detail, voted.vote)
        return _settled(voted.record, attempt)  # decided meanwhile, by another vote or answer


def _waited_outside_agent(record: QuestionRecord) -> bool:
    """Whether something other than a hosted agent waits on `record`: a durable callback, or a polling asker."""
    source = record.envelope.source
    return callback_id_of(source) is not None or is_polled(source)


def _decision(record: QuestionRecord, attempt: AnswerAttempt, signed: PasskeyCheck | None = None) -> Decision:
    answerer = attempt.answerer
    status = QuestionStatus.EXPIRED if attempt.deadline else QuestionStatus.ANSWERED
    # A deadline always applies the question's own default, whatever the message carries.
    answer = record.envelope.default if attempt.deadline else attempt.answer
    if attempt.cancel:  # and a cancel the policy's `on_cancel`, else a cancellation: never the default
        answer = cancellation_answer(record.envelope, reason=attempt.reason, by=answerer.answered_by)
        status = QuestionStatus.CANCELLED
    return Decision(
        status,
        answer,
        attempt.answer_id,
        answerer.answered_by,
        sender=answerer.sender,
        via=answerer.via,
        claimed_by=answerer.claimed_by,
        # A door's decision stays due until the agent has it: the sweep hands it over if nothing else did.
        hand_over_at=format_rfc3339(attempt.received_at) if answerer.hands_over else None,
        reason=attempt.reason if attempt.cancel else None,
        passkey=signed.proof if signed is not None else None,
    )


def _settled(record: QuestionRecord, attempt: AnswerAttempt) -> Verdict:
    """The verdict on a question another call already decided: this answer's own decision, or who won."""
    if record.answer_id == attempt.answer_id:
        return Verdict(VerdictKind.REPEATED, record)
    decided_as = record.outcome or record.status
    reason = _REFUSAL_FOR_OUTCOME.get(decided_as, RefusalReason.ALREADY_DECIDED)
    return Verdict.refused(reason, f"the question was {decided_as.value}; another outcome won", record)


def _grant_detail(exc: GrantError) -> str:
    return f"the grant was refused ({exc.code}): {exc}; nothing was decided"


def _failed_detail(failure: ThreadFailure, question_id: str) -> str:
    if failure.question_id == question_id:
        return "the question was decided, but the agent failed applying the decision; run agent-wait retry"
    return f"the thread is failed since {failure.failed_at} (the agent raised {failure.error}); retry it first"
