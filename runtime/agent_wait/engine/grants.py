"""Standing grants at ask time: a question a live grant covers is decided by it as it is asked, and nobody is asked.

`GrantDesk.decide_as_asked` runs right after the router records a new question whose policy allows grants
(`WaitPolicy(grants=...)`). It reads the function's live grants (one query), takes the first that covers the call as
asked, on this thread, with this question's tags, and whose granter this question's policy lets answer (and grant),
and takes one of its uses (one conditional write: of N concurrent asks against a one-use grant, one gets it). The
question is then decided through the one decision path (`AnswerDesk`), approved, by the granter (`via` `grant`,
`answer_id` naming the grant), and handed over: the router resumes the agent with it before it lets the thread go,
and the sweep hands it over should the router die first (`engine.checks.HANDED_OVER`).

A policy without grants costs nothing here: no read, no write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from agent_wait.contract.bound_call import APPROVE, wait_call
from agent_wait.engine.answering import AnswerAttempt, AnswerDesk, ThreadState, VerdictKind
from agent_wait.engine.checks import Answerer, answerer_for, answerer_refusal
from agent_wait.ledger import QuestionRecord
from agent_wait.ledger.grants import GRANT_VIA, Grant, GrantLedger, grant_answer_id, grant_id_of
from agent_wait.policy.grants import Grants

__all__ = ("GRANT_VIA", "GrantDesk", "grant_answer_id", "grant_id_of")


def granter(grant: Grant) -> Answerer:
    """The person who made `grant`, as the door proved them then: their key, subject and groups."""
    return answerer_for(GRANT_VIA, person=grant.granted_by, subject=grant.subject, groups=grant.groups)


class GrantDesk:
    """Decides a new question by a live standing grant that covers it, when one does.

    Args:
        grants: where the grants are kept (the router's ledger, when it declares `GrantLedger`).
        desk: the one decision path.
        clock: returns now (UTC).
        log: a stdlib-compatible logger.
    """

    def __init__(
        self, grants: GrantLedger, desk: AnswerDesk, *, clock: Callable[[], datetime], log: logging.Logger | Any
    ) -> None:
        self.grants = grants
        self.desk = desk
        self.clock = clock
        self.log = log

    def decide_as_asked(self, record: QuestionRecord) -> QuestionRecord | None:
        """Decide `record` (open, just asked) by the first live grant that covers it; its row after, or None when no
        grant does (the question is then asked as usual)."""
        rules = record.envelope.rules
        if not isinstance(rules, Mapping) or rules.get("grants") is None:
            return None
        call = wait_call(record.envelope.question, record.envelope.source)
        if call is None:
            return None
        policy, now = Grants.parse(rules["grants"]), self.clock()
        for grant in self.grants.live_grants(call[0], now=now):
            if not grant.terms.covers(call, tags=record.envelope.tags, thread_id=record.thread_id):
                continue
            person = granter(grant)
            if not policy.allows(groups=person.groups, names=person.keys) or answerer_refusal(record, person, at=now):
                continue  # this question's policy would not let the granter grant it, or answer it
            if self.grants.use_grant(grant.grant_id, record.question_id, now=now) is None:
                continue  # used up, revoked or expired since it was read: another grant may still cover it
            decided = self._decide(record, grant, person, now)
            if decided is not None:
                return decided
        return None

    def _decide(self, record: QuestionRecord, grant: Grant, person: Answerer, now: datetime) -> QuestionRecord | None:
        attempt = AnswerAttempt(
            record.thread_id,
            record.question_id,
            {"action": APPROVE},
            grant_answer_id(grant.grant_id, record.question_id),
            person,
            now,
        )
        # Just asked by the run that holds the thread: the agent is parked on it, and its row is the one just written
        # (so the desk reads it no second time).
        verdict = self.desk.decide(attempt, ThreadState(None, lambda _question: True, read=record))
        if verdict.kind in (VerdictKind.DECIDED, VerdictKind.REPEATED) and verdict.record is not None:
            self.log.info(
                "question decided by a standing grant",
                extra={"thread_id": record.thread_id, "question_id": record.question_id, "grant_id": grant.grant_id},
            )
            return verdict.record
        # The use is taken and kept (one write cannot give it back safely): the question is asked as usual.
        self.log.warning(
            "a standing grant's use was taken but the decision was refused; the question is asked",
            extra={
                "thread_id": record.thread_id,
                "question_id": record.question_id,
                "grant_id": grant.grant_id,
                "reason": verdict.reason.value if verdict.reason is not None else None,
            },
        )
        return None
