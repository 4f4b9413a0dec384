"""Teams and shaped webhooks on `AgentWait`: the router's and the sweep's variables, their read of each URL's secret
(and nobody else's), the link keys they sign cards with, and props refused at construction with how to fix them.

One synthesized stack for the module; the prop checks construct without synthesizing.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_secretsmanager as secretsmanager
from tests.cdk.conftest import ISSUER, Synth, actions_on, inline_code, new_app, statements, synth

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps, ShapedWebhookProps, TeamsProps

ROUTER, SWEEP, API = "agent_wait.host.router.handler", "agent_wait.host.sweep.handler", "agent_wait.host.api.handler"
GROUPS = {"finance": ["ana@example.com", "ben@example.com"]}
TEMPLATES = {"created": '{"text": {{ "Waiting: " ~ question_id }}}', "default": '{"text": {{ event }}}'}


def _secret(stack: Stack, name: str) -> secretsmanager.ISecret:
    return secretsmanager.Secret.from_secret_name_v2(stack, name, f"agent-wait/{name}")


@pytest.fixture(scope="module")
def chat() -> Synth:
    app = new_app()
    stack = Stack(app, "Chat")
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        code=inline_code(),
        topic=False,
        bus=False,
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        teams=TeamsProps(webhook_url=_secret(stack, "teams-webhook"), groups=GROUPS),
        shaped_webhook=ShapedWebhookProps(url=_secret(stack, "chat-webhook"), templates=TEMPLATES),
        link_announcers=["shaped"],
    )
    return synth(app, stack)


def _function(synth: Synth, handler: str) -> dict[str, Any]:
    return synth.one("AWS::Lambda::Function", Handler=handler)[1]


def _granted(synth: Synth, handler: str) -> str:
    role = _function(synth, handler)["Properties"]["Role"]["Fn::GetAtt"][0]
    return json.dumps(sorted(actions_on(statements(synth, role))))


def test_the_router_and_the_sweep_get_the_teams_and_shaped_webhook_settings(chat: Synth) -> None:
    for handler in (ROUTER, SWEEP):
        found = _function(chat, handler)["Properties"]["Environment"]["Variables"]
        assert "agent-wait/teams-webhook" in json.dumps(found["AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN"]), handler
        assert found["AGENT_WAIT_TEAMS_MODE"] == "people"
        assert json.loads(found["AGENT_WAIT_TEAMS_RECIPIENTS"]) == {"groups": GROUPS, "tags": {}}
        assert "agent-wait/chat-webhook" in json.dumps(found["AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN"])
        assert json.loads(found["AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES"]) == TEMPLATES
        # the cards' links are signed with the answer API's keys, and point at it
        assert "AGENT_WAIT_LINK_KEYS_ARN" in found
        assert "AGENT_WAIT_API_URL" in found
        assert found["AGENT_WAIT_LINK_ANNOUNCERS"] == "shaped"
    api = _function(chat, API)["Properties"]["Environment"]["Variables"]
    assert not [name for name in api if name.startswith(("AGENT_WAIT_TEAMS", "AGENT_WAIT_SHAPED"))]


def test_only_the_router_and_the_sweep_may_read_the_webhook_secrets(chat: Synth) -> None:
    for handler in (ROUTER, SWEEP):
        granted = _granted(chat, handler)
        assert "agent-wait/teams-webhook-??????" in granted, handler
        assert "agent-wait/chat-webhook-??????" in granted, handler
    api = _granted(chat, API)
    assert "teams-webhook" not in api
    assert "chat-webhook" not in api


def test_the_router_and_the_sweep_record_each_card_in_a_table_of_its_own(chat: Synth) -> None:
    """A redelivered event posts no card twice: the cards are claimed in `TeamsSendsTable`, which only the router
    and the sweep may update (nothing reads it whole)."""
    table_id, table = _sends_table(chat)
    assert table["Properties"]["KeySchema"] == [{"AttributeName": "question_id", "KeyType": "HASH"}]
    assert table["Properties"]["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert table["DeletionPolicy"] == "Retain"
    for handler in (ROUTER, SWEEP):
        found = _function(chat, handler)["Properties"]["Environment"]["Variables"]
        assert found["AGENT_WAIT_TEAMS_SENDS_TABLE"] == {"Ref": table_id}, handler
        role = _function(chat, handler)["Properties"]["Role"]["Fn::GetAtt"][0]
        on_table = [
            s["Action"]
            for s in statements(chat, role)
            if {"Fn::GetAtt": [table_id, "Arn"]}
            in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])
        ]
        assert on_table == ["dynamodb:UpdateItem"], handler
    assert table_id not in json.dumps(_function(chat, API))


def _resources(statement: dict[str, Any]) -> list[Any]:
    found = statement["Resource"]
    return found if isinstance(found, list) else [found]


def _sends_table(synth: Synth) -> tuple[str, dict[str, Any]]:
    (found,) = [(lid, r) for lid, r in synth.resources("AWS::DynamoDB::Table").items() if "TeamsSendsTable" in lid]
    return found


def test_without_link_announcers_teams_still_gets_the_keys_but_no_announcer_list() -> None:
    app = new_app()
    stack = Stack(app, "TeamsOnly")
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        code=inline_code(),
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        teams=TeamsProps(webhook_url=_secret(stack, "teams-webhook"), mode="channel"),
    )
    teams_only = synth(app, stack)
    found = _function(teams_only, SWEEP)["Properties"]["Environment"]["Variables"]
    assert found["AGENT_WAIT_TEAMS_MODE"] == "channel"
    assert "AGENT_WAIT_TEAMS_RECIPIENTS" not in found
    assert "AGENT_WAIT_LINK_KEYS_ARN" in found
    assert "AGENT_WAIT_LINK_ANNOUNCERS" not in found


def _refused(**props: Any) -> str:
    app = new_app()
    stack = Stack(app, "Refused")
    given: dict[str, Any] = {
        "graph": "examples.refund_agent.graph:build_graph",
        "code": inline_code(),
        "answer_api": True,
        "answer_api_props": AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
    }
    given.update({k: (v(stack) if callable(v) else v) for k, v in props.items()})
    with pytest.raises(AgentWaitPropsError) as refused:
        AgentWait(stack, "AgentWait", **given)
    return str(refused.value)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {
                "answer_api": False,
                "answer_api_props": None,
                "teams": lambda s: TeamsProps(webhook_url=_secret(s, "t"), mode="channel"),
            },
            "teams needs answer_api=True: a card's buttons open the answer API's signed confirmation pages",
        ),
        (
            {"teams": lambda s: TeamsProps(webhook_url=_secret(s, "t"), mode="chat")},
            "teams.mode must be 'people' or 'channel'; got 'chat'",
        ),
        (
            {"teams": lambda s: TeamsProps(webhook_url=_secret(s, "t"))},
            "teams.groups in 'people' mode, map answerer groups (or tags) to people's addresses",
        ),
        (
            {"teams": lambda s: TeamsProps(webhook_url=_secret(s, "t"), groups={"finance": ["Ana <ana@x.com>"]})},
            "teams.groups 'Ana <ana@x.com>' (for 'finance') is not a sign-in address such as ana@example.com",
        ),
        (
            {"teams": lambda s: TeamsProps(webhook_url=_secret(s, "t"), tags={"finance": ["ana@example.com"]})},
            "teams.tags keys must be a policy tag 'key:value' or '*'; got 'finance'",
        ),
        (
            {"shaped_webhook": lambda s: ShapedWebhookProps(url=_secret(s, "w"), templates={"asked": "{}"})},
            "shaped_webhook.templates keys must be a transition (created, ",
        ),
        (
            {"shaped_webhook": lambda s: ShapedWebhookProps(url=_secret(s, "w"), templates={"default": "x" * 3000})},
            "shaped_webhook.templates are 3014 characters as JSON, over 2048",
        ),
        ({"link_announcers": ["shaped"]}, "link_announcers names 'shaped', which needs shaped_webhook; there is none"),
    ],
    ids=["no-api", "mode", "people-nobody", "address", "tag-key", "template-key", "too-long", "shaped-link"],
)
def test_bad_props_are_refused_saying_how_to_fix_them(props: dict[str, Any], message: str) -> None:
    assert re.search(re.escape(message), _refused(**props))


def test_the_teams_doc_snippet_synthesizes(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cdk.conftest import REPO

    package = tmp_path / "src" / "refunds_service"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("graph = None\n")
    monkeypatch.chdir(tmp_path)  # graph_source resolves from where `cdk` runs
    doc = (REPO / "docs" / "teams.md").read_text(encoding="utf-8")
    [code] = re.findall(r"```python\n(.*?)```", doc, re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/teams.md", "exec"), namespace)
    app = new_app()
    stack = namespace["ApprovalsInTeamsStack"](app, "ApprovalsInTeams")
    found = synth(app, stack)
    variables = found.one("AWS::Lambda::Function", Handler=ROUTER)[1]["Properties"]["Environment"]["Variables"]
    assert variables["AGENT_WAIT_TEAMS_MODE"] == "people"
    assert json.loads(variables["AGENT_WAIT_TEAMS_RECIPIENTS"])["tags"] == {"*": ["approvals@example.com"]}
