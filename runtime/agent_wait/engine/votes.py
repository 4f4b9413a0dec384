"""Votes on a quorum question: each answer is recorded once per answerer; the one that completes it decides.

The router and the answer API both cast votes here, so a question counts the same votes however they
reach it. A vote is one compare-and-set on the row (`Ledger.advance`): it is recorded only while the
question is open and unchanged since it was read, and the vote that reaches the quorum (or vetoes)
decides the question in that same write, so the votes and the outcome can never part. A lost race reads
the row again and tries once more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.checks import Answerer
from agent_wait.errors import ArgumentError, LedgerUnavailableError, QuestionNotFoundError
from agent_wait.ledger import AdvanceResult, Decision, FollowUpLedger, HandOverLedger, QuestionRecord, Vote
from agent_wait.policy.followup import Quorum

__all__ = ("VoteResult", "VoteStatus", "cast_vote", "decision_progress", "vote_of", "vote_progress")

_ATTEMPTS = 8
"""Compare-and-set attempts before giving up (each loss means another vote or follow-up landed first)."""


class VoteStatus(StrEnum):
    """What casting one vote did."""

    RECORDED = "recorded"
    """Counted; the question stays open for more votes."""
    DECIDED = "decided"
    """This vote reached the quorum or vetoed: the question is decided with it (in the same write)."""
    REPEATED = "repeated"
    """This same vote (the same answer id) was recorded earlier; nothing changed."""
    ALREADY_VOTED = "already_voted"
    """The answerer voted earlier with another answer; a second vote changes nothing."""
    CLOSED = "closed"
    """The question is no longer open; `record` says how it was decided."""
    THREAD_MOVED = "thread_moved"
    """A door's deciding vote was not written: its thread was no longer as read (`HandOverLedger.hand_over`)."""


@dataclass(frozen=True, slots=True)
class VoteResult:
    status: VoteStatus
    record: QuestionRecord
    """The row after the attempt."""
    vote: Vote | None = None
    """The answerer's vote on the row (this one, or their earlier one)."""


def cast_vote(
    ledger: FollowUpLedger,
    record: QuestionRecord,
    answer: Any,
    answerer: Answerer,
    *,
    answer_id: str,
    now: datetime,
    hand_over: HandOverLedger | None = None,
) -> VoteResult:
    """Record `answerer`'s vote on the open quorum question `record`, deciding it when the vote completes it.

    The answer must already have passed `check_answer`. With `hand_over` (a door that holds no lease), the deciding
    vote is written with its hand-over, only while the thread is as the door read it (else `THREAD_MOVED`).

    Raises:
        LedgerUnavailableError: the row kept changing under every attempt (retry later).
        QuestionNotFoundError: the row is gone.
    """
    quorum = record.followups.quorum
    if quorum is None:
        raise ArgumentError(f"question {record.question_id} has no quorum; decide it instead", argument="record")
    for _ in range(_ATTEMPTS):
        if record.status is not QuestionStatus.OPEN:
            return VoteResult(VoteStatus.CLOSED, record)
        earlier = record.progress.vote_with(answer_id) or vote_of(record, answerer)
        if earlier is not None:
            status = VoteStatus.REPEATED if earlier.answer_id == answer_id else VoteStatus.ALREADY_VOTED
            return VoteResult(status, record, earlier)
        vote = Vote(
            voter=answerer.identity,
            by=answerer.answered_by,
            answer=answer,
            answer_id=answer_id,
            at=format_rfc3339(now),
            via=answerer.via,
            sender=answerer.sender,
            subject=answerer.subject,
        )
        progress = replace(record.progress, votes=(*record.progress.votes, vote), version=record.progress.version + 1)
        deciding = quorum.decides(v.action for v in progress.votes)
        decision = _decision(vote, progress.votes, answerer) if deciding else None
        if decision is not None and hand_over is not None:
            handed = hand_over.hand_over(record, decision, now=now, progress=progress)
            if handed.thread_moved:
                return VoteResult(VoteStatus.THREAD_MOVED, record)
            result = AdvanceResult(handed.won, handed.record)
        else:
            result = ledger.advance(
                record.thread_id,
                record.question_id,
                progress,
                expected_version=record.progress.version,
                due_at=None if deciding else record.next_due(progress),
                decision=decision,
                now=now,
            )
        if result.record is None:
            raise QuestionNotFoundError(record.thread_id, record.question_id)
        if result.won:
            return VoteResult(VoteStatus.DECIDED if deciding else VoteStatus.RECORDED, result.record, vote)
        record = result.record
    raise LedgerUnavailableError(
        f"question {record.question_id} changed under {_ATTEMPTS} vote attempts in a row; try again shortly"
    )


def vote_of(record: QuestionRecord, answerer: Answerer) -> Vote | None:
    """The vote `answerer` cast on `record`, or None. One person is one vote however they answer: matched by their
    key (`agent_wait.people.keys`) or their proven subject, whatever door either vote came through."""
    return record.progress.voted(answerer.identity, *answerer.keys)


def _decision(vote: Vote, votes: tuple[Vote, ...], answerer: Answerer) -> Decision:
    """The deciding vote's answer with every vote listed, as the agent receives it."""
    answer = dict(vote.answer) if isinstance(vote.answer, Mapping) else {"answer": vote.answer}
    answer["votes"] = [v.summary() for v in votes]
    return Decision(
        QuestionStatus.ANSWERED,
        answer,
        vote.answer_id,
        vote.by,
        sender=vote.sender,
        via=vote.via,
        claimed_by=answerer.claimed_by,
        # Decided by a door's vote: due until the agent has it, so the sweep hands it over if nothing else did.
        hand_over_at=vote.at if answerer.hands_over else None,
    )


def decision_progress(record: QuestionRecord) -> dict[str, Any] | None:
    """The `progress` a decision's envelope carries: a quorum question answered carries its votes; else None."""
    decided = record.outcome or record.status
    return vote_progress(record) if record.followups.voting and decided is QuestionStatus.ANSWERED else None


def vote_progress(
    record: QuestionRecord, quorum: Quorum | None = None, *, through: Vote | None = None
) -> dict[str, Any]:
    """The `progress` of a `wait.voted` envelope (and of the inbox's view): the votes, the count, who is needed.

    With `through`, the votes as they stood when that vote was cast (one told after a later vote decided).
    """
    quorum = quorum or record.followups.quorum
    votes = record.progress.votes
    if through is not None and through in votes:
        votes = votes[: votes.index(through) + 1]
    approvals = quorum.count(v.action for v in votes) if quorum else 0
    needed = quorum.approvals if quorum else 1
    still_open = record.status is QuestionStatus.OPEN or through is not None
    return {
        "votes": [v.summary() for v in votes],
        "approvals": approvals,
        "needed": needed,
        "remaining": max(needed - approvals, 0) if still_open else 0,
        "veto": list(quorum.veto) if quorum else [],
    }
