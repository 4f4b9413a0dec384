"""`GET /audit` reads a person's groups the way the answer routes do (`groups_from_claims`): API Gateway's flattened
list claim `[auditors managers]` is two groups, so a member of `auditors` reads the trail and a member of neither is
refused, whatever else the string holds. And `AGENT_WAIT_AUDIT_GROUP` must be one group name: `[auditors managers]`
there could never match a parsed claim, so the function refuses it at cold start rather than lock every auditor out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from tests.support.api_events import call

from agent_wait.contract.schema import Settings
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.errors import ConfigurationError
from agent_wait.host.api import ApiContext, create_app, groups_from_claims
from agent_wait.host.settings import HostSettings
from agent_wait.ledger import InMemoryLedger

NOW = datetime(2030, 1, 31, 15, 0, tzinfo=UTC)
CLAIM_NAMES = ("cognito:groups", "groups")
BASE = {Settings.TABLE.value: "questions", Settings.QUEUE_URL.value: "https://sqs.example/entry.fifo"}


def _read_audit(groups: Any, *, claim: str, audit_group: str = "auditors") -> tuple[int, str | None]:
    ledger = InMemoryLedger()
    context = ApiContext(
        ledger=ledger, service=AnswerService(ledger, InMemoryEntryQueue()), clock=lambda: NOW, audit_group=audit_group
    )
    claims = {"sub": "u-9", "iss": "https://issuer.example", claim: groups}
    response = call(create_app(lambda: context), "GET", "/audit", query={"since": "2030-01-01"}, claims=claims)
    return response.status, response.json().get("reason")


@pytest.mark.parametrize("claim", CLAIM_NAMES)
@pytest.mark.parametrize(
    ("groups", "audit_group"),
    [
        ("[auditors managers]", "auditors"),  # API Gateway's flattened list claim
        ("[managers auditors]", "auditors"),
        ("[auditors managers]", "managers"),
        ("[auditors]", "auditors"),
        ('["auditors","managers"]', "auditors"),  # a JSON array passed as a string
        ("auditors,managers", "auditors"),
        (["auditors", "managers"], "auditors"),  # a list, as a local issuer passes it
    ],
)
def test_a_member_of_the_audit_group_reads_the_trail_whatever_shape_the_groups_claim_has(
    claim: str, groups: Any, audit_group: str
) -> None:
    # GIVEN a person whose groups claim lists the audit group among others
    # WHEN they read the audit trail
    status, reason = _read_audit(groups, claim=claim, audit_group=audit_group)

    # THEN they are let in
    assert (status, reason) == (200, None)


@pytest.mark.parametrize("claim", CLAIM_NAMES)
@pytest.mark.parametrize(
    "groups",
    [
        "[finance managers]",
        "[auditors-eu managers]",  # a group whose name holds the audit group's is not it
        "[auditorsmanagers]",
        "[ ]",
        "",
        "[]",
    ],
)
def test_a_person_in_no_group_named_as_the_audit_group_is_refused(claim: str, groups: Any) -> None:
    # GIVEN a person whose parsed groups do not include `auditors`, though the claim's text may contain it
    # WHEN they read the audit trail
    status, reason = _read_audit(groups, claim=claim)

    # THEN they are refused as not an auditor
    assert (status, reason) == (403, "not_an_auditor")


def test_the_audit_route_parses_groups_as_the_answer_routes_do() -> None:
    # GIVEN API Gateway's flattened claim
    # WHEN it is parsed
    # THEN it is the two groups, never one group named by the whole string
    assert groups_from_claims({"cognito:groups": "[auditors managers]"}) == ("auditors", "managers")


@pytest.mark.parametrize("value", ["[auditors managers]", "auditors managers", "auditors,managers", "a b"])
def test_an_audit_group_that_no_claim_can_name_is_a_configuration_error(value: str) -> None:
    # GIVEN AGENT_WAIT_AUDIT_GROUP set to something a parsed groups claim never holds (a list, spaces, commas)
    # WHEN the answer API's settings are read at cold start
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("api", {**BASE, Settings.AUDIT_GROUP.value: value})

    # THEN the error names the variable, says what it must be and shows the value
    assert raised.value.variables == (Settings.AUDIT_GROUP.value,)
    assert (
        f"{Settings.AUDIT_GROUP.value} must be one group name such as 'auditors' (no spaces or commas; the groups "
        f"claim is read as a list of names); got {value!r}"
    ) in raised.value.message


def test_an_audit_group_of_one_name_is_read() -> None:
    # GIVEN one group name, dashes and underscores included
    # WHEN the settings are read
    # THEN it is the audit group as written
    for value in ("auditors", "audit-eu", "Auditors_2030"):
        assert HostSettings.from_env("api", {**BASE, Settings.AUDIT_GROUP.value: value}).audit_group == value
