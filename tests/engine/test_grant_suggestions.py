"""Suggest, never assume (`agent_wait.engine.grant_suggestions`): which past approvals count as identical, when a
grant is suggested, which past questions a proposed grant's dry run says it would have decided (by
`GrantTerms.covers`), and that the read of past rows is bounded."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.checks import answerer_for
from agent_wait.engine.grant_suggestions import (
    SUGGEST_AFTER,
    WINDOW,
    dry_run,
    identical_approvals,
    read_decided,
    suggestion_for,
)
from agent_wait.engine.granting import grant_for
from agent_wait.ledger import Decision, InMemoryLedger, QuestionPage, QuestionRecord
from agent_wait.policy import GrantRequest, Grants, WaitPolicy

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
GRANTING = WaitPolicy(
    timeout="P1D", tags={"team": "finance"}, grants=Grants(max_ttl="PT1H", max_uses=3, scopes=["thread", "agent"])
)
WITHOUT_GRANTS = WaitPolicy(timeout="P1D", tags={"team": "finance"})
_ids = itertools.count()


class Book:
    """An in-memory ledger of refund questions, asked and decided at chosen times."""

    def __init__(self) -> None:
        self.ledger = InMemoryLedger()

    def ask(
        self,
        amount: int = 200,
        *,
        order: str = "A-1",
        function: str = "issue_refund",
        policy: WaitPolicy = GRANTING,
        thread: str | None = None,
        at: datetime = NOW - timedelta(hours=1),
    ) -> QuestionRecord:
        question_id = f"q-{next(_ids):04d}"
        question = Question(
            thread or f"t-{question_id}",
            question_id,
            {"function": function, "args": {"order_id": order, "amount": amount}},
            policy=policy,
            source={"function": function},
            asked_at=at,
        )
        return self.ledger.open(WaitEnvelope.create(question, now=at), now=at).record

    def decide(
        self,
        record: QuestionRecord,
        answer: Any = None,
        *,
        status: QuestionStatus = QuestionStatus.ANSWERED,
        by: str = "bob@example.com",
        via: str = "api",
        at: datetime = NOW - timedelta(minutes=30),
    ) -> QuestionRecord:
        decision = Decision(status, answer or {"action": "approve"}, f"a-{record.question_id}", answered_by=by, via=via)
        decided = self.ledger.decide(record.thread_id, record.question_id, decision, now=at).record
        assert decided is not None
        return decided

    def approved(self, amount: int = 200, **asked: Any) -> QuestionRecord:
        return self.decide(self.ask(amount, **asked))

    def rows(self) -> list[QuestionRecord]:
        return read_decided(self.ledger, self.ask(1)).records


def ids(records: list[QuestionRecord]) -> list[str]:
    return [record.question_id for record in records]


def test_identical_approvals_are_the_same_call_and_tags_approved_by_a_person_within_the_window_newest_first() -> None:
    # GIVEN three approvals of exactly the call now asked, and as many that differ in one way each
    book = Book()
    same = [book.decide(book.ask(200), at=NOW - timedelta(days=d)) for d in (3, 1, 2)]
    book.approved(201)  # another amount
    book.approved(200, order="B-2")  # another order
    book.approved(200, function="cancel_order")  # another function
    book.decide(book.ask(200), {"action": "reject"})  # rejected
    book.decide(book.ask(200), {"action": "approve", "args": {"amount": 150}})  # approved with an edit
    book.decide(book.ask(200), via="grant")  # decided by a grant, not a person
    book.decide(book.ask(200), status=QuestionStatus.EXPIRED, by="agent-wait:deadline", via="deadline")
    book.decide(book.ask(200, at=NOW - WINDOW - timedelta(days=1)), at=NOW - WINDOW - timedelta(hours=1))  # too old
    other_tags = WaitPolicy(timeout="P1D", tags={"team": "legal"}, grants=Grants(max_ttl="PT1H"))
    book.approved(200, policy=other_tags)
    asked = book.ask(200)

    # WHEN the approvals of the call asked are looked for
    found = identical_approvals(asked, book.rows(), now=NOW)

    # THEN only the three identical ones count, newest first
    assert ids(found) == [same[1].question_id, same[2].question_id, same[0].question_id]


def test_a_grant_is_suggested_on_an_open_question_once_its_call_was_approved_k_times_within_the_window() -> None:
    # GIVEN one approval fewer than the threshold of the call asked
    book = Book()
    for _ in range(SUGGEST_AFTER - 1):
        book.approved(200)
    asked = book.ask(200)

    # THEN nothing is suggested yet
    assert suggestion_for(asked, book.rows(), now=NOW) is None

    # WHEN one more person approves the same call
    book.approved(200, thread="another-thread")

    # THEN a grant is suggested on the open question, naming the approvals it counted
    suggested = suggestion_for(asked, book.rows(), now=NOW)
    assert suggested is not None
    assert (suggested.function, len(suggested.approvals)) == ("issue_refund", SUGGEST_AFTER)


@pytest.mark.parametrize("case", ["decided", "no grants", "not a call"])
def test_no_grant_is_suggested_on_a_decided_question_one_whose_policy_allows_none_or_a_question_that_is_no_call(
    case: str,
) -> None:
    # GIVEN enough identical approvals of the call
    book = Book()
    policy = WITHOUT_GRANTS if case == "no grants" else GRANTING
    for _ in range(SUGGEST_AFTER + 1):
        book.approved(200, policy=policy)
    asked = book.ask(200, policy=policy)
    if case == "decided":
        asked = book.decide(asked)
    if case == "not a call":
        envelope = WaitEnvelope.create(Question("t-x", "q-free", "May I?", policy=GRANTING, asked_at=NOW), now=NOW)
        asked = book.ledger.open(envelope, now=NOW).record

    # THEN no grant is suggested on it
    assert suggestion_for(asked, book.rows(), now=NOW) is None


def _terms(asked: QuestionRecord, grant: dict[str, Any]) -> Any:
    person = answerer_for("api", person="alice@example.com")
    return grant_for(asked, GrantRequest.parse(grant), {"action": "approve"}, person, now=NOW).terms


def test_the_dry_run_lists_the_past_questions_the_grants_pins_cover_whatever_their_outcome_and_those_they_do_not() -> (
    None
):
    # GIVEN past refunds of 200 (approved), 500 (rejected by a person) and 600 (approved), another function's call,
    # and an open refund of 300
    book = Book()
    small = book.approved(200, order="A-7")
    rejected = book.decide(book.ask(500, order="A-8"), {"action": "reject"}, by="carol@example.com")
    large = book.approved(600, order="A-9")
    book.approved(100, function="cancel_order")
    asked = book.ask(300)

    # WHEN a grant for any order of at most 500, on any thread, is run over them
    terms = _terms(asked, {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}})
    found = dry_run(terms, asked, book.rows(), now=NOW)

    # THEN it would have decided the 200 and the 500 (which a person rejected), not the 600; the other function's
    # call is not considered at all
    assert sorted(ids(found.covered)) == sorted([small.question_id, rejected.question_id])
    assert ids(found.not_covered) == [large.question_id]


def test_the_dry_run_of_a_grant_for_this_thread_covers_only_past_questions_of_the_same_thread() -> None:
    # GIVEN two past approvals of the same call, one on the thread now asking
    book = Book()
    here = book.approved(200, thread="t-here")
    elsewhere = book.approved(200, thread="t-elsewhere")
    asked = book.ask(200, thread="t-here")

    # WHEN an exact grant for this thread is run over them
    found = dry_run(_terms(asked, {"scope": "thread", "ttl": "PT1H", "uses": 1}), asked, book.rows(), now=NOW)

    # THEN only the question of the same thread is covered
    assert (ids(found.covered), ids(found.not_covered)) == ([here.question_id], [elsewhere.question_id])


class CountingLedger(InMemoryLedger):
    """Counts the rows each `page` call asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def page(self, status: QuestionStatus, *, limit: int, **kwargs: Any) -> QuestionPage:
        self.asked.append(limit)
        return super().page(status, limit=limit, **kwargs)


def test_the_read_of_past_questions_takes_at_most_its_pages_and_says_when_it_left_some_unread() -> None:
    # GIVEN 30 decided refunds
    book = Book()
    book.ledger = CountingLedger()
    for amount in range(30):
        book.approved(amount)
    asked = book.ask(1)

    # WHEN at most 3 pages of 5 are read (the first status, resumed, holds none)
    capped = read_decided(book.ledger, asked, max_pages=3, page_size=5)

    # THEN 3 pages of at most 5 rows were asked for, 10 rows came back, and the read says it left some unread
    assert (book.ledger.asked, len(capped.records), capped.capped) == ([5, 5, 5], 10, True)

    # WHEN the pages may hold them all, THEN every one is read, and the read is not capped
    whole = read_decided(book.ledger, asked)
    assert (len(whole.records), whole.capped) == (30, False)
