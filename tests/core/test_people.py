"""The one person key (`agent_wait.people`), and the answerer every door builds with it (`answerer_for`)."""

from __future__ import annotations

import pytest

from agent_wait.engine import answerer_for
from agent_wait.ledger import Progress, Vote
from agent_wait.people import address_key, person_key, same_person
from agent_wait.policy.extension import Extension

ALICE = "alice@example.com"
ISSUER_ALICE = "https://issuer.example.com#u-alice"


@pytest.mark.parametrize(
    "written",
    [
        "alice@example.com",
        "Alice@Example.COM",
        "  alice@example.com\t",
        "email:alice@example.com",
        "EMAIL:Alice@example.com",
        "Email: alice@example.com ",
    ],
)
def test_every_way_of_writing_an_address_is_one_key(written: str) -> None:
    assert person_key(written) == ALICE
    assert same_person(written, "email:ALICE@example.com")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        (ISSUER_ALICE, ISSUER_ALICE),
        ("slack:T0TEAM:U0ALICE", "slack:T0TEAM:U0ALICE"),
        ("  AROAEXAMPLE ", "AROAEXAMPLE"),
        ("Alice <alice@example.com>", "Alice <alice@example.com>"),  # not a plain address: kept as written
    ],
)
def test_a_name_that_is_not_an_address_is_its_own_key(name: str, key: str) -> None:
    assert person_key(name) == key
    assert address_key(name) is None


@pytest.mark.parametrize("nothing", [None, "", "   ", 42])
def test_no_name_names_nobody(nothing: object) -> None:
    assert person_key(nothing) is None
    assert not same_person(nothing, nothing)


def test_a_door_that_proves_an_address_records_its_key_and_keeps_the_subject_beside_it() -> None:
    who = answerer_for("api", person=" Alice@Example.com", subject=ISSUER_ALICE)
    assert (who.answered_by, who.subject, who.sender) == (ALICE, ISSUER_ALICE, ISSUER_ALICE)
    assert who.keys == {ALICE, ISSUER_ALICE}


def test_a_policy_names_a_person_however_it_writes_them() -> None:
    by_slack = answerer_for("slack", person="ALICE@example.com", subject="slack:T1:U1", principal="slack:U1")
    assert by_slack.is_named(["email:alice@example.com"])
    assert by_slack.is_named(["slack:U1"])
    assert not by_slack.is_named(["email:bob@example.com", "slack:U2"])


def test_a_vote_matches_its_person_by_key_or_by_proven_subject_and_old_rows_still_match() -> None:
    # GIVEN one vote as recorded before the key (an API user: voter iss#sub, by their address) and one link vote
    old = Vote(voter=ISSUER_ALICE, by="alice@example.com", answer={"action": "approve"}, answer_id="a", at="t")
    link = Vote(voter="email:Dana@example.com", by="email:Dana@example.com", answer={}, answer_id="b", at="t")
    progress = Progress(votes=(old, link))
    # THEN each is found under every way of naming its person, and nobody else's
    assert progress.voted("EMAIL:alice@example.com") is old
    assert progress.voted(None, ISSUER_ALICE) is old
    assert progress.voted("dana@example.com") is link
    assert progress.voted("bob@example.com", "https://issuer.example.com#u-bob") is None


def test_an_extension_names_people_by_key() -> None:
    extension = Extension(people=["email:Ana@Example.com"], max_total="P1D")
    assert extension.allows(groups=(), names=("ana@example.com",))
    assert not extension.allows(groups=(), names=("ana",))
