"""Standing grants, the policy half (`agent_wait.policy.grants`): who may grant, how far a grant may reach, and
which later calls it covers. A grant never covers more than its pins and the call asked allow."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agent_wait.contract.bound_call import wait_call
from agent_wait.errors import PolicyError
from agent_wait.policy import GrantError, GrantRequest, Grants, GrantTerms, Pin, WaitPolicy, grant_terms
from agent_wait.policy.grants import Call

SOURCE = {"function": "issue_refund"}
ASKED = {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 200}}
GRANTING = WaitPolicy(timeout="P1D", tags={"team": "finance"}, grants=Grants(max_ttl="PT1H", max_uses=3))
APPROVE = {"action": "approve"}


def _terms(grant: dict[str, Any], *, policy: WaitPolicy = GRANTING, answer: Any = APPROVE, **who: Any) -> GrantTerms:
    request = GrantRequest.parse(grant)
    return grant_terms(request, call=wait_call(ASKED, SOURCE), thread_id="t-1", policy=policy, answer=answer, **who)


def _call(**args: Any) -> Call | None:
    return wait_call({"function": "issue_refund", "args": {"order_id": "o-1", "amount": 200, **args}}, SOURCE)


def test_a_pattern_covers_the_calls_its_pins_allow_and_no_other() -> None:
    # GIVEN an approval that grants `amount <= 500` on issue_refund, for any thread
    terms = _terms({"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}})

    # THEN later asks at 300 and 500 on other orders and threads are covered, 600 is not
    finance = {"team": "finance"}
    assert terms.covers(_call(amount=300, order_id="o-2"), tags=finance, thread_id="t-2")
    assert terms.covers(_call(amount=500), tags=finance, thread_id="t-3")
    assert not terms.covers(_call(amount=600), tags=finance, thread_id="t-1")
    # AND nor is another function, other tags, an extra parameter or an argument of another type
    assert not terms.covers(("drop_table", {}), tags=finance, thread_id="t")
    assert not terms.covers(_call(amount=300), tags={"team": "ops"}, thread_id="t-1")
    assert not terms.covers(_call(amount=300, currency="EUR"), tags=finance, thread_id="t-1")
    assert not terms.covers(_call(amount="300"), tags=finance, thread_id="t-1")
    assert not terms.covers(_call(amount=True), tags=finance, thread_id="t-1")


def test_without_pins_a_grant_covers_exactly_the_call_asked_on_its_own_thread() -> None:
    # GIVEN an exact grant on the question's thread
    terms = _terms({"scope": "thread", "ttl": 600, "uses": 1})

    # THEN it pins every parameter to the value asked, and only this thread
    assert terms.pins == {"order_id": Pin("equals", "o-1"), "amount": Pin("equals", 200)}
    assert terms.covers(_call(), tags={"team": "finance"}, thread_id="t-1")
    assert not terms.covers(_call(), tags={"team": "finance"}, thread_id="t-2")
    assert not terms.covers(_call(amount=201), tags={"team": "finance"}, thread_id="t-1")
    assert GrantTerms.from_dict(terms.to_dict()) == terms


@pytest.mark.parametrize(
    ("pins", "kind", "reason"),
    [
        ({"amount": {"at_most": 100}}, "widens", "does not hold for the call asked"),
        ({"amount": {"at_least": 300}}, "widens", "does not hold"),
        ({"order_id": {"prefix": "x-"}}, "widens", "does not hold"),
        ({"order_id": {"glob": "p*"}}, "widens", "does not hold"),
        ({"order_id": {"one_of": ["o-2", "o-3"]}}, "widens", "does not hold"),
        ({"amount": {"equals": "200"}}, "widens", "does not hold"),
        ({"currency": {"equals": "EUR"}}, "widens", "no parameter(s) ['currency']"),
        ({}, "bad_grant", "at least one pin"),
        ({"amount": {"below": 5}}, "bad_grant", "no kind 'below'"),
        ({"amount": {"at_most": "500"}}, "bad_grant", "finite number"),
        ({"amount": {"at_most": 1, "at_least": 0}}, "bad_grant", "must be one of"),
        ({"order_id": {"one_of": []}}, "bad_grant", "a list of 1 to 50"),
    ],
)
def test_a_pin_that_would_widen_or_cannot_be_read_is_refused_with_its_reason(
    pins: dict[str, Any], kind: str, reason: str
) -> None:
    # WHEN an approval asks for a pattern the asked call does not satisfy, or one written wrong
    with pytest.raises(GrantError) as refused:
        _terms({"scope": "agent", "ttl": "PT1H", "uses": 1, "pins": pins})

    # THEN nothing is granted, and the error says why
    assert refused.value.code == kind
    assert reason in str(refused.value)


@pytest.mark.parametrize(
    ("grant", "reason"),
    [
        ({"scope": "agent", "ttl": "PT2H", "uses": 1}, "at most PT1H"),
        ({"scope": "agent", "ttl": "PT1H", "uses": 4}, "at most 3 asks"),
        ({"scope": "agent", "ttl": "PT1H", "uses": None}, "asked for no limit"),
    ],
)
def test_a_time_or_number_of_uses_over_the_policys_limit_is_refused(grant: dict[str, Any], reason: str) -> None:
    with pytest.raises(GrantError) as refused:
        _terms(grant)
    assert refused.value.code == "over_limit"
    assert reason in str(refused.value)


def test_a_scope_the_policy_does_not_offer_is_refused() -> None:
    thread_only = WaitPolicy(grants=Grants(max_ttl="PT1H", scopes=["thread"]))
    with pytest.raises(GrantError, match=r"only for \['thread'\]"):
        _terms({"scope": "agent", "ttl": 60}, policy=thread_only)


def test_only_the_people_the_policy_names_may_grant_compared_by_person_key() -> None:
    # GIVEN grants limited to the finance-leads group and to Ana by address
    policy = WaitPolicy(grants=Grants(max_ttl="PT1H", groups=["finance-leads"], people=["Ana@Example.com"]))
    grant = {"scope": "thread", "ttl": 60}

    # THEN a lead and Ana (any case, with email:) may grant; Bo in finance may not
    assert _terms(grant, policy=policy, groups=["finance-leads"], names=["lee@example.com"]).uses == 1
    assert _terms(grant, policy=policy, names=["email:ana@example.COM"]).scope == "thread"
    with pytest.raises(GrantError) as refused:
        _terms(grant, policy=policy, groups=["finance"], names=["bo@example.com"])
    assert refused.value.code == "not_granter"


@pytest.mark.parametrize(
    ("policy", "question", "answer", "code"),
    [
        (WaitPolicy(), ASKED, APPROVE, "grants_off"),
        (GRANTING, {"anything": 1}, APPROVE, "not_grantable"),
        (GRANTING, ASKED, {"action": "reject"}, "bad_grant"),
        (GRANTING, ASKED, {"action": "approve", "args": {"amount": 100}}, "widens"),
        (
            WaitPolicy(allowed_actions=["approve", "reject"], quorum={"approvals": 2}),
            ASKED,
            APPROVE,
            "grants_off",
        ),
    ],
)
def test_a_question_a_grant_may_not_cover_is_refused_before_anything_is_granted(
    policy: WaitPolicy, question: Any, answer: Any, code: str
) -> None:
    def terms() -> GrantTerms:
        request = GrantRequest.parse({"scope": "thread", "ttl": 60})
        call = wait_call(question, SOURCE)
        return grant_terms(request, call=call, thread_id="t", policy=policy, answer=answer)

    with pytest.raises(GrantError) as refused:
        terms()
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"response_schema": {"type": "object"}}, "cannot be approved"),
        ({"allowed_actions": ["reject"]}, "cannot be approved"),
        ({"quorum": {"approvals": 2}}, "a grant is one person's decision"),
    ],
)
def test_a_policy_whose_questions_no_grant_could_decide_is_refused_where_it_is_written(
    fields: dict[str, Any], reason: str
) -> None:
    with pytest.raises(PolicyError, match=reason) as refused:
        WaitPolicy(**fields, grants=Grants(max_ttl="PT1H"))
    assert refused.value.field == "grants"


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"max_ttl": "P31D"}, "at most P30D"),
        ({"max_ttl": 0}, "more than zero seconds"),
        ({"max_ttl": "soon"}, "max_ttl must be"),
        ({"max_ttl": "PT1H", "max_uses": 0}, "1 or more"),
        ({"max_ttl": "PT1H", "max_uses": True}, "1 or more"),
        ({"max_ttl": "PT1H", "scopes": ["world"]}, "scopes must name"),
        ({"max_ttl": "PT1H", "groups": ["Finance Leads"]}, "without spaces"),
    ],
)
def test_grants_with_a_bad_limit_are_refused_where_they_are_written(fields: dict[str, Any], reason: str) -> None:
    with pytest.raises(PolicyError, match=reason):
        Grants(**fields)


@pytest.mark.parametrize(
    ("grant", "reason"),
    [
        ("yes", "must be an object"),
        ({"ttl": 60, "forever": True}, "unknown field"),
        ({"scope": "world", "ttl": 60}, "scope must be one of"),
        ({"scope": "thread"}, "needs a ttl"),
        ({"ttl": -5}, "ttl must be"),
        ({"ttl": 60, "uses": 0}, "1 or more"),
        ({"ttl": 60, "pins": ["amount"]}, "an object of parameter to pin"),
    ],
)
def test_a_grant_request_written_wrong_says_what_was_wrong(grant: Any, reason: str) -> None:
    with pytest.raises(GrantError, match=reason) as refused:
        GrantRequest.parse(grant)
    assert refused.value.code == "bad_grant"


def test_the_policy_carries_its_grants_through_the_envelopes_rules_and_back() -> None:
    # GIVEN a policy with grants
    # THEN its rules say how far a grant may reach, and the dict form reads back to the same policy
    assert GRANTING.rules()["grants"] == {
        "max_ttl": "PT1H",
        "max_uses": 3,
        "groups": [],
        "people": [],
        "scopes": ["thread", "agent"],
    }
    assert WaitPolicy.from_dict(GRANTING.to_dict()) == GRANTING
    assert "grants" not in WaitPolicy().rules()
    assert Grants.parse(GRANTING.rules()["grants"]).max_ttl == timedelta(hours=1)
    assert GrantRequest.parse(GrantRequest.parse({"ttl": "PT30M", "uses": None}).to_dict()).uses is None
