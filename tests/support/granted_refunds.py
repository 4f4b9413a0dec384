"""A standing grant made and used through the router, on any ledger that keeps grants (in memory, or the emulator's
DynamoDB table), for the audit and insights tests.

Ana approves a refund of 200 and grants refunds up to 500 for an hour, three uses (`tests/agents/grant_graphs.py`);
then refunds of 200, 300 and 500 are decided by her grant as they are asked, and a 600 refund (outside it) is asked
and Bob approves it. What each step made is returned, so a test says what the export and insights must hold without
reading the ledger back the same way.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from tests.agents import grant_graphs

from agent_wait import InMemoryAnnounce
from agent_wait.engine import InMemoryDeadLetter, RecordingMetrics, Router
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import Ledger, grant_id_for

__all__ = ("GRANTER", "UP_TO_500", "GrantedRun", "grant_and_use")

GRANTER = "ana@example.com"
UP_TO_500 = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}}
"""The grant Ana's approval carries: refunds up to 500, any thread, for an hour, three uses."""


@dataclass(frozen=True, slots=True)
class GrantedRun:
    """What `grant_and_use` did."""

    grant_id: str
    made_on: str
    """The question whose approval made the grant (Ana's)."""
    decided: tuple[str, ...]
    """The three questions the grant decided, in order (refunds of 200, 300, 500)."""
    asked: str
    """The 600 refund: outside the grant, asked, approved by Bob."""
    threads: dict[str, str]
    """Each of those questions' thread."""


def grant_and_use(ledger: Ledger, now: datetime) -> GrantedRun:
    """Make Ana's grant and let it decide three refunds, through a router on `ledger` at `now` (see the module)."""
    router = Router(
        LangGraphAdapter(grant_graphs.build_granted_refund_graph(InMemorySaver())),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=InMemoryAnnounce(),
        metrics=RecordingMetrics(),
        clock=lambda: now,
    )
    threads: dict[str, str] = {}
    thread, made_on = _asked(router, 200, threads)
    _answer(router, thread, made_on, {"action": "approve", "grant": UP_TO_500}, GRANTER)
    decided = []
    for amount in (200, 300, 500):
        outcome = _ask(router, amount)
        (question_id,) = outcome[1].extra["granted"]
        threads[question_id] = outcome[0]
        decided.append(question_id)
    thread, asked = _asked(router, 600, threads)
    _answer(router, thread, asked, {"action": "approve"}, "bob@example.com")
    return GrantedRun(grant_id_for("issue_refund", made_on), made_on, tuple(decided), asked, threads)


def _ask(router: Router, amount: int) -> tuple[str, Any]:
    order = f"o-{uuid.uuid4().hex[:8]}"
    body = {"thread_id": f"t-{order}", "input": {"order_id": order, "amount": amount}, "start_id": f"s-{order}"}
    return f"t-{order}", router.handle(json.dumps(body))


def _asked(router: Router, amount: int, threads: dict[str, str]) -> tuple[str, str]:
    """A refund of `amount` that a person is asked about: (its thread, its question)."""
    thread, outcome = _ask(router, amount)
    (question_id,) = outcome.asked
    threads[question_id] = thread
    return thread, question_id


def _answer(router: Router, thread: str, question_id: str, answer: dict[str, Any], by: str) -> None:
    message = {"thread_id": thread, "question_id": question_id, "answer": answer, "answered_by": by}
    router.handle(json.dumps(message))
