"""Deciding a question at once, for a person (the answer API, a signed link), then handing the resume to the router.

`AnswerService.answer` runs the same checks as the router (`agent_wait.engine.checks`), wins the same
conditional write, and only then puts a resume message on the entry queue, so the person sees the real
outcome in the response. The router finds the decision already made under the message's answer id and
carries on from it, as it does after a crash. A decision whose resume never reached the queue is found by
the sweep and handed over again (`Sweep` step `handover`): nothing is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_wait._time import utc_now
from agent_wait.engine.checks import Answerer, check_answer
from agent_wait.engine.entry_queue import EntryQueue
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.engine.votes import VoteStatus, cast_vote
from agent_wait.ledger import Decision, Ledger, QuestionRecord
from agent_wait.messages import group_id_for
from agent_wait.schema import QuestionStatus

__all__ = ("HANDED_OVER", "AnswerResult", "AnswerService", "AnswerStatus", "resume_message", "vote_message")

logger = logging.getLogger("agent_wait.host")

HANDED_OVER = frozenset({"api", "link"})
"""`via` of decisions made before the router saw them (the answer API, a signed link): it resumes them."""


class AnswerStatus(StrEnum):
    """What happened to an answer given through the API or a link."""

    WON = "won"
    """This answer decided the question; the resume is on its way to the agent."""
    REPEATED = "repeated"
    """This same answer (the same idempotency key) decided it earlier; nothing changed."""
    DECIDED = "decided"
    """Another outcome won first; `record` says which, by whom, when and how."""
    VOTED = "voted"
    """This vote on a quorum question was recorded; the question waits for more (`record.progress.votes`)."""
    REFUSED = "refused"
    """The answer broke a rule (`reason`); the question stays open."""
    NOT_FOUND = "not_found"
    """No question has this id."""


@dataclass(frozen=True, slots=True)
class AnswerResult:
    status: AnswerStatus
    record: QuestionRecord | None = None
    """The question's row after the attempt (the winner's outcome when decided)."""
    reason: RefusalReason | None = None
    detail: str = ""
    handed_over: bool = True
    """False when the decision was made but the resume could not be queued yet (the sweep hands it over)."""


def resume_message(record: QuestionRecord) -> dict[str, Any]:
    """The entry-queue message that tells the router to carry on from `record`'s decision."""
    message: dict[str, Any] = {
        "thread_id": record.thread_id,
        "question_id": record.question_id,
        "answer": record.answer,
        "answer_id": record.answer_id,
        "via": record.via or "api",
    }
    if record.answered_by:
        message["answered_by"] = record.answered_by
    return message


def vote_message(record: QuestionRecord, answer_id: str) -> dict[str, Any]:
    """The entry-queue message that tells the router a vote was recorded, so it announces `wait.voted`."""
    vote = record.progress.vote_with(answer_id)
    message: dict[str, Any] = {
        "thread_id": record.thread_id,
        "question_id": record.question_id,
        "answer": vote.answer if vote else None,
        "answer_id": answer_id,
        "via": (vote.via if vote else None) or "api",
    }
    if vote is not None and vote.by:
        message["answered_by"] = vote.by
    return message


class AnswerService:
    """Decide questions for people, at once, with the router's rules.

    Args:
        ledger: the question ledger.
        entry_queue: where the resume goes (the router's entry queue).
        clock: returns now (UTC).
    """

    def __init__(self, ledger: Ledger, entry_queue: EntryQueue, *, clock: Callable[[], datetime] = utc_now) -> None:
        self.ledger = ledger
        self.entry_queue = entry_queue
        self.clock = clock

    def answer(
        self,
        question_id: str,
        answer: Any,
        answerer: Answerer,
        *,
        answer_id: str,
        valid_until: datetime | None = None,
    ) -> AnswerResult:
        """Check and decide `question_id` with `answer`; queue the resume when this answer won.

        Args:
            question_id: the question.
            answer: the answer (`{"action": ...}`).
            answerer: who answers, proven by the API's JWT or the link's signature.
            answer_id: this answer's identity: the same id again (an `Idempotency-Key` resent) repeats, never
                decides twice.
            valid_until: the answer's own expiry.
        """
        record = self.ledger.find(question_id)
        if record is None:
            return AnswerResult(AnswerStatus.NOT_FOUND, detail=f"no question {question_id}")
        now = self.clock()
        if record.status is QuestionStatus.OPEN:
            refusal = check_answer(record, answer, answerer, received_at=now, valid_until=valid_until)
            if refusal is not None:
                return AnswerResult(AnswerStatus.REFUSED, record, refusal[0], refusal[1])
            if record.followups.voting:
                return self._vote(record, answer, answerer, answer_id=answer_id, now=now)
            decision = Decision(
                QuestionStatus.ANSWERED,
                answer,
                answer_id,
                answerer.answered_by,
                sender=answerer.sender,
                via=answerer.via,
            )
            decided = self.ledger.decide(record.thread_id, question_id, decision, now=now)
            if decided.won:
                return AnswerResult(AnswerStatus.WON, decided.record, handed_over=self._hand_over(decided.record))
            record = decided.record
        if record.answer_id == answer_id:
            return AnswerResult(AnswerStatus.REPEATED, record)
        return AnswerResult(AnswerStatus.DECIDED, record, detail=f"the question was already {record.outcome}")

    def _vote(
        self, record: QuestionRecord, answer: Any, answerer: Answerer, *, answer_id: str, now: datetime
    ) -> AnswerResult:
        voted = cast_vote(self.ledger, record, answer, answerer, answer_id=answer_id, now=now)
        if voted.status is VoteStatus.DECIDED:
            return AnswerResult(AnswerStatus.WON, voted.record, handed_over=self._hand_over(voted.record))
        if voted.status is VoteStatus.RECORDED:
            # The router announces the vote (`wait.voted`); the vote itself is already recorded either way.
            message = vote_message(voted.record, answer_id)
            return AnswerResult(AnswerStatus.VOTED, voted.record, handed_over=self._hand_over(voted.record, message))
        if voted.status is VoteStatus.REPEATED:
            return AnswerResult(AnswerStatus.REPEATED, voted.record)
        if voted.status is VoteStatus.ALREADY_VOTED:
            who = answerer.answered_by or "this answerer"
            detail = (
                f"{who} voted already ({voted.vote.action if voted.vote else 'a vote'}); a second vote changes nothing"
            )
            return AnswerResult(AnswerStatus.REFUSED, voted.record, RefusalReason.ALREADY_VOTED, detail)
        return AnswerResult(
            AnswerStatus.DECIDED, voted.record, detail=f"the question was already {voted.record.outcome}"
        )

    def _hand_over(self, record: QuestionRecord, message: dict[str, Any] | None = None) -> bool:
        message = message if message is not None else resume_message(record)
        try:
            self.entry_queue.send(
                message, group_id=group_id_for(record.thread_id), deduplication_id=str(message["answer_id"])
            )
        except Exception as exc:  # the decision stands; the sweep hands it over again
            logger.warning(
                "decision made but its resume could not be queued; the sweep hands it over",
                extra={"thread_id": record.thread_id, "question_id": record.question_id, "error": type(exc).__name__},
            )
            return False
        return True
