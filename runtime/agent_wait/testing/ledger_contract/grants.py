"""Rules of the `grants` capability (`GrantLedger`): a grant kept once, found while live, each use taken once."""

from __future__ import annotations

import uuid
from datetime import timedelta

from agent_wait.ledger.grants import Grant, new_grant
from agent_wait.policy.grants import GrantTerms
from agent_wait.policy.pins import Pin
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, race


def _grant(*, uses: int | None = 1, ttl: timedelta = timedelta(hours=1), function: str | None = None) -> Grant:
    terms = GrantTerms(
        function=function or f"refund_{uuid.uuid4().hex[:8]}",
        parameters=("amount",),
        pins={"amount": Pin("at_most", 500)},
        tags={},
        scope="agent",
        thread_id=None,
        ttl=ttl,
        uses=uses,
    )
    return new_grant(
        terms,
        question_id=f"q-{uuid.uuid4().hex[:12]}",
        granted_by="ana@example.com",
        via="api",
        now=T0,
        subject="https://id.example.com#ana",
        groups=("finance",),
        granters={"groups": ("finance-leads",), "people": ("bo@example.com",)},
    )


def a_grant_is_kept_once_under_its_question(make: LedgerFactory) -> None:
    """`add_grant` keeps a grant under the id its question gives it; adding it again (a redelivered answer) returns
    the one kept, unchanged; `grant` reads it back."""
    ledger = make()
    grant = _grant(uses=3)
    assert ledger.add_grant(grant) == grant, "the first add keeps the grant as given"
    ledger.use_grant(grant.grant_id, "q-later", now=T0)
    again = ledger.add_grant(grant)
    assert again.decided == ("q-later",), f"adding it again returns the grant kept, with its use, got {again!r}"
    assert ledger.grant(grant.grant_id) == again, "grant() reads the kept grant"
    assert ledger.grant("refund~never") is None, "an unknown id reads None"
    assert ledger.grant("no-function-named") is None, "an id no grant could have reads None"


def live_grants_are_the_functions_unrevoked_unexpired_with_a_use_left(make: LedgerFactory) -> None:
    """`live_grants` finds a function's grants that may still decide at `now`: not another function's, not a revoked
    one, not one past its time, not one used up."""
    ledger = make()
    function = f"refund_{uuid.uuid4().hex[:8]}"
    live, revoked, short, used = (_grant(function=function) for _ in range(4))
    short = _grant(function=function, ttl=timedelta(minutes=1))
    for grant in (live, revoked, short, used, _grant()):
        ledger.add_grant(grant)
    ledger.revoke_grant(revoked.grant_id, by="ops@example.com", now=T0)
    ledger.use_grant(used.grant_id, "q-used", now=T0)
    found = {g.grant_id for g in ledger.live_grants(function, now=T0 + timedelta(minutes=5))}
    assert found == {live.grant_id}, f"expected only the live grant, got {found}"
    assert {g.grant_id for g in ledger.grants(now=T0, live_only=True)} >= {live.grant_id, short.grant_id}


def a_use_is_taken_once_per_question_and_never_past_the_last(make: LedgerFactory) -> None:
    """`use_grant` takes one use for a question and returns the grant after it; the same question again gets it back
    with no second use; once none is left, another question gets None."""
    ledger = make()
    grant = ledger.add_grant(_grant(uses=1))
    first = ledger.use_grant(grant.grant_id, "q-1", now=T0)
    assert first is not None, "a live one-use grant decides its first ask"
    assert (first.uses_left, first.decided) == (0, ("q-1",)), f"one use taken for q-1, got {first!r}"
    again = ledger.use_grant(grant.grant_id, "q-1", now=T0)
    assert again == first, f"the same question asking again takes no second use, got {again!r}"
    assert ledger.use_grant(grant.grant_id, "q-2", now=T0) is None, "a used-up grant decides nothing more"
    assert ledger.use_grant("refund~never", "q-3", now=T0) is None, "an unknown grant decides nothing"


def concurrent_uses_of_a_one_use_grant_have_one_winner(make: LedgerFactory) -> None:
    """Twenty asks taking a use of a one-use grant at once: exactly one gets it."""
    ledger = make()
    grant = ledger.add_grant(_grant(uses=1))
    winners = race(20, lambda index: ledger.use_grant(grant.grant_id, f"q-{index}", now=T0) is not None)
    assert len(winners) == 1, f"expected exactly one use, got {len(winners)} of 20"
    kept = ledger.grant(grant.grant_id)
    assert kept is not None
    assert len(kept.decided) == 1, f"the grant decided one question, got {kept.decided}"


def a_grant_without_a_use_limit_decides_until_it_expires(make: LedgerFactory) -> None:
    """A grant with no use limit decides every ask before its time, none after."""
    ledger = make()
    grant = ledger.add_grant(_grant(uses=None, ttl=timedelta(minutes=10)))
    taken = [ledger.use_grant(grant.grant_id, f"q-{i}", now=T0 + timedelta(minutes=i)) for i in range(5)]
    assert all(g is not None and g.uses_left is None for g in taken), f"every ask in time is decided, got {taken}"
    assert ledger.use_grant(grant.grant_id, "q-late", now=T0 + timedelta(minutes=10)) is None, "none at its expiry"


def a_revoke_holds_for_every_later_use_and_the_first_is_kept(make: LedgerFactory) -> None:
    """After `revoke_grant` no ask takes a use; a second revoke keeps who revoked first and when."""
    ledger = make()
    grant = ledger.add_grant(_grant(uses=None))
    revoked = ledger.revoke_grant(grant.grant_id, by="ops@example.com", now=T0)
    assert revoked is not None
    assert revoked.revoked_by == "ops@example.com"
    assert ledger.use_grant(grant.grant_id, "q-after", now=T0) is None, "a revoked grant decides nothing"
    again = ledger.revoke_grant(grant.grant_id, by="bo@example.com", now=T0 + timedelta(minutes=1))
    assert again == revoked, f"the first revoke is kept, got {again!r}"
    assert ledger.revoke_grant("refund~never", by="ops@example.com", now=T0) is None, "an unknown grant: None"
