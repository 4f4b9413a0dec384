"""Granting while answering, through the one decision path: an approval that carries a `grant` decides its question
and keeps the grant; a grant that would widen refuses the whole answer, so nothing is decided and nothing granted.

The queue door (the router, a trusted sender naming the person) and the desk as the answer API calls it; every other
door passes the same answer to the same desk.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from tests.agents import grant_graphs

from agent_wait import InMemoryAnnounce, Question, WaitEnvelope, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerDesk, InMemoryDeadLetter, OutcomeKind, RecordingMetrics, RefusalReason, Router
from agent_wait.engine.answering import AnswerAttempt, ThreadState, VerdictKind
from agent_wait.engine.checks import answerer_for
from agent_wait.engine.granting import grant_offers, split_grant
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger, QuestionRecord, grant_id_for
from agent_wait.policy import GrantOffer, Grants

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
UP_TO_500 = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}}


def _router(ledger: InMemoryLedger) -> Router:
    graph = grant_graphs.build_granted_refund_graph(InMemorySaver())
    return Router(
        LangGraphAdapter(graph),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=InMemoryAnnounce(),
        metrics=RecordingMetrics(),
        clock=lambda: T0,
    )


def _ask(router: Router, amount: int) -> tuple[str, str, Any]:
    """A refund of `amount` asked on a new thread: (the thread id, the order id, the start's outcome)."""
    order = f"o-{uuid.uuid4().hex[:8]}"
    body = {"thread_id": f"t-{order}", "input": {"order_id": order, "amount": amount}, "start_id": f"s-{order}"}
    return f"t-{order}", order, router.handle(json.dumps(body))


def _answer(router: Router, thread_id: str, question_id: str, answer: dict[str, Any], **fields: Any) -> Any:
    message = {"thread_id": thread_id, "question_id": question_id, "answer": answer, **fields}
    return router.handle(json.dumps(message))


def test_an_approval_with_a_grant_decides_its_question_and_the_grant_decides_the_next_asks() -> None:
    # GIVEN a refund of 200 asked, and a trusted queue sender answering for Ana
    ledger = InMemoryLedger()
    router = _router(ledger)
    thread_id, order, asked = _ask(router, 200)
    (question_id,) = asked.asked

    # WHEN Ana approves it and grants refunds up to 500 for an hour, three uses
    outcome = _answer(
        router, thread_id, question_id, {"action": "approve", "grant": UP_TO_500}, answered_by="ana@example.com"
    )

    # THEN her question is decided and the refund runs once; the agent's answer carries no grant
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    record = ledger.get(thread_id, question_id)
    assert record is not None
    assert (record.status, record.answer) == (QuestionStatus.RESUMED, {"action": "approve"})
    assert grant_graphs.REFUNDS[order] == 1

    # AND the grant is kept under the question's id, in Ana's name, with what it covers
    grant = ledger.grant(grant_id_for("issue_refund", question_id))
    assert grant is not None
    assert (grant.granted_by, grant.via, grant.uses_left, grant.question_id) == (
        "ana@example.com",
        "queue",
        3,
        question_id,
    )
    assert grant.terms.pins["amount"].to_dict() == {"at_most": 500}
    assert grant.expires_at == "2026-12-07T10:00:00Z"

    # AND the next ask within it runs at once, decided by it
    _, next_order, next_ask = _ask(router, 300)
    assert next_ask.extra["granted"], next_ask
    assert grant_graphs.REFUNDS[next_order] == 1


def _asked(ledger: InMemoryLedger, policy: WaitPolicy, amount: int = 200) -> QuestionRecord:
    question = Question(
        f"t-{uuid.uuid4().hex[:6]}",
        uuid.uuid4().hex,
        {"function": "issue_refund", "args": {"order_id": "o-1", "amount": amount}},
        policy=policy,
        source={"function": "issue_refund"},
    )
    return ledger.open(WaitEnvelope.create(question, now=T0), now=T0).record


def _decide(ledger: InMemoryLedger, record: QuestionRecord, answer: Any, *, answer_id: str = "a-1", **who: Any) -> Any:
    person = who.pop("person", "ana@example.com")
    answerer = answerer_for("api", person=person, subject=who.pop("subject", None), **who)
    attempt = AnswerAttempt(record.thread_id, record.question_id, answer, answer_id, answerer, T0)
    return AnswerDesk(ledger).decide(attempt, ThreadState(None, lambda _question: True))


LEADS_GRANT = WaitPolicy(grants=Grants(max_ttl="PT1H", max_uses=3, groups=["leads"]))


@pytest.mark.parametrize(
    ("policy", "grant", "who", "code"),
    [
        (grant_graphs.GRANTING, {**UP_TO_500, "pins": {"amount": {"at_most": 100}}}, {}, "widens"),
        (grant_graphs.GRANTING, {**UP_TO_500, "pins": {"currency": {"equals": "EUR"}}}, {}, "widens"),
        (grant_graphs.GRANTING, {**UP_TO_500, "ttl": "PT2H"}, {}, "over_limit"),
        (grant_graphs.GRANTING, {**UP_TO_500, "uses": 4}, {}, "over_limit"),
        (grant_graphs.GRANTING, {**UP_TO_500, "uses": None}, {}, "over_limit"),
        (grant_graphs.GRANTING, {"ttl": "PT1H", "forever": True}, {}, "bad_grant"),
        (LEADS_GRANT, UP_TO_500, {"groups": ["finance"]}, "not_granter"),
        (grant_graphs.GRANTING, UP_TO_500, {"vouched": False, "person": "sqs:AROAX"}, "not_granter"),
        (WaitPolicy(), UP_TO_500, {}, "grants_off"),
    ],
    ids=[
        "pin-not-held",
        "no-such-parameter",
        "ttl-over",
        "uses-over",
        "unlimited-uses-over",
        "bad-shape",
        "not-a-granter",
        "unvouched-sender",
        "policy-without-grants",
    ],
)
def test_a_grant_that_would_widen_refuses_the_whole_answer_and_nothing_is_granted(
    policy: WaitPolicy, grant: dict[str, Any], who: dict[str, Any], code: str
) -> None:
    ledger = InMemoryLedger()
    record = _asked(ledger, policy)

    verdict = _decide(ledger, record, {"action": "approve", "grant": grant}, **who)

    assert (verdict.kind, verdict.reason) == (VerdictKind.REFUSED, RefusalReason.GRANT_REFUSED), verdict
    assert f"({code})" in verdict.detail
    assert "nothing was decided" in verdict.detail
    after = ledger.get(record.thread_id, record.question_id)
    assert after is not None
    assert after.status is QuestionStatus.OPEN
    assert ledger.grants(now=T0) == []


def test_the_same_answer_again_keeps_one_grant_and_makes_the_one_its_first_delivery_died_before() -> None:
    # GIVEN Ana's approval with a grant, decided
    ledger = InMemoryLedger()
    record = _asked(ledger, grant_graphs.GRANTING)
    answer = {"action": "approve", "grant": UP_TO_500}
    first = _decide(ledger, record, answer)
    assert first.kind is VerdictKind.DECIDED
    assert first.grant is not None

    # WHEN the same answer comes again, THEN it repeats, and the grant is the one kept
    again = _decide(ledger, record, answer)
    assert again.kind is VerdictKind.REPEATED
    assert again.grant == first.grant
    assert len(ledger.grants(now=T0)) == 1

    # AND when the first delivery died between the decision and the grant's write, the repeat makes it
    fresh = InMemoryLedger()
    asked = _asked(fresh, grant_graphs.GRANTING)
    decided = _decide(fresh, asked, {"action": "approve"})  # as if the grant's write never happened
    assert decided.kind is VerdictKind.DECIDED
    assert fresh.grants(now=T0) == []
    repeated = _decide(fresh, asked, answer)
    assert repeated.kind is VerdictKind.REPEATED
    assert repeated.grant is not None
    assert [g.grant_id for g in fresh.grants(now=T0)] == [grant_id_for("issue_refund", asked.question_id)]

    # AND another person's answer to the decided question makes no grant
    other = _decide(fresh, asked, answer, answer_id="a-2", person="bo@example.com")
    assert other.kind is VerdictKind.REFUSED
    assert other.grant is None
    assert len(fresh.grants(now=T0)) == 1


def test_a_policys_offers_are_offered_only_where_the_call_satisfies_them() -> None:
    offers = [
        GrantOffer.parse({"label": "This call again today", "scope": "thread", "ttl": "PT1H", "uses": 2}),
        GrantOffer.parse({"label": "Up to 500", "scope": "agent", "ttl": "PT1H", "pins": {"amount": {"at_most": 500}}}),
    ]
    policy = WaitPolicy(grants=Grants(max_ttl="PT1H", offers=offers))
    ledger = InMemoryLedger()

    assert [label for _, label in _labels(_asked(ledger, policy, amount=200))] == ["This call again today", "Up to 500"]
    assert [index for index, _ in _labels(_asked(ledger, policy, amount=900))] == [0]
    assert grant_offers(_asked(ledger, WaitPolicy()).envelope) == []


def _labels(record: QuestionRecord) -> list[tuple[int, str]]:
    return [(index, offer.label) for index, offer in grant_offers(record.envelope)]


def test_only_an_action_answer_carries_a_grant_and_a_native_answers_own_grant_field_is_left_alone() -> None:
    native = {"decisions": [{"type": "approve"}], "grant": "read-only"}
    assert split_grant(native) == (native, None)
    assert split_grant({"grant": {"ttl": "PT1H"}}) == ({"grant": {"ttl": "PT1H"}}, None)
    rest, request = split_grant({"action": "approve", "grant": {"ttl": "PT1H", "uses": 2}})
    assert rest == {"action": "approve"}
    assert request is not None
    assert (request.ttl, request.uses, request.scope) == (timedelta(hours=1), 2, "thread")
