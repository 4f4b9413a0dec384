"""Standing grants at ask time, through the router: a question a live grant covers is decided by it as it is asked,
nobody is asked, and the agent runs the call exactly as asked, once; anything the grant does not cover is asked."""

from __future__ import annotations

import json
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from tests.agents import grant_graphs

from agent_wait import InMemoryAnnounce, Question, Transition, WaitEnvelope, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerDesk, InMemoryDeadLetter, OutcomeKind, RecordingMetrics, Router
from agent_wait.engine.grants import GrantDesk
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import Grant, InMemoryLedger, QuestionRecord, new_grant
from agent_wait.policy import GrantRequest, Grants, grant_terms

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


def _router(ledger: InMemoryLedger, announce: InMemoryAnnounce, clock: list[datetime]) -> Router:
    graph = grant_graphs.build_granted_refund_graph(InMemorySaver())
    return Router(
        LangGraphAdapter(graph),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=announce,
        metrics=RecordingMetrics(),
        clock=lambda: clock[0],
    )


def _ask(router: Router, amount: int) -> tuple[str, Any]:
    """Start a refund of `amount` on a new order and thread; (the order id, the start's outcome)."""
    order = f"o-{uuid.uuid4().hex[:8]}"
    body = {"thread_id": f"t-{order}", "input": {"order_id": order, "amount": amount}, "start_id": f"s-{order}"}
    return order, router.handle(json.dumps(body))


def _grant(ledger: InMemoryLedger, grant: dict[str, Any], *, uses: int | None = 3) -> Grant:
    """Ana's approval of a 200 refund on order o-first that also grants `grant` (as a door would make it)."""
    request = GrantRequest.parse({"ttl": "PT1H", "uses": uses, **grant})
    terms = grant_terms(
        request,
        call=("issue_refund", {"order_id": "o-first", "amount": 200}),
        thread_id="t-o-first",
        policy=grant_graphs.GRANTING,
        answer={"action": "approve"},
        names=["ana@example.com"],
    )
    made = new_grant(terms, question_id="q-first", granted_by="ana@example.com", via="api", now=T0)
    return ledger.add_grant(made)


def test_a_pattern_grant_decides_the_asks_it_covers_at_once_and_every_other_ask_is_asked() -> None:
    # GIVEN a one-hour, three-use grant for amount <= 500 on issue_refund, any thread
    ledger, announce, clock = InMemoryLedger(), InMemoryAnnounce(), [T0 + timedelta(minutes=1)]
    router = _router(ledger, announce, clock)
    grant = _grant(ledger, {"scope": "agent", "pins": {"amount": {"at_most": 500}}})

    # WHEN refunds of 200, 300 and 500 are asked
    granted = [_ask(router, amount) for amount in (200, 300, 500)]

    # THEN each ran at once, decided by the grant in the granter's name, its body once, and nobody was asked
    for order, outcome in granted:
        assert outcome.kind is OutcomeKind.STARTED, outcome
        (question_id,) = outcome.extra["granted"]
        record = ledger.get(f"t-{order}", question_id)
        assert record is not None
        assert (record.status, record.via, record.answered_by) == (QuestionStatus.RESUMED, "grant", "ana@example.com")
        assert grant.grant_id in str(record.answer_id)
        assert record.answer == {"action": "approve"}
        assert grant_graphs.REFUNDS[order] == 1
    assert announce.of(Transition.CREATED) == []
    assert len(announce.of(Transition.ANSWERED)) == 3
    assert len(announce.of(Transition.RESUMED)) == 3

    # AND a 600 refund, outside the pin, is asked; so is a fourth within it, the grant being used up
    for amount in (600, 100):
        order, outcome = _ask(router, amount)
        assert outcome.extra.get("granted") is None, outcome
        (question_id,) = outcome.asked
        record = ledger.get(f"t-{order}", question_id)
        assert record is not None
        assert record.status is QuestionStatus.OPEN
        assert grant_graphs.REFUNDS[order] == 0
    assert len(announce.of(Transition.CREATED)) == 2
    kept = ledger.grant(grant.grant_id)
    assert kept is not None
    assert (kept.uses_left, len(kept.decided)) == (0, 3)


def test_after_a_revoke_or_past_its_time_a_grant_decides_nothing() -> None:
    ledger, announce, clock = InMemoryLedger(), InMemoryAnnounce(), [T0 + timedelta(minutes=1)]
    router = _router(ledger, announce, clock)
    revoked = _grant(ledger, {"scope": "agent", "pins": {"amount": {"at_most": 500}}})
    ledger.revoke_grant(revoked.grant_id, by="ops@example.com", now=T0 + timedelta(seconds=30))

    # WHEN asked after the revoke, THEN it is asked
    _, outcome = _ask(router, 200)
    assert outcome.extra.get("granted") is None
    assert len(outcome.asked) == 1

    # AND a live grant asked past its hour decides nothing either
    other = InMemoryLedger()
    _grant(other, {"scope": "agent", "pins": {"amount": {"at_most": 500}}})
    late = _router(other, InMemoryAnnounce(), [T0 + timedelta(hours=1)])
    _, outcome = _ask(late, 200)
    assert outcome.extra.get("granted") is None
    assert len(outcome.asked) == 1


def test_an_exact_grant_on_its_thread_decides_only_that_call_on_that_thread() -> None:
    # GIVEN an exact grant (no pins) of issue_refund("o-first", 200) on thread t-o-first
    ledger, announce, clock = InMemoryLedger(), InMemoryAnnounce(), [T0 + timedelta(minutes=1)]
    router = _router(ledger, announce, clock)
    _grant(ledger, {"scope": "thread"})

    # WHEN the same call is asked on another thread, THEN it is asked
    _, elsewhere = _ask(router, 200)
    assert elsewhere.extra.get("granted") is None

    # AND on its own thread it is decided by the grant
    body = {"thread_id": "t-o-first", "input": {"order_id": "o-first", "amount": 200}, "start_id": "s-again"}
    again = router.handle(json.dumps(body))
    assert len(again.extra["granted"]) == 1
    assert grant_graphs.REFUNDS["o-first"] == 1


def test_of_twenty_concurrent_asks_against_a_one_use_grant_exactly_one_is_decided_by_it() -> None:
    # GIVEN a one-use grant
    ledger, announce, clock = InMemoryLedger(), InMemoryAnnounce(), [T0 + timedelta(minutes=1)]
    router = _router(ledger, announce, clock)
    grant = _grant(ledger, {"scope": "agent", "pins": {"amount": {"at_most": 500}}}, uses=1)

    # WHEN twenty refunds within it are asked at once, on twenty threads
    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(lambda _: _ask(router, 250)[1], range(20)))

    # THEN exactly one ran by the grant, and the other nineteen are asked
    granted = [o for o in outcomes if o.extra.get("granted")]
    asked = [o for o in outcomes if o.asked and not o.extra.get("granted")]
    assert (len(granted), len(asked)) == (1, 19), outcomes
    kept = ledger.grant(grant.grant_id)
    assert kept is not None
    assert len(kept.decided) == 1
    assert len(announce.of(Transition.CREATED)) == 19


ANSWERED_BY_FINANCE = WaitPolicy(
    answerer_groups=["finance"], grants=Grants(max_ttl="PT1H", groups=["finance-leads"]), tags={"team": "finance"}
)
"""Questions only finance may answer, and only finance-leads may grant."""


def _decided_by_grant_of(groups: tuple[str, ...], *, granted_under: WaitPolicy) -> QuestionRecord | None:
    """On a fresh ledger: a grant made under `granted_under` by Bo in `groups`, then a question asked under
    `ANSWERED_BY_FINANCE` that the grant's pins cover; what the router's grant desk made of that question."""
    ledger = InMemoryLedger()
    request = GrantRequest.parse({"scope": "agent", "ttl": "PT1H", "pins": {"amount": {"at_most": 500}}})
    call = ("issue_refund", {"order_id": "o-1", "amount": 200})
    terms = grant_terms(
        request, call=call, thread_id="t", policy=granted_under, answer={"action": "approve"}, groups=groups
    )
    ledger.add_grant(
        new_grant(terms, question_id=uuid.uuid4().hex, granted_by="bo@example.com", via="api", now=T0, groups=groups)
    )
    question = Question(
        f"t-{uuid.uuid4().hex[:6]}",
        uuid.uuid4().hex,
        {"function": "issue_refund", "args": dict(call[1])},
        policy=ANSWERED_BY_FINANCE,
        source={"function": "issue_refund"},
    )
    record = ledger.open(WaitEnvelope.create(question, now=T0), now=T0).record
    clock = lambda: T0 + timedelta(minutes=1)  # noqa: E731
    return GrantDesk(ledger, AnswerDesk(ledger), clock=clock, log=logging.getLogger("tests.grants")).decide_as_asked(
        record
    )


def test_a_grant_never_decides_a_question_its_granter_could_not_answer_or_grant() -> None:
    # GIVEN questions only finance may answer and only finance-leads may grant
    # WHEN a finance-lead outside finance granted (a grant a policy change could leave behind)
    # THEN it decides nothing: its granter could not answer the question
    assert _decided_by_grant_of(("finance-leads",), granted_under=ANSWERED_BY_FINANCE) is None

    # AND a grant by someone in finance but no lead, made under a policy that let anyone grant, decides nothing
    anyone_grants = WaitPolicy(grants=Grants(max_ttl="PT1H"), tags={"team": "finance"})
    assert _decided_by_grant_of(("finance",), granted_under=anyone_grants) is None

    # AND one by a finance-lead in finance decides it, in the granter's name
    decided = _decided_by_grant_of(("finance", "finance-leads"), granted_under=ANSWERED_BY_FINANCE)
    assert decided is not None
    assert (decided.status, decided.answered_by, decided.via) == (QuestionStatus.ANSWERED, "bo@example.com", "grant")


class _CountedReads(InMemoryLedger):
    """The in-memory ledger, counting each read of one question's row."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, str]] = []

    def get(self, thread_id: str, question_id: str) -> QuestionRecord | None:
        self.reads.append((thread_id, question_id))
        return super().get(thread_id, question_id)


def test_a_question_a_grant_decides_is_not_read_back_after_it_is_written() -> None:
    # GIVEN a live grant, WHEN an ask it covers is decided by it
    ledger, clock = _CountedReads(), [T0 + timedelta(minutes=1)]
    router = _router(ledger, InMemoryAnnounce(), clock)
    _grant(ledger, {"scope": "agent", "pins": {"amount": {"at_most": 500}}})
    _, outcome = _ask(router, 200)
    assert outcome.extra["granted"]

    # THEN the desk decides on the row the router just wrote: no read of it by id (a GetItem on DynamoDB)
    assert ledger.reads == []
