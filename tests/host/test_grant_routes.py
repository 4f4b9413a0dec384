"""Granting through the answer API and seeing grants there: `POST /questions/{id}/answer` with a `grant` field,
`GET /grants`, `GET /grants/{id}`, `DELETE /grants/{id}`; on the in-memory ledger and on DynamoDB over the emulator."""

from __future__ import annotations

from typing import Any

import pytest
from tests.host.test_quorum_routes import ALICE, BOB, CAROL, Api
from tests.support.api_events import call

from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import Grants

GRANTS = Grants(max_ttl="PT8H", max_uses=5, groups=["finance"])
"""Finance may grant, for at most eight hours and five uses."""
UP_TO_1000 = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 1000}}}


@pytest.fixture(params=["memory", "emulator"])
def api(request: pytest.FixtureRequest) -> Api:
    if request.param == "memory":
        return Api(InMemoryLedger())
    name, client = request.getfixturevalue("question_table")
    return Api(DynamoDbLedger(name, client=client))


def _approve_and_grant(api: Api, question_id: str, grant: Any, claims: dict[str, Any] = ALICE, **extra: Any) -> Any:
    return api.answer(question_id, "approve", claims, grant=grant, **extra)


def test_an_approval_through_the_api_makes_the_grant_and_the_grant_is_listed_shown_and_revoked(api: Api) -> None:
    # GIVEN a refund of 900 that finance may grant on
    question_id = api.ask(timeout="P3D", grants=GRANTS)

    # WHEN Alice approves it and grants refunds up to 1000 for an hour
    reply = _approve_and_grant(api, question_id, UP_TO_1000, key="k-grant")

    # THEN it is decided, the row keeps the approval without the grant, and the response shows the grant
    assert reply.status == 200, reply.json()
    assert api.record(question_id).answer == {"action": "approve"}
    grant = reply.json()["grant"]
    assert (grant["function"], grant["pins"], grant["uses_left"], grant["granted_by"], grant["via"]) == (
        "refund",
        {"amount": {"at_most": 1000}},
        3,
        "alice@example.com",
        "api",
    )
    assert (grant["expires_at"], grant["live"], grant["exact"]) == ("2030-01-01T10:00:00Z", True, False)

    # AND her client's retry under the same key repeats, with the same grant, never a reused-key refusal
    again = _approve_and_grant(api, question_id, UP_TO_1000, key="k-grant")
    assert (again.status, again.json()["result"], again.json()["grant"]["grant_id"]) == (
        200,
        "repeated",
        grant["grant_id"],
    )

    # AND Bob (finance, so the policy lets him grant) lists and reads it; Carol (not finance) does not see it
    listed = call(api.app, "GET", "/grants", claims=BOB)
    assert grant["grant_id"] in [g["grant_id"] for g in listed.json()["grants"]]
    assert call(api.app, "GET", f"/grants/{grant['grant_id']}", claims=BOB).json() == grant
    assert grant["grant_id"] not in [
        g["grant_id"] for g in call(api.app, "GET", "/grants", claims=CAROL).json()["grants"]
    ]
    hidden = call(api.app, "DELETE", f"/grants/{grant['grant_id']}", claims=CAROL)
    assert (hidden.status, hidden.json()["reason"]) == (404, "unknown_grant")

    # WHEN Alice revokes it, THEN it is kept as revoked by her and no longer listed as live
    revoked = call(api.app, "DELETE", f"/grants/{grant['grant_id']}", claims=ALICE)
    assert revoked.status == 200
    assert (revoked.json()["revoked_by"], revoked.json()["live"]) == ("alice@example.com", False)
    assert grant["grant_id"] not in [
        g["grant_id"] for g in call(api.app, "GET", "/grants", claims=ALICE).json()["grants"]
    ]
    everything = call(api.app, "GET", "/grants", query={"all": "1"}, claims=ALICE).json()["grants"]
    assert [g["revoked_by"] for g in everything if g["grant_id"] == grant["grant_id"]] == ["alice@example.com"]


def test_a_grant_that_would_widen_is_422_and_nothing_is_decided_or_granted(api: Api) -> None:
    question_id = api.ask(timeout="P3D", grants=GRANTS)

    too_narrow = _approve_and_grant(api, question_id, {**UP_TO_1000, "pins": {"amount": {"at_most": 500}}})
    too_long = _approve_and_grant(api, question_id, {**UP_TO_1000, "ttl": "P1D"})
    not_a_grant = _approve_and_grant(api, question_id, "for a while")

    for reply, code in ((too_narrow, "widens"), (too_long, "over_limit"), (not_a_grant, "bad_grant")):
        assert (reply.status, reply.json()["reason"]) == (422, "grant_refused")
        assert f"({code})" in reply.json()["detail"]
    assert api.record(question_id).status is QuestionStatus.OPEN
    every = call(api.app, "GET", "/grants", query={"all": "1"}, claims=ALICE).json()["grants"]
    assert [g for g in every if g["question_id"] == question_id] == []  # the emulator's table is shared by tests
    assert api.queue.messages == []


def test_the_grants_routes_need_a_sign_in_and_a_sane_limit(api: Api) -> None:
    assert call(api.app, "GET", "/grants").status == 401
    bad = call(api.app, "GET", "/grants", query={"limit": "0"}, claims=ALICE)
    assert (bad.status, bad.json()["reason"]) == (400, "bad_limit")
    missing = call(api.app, "GET", "/grants/refund~nope", claims=ALICE)
    assert (missing.status, missing.json()["reason"]) == (404, "unknown_grant")
