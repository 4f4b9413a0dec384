"""Granting by a signed link: a link made for a person may carry a grant offer's index (signed like its action); the
confirmation page's POSTs show the offer in words, and the answer sends the offer as the approval's `grant` field to
the one desk, which makes the grant in that person's name. The offer is looked up again from the question's row, so
an index the question no longer offers is refused and nothing is decided."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta
from typing import Any

import pytest
from tests.agents.grant_graphs import UP_TO_500_FOR_AN_HOUR
from tests.host.test_link_routes import DEADLINE, KEYS, T0, Api

from agent_wait.channels.asked import Decided
from agent_wait.channels.email.channel import recipient_links
from agent_wait.channels.email.render import outcome_email, question_email
from agent_wait.channels.recipients import Recipient
from agent_wait.channels.teams.cards import outcome_card, question_card
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError
from agent_wait.host.links import answer_links, mint_token, verify_token
from agent_wait.policy import GrantOffer, GrantRequest, Grants, WaitPolicy
from agent_wait.policy.pins import Pin

UP_TO_100 = GrantOffer(
    "Approve, and allow refunds up to 100 for an hour",
    GrantRequest(scope="thread", ttl=timedelta(hours=1), uses=1, pins={"amount": Pin("at_most", 100)}),
)
"""An offer a refund of 300 does not satisfy: offering it would widen the call, so it is never shown."""
GRANTS = Grants(max_ttl="PT1H", max_uses=3, offers=[UP_TO_100, UP_TO_500_FOR_AN_HOUR])
ANA = "ana@example.com"


def ask_refund(
    api: Api, amount: int = 300, *, grants: Grants | None = GRANTS, question_id: str = "q-1"
) -> WaitEnvelope:
    question = Question(
        "order-1",
        question_id,
        {"function": "issue_refund", "args": {"order_id": "A-1", "amount": amount}},
        policy=WaitPolicy(timeout="PT4H", allowed_actions=("approve", "reject"), grants=grants),
        source={"function": "issue_refund"},
        asked_at=T0,
    )
    envelope = WaitEnvelope.create(question)
    api.ledger.open(envelope, now=T0)
    return envelope


def offer_link(offer: int, *, approver: str = ANA, question_id: str = "q-1") -> str:
    return mint_token(
        KEYS,
        question_id=question_id,
        thread_id="order-1",
        action="approve",
        expires_at=DEADLINE,
        approver=approver,
        offer=offer,
        now=T0,
    )


def grants_made(api: Api) -> list[Any]:
    return api.ledger.grants(now=T0)


# -- the token ----------------------------------------------------------------------------------------------------


def test_an_offer_index_is_signed_into_the_token_and_read_back():
    # WHEN a link is minted with offer 1
    claims = verify_token(KEYS, offer_link(1), question_id="q-1", now=T0)

    # THEN the verified claims carry it, and a plain link carries none
    assert claims.offer == 1
    plain = mint_token(
        KEYS, question_id="q-1", thread_id="order-1", action="approve", expires_at=DEADLINE, approver=ANA, now=T0
    )
    assert verify_token(KEYS, plain, question_id="q-1", now=T0).offer is None


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"approver": None}, "a link made for nobody proves no granter"),
        ({"action": "reject"}, "a grant goes with an approval only"),
        ({"offer": -1}, "an index is 0 or more"),
    ],
)
def test_an_offer_link_is_minted_only_as_an_approval_for_a_named_person(change: dict[str, Any], why: str):
    arguments: dict[str, Any] = {
        "question_id": "q-1",
        "thread_id": "order-1",
        "action": "approve",
        "expires_at": DEADLINE,
        "approver": ANA,
        "offer": 0,
        "now": T0,
    }
    with pytest.raises(ArgumentError, match="offer"):
        mint_token(KEYS, **{**arguments, **change})


# -- which links a question gets ----------------------------------------------------------------------------------


def test_a_persons_links_carry_one_link_per_offer_the_call_satisfies_and_never_a_widening_one():
    # GIVEN a refund of 300 under a policy offering "up to 100" (which 300 does not satisfy) and "up to 500"
    envelope = ask_refund(Api())

    # WHEN Ana's links are made
    links = answer_links(KEYS, "https://api.example.com", envelope, now=T0, approver=ANA)

    # THEN beside approve and reject there is one link, for offer 1, approving with that offer in her name
    assert sorted(links) == ["approve", "grant:1", "reject"]
    token = links["grant:1"].split("#", 1)[1]
    claims = verify_token(KEYS, token, question_id="q-1", now=T0)
    assert (claims.action, claims.offer, claims.approver) == ("approve", 1, ANA)


def test_links_made_for_nobody_or_for_someone_the_policy_does_not_let_grant_carry_no_offer():
    api = Api()
    envelope = ask_refund(api)
    assert sorted(answer_links(KEYS, "https://api.example.com", envelope, now=T0)) == ["approve", "reject"]

    # GIVEN a policy where only the finance group may grant
    finance_only = Grants(max_ttl="PT1H", max_uses=3, groups=["finance"], offers=[UP_TO_500_FOR_AN_HOUR])
    envelope = ask_refund(api, grants=finance_only, question_id="q-2")
    outsider = answer_links(KEYS, "https://api.example.com", envelope, now=T0, approver=ANA)
    member = answer_links(KEYS, "https://api.example.com", envelope, now=T0, approver=ANA, groups=["finance"])
    assert sorted(outsider) == ["approve", "reject"]
    assert sorted(member) == ["approve", "grant:0", "reject"]


def test_a_policy_without_grants_gives_exactly_the_links_it_gave_before():
    envelope = ask_refund(Api(), grants=None)
    assert sorted(answer_links(KEYS, "https://api.example.com", envelope, now=T0, approver=ANA)) == [
        "approve",
        "reject",
    ]


# -- the routes ---------------------------------------------------------------------------------------------------


def test_reading_an_offer_link_shows_the_offers_label_and_what_it_allows_in_words():
    api = Api()
    ask_refund(api)

    reply = api.read("q-1", offer_link(1))

    assert reply.status == 200, reply.json()
    assert reply.json()["link"]["grant"] == {
        "offer": 1,
        "label": "Approve, and allow refunds up to 500 for an hour (3 uses)",
        "allows": "issue_refund with amount at most 500, on any thread, for 1 hour, 3 uses",
    }


def test_confirming_an_offer_link_approves_and_makes_exactly_one_grant_in_the_links_persons_name():
    # GIVEN Ana's link for offer 1 on a refund of 300
    api = Api()
    ask_refund(api)

    # WHEN she confirms it, twice (a second press repeats)
    first = api.answer("q-1", offer_link(1))
    again = api.answer("q-1", offer_link(1))

    # THEN the question is approved, the row keeps the approval without the grant, and one grant is hers, via link
    assert first.status == 200, first.json()
    assert again.json()["result"] == "repeated"
    assert api.status() is QuestionStatus.ANSWERED
    record = api.ledger.find("q-1")
    assert record is not None
    assert record.answer == {"action": "approve"}
    (grant,) = grants_made(api)
    assert (grant.granted_by, grant.via, grant.question_id) == (ANA, "link", "q-1")
    assert (grant.terms.function, grant.terms.scope, grant.terms.uses) == ("issue_refund", "agent", 3)
    assert {name: pin.to_dict() for name, pin in grant.terms.pins.items()} == {"amount": {"at_most": 500}}
    assert first.json()["grant"]["grant_id"] == grant.grant_id


@pytest.mark.parametrize("offer", [0, 7], ids=["widening", "beyond-the-policy"])
def test_an_offer_index_the_question_does_not_offer_is_refused_and_nothing_is_decided(offer: int):
    # GIVEN a refund of 300: offer 0 (up to 100) would widen it, and there is no offer 7
    api = Api()
    ask_refund(api)

    # WHEN a link carrying that index is read and confirmed
    read = api.read("q-1", offer_link(offer))
    answered = api.answer("q-1", offer_link(offer))

    # THEN both are refused grant_refused with a reason that says the offer is gone, and nothing is decided
    for reply in (read, answered):
        assert (reply.status, reply.json()["reason"]) == (422, "grant_refused")
        assert "no longer offers this link's grant" in reply.json()["detail"]
    assert api.status() is QuestionStatus.OPEN
    assert api.queue.messages == []
    assert grants_made(api) == []


def test_an_offer_link_for_a_question_whose_policy_dropped_its_grants_is_refused():
    # GIVEN Ana's offer link, and the question as asked now under a policy without grants
    api = Api()
    ask_refund(api, grants=None)

    reply = api.answer("q-1", offer_link(1))

    assert (reply.status, reply.json()["reason"]) == (422, "grant_refused")
    assert api.status() is QuestionStatus.OPEN
    assert grants_made(api) == []


# -- the doors that carry offer links: an email and a Teams card ----------------------------------------------------

API_URL = "https://api.example.com"


def sign(envelope: WaitEnvelope, **kwargs: Any) -> dict[str, str]:
    """The host's link signer (`LinkSigner`), at T0."""
    return answer_links(KEYS, API_URL, envelope, now=T0, **kwargs)


def token_of(url: str) -> str:
    assert url.startswith(f"{API_URL}/questions/q-1/confirm#"), url
    return url.split("#", 1)[1]


def assert_one_grant_by_ana_via_link(api: Api, reply: Any) -> None:
    assert reply.status == 200, reply.json()
    assert api.status() is QuestionStatus.ANSWERED
    (grant,) = grants_made(api)
    assert (grant.granted_by, grant.via, grant.question_id) == (ANA, "link", "q-1")
    assert {name: pin.to_dict() for name, pin in grant.terms.pins.items()} == {"amount": {"at_most": 500}}


def test_the_email_offers_each_fitting_grant_beside_approve_and_its_link_makes_the_grant_in_the_recipients_name():
    # GIVEN Ana's email for a refund of 300, its links made as the email channel makes them (hers, by her principal)
    api = Api()
    envelope = ask_refund(api)
    ana = Recipient.of(ANA)
    links = recipient_links(sign)(envelope, ana, T0)
    email = question_email(envelope, links=links, recipient=ana.address, now=T0)

    # THEN it offers "up to 500" (label and words, in the HTML and the text) and never the widening "up to 100"
    label = UP_TO_500_FOR_AN_HOUR.label
    assert html.escape(label) in email.html
    assert f"{label} (allows issue_refund with amount at most 500, on any thread, for 1 hour, 3 uses): " in email.text
    assert UP_TO_100.label not in email.html
    assert UP_TO_100.label not in email.text
    offered = re.findall(r'data-offer="(\d+)"[^>]*><a href="([^"]+)"', email.html)
    assert [index for index, _url in offered] == ["1"]

    # WHEN Ana confirms the offer's link
    reply = api.answer("q-1", token_of(html.unescape(offered[0][1])))

    # THEN the refund is approved and one grant is hers
    assert_one_grant_by_ana_via_link(api, reply)


def test_the_teams_card_offers_each_fitting_grant_as_an_action_after_approve_and_it_makes_the_grant():
    # GIVEN the card made for Ana (links bound to her, as the Teams channel binds them in `people` mode)
    api = Api()
    envelope = ask_refund(api)
    card = question_card(envelope, sign(envelope, approver=f"email:{ANA}"))
    content = json.dumps(card)
    actions = [(a["title"], a["url"]) for a in card["actions"]]

    # THEN Approve, then the offer, then Reject; the widening offer is nowhere, and the body says what it allows
    assert [title for title, _url in actions] == ["Approve", UP_TO_500_FOR_AN_HOUR.label, "Reject"]
    assert UP_TO_100.label not in content
    assert "allows issue_refund with amount at most 500, on any thread, for 1 hour, 3 uses" in content

    # WHEN Ana opens and confirms the offer's link, THEN the refund is approved and one grant is hers
    assert_one_grant_by_ana_via_link(api, api.answer("q-1", token_of(actions[1][1])))


def test_a_teams_channel_card_made_for_nobody_offers_no_grant():
    envelope = ask_refund(Api())
    card = question_card(envelope, sign(envelope))
    titles = [a["title"] for a in card["actions"]]
    assert titles == ["Approve", "Reject"]


def test_an_email_and_a_teams_card_say_a_question_was_approved_by_a_standing_grant_and_which():
    # GIVEN a question a standing grant of Ana's decided
    envelope = ask_refund(Api())
    decided = Decided("answered", {"action": "approve"}, ANA, "grant", "2030-01-01T09:00:00Z", grant_id="g~q-0")

    # WHEN its outcome is emailed and carded, THEN each says so, naming the granter and the grant
    email = outcome_email(envelope, decided, recipient=ANA)
    card = json.dumps(outcome_card(envelope, decided))
    assert "Approved by a standing grant from ana@example.com (grant g~q-0)" in email.text
    assert "Approved by a standing grant from <strong>ana@example.com</strong> (grant g~q-0)" in email.html
    assert "Approved by a standing grant from ana@example.com (grant g~q-0)" in card
