"""Granting from Slack over real HTTP (FakeSlack plays Slack for `slack_sdk`; the answer API's `/slack/interactions`
decides through `AnswerService`): a button per grant offer beside Approve, the "Approve and allow…" modal, the refusal
of a grant that may not be made, and the message of a question a grant decided."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from tests.agents.grant_graphs import UP_TO_500_FOR_AN_HOUR
from tests.announce.test_slack_door import ALICE, MARIA, SIGNING_SECRET, T0, Door, _form_error, _workspace
from tests.support.fake_slack import FakeSlack

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.contract.envelope import Transition
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.answering import AnswerDesk
from agent_wait.engine.grants import GrantDesk
from agent_wait.policy import GrantOffer, GrantRequest, Grants
from agent_wait.policy.pins import Pin

UP_TO_100 = GrantOffer(
    "Approve, and allow refunds up to 100",
    GrantRequest(scope="thread", ttl=timedelta(hours=1), uses=1, pins={"amount": Pin("at_most", 100)}),
)
"""An offer a refund of 300 does not satisfy: never shown on its message."""
GRANTING = WaitPolicy(
    timeout="P1D",
    default={"action": "reject"},
    tags={"team": "finance"},
    grants=Grants(max_ttl="PT1H", max_uses=3, offers=[UP_TO_100, UP_TO_500_FOR_AN_HOUR]),
)
WITHOUT_GRANTS = WaitPolicy(timeout="P1D", default={"action": "reject"}, tags={"team": "finance"})
OFFER_500, OPEN_GRANT_FORM = "agent_wait:grant:1", "agent_wait:grant_modal"
ALICE_KEY = "alice@example.com"


def refund(amount: int = 300) -> dict[str, Any]:
    return {"function": "issue_refund", "args": {"order_id": "o-1", "amount": amount}}


@pytest.fixture
def door() -> Iterator[Door]:
    with FakeSlack() as slack:
        door = Door(_workspace(slack))
        with door.api:
            yield door


def ask(door: Door, question_id: str = "q-1", *, policy: WaitPolicy = GRANTING) -> WaitEnvelope:
    return door.ask(question_id, policy, refund(), schema={})


def buttons(door: Door, question_id: str = "q-1") -> list[tuple[str, str]]:
    """The message's buttons: (action id, text), in order."""
    return [
        (element["action_id"], element["text"]["text"])
        for block in door.message(question_id).blocks
        if block.get("type") == "actions"
        for element in block["elements"]
    ]


def grants(door: Door) -> list[Any]:
    return door.ledger.grants(now=door.now)


def open_grant_form(door: Door, question_id: str = "q-1") -> dict[str, Any]:
    assert door.click(question_id, OPEN_GRANT_FORM, ALICE).status == 200
    return [v for v in door.slack.views.values() if v.get("private_metadata") == question_id][-1]


def submit_grant(door: Door, values: dict[str, Any], question_id: str = "q-1") -> Any:
    view = open_grant_form(door, question_id)
    filled = {"grant:scope": "thread", "grant:ttl": "PT1H", "grant:uses": "3", **values}
    state = {block: {"value": value} for block, value in filled.items()}
    return door.slack.submit_view(
        door.endpoint, view, state, user_id=ALICE, signing_secret=SIGNING_SECRET, timestamp=int(door.now.timestamp())
    )


def test_the_message_offers_each_fitting_grant_and_approve_and_allow_right_after_approve(door: Door) -> None:
    # GIVEN a refund of 300 under a policy offering "up to 100" (which would widen it) and "up to 500"
    ask(door)
    # THEN its buttons are Approve, the "up to 500" offer, "Approve and allow…", then Reject: never "up to 100"
    assert [text for _id, text in buttons(door)][:4] == [
        "Approve",
        UP_TO_500_FOR_AN_HOUR.label,
        "Approve and allow…",
        "Reject",
    ]
    assert UP_TO_100.label not in str(door.message("q-1").blocks)


def test_a_policy_without_grants_shows_no_grant_button(door: Door) -> None:
    ask(door, policy=WITHOUT_GRANTS)
    assert not [i for i, _text in buttons(door) if i.startswith("agent_wait:grant")]


def test_clicking_an_offer_approves_and_makes_exactly_one_grant_in_the_clickers_name(door: Door) -> None:
    ask(door)
    # WHEN Alice clicks the "up to 500" offer
    reply = door.click("q-1", OFFER_500, ALICE)
    # THEN the refund is approved without the grant on its row, and one grant is hers, made in Slack
    assert reply.status == 200
    assert door.row("q-1").status is QuestionStatus.ANSWERED
    assert door.row("q-1").answer == {"action": "approve"}
    (grant,) = grants(door)
    assert (grant.granted_by, grant.via, grant.question_id) == (ALICE_KEY, "slack", "q-1")
    assert {name: pin.to_dict() for name, pin in grant.terms.pins.items()} == {"amount": {"at_most": 500}}
    assert (grant.terms.scope, grant.terms.uses) == ("agent", 3)
    assert door.told(ALICE)[-1] == "Done: your approval and its grant is recorded, and the agent carries on."


def test_an_offer_the_question_no_longer_offers_is_refused_privately_and_nothing_is_decided(door: Door) -> None:
    # GIVEN a message posted with the offers, for a question whose row (as asked now) has no grants
    row = WaitEnvelope.create(
        Question("t-q-1", "q-1", refund(), policy=WITHOUT_GRANTS, source={"function": "issue_refund"}, asked_at=T0),
        now=T0,
    )
    door.ledger.open(row, now=T0)
    posted = WaitEnvelope.create(
        Question("t-q-1", "q-1", refund(), policy=GRANTING, source={"function": "issue_refund"}, asked_at=T0), now=T0
    )
    door.announcer.announce(posted)
    before = door.message("q-1").blocks

    # WHEN Alice clicks the offer
    assert door.click("q-1", OFFER_500, ALICE).status == 200

    # THEN she is told why, privately; nothing is decided or granted, and the message keeps its buttons
    assert door.told(ALICE)[-1].startswith("Not recorded: the grant was refused (not_grantable): this question no")
    assert door.row("q-1").status is QuestionStatus.OPEN
    assert grants(door) == []
    assert door.message("q-1").blocks == before


def test_approve_and_allow_opens_a_modal_within_the_policys_limits_prefilled_to_the_narrowest(door: Door) -> None:
    ask(door)
    view = open_grant_form(door)
    blocks = {block.get("block_id"): block for block in view["blocks"]}
    assert view["callback_id"] == "agent_wait:grant"
    assert [o["value"] for o in blocks["grant:scope"]["element"]["options"]] == ["thread", "agent"]
    assert blocks["grant:scope"]["element"]["initial_option"]["value"] == "thread"
    assert [o["value"] for o in blocks["grant:ttl"]["element"]["options"]] == ["PT15M", "PT1H"]
    assert blocks["grant:uses"]["element"]["max_value"] == "3"
    assert blocks["grant:pin:amount"]["element"]["initial_option"]["value"] == "equals"
    assert blocks["grant:value:amount"]["element"]["initial_value"] == "300"
    assert blocks["grant:value:order_id"]["element"]["initial_value"] == "o-1"


def test_the_modal_approves_and_makes_the_grant_as_filled_in_the_clickers_name(door: Door) -> None:
    ask(door)
    reply = submit_grant(
        door,
        {
            "grant:scope": "agent",
            "grant:pin:amount": "at_most",
            "grant:value:amount": "400",
            "grant:pin:order_id": "any",
        },
    )
    assert (reply.status, reply.json()) == (200, {"response_action": "clear"})
    assert door.row("q-1").status is QuestionStatus.ANSWERED
    (grant,) = grants(door)
    assert (grant.granted_by, grant.via) == (ALICE_KEY, "slack")
    assert {name: pin.to_dict() for name, pin in grant.terms.pins.items()} == {"amount": {"at_most": 400}}
    assert (grant.terms.scope, grant.terms.uses) == ("agent", 3)


@pytest.mark.parametrize(
    ("values", "code"),
    [
        ({"grant:pin:amount": "at_most", "grant:value:amount": "200"}, "widens"),
        ({"grant:uses": "9"}, "over_limit"),
    ],
    ids=["a-pin-the-call-does-not-satisfy", "more-uses-than-the-policy-allows"],
)
def test_a_grant_that_may_not_be_made_keeps_the_modal_open_with_its_reason_and_decides_nothing(
    door: Door, values: dict[str, Any], code: str
) -> None:
    ask(door)
    before = door.message("q-1").blocks
    errors = _form_error(submit_grant(door, values))
    assert any(f"the grant was refused ({code})" in text for text in errors.values()), errors
    assert door.row("q-1").status is QuestionStatus.OPEN
    assert grants(door) == []
    assert door.message("q-1").blocks == before


def test_a_question_a_grant_decided_says_so_in_its_message(door: Door) -> None:
    # GIVEN Alice's grant of refunds up to 500, made by clicking the offer on q-1
    ask(door)
    door.click("q-1", OFFER_500, ALICE)
    (grant,) = grants(door)

    # WHEN the next refund of 300 is asked and the grant decides it, and the router announces the decision
    envelope = ask(door, "q-2")
    desk = GrantDesk(door.ledger, AnswerDesk(door.ledger), clock=door.clock, log=logging.getLogger("tests"))
    assert desk.decide_as_asked(door.row("q-2")) is not None
    text = door.announce("q-2", Transition.ANSWERED)
    assert envelope.question_id == "q-2"

    # THEN the message says a standing grant from Alice approved it, and which grant; no buttons are left
    assert text.startswith(f"Approved by a standing grant from {ALICE_KEY}")
    shown = str(door.message("q-2").blocks)
    assert f"Approved by a standing grant from {ALICE_KEY} (grant `{grant.grant_id}`)" in shown
    assert buttons(door, "q-2") == []


def test_a_granter_named_by_a_slack_user_group_the_policy_lets_grant_may_grant_though_anyone_may_answer(
    door: Door,
) -> None:
    # GIVEN a refund anyone may answer, but only finance-managers (Slack user group S0MGR: maria) may grant
    managers = Grants(max_ttl="PT1H", max_uses=3, groups=["finance-managers"], offers=[UP_TO_500_FOR_AN_HOUR])
    ask(door, policy=WaitPolicy(timeout="P1D", default={"action": "reject"}, tags={"team": "finance"}, grants=managers))

    # WHEN alice (not a manager) clicks the offer, THEN she is refused, privately, and nothing is decided
    door.click("q-1", "agent_wait:grant:0", ALICE)
    assert door.told(ALICE)[-1].startswith("Not recorded: the grant was refused (not_granter)")
    assert door.row("q-1").status is QuestionStatus.OPEN

    # WHEN maria (a manager, as her Slack user group says) clicks it, THEN the grant is hers
    door.click("q-1", "agent_wait:grant:0", MARIA)
    (grant,) = grants(door)
    assert (grant.granted_by, grant.groups) == ("maria@example.com", ("finance-managers",))
