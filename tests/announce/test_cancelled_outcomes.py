"""A person's cancel reads as theirs in Slack, Teams and email: who cancelled and why, never "the agent moved on".

The router's own cancel (the agent moved past a question) has no reason and keeps saying the agent moved on.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.asked import Decided, decided_of
from agent_wait.channels.email.render import outcome_email
from agent_wait.channels.slack._blocks import decided_blocks
from agent_wait.channels.teams.cards import outcome_card
from agent_wait.common.times import utc_now
from agent_wait.contract.envelope import Transition
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import InMemoryLedger
from agent_wait.ledger.records import Decision

ASKED = {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}}


def _envelope() -> WaitEnvelope:
    return WaitEnvelope.create(
        Question("t-1", "q-1", ASKED, WaitPolicy(timeout="P3D")), transition=Transition.CANCELLED
    )


def _slack(decided: Decided) -> str:
    return json.dumps([block.to_dict() for block in decided_blocks(_envelope(), decided)], ensure_ascii=False)


def _teams(decided: Decided) -> str:
    return json.dumps(outcome_card(_envelope(), decided), ensure_ascii=False)


def _email(decided: Decided) -> str:
    content = outcome_email(_envelope(), decided, recipient="ana@example.com")
    return content.subject + content.text + content.html


DOORS: dict[str, Callable[[Decided], str]] = {"slack": _slack, "teams": _teams, "email": _email}


@pytest.mark.parametrize("door", DOORS)
def test_a_persons_cancel_says_who_and_why(door: str) -> None:
    decided = Decided(
        "cancelled", {"action": "reject"}, "alice@example.com", "api", "2026-12-04T10:00:00Z", reason="order refunded"
    )
    shown = DOORS[door](decided)
    assert "alice@example.com" in shown
    assert "order refunded" in shown
    assert "moved on" not in shown


@pytest.mark.parametrize("door", DOORS)
def test_the_routers_own_cancel_still_says_the_agent_moved_on(door: str) -> None:
    shown = DOORS[door](Decided("cancelled", None, "agent-wait:moved-on", None, "2026-12-04T10:00:00Z"))
    assert "moved on" in shown


def test_the_reason_comes_from_the_questions_row() -> None:
    ledger, envelope, now = InMemoryLedger(), _envelope(), utc_now()
    ledger.open(envelope, now=now)
    cancel = Decision(QuestionStatus.CANCELLED, {"action": "reject"}, "c-1", "alice@example.com", reason="gone")
    record = ledger.decide("t-1", "q-1", cancel, now=now).record
    decided = decided_of(envelope, Transition.CANCELLED, record)
    assert (decided.status, decided.answered_by, decided.reason) == ("cancelled", "alice@example.com", "gone")
