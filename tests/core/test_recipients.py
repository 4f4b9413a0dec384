"""Recipients: who a question is sent to by address, from its answerers, its answerer groups' members or its tags."""

from __future__ import annotations

import re
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from agent_wait import Escalation, Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.recipients import Recipient, RecipientRouting, email_address
from agent_wait.errors import ArgumentError, ConfigurationError, RecipientError

ROUTING = RecipientRouting(
    groups={"finance": ["Ana@Example.com", "dana@example.com"], "cfo": ["cfo@example.com", "ana@example.com"]},
    tags={"team:billing": ["billing@example.com"], "region:eu": ["eu@example.com"], "*": ["desk@example.com"]},
)


def envelope(tags: dict[str, str] | None = None, **policy: Any) -> WaitEnvelope:
    question = Question("order-1", "q-1", {"function": "refund"}, policy=WaitPolicy(tags=tags or {}, **policy))
    return WaitEnvelope.create(question)


def addresses(found: tuple[Recipient, ...]) -> list[str]:
    return [r.address for r in found]


def test_named_email_principals_come_first_then_each_groups_members_each_once():
    # GIVEN a policy naming a person and two groups, with Ana in both groups and named as a principal
    named = envelope(
        answerer_principals=["email:ANA@example.com", "slack:U123", "AROAEXAMPLE"], answerer_groups=["finance", "cfo"]
    )

    found = ROUTING.recipients_for(named)

    # THEN Ana is listed once (lower-cased), with every group she is mapped under; other doors' principals are skipped
    assert addresses(found) == ["ana@example.com", "dana@example.com", "cfo@example.com"]
    assert found[0] == Recipient("ana@example.com", "email:ana@example.com", ("finance", "cfo"))
    assert found[1].groups == ("finance",)
    assert found[2].principal == "email:cfo@example.com"


def test_a_group_the_routing_does_not_map_adds_nobody():
    assert ROUTING.recipients_for(envelope(answerer_groups=["legal"])) == ()


def test_without_answerers_the_first_mapped_tag_decides_else_the_catch_all():
    assert addresses(ROUTING.recipients_for(envelope({"team": "billing", "region": "eu"}))) == ["billing@example.com"]
    assert addresses(ROUTING.recipients_for(envelope({"team": "ops", "region": "eu"}))) == ["eu@example.com"]
    assert addresses(ROUTING.recipients_for(envelope({"team": "ops"}))) == ["desk@example.com"]
    assert RecipientRouting().recipients_for(envelope({"team": "ops"})) == ()
    assert all(r.groups == () for r in ROUTING.recipients_for(envelope({"team": "billing"})))


def test_an_escalated_envelope_goes_to_the_widened_audience():
    # GIVEN a finance question whose escalation step adds the CFO group and re-routes the tag
    step = Escalation(after="PT2H", tags={"team": "cfo"}, answerer_groups=["cfo"])
    asked = envelope({"team": "billing"}, timeout="PT4H", answerer_groups=["finance"], escalation=[step])
    followups = WaitPolicy(timeout="PT4H", answerer_groups=["finance"], escalation=[step]).followups

    # WHEN the envelope carries the audience after one step (as the sweep's wait.escalated does)
    escalated = replace(
        asked,
        tags=MappingProxyType(followups.tags_at(asked.tags, 1)),
        rules=MappingProxyType({**asked.rules, "answerers": followups.answerers_at(asked.rules["answerers"], 1)}),
    )

    # THEN the CFO group's members join the finance group's
    assert addresses(ROUTING.recipients_for(asked)) == ["ana@example.com", "dana@example.com"]
    assert addresses(ROUTING.recipients_for(escalated)) == ["ana@example.com", "dana@example.com", "cfo@example.com"]
    assert ROUTING.recipients_for(escalated)[0].groups == ("finance", "cfo")


def test_a_principal_that_is_not_an_address_is_a_typed_error_that_keeps_the_others():
    bad = envelope(answerer_principals=["email:not an address", "email:ana@example.com"], answerer_groups=["cfo"])

    with pytest.raises(RecipientError, match=re.escape("['email:not an address'] are not email addresses")) as caught:
        ROUTING.recipients_for(bad)

    assert addresses(caught.value.recipients) == ["ana@example.com", "cfo@example.com"]
    assert "q-1" in caught.value.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ana@Example.COM", "ana@example.com"),
        ("  ana.b+refunds@mail.example.co.uk ", "ana.b+refunds@mail.example.co.uk"),
        ("Ana <ana@example.com>", None),
        ("ana@example.com\r\nBcc: eve@example.com", None),
        ("ana@example", None),
        ("ana..b@example.com", None),
        (".ana@example.com", None),
        ("ana@-example.com", None),
        ("a" * 250 + "@example.com", None),
        ("", None),
        (None, None),
        (["ana@example.com"], None),
    ],
)
def test_only_a_plain_mailbox_address_is_an_address(text: object, expected: str | None):
    assert email_address(text) == expected


def test_a_bad_mapping_names_every_problem_at_once():
    with pytest.raises(ArgumentError) as caught:
        RecipientRouting(
            groups={"finance": ["ana@example.com", "bob"], "ops": []},
            tags={"billing": ["billing@example.com"], "team:x": "one@example.com"},
        )

    message = caught.value.message
    assert "groups['finance'] holds 'bob', which is not a local@domain.tld address" in message
    assert "groups['ops'] must be a non-empty list of addresses" in message
    assert "tags['team:x'] must be a non-empty list of addresses" in message
    assert "tags key 'billing' must be 'key:value' (a policy tag) or '*'" in message
    assert caught.value.argument == "groups"


def test_recipient_of_refuses_a_display_name():
    with pytest.raises(ArgumentError, match=re.escape("'Ana <ana@example.com>' is not an email address")):
        Recipient.of("Ana <ana@example.com>")


def test_parse_reads_the_settings_json_and_names_the_variable_on_every_problem():
    routing = RecipientRouting.parse('{"groups": {"finance": ["ana@example.com"]}}', variable="AGENT_WAIT_X")
    assert routing.groups == {"finance": ("ana@example.com",)}
    assert routing.tags == {}

    for text, wanted in [
        ("not json", "AGENT_WAIT_X must be a JSON object such as"),
        ('["ana@example.com"]', "AGENT_WAIT_X must be a JSON object such as"),
        ('{"group": {}}', "AGENT_WAIT_X has unknown member(s) ['group']"),
        ('{"tags": {"*": ["nobody"]}}', "AGENT_WAIT_X: tags['*'] holds 'nobody'"),
    ]:
        with pytest.raises(ConfigurationError, match=re.escape(wanted)) as caught:
            RecipientRouting.parse(text, variable="AGENT_WAIT_X")
        assert caught.value.variables == ("AGENT_WAIT_X",)
