"""`POST /questions/{id}/extend` with a move no deadline can hold answers 422 `beyond_maximum` naming the limit,
never a 500: a `by` of 999,999,999 days or weeks, a number of seconds past what a duration holds, and an `until` in
the last second of year 9999 (or one whose offset puts it past the year's end in UTC). Nothing moves."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.support.api_events import call

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy
from agent_wait.policy.extension import Extension

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
MANAGER = {"iss": "https://issuer.example.com", "sub": "u-m", "email": "m@example.com", "cognito:groups": "[ops]"}
POLICY = WaitPolicy(timeout="P1D", extend=Extension(groups=["ops"], max_total="P2D"))
POLICY_LIMIT = "the policy lets the deadline move at most P2D past 2030-01-02T09:00:00Z, to 2030-01-04T09:00:00Z; "
ANY_LIMIT = "by may be at most P3650D (about ten years), the furthest any policy lets a deadline move; got "


@pytest.fixture
def asked() -> tuple[Any, InMemoryLedger, str]:
    ledger = InMemoryLedger()
    context = ApiContext(
        ledger=ledger, service=AnswerService(ledger, InMemoryEntryQueue(), clock=lambda: T0), clock=lambda: T0
    )
    question_id = f"q-{uuid.uuid4().hex[:12]}"
    question = Question(f"t-{question_id}", question_id, {"amount": 1}, POLICY, source={"function": "f"}, asked_at=T0)
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
    return create_app(lambda: context), ledger, question_id


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"by": "P999999999D"}, ANY_LIMIT + "'P999999999D'"),
        ({"by": "P99999999W"}, ANY_LIMIT + "'P99999999W'"),
        ({"by": "PT99999999999999H"}, ANY_LIMIT + "'PT99999999999999H'"),
        ({"by": 86_399_999_999_999}, ANY_LIMIT + "86399999999999"),
        ({"by": 1e20}, ANY_LIMIT + "1e+20"),
        ({"by": 10**30}, ANY_LIMIT + str(10**30)),
        ({"by": "P3651D"}, ANY_LIMIT + "'P3651D'"),
        ({"until": "9999-12-31T23:59:59.999999Z"}, POLICY_LIMIT + "9999-12-31T23:59:59Z is later"),
        ({"until": "9999-12-31T23:59:59Z"}, POLICY_LIMIT + "9999-12-31T23:59:59Z is later"),
        (
            {"until": "9999-12-31T23:59:59-01:00"},
            "until is later than any time a deadline holds (the last is 9999-12-31T23:59:59Z; the policy allows far "
            "less); got '9999-12-31T23:59:59-01:00'",
        ),
    ],
)
def test_a_move_no_deadline_can_hold_is_422_beyond_maximum_naming_the_limit(
    asked: tuple[Any, InMemoryLedger, str], body: dict[str, Any], detail: str
) -> None:
    # GIVEN an open question a member of ops may extend by two days at most
    app, ledger, question_id = asked

    # WHEN they ask to move it further than any date holds
    response = call(app, "POST", f"/questions/{question_id}/extend", body, claims=MANAGER)

    # THEN the API refuses it with 422 beyond_maximum, naming the limit, and nothing moved
    assert (response.status, response.json()["reason"]) == (422, "beyond_maximum"), response.body
    assert response.json()["detail"] == detail
    record = ledger.find(question_id)
    assert record is not None
    assert (record.expires_at, record.extensions) == ("2030-01-02T09:00:00Z", ())


def test_a_move_within_ten_years_but_past_the_policy_names_the_policys_limit(
    asked: tuple[Any, InMemoryLedger, str],
) -> None:
    # GIVEN the same question
    app, _, question_id = asked

    # WHEN a member of ops asks for exactly the longest duration any policy takes
    response = call(app, "POST", f"/questions/{question_id}/extend", {"by": "P3650D"}, claims=MANAGER)

    # THEN the policy's own limit is the one named
    assert (response.status, response.json()["reason"]) == (422, "beyond_maximum")
    assert response.json()["detail"] == POLICY_LIMIT + "2039-12-31T09:00:00Z is later"


def test_an_until_before_any_time_a_deadline_holds_is_422_not_later(asked: tuple[Any, InMemoryLedger, str]) -> None:
    # GIVEN the same question
    app, ledger, question_id = asked

    # WHEN the new deadline's offset puts it before the first datetime in UTC
    body = {"until": "0001-01-01T00:00:00+01:00"}
    response = call(app, "POST", f"/questions/{question_id}/extend", body, claims=MANAGER)

    # THEN it is refused as not later, never a 500, and nothing moved
    assert (response.status, response.json()["reason"]) == (422, "not_later"), response.body
    assert response.json()["detail"] == (
        "until is earlier than any time a deadline holds, so not later than the current deadline; "
        "got '0001-01-01T00:00:00+01:00'"
    )
    record = ledger.find(question_id)
    assert record is not None
    assert record.expires_at == "2030-01-02T09:00:00Z"
