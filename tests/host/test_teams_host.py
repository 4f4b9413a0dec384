"""Teams and shaped webhooks in the hosted router and sweep: the settings are checked all together (every problem
named), the webhook URLs are read from Secrets Manager once at cold start, a person's Teams card carries links bound
to that person that the answer API verifies, and a shaped webhook posts its template's JSON. Runs on moto."""

from __future__ import annotations

import json
import re
import urllib.parse
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.announce.conftest import Receiver
from tests.host import test_webhook_secret as signing
from tests.host.test_webhook_secret import count_reads, create_secret
from tests.support.fake_teams import FakeTeams

from agent_wait import Question, WaitEnvelope, WaitPolicy, publish
from agent_wait.channels.shaped import ShapedWebhookAnnounce
from agent_wait.channels.teams import TeamsAnnounce
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings, announcers_for
from agent_wait.host.links import LinkKeys, verify_token
from agent_wait.local.tables import question_keyed_table

receiver = signing.receiver
session = signing.session

SWEEP = {
    Settings.TABLE.value: "questions",
    Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
}
ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:teams-url-AbCdEf"
KEYS = '{"active": "k1", "k1": "' + "k" * 40 + '"}'
RECIPIENTS = json.dumps({"groups": {"finance": ["ana@example.com", "ben@example.com"]}})


@pytest.fixture(scope="module")
def teams() -> Any:
    with FakeTeams() as fake:
        yield fake


def _envelope(**policy: Any) -> WaitEnvelope:
    settings: dict[str, Any] = {"timeout": "P1D", "allowed_actions": ["approve", "reject"], **policy}
    question = Question("order-1", "q-teams-1", {"function": "refund", "args": {"amount": 5}}, WaitPolicy(**settings))
    return WaitEnvelope.create(question)


@pytest.mark.parametrize(
    ("environ", "problems"),
    [
        ({Settings.TEAMS_MODE.value: "channel"}, ["AGENT_WAIT_TEAMS_MODE is set but AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN"]),
        (
            {Settings.TEAMS_SENDS_TABLE.value: "teams-sends"},
            ["AGENT_WAIT_TEAMS_SENDS_TABLE is set but AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN"],
        ),
        (
            {Settings.TEAMS_WEBHOOK_URL_ARN.value: "https://x", Settings.TEAMS_MODE.value: "group"},
            [
                "AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN must be a Secrets Manager secret ARN; got 'https://x'",
                "AGENT_WAIT_TEAMS_MODE must be 'people' or 'channel'; got 'group'",
            ],
        ),
        (
            {Settings.TEAMS_WEBHOOK_URL_ARN.value: ARN},
            ["AGENT_WAIT_TEAMS_RECIPIENTS is not set: Teams in 'people' mode sends each card to a person"],
        ),
        (
            {Settings.TEAMS_WEBHOOK_URL_ARN.value: ARN, Settings.TEAMS_RECIPIENTS.value: '{"groups": {"f": ["x"]}}'},
            ["AGENT_WAIT_TEAMS_RECIPIENTS: groups['f'] holds 'x', which is not a local@domain.tld address"],
        ),
        (
            {Settings.SHAPED_WEBHOOK_TEMPLATES.value: "{}"},
            ["AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN is not set: a shaped webhook needs its URL's secret and its templates"],
        ),
        (
            {Settings.SHAPED_WEBHOOK_URL_ARN.value: ARN, Settings.SHAPED_WEBHOOK_TEMPLATES.value: "[1]"},
            ["AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES must be a JSON object of template texts"],
        ),
        (
            {
                Settings.SHAPED_WEBHOOK_URL_ARN.value: ARN,
                Settings.SHAPED_WEBHOOK_TEMPLATES.value: json.dumps({"created": '{"t": "{{ event }}"}'}),
            },
            ["AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES: the wait.created template does not render JSON"],
        ),
    ],
    ids=[
        "mode-alone",
        "sends-table-alone",
        "arn-and-mode",
        "people-without-recipients",
        "recipients",
        "templates-alone",
        "not-an-object",
        "not-json",
    ],
)
def test_every_problem_is_named_at_cold_start(environ: dict[str, str], problems: list[str]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        HostSettings.from_env("sweep", environ={**SWEEP, **environ})
    assert len(refused.value.problems) == len(problems)
    for problem, expected in zip(refused.value.problems, problems, strict=True):
        assert problem.startswith(expected), problem


def test_the_answer_api_reads_none_of_them() -> None:
    environ = {**SWEEP, Settings.TEAMS_WEBHOOK_URL_ARN.value: ARN, Settings.SHAPED_WEBHOOK_URL_ARN.value: ARN}
    settings = HostSettings.from_env("api", environ=environ)
    assert settings.teams is None
    assert settings.shaped_webhook is None


def test_each_person_gets_a_card_whose_links_are_bound_to_them(session: Any, teams: FakeTeams) -> None:
    # GIVEN Teams in people mode, its URL in a secret, link keys and the answer API's URL
    reads = count_reads(session)
    environ = {
        **SWEEP,
        Settings.TEAMS_WEBHOOK_URL_ARN.value: create_secret(session, f" {teams.url}\n"),
        Settings.TEAMS_RECIPIENTS.value: RECIPIENTS,
        Settings.LINK_KEYS_ARN.value: create_secret(session, KEYS),
        Settings.API_URL.value: "https://api.example.com",
    }
    announcers = announcers_for(HostSettings.from_env("sweep", environ=environ), session=session)
    assert reads == ["read", "read"]  # the URL and the link keys, once each
    [announcer] = [a for a in announcers if isinstance(a, TeamsAnnounce)]
    assert announcer.origin == teams.url.split("/workflows")[0]
    teams.received.clear()
    # WHEN a question for the finance group is published
    assert publish(_envelope(answerer_groups=["finance"]), announcers).ok
    # THEN each member got a card whose links answer as them, in the finance group
    bodies = teams.accepted()
    assert [b["agent_wait"]["recipient"] for b in bodies] == ["ana@example.com", "ben@example.com"]
    keys = LinkKeys.parse(KEYS)
    for body in bodies:
        person = body["agent_wait"]["recipient"]
        approve = body["attachments"][0]["content"]["actions"][0]
        assert approve["title"] == "Approve"
        url, _, token = approve["url"].partition("#")
        assert url == "https://api.example.com/questions/q-teams-1/confirm"
        claims = verify_token(keys, token, question_id="q-teams-1", now=datetime.now(UTC))
        assert (claims.approver, claims.groups, claims.action) == (f"email:{person}", ("finance",), "approve")
        inbox = body["attachments"][0]["content"]["actions"][-1]["url"]
        assert inbox == f"https://api.example.com/inbox#/questions/{urllib.parse.quote('q-teams-1')}"


def test_a_channel_card_has_unbound_links_only_where_anyone_may_answer(session: Any, teams: FakeTeams) -> None:
    environ = {
        **SWEEP,
        Settings.TEAMS_WEBHOOK_URL_ARN.value: create_secret(session, teams.url),
        Settings.TEAMS_MODE.value: "channel",
        Settings.LINK_KEYS_ARN.value: create_secret(session, KEYS),
        Settings.API_URL.value: "https://api.example.com",
    }
    announcers = announcers_for(HostSettings.from_env("sweep", environ=environ), session=session)
    teams.received.clear()
    publish(_envelope(), announcers)
    publish(_envelope(answerer_groups=["finance"]), announcers)
    anyone, finance = teams.cards()
    assert [a["title"] for a in anyone["actions"]] == ["Approve", "Reject", "Open in the inbox"]
    claims = verify_token(
        LinkKeys.parse(KEYS),
        anyone["actions"][0]["url"].partition("#")[2],
        question_id="q-teams-1",
        now=datetime.now(UTC),
    )
    assert claims.approver is None
    assert [a["title"] for a in finance["actions"]] == ["Open in the inbox"]


def test_with_its_sends_table_a_redelivered_event_posts_no_card_twice(
    session: Any, teams: FakeTeams, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The router and the sweep announce at least once; the table the construct creates keeps each card once."""
    table = f"teams-sends-{unique}"
    question_keyed_table(session.client("dynamodb"), table)
    environ = {
        **SWEEP,
        Settings.TEAMS_WEBHOOK_URL_ARN.value: create_secret(session, teams.url),
        Settings.TEAMS_RECIPIENTS.value: RECIPIENTS,
    }
    with_table = announcers_for(
        HostSettings.from_env("sweep", environ={**environ, Settings.TEAMS_SENDS_TABLE.value: table}), session=session
    )
    teams.received.clear()
    envelope = _envelope(answerer_groups=["finance"])
    assert publish(envelope, with_table).ok
    assert publish(envelope, with_table).ok  # delivered again: nothing new
    assert [b["agent_wait"]["recipient"] for b in teams.accepted()] == ["ana@example.com", "ben@example.com"]
    # Without it (a hand-made environment), every delivery posts every card, and the cold start says so.
    without = announcers_for(HostSettings.from_env("sweep", environ=environ), session=session)
    assert "Teams cards are posted again whenever an event is delivered again" in caplog.text
    publish(envelope, without)
    assert len(teams.accepted()) == 4


def test_a_teams_url_secret_that_is_not_a_url_fails_the_cold_start_without_showing_it(session: Any) -> None:
    environ = {
        **SWEEP,
        Settings.TEAMS_WEBHOOK_URL_ARN.value: create_secret(session, "prod-123.westus.logic.azure.com/sig=CANARY"),
        Settings.TEAMS_MODE.value: "channel",
    }
    with pytest.raises(ConfigurationError, match=re.escape("the secret must be the Teams webhook URL itself")) as bad:
        announcers_for(HostSettings.from_env("router", environ={**environ, **_router()}), session=session)
    assert "CANARY" not in str(bad.value)
    assert bad.value.variables == (Settings.TEAMS_WEBHOOK_URL_ARN.value,)


def _router() -> dict[str, str]:
    return {
        Settings.GRAPH.value: "examples.refund_agent.graph:graph",
        Settings.CHECKPOINT_TABLE.value: "checkpoints",
        Settings.DLQ_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq.fifo",
    }


def test_a_shaped_webhook_posts_its_templates_json(session: Any, receiver: Receiver) -> None:
    templates = {"created": '{"text": {{ "Waiting: " ~ question_id }}, "approve": {{ links.approve }}}'}
    environ = {
        **SWEEP,
        Settings.SHAPED_WEBHOOK_URL_ARN.value: create_secret(session, receiver.url),
        Settings.SHAPED_WEBHOOK_TEMPLATES.value: json.dumps(templates),
    }
    announcers = announcers_for(HostSettings.from_env("sweep", environ=environ), session=session)
    [shaped] = [a for a in announcers if isinstance(a, ShapedWebhookAnnounce)]
    from dataclasses import replace

    envelope = replace(_envelope(), reply_to={"links": {"approve": "https://api.example.com/x#t"}})
    assert shaped.announce(envelope).ok
    assert json.loads(receiver.bodies()[0]) == {"text": "Waiting: q-teams-1", "approve": "https://api.example.com/x#t"}
