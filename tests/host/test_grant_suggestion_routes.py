"""The inbox's suggested grant and a grant's dry run over the answer API (`GET /grants/suggestions`, `POST
/grants/dry-run`), after approvals made through the API itself; on the in-memory ledger and on DynamoDB over the
emulator."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from tests.host.test_quorum_routes import ALICE, CAROL, T0, Api
from tests.support.api_events import call

from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.engine.grant_suggestions import MAX_ROWS, SUGGEST_AFTER
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import GrantOffer, GrantRequest, Grants, WaitPolicy
from agent_wait.policy.pins import Pin

UP_TO_500 = GrantOffer(
    "Allow up to 500", GrantRequest(scope="agent", ttl=timedelta(hours=1), uses=3, pins={"amount": Pin("at_most", 500)})
)
UP_TO_100 = GrantOffer(
    "Allow up to 100", GrantRequest(scope="agent", ttl=timedelta(hours=1), uses=3, pins={"amount": Pin("at_most", 100)})
)
GRANTS = Grants(max_ttl="PT1H", max_uses=3, groups=["finance"], offers=[UP_TO_100, UP_TO_500])


def granting(api: Api, grants: Grants | None = GRANTS) -> WaitPolicy:
    """The test's policy, tagged for this test alone: the emulator's table is shared, and a grant covers only
    questions with its tags."""
    return WaitPolicy(timeout="P3D", tags={"team": api.team}, grants=grants)  # pyright: ignore[reportAttributeAccessIssue]


@pytest.fixture(params=["memory", "emulator"])
def api(request: pytest.FixtureRequest) -> Api:
    if request.param == "memory":
        made = Api(InMemoryLedger())
    else:
        name, client = request.getfixturevalue("question_table")
        made = Api(DynamoDbLedger(name, client=client))
    made.team = f"finance-{uuid.uuid4().hex[:8]}"  # pyright: ignore[reportAttributeAccessIssue]
    return made


def ask(api: Api, amount: int, *, policy: WaitPolicy | None = None, order: str = "A-1") -> str:
    question_id = f"q-{uuid.uuid4().hex[:12]}"
    value = {"function": "refund", "args": {"order": order, "amount": amount}}
    policy = policy or granting(api)
    question = Question(
        f"t-{question_id}", question_id, value, policy=policy, source={"function": "refund"}, asked_at=T0
    )
    api.ledger.open(WaitEnvelope.create(question), now=T0)
    return question_id


def approved(api: Api, amount: int, **asked: Any) -> str:
    question_id = ask(api, amount, **asked)
    assert api.answer(question_id, "approve", ALICE).status == 200
    return question_id


def suggestions(api: Api, question_id: str, claims: dict[str, Any] | None = ALICE) -> Any:
    return call(api.app, "GET", "/grants/suggestions", query={"question_id": question_id}, claims=claims)


def test_after_k_identical_approvals_the_next_ask_gets_a_suggested_grant_and_only_the_offers_its_call_satisfies(
    api: Api,
) -> None:
    # GIVEN a refund of 300 asked after one fewer identical approval than the threshold
    past = [approved(api, 300) for _ in range(SUGGEST_AFTER - 1)]
    first = suggestions(api, ask(api, 300))

    # THEN no grant is suggested yet, but the form gets the offer its call satisfies (up to 500, not up to 100)
    assert first.status == 200, first.json()
    assert first.json()["suggestion"] is None
    assert [(o["index"], o["label"]) for o in first.json()["offers"]] == [(1, "Allow up to 500")]
    assert first.json()["offers"][0]["grant"]["pins"] == {"amount": {"at_most": 500}}

    # WHEN one more identical approval is made, THEN the next ask gets a suggested grant, naming the approvals
    past.append(approved(api, 300))
    body = suggestions(api, ask(api, 300)).json()
    assert (body["suggestion"]["count"], body["suggestion"]["threshold"]) == (SUGGEST_AFTER, SUGGEST_AFTER)
    assert sorted(a["question_id"] for a in body["suggestion"]["approvals"]) == sorted(past)
    assert {a["answered_by"] for a in body["suggestion"]["approvals"]} == {"alice@example.com"}
    assert (body["read"]["max_rows"], body["read"]["capped"]) == (MAX_ROWS, False)


def test_a_question_whose_policy_allows_no_grants_gets_no_suggestion_no_offers_and_reads_no_past_rows(api: Api) -> None:
    without = granting(api, grants=None)
    for _ in range(SUGGEST_AFTER):
        approved(api, 300, policy=without)

    body = suggestions(api, ask(api, 300, policy=without)).json()

    assert (body["suggestion"], body["offers"], body["read"]["rows"]) == (None, [], 0)


def test_the_dry_run_lists_the_past_questions_a_grant_would_have_decided_and_those_it_would_not(api: Api) -> None:
    # GIVEN past approvals of 200, 500 and 900, and an open refund of 300
    small, edge, large = (approved(api, amount, order=f"O-{amount}") for amount in (200, 500, 900))
    question_id = ask(api, 300)

    # WHEN Alice dry-runs a grant for any order up to 500
    grant = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}}
    reply = call(api.app, "POST", "/grants/dry-run", {"question_id": question_id, "grant": grant}, claims=ALICE)

    # THEN it would have decided the 200 and the 500, not the 900, and nothing was granted or decided
    assert reply.status == 200, reply.json()
    body = reply.json()
    assert sorted(q["question_id"] for q in body["covered"]) == sorted([small, edge])
    assert [(q["question_id"], q["args"]["amount"]) for q in body["not_covered"]] == [(large, 900)]
    assert (body["covered_count"], body["not_covered_count"], body["terms"]["pins"]) == (2, 1, grant["pins"])
    assert call(api.app, "GET", "/grants", claims=ALICE).json()["grants"] == []
    assert api.record(question_id).status.value == "open"


@pytest.mark.parametrize(
    ("grant", "claims", "code"),
    [
        ({"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 200}}}, ALICE, "widens"),
        ({"scope": "agent", "ttl": "PT2H", "uses": 3}, ALICE, "over_limit"),
        ({"scope": "agent", "ttl": "PT1H", "uses": 3}, CAROL, "not_granter"),
        ({"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"around": 3}}}, ALICE, "bad_grant"),
    ],
    ids=["pin-the-call-fails", "over-the-ttl", "not-a-granter", "not-a-pin"],
)
def test_a_dry_run_of_a_grant_the_answer_would_refuse_is_refused_with_the_same_reason(
    api: Api, grant: dict[str, Any], claims: dict[str, Any], code: str
) -> None:
    question_id = ask(api, 300)

    reply = call(api.app, "POST", "/grants/dry-run", {"question_id": question_id, "grant": grant}, claims=claims)

    assert (reply.status, reply.json()["reason"], reply.json()["code"]) == (422, "grant_refused", code)
    assert reply.json()["detail"].startswith(f"the grant would be refused ({code}): ")


def test_the_suggestion_routes_need_a_sign_in_a_known_question_and_a_well_formed_body(api: Api) -> None:
    question_id = ask(api, 300)
    grant = {"scope": "agent", "ttl": "PT1H", "uses": 1}

    assert suggestions(api, question_id, claims=None).status == 401
    assert call(api.app, "POST", "/grants/dry-run", {"question_id": question_id, "grant": grant}).status == 401
    missing = suggestions(api, "q-nope")
    assert (missing.status, missing.json()["reason"]) == (404, "unknown_question")
    assert call(api.app, "GET", "/grants/suggestions", claims=ALICE).json()["reason"] == "bad_question_id"
    for body in ({"question_id": question_id}, {"question_id": question_id, "grant": grant, "x": 1}, [1]):
        refused = call(api.app, "POST", "/grants/dry-run", body, claims=ALICE)
        assert (refused.status, refused.json()["reason"]) == (400, "bad_dry_run")
