"""Standing grants in `GET /audit` and `GET /insights`, through `create_app` over an in-memory ledger where Ana's grant
decided three refunds as they were asked (made and used through the router: `tests/support/granted_refunds.py`).

The audit's first page lists the grants in force in the window with the questions each decided, and each question a
grant decided names it; insights give the share of the window's decisions that grants made, and each grant the person
may see (`GrantBook`'s rule) in words. The engine's side: tests/engine/test_grants_audit_insights.py.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.api_events import call
from tests.support.granted_refunds import GRANTER, GrantedRun, grant_and_use

from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import Grant, InMemoryLedger

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=5)
AUDITOR = {"sub": "u-9", "iss": "https://issuer.example", "email": "ann@example.com", "groups": ["auditors"]}
ALICE = {"sub": "u-1", "iss": "https://issuer.example", "email": "alice@example.com", "groups": ["finance"]}
ANA = {"sub": "u-2", "iss": "https://issuer.example", "email": GRANTER, "email_verified": True, "groups": ["finance"]}


@pytest.fixture(scope="module")
def granted() -> tuple[InMemoryLedger, GrantedRun]:
    ledger = InMemoryLedger()
    return ledger, grant_and_use(ledger, NOW)


def _app(ledger: InMemoryLedger) -> Any:
    context = ApiContext(
        ledger=ledger, service=AnswerService(ledger, InMemoryEntryQueue()), clock=lambda: LATER, audit_group="auditors"
    )
    return create_app(lambda: context)


class _Grants(InMemoryLedger):
    """The rows of `source`, its grants as `change` makes them (a policy's granters, or none kept)."""

    def __init__(self, source: InMemoryLedger, change: Any) -> None:
        super().__init__()
        self.source, self.change = source, change

    def page(self, *args: Any, **kwargs: Any) -> Any:
        return self.source.page(*args, **kwargs)

    def grants(self, *, now: datetime, live_only: bool = False, limit: int = 100) -> list[Grant]:
        return self.change(self.source.grants(now=now, live_only=live_only, limit=limit))


# -- GET /audit -------------------------------------------------------------------------------------------------------


def test_the_audits_first_page_lists_the_grant_with_the_questions_it_decided(
    granted: tuple[InMemoryLedger, GrantedRun],
) -> None:
    # GIVEN Ana's grant, which decided three refunds
    ledger, run = granted
    app = _app(ledger)

    # WHEN an auditor reads the day's trail, two rows a page
    first = call(app, "GET", "/audit", query={"since": "2026-12-07", "limit": "2"}, claims=AUDITOR).json()
    pages, cursor = [first], first["next"]
    while cursor:
        query = {"since": "2026-12-07", "limit": "2", "cursor": cursor}
        pages.append(call(app, "GET", "/audit", query=query, claims=AUDITOR).json())
        cursor = pages[-1]["next"]

    # THEN the first page lists the grant, with the three questions it decided; later pages list no grant again
    (grant,) = first["grants"]
    assert (grant["grant_id"], grant["granted_by"], grant["decided"]) == (run.grant_id, GRANTER, list(run.decided))
    assert first["grants_capped"] is False
    assert len(pages) > 1
    assert all(page["grants"] == [] for page in pages[1:])
    # ... and the three questions, wherever they fall, name it; nothing else does
    rows = [row for page in pages for row in page["questions"]]
    assert sorted(row["question_id"] for row in rows if row["grant_id"] == run.grant_id) == sorted(run.decided)
    assert {row["question_id"] for row in rows if row["grant_id"] is None} == {run.made_on, run.asked}
    # ... with every field the trail had before, unchanged
    assert {"question_id", "answered_by", "via", "answer_id", "votes", "reason"} <= set(rows[0])


# -- GET /insights ----------------------------------------------------------------------------------------------------


def test_insights_give_the_share_decided_by_grants_and_the_grant_in_words(
    granted: tuple[InMemoryLedger, GrantedRun],
) -> None:
    # GIVEN the grant's policy lets anyone who may answer grant, so everyone signed in may see its grants
    ledger, run = granted

    # WHEN Alice reads the week's insights
    body = call(_app(ledger), "GET", "/insights", query={"days": "7"}, claims=ALICE).json()

    # THEN three of the five decisions were made by Ana's grant, described in words
    assert body["grants"] == {
        "decided": 3,
        "of": 5,
        "share": 0.6,
        "by_grant": [
            {
                "grant_id": run.grant_id,
                "function": "issue_refund",
                "granted_by": GRANTER,
                "decided": 3,
                "pins": {"amount": {"at_most": 500}},
                "pins_text": "amount at most 500",
                "scope": "agent",
                "revoked": False,
            }
        ],
        "not_shown": 0,
    }
    # ... and people's figures are people's: two answered by a person, each counted once
    assert body["time_to_answer"]["count"] == 2
    assert {a["who"]: a["decisions"] for a in body["answerers"]} == {GRANTER: 1, "bob@example.com": 1}


def test_a_grant_someone_may_not_see_is_counted_but_not_described(granted: tuple[InMemoryLedger, GrantedRun]) -> None:
    # GIVEN the grant was made under a policy that lets only the group leads grant
    ledger, run = granted
    leads_only = _Grants(ledger, lambda grants: [replace(g, granters={"groups": ("leads",)}) for g in grants])

    # WHEN Alice (finance) reads insights, THEN the share counts its three decisions, and nothing says which grant
    alice = call(_app(leads_only), "GET", "/insights", query={"days": "7"}, claims=ALICE).json()["grants"]
    assert (alice["decided"], alice["share"], alice["by_grant"], alice["not_shown"]) == (3, 0.6, [], 3)
    # ... while Ana, who made it, and an auditor see it
    for who in (ANA, AUDITOR):
        seen = call(_app(leads_only), "GET", "/insights", query={"days": "7"}, claims=who).json()["grants"]
        assert ([g["grant_id"] for g in seen["by_grant"]], seen["not_shown"]) == ([run.grant_id], 0)


def test_a_grant_no_longer_kept_is_named_only_to_its_granter_and_the_auditors(
    granted: tuple[InMemoryLedger, GrantedRun],
) -> None:
    # GIVEN the grant is gone from the ledger (removed after its retention), its decisions still there
    ledger, run = granted
    gone = _Grants(ledger, lambda _grants: [])

    # WHEN Ana reads insights, THEN the grant is named by its id, its function and granter from the rows, no pins
    ana = call(_app(gone), "GET", "/insights", query={"days": "7"}, claims=ANA).json()["grants"]
    (share,) = ana["by_grant"]
    assert (share["grant_id"], share["function"], share["granted_by"], share["decided"]) == (
        run.grant_id,
        "issue_refund",
        GRANTER,
        3,
    )
    assert (share["pins"], share["pins_text"], share["scope"], share["revoked"]) == (None, None, None, None)
    # ... and Alice, who cannot be shown the policy that allowed it, sees only the count
    alice = call(_app(gone), "GET", "/insights", query={"days": "7"}, claims=ALICE).json()["grants"]
    assert (alice["by_grant"], alice["not_shown"]) == ([], 3)
