"""Until when a thread's state may still be resumed (`needed_until`, what the router tells the checkpointer to keep):
its open questions' latest possible deadline, an extension's allowance included, plus the 14 days a deadline's
answer may wait on SQS; for ever while one has no deadline; nothing once none is open."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from agent_wait import WaitPolicy
from agent_wait.asking.delivery import UNTIL_MOVED_ON
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.questions import DEADLINE_GRACE, needed_until
from agent_wait.ledger import InMemoryLedger, QuestionRecord
from agent_wait.policy import Extension

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _asked(policy: WaitPolicy) -> QuestionRecord:
    question = Question("thread-1", f"q-{uuid.uuid4().hex}", {"amount": 900}, policy, asked_at=T0)
    return InMemoryLedger().open(WaitEnvelope.create(question), now=T0).record


def test_an_open_question_is_needed_until_its_deadline_and_the_grace() -> None:
    record = _asked(WaitPolicy(timeout="P3D"))
    assert needed_until([record]) == T0 + timedelta(days=3) + DEADLINE_GRACE
    assert timedelta(days=14) == DEADLINE_GRACE


def test_an_extension_allowance_counts_as_the_deadline_it_may_reach() -> None:
    # GIVEN a 3-day question its approvers may extend by 40 days in all
    record = _asked(WaitPolicy(timeout="P3D", extend=Extension(groups=["ops"], max_total="P40D")))
    # THEN it may be decided as late as 43 days after it was asked, plus the grace
    assert needed_until([record]) == T0 + timedelta(days=43) + DEADLINE_GRACE


def test_the_latest_question_decides_and_one_without_a_deadline_keeps_it_until_the_agent_moves_on() -> None:
    soon, later = _asked(WaitPolicy(timeout="PT1H")), _asked(WaitPolicy(timeout="P60D"))
    assert needed_until([soon, later]) == T0 + timedelta(days=60) + DEADLINE_GRACE
    assert needed_until([soon, _asked(WaitPolicy())]) == UNTIL_MOVED_ON


def test_nothing_is_needed_once_no_question_is_open() -> None:
    decided = replace(_asked(WaitPolicy()), status=QuestionStatus.ANSWERED)
    assert needed_until([decided]) is None
    assert needed_until([]) is None
