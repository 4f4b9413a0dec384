"""Slack on `AgentWait`: the variables and grants of each function, the messages table, the answer API's Slack
route without an authorizer, the app manifest output, and props refused at synth.

One synthesized stack (`slack` in conftest.py, also a cdk-nag and cfn-lint variant); the prop checks construct
without synthesizing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_secretsmanager as secretsmanager
from tests.cdk.conftest import (
    ISSUER,
    KMS_READ_WRITE,
    SLACK_CHANNELS,
    SLACK_GROUPS,
    Synth,
    actions_on,
    getatt,
    new_app,
    ref,
    refund_agent,
    statements,
)

from agent_wait_cdk import SLACK_BOT_SCOPES, AgentWait, AgentWaitPropsError, AnswerApiProps, SlackProps
from agent_wait_cdk import slack_app_manifest as manifest_for

ROUTER, SWEEP, API = "agent_wait.host.router.handler", "agent_wait.host.sweep.handler", "agent_wait.host.api.handler"
SLACK_KEYS = [{"AttributeName": "question_id", "KeyType": "HASH"}]
SIGNING_SECRET_ARN = {
    "Fn::Join": [
        "",
        ["arn:", {"Ref": "AWS::Partition"}, ":secretsmanager:", {"Ref": "AWS::Region"}, ":", {"Ref": "AWS::AccountId"},
         ":secret:agent-wait/slack-signing-secret"],
    ]
}  # fmt: skip
"""A secret imported by name: its partial ARN (the variable), to which the grant adds `-??????`."""


def variables(synth: Synth, handler: str) -> dict[str, Any]:
    _, function = synth.one("AWS::Lambda::Function", Handler=handler)
    return function["Properties"]["Environment"]["Variables"]


def role_of(synth: Synth, handler: str) -> str:
    _, function = synth.one("AWS::Lambda::Function", Handler=handler)
    return function["Properties"]["Role"]["Fn::GetAtt"][0]


def ids(synth: Synth) -> tuple[str, str, str]:
    """The logical ids of the bot token secret, the KMS key and the Slack messages table."""
    (token,) = [k for k in synth.resources("AWS::SecretsManager::Secret") if k.startswith("SlackBotToken")]
    (key,) = synth.resources("AWS::KMS::Key")
    table, _ = synth.one("AWS::DynamoDB::Table", KeySchema=SLACK_KEYS)
    return token, key, table


def test_the_router_and_the_sweep_post_with_the_bot_token_to_the_channels_and_remember_the_messages(
    slack: Synth,
) -> None:
    token, _, table = ids(slack)
    for handler in (ROUTER, SWEEP):
        found = variables(slack, handler)
        assert found["AGENT_WAIT_SLACK_BOT_TOKEN_ARN"] == {"Ref": token}, handler
        assert json.loads(found["AGENT_WAIT_SLACK_CHANNELS"]) == SLACK_CHANNELS, handler
        assert json.loads(found["AGENT_WAIT_SLACK_GROUPS"]) == SLACK_GROUPS, handler
        assert found["AGENT_WAIT_SLACK_MESSAGES_TABLE"] == {"Ref": table}, handler
        assert "AGENT_WAIT_SLACK_SIGNING_SECRET_ARN" not in found, handler  # only the API checks signatures
        assert "AGENT_WAIT_SLACK_API_URL" not in found, handler  # Slack's own Web API


def test_the_answer_api_checks_signatures_and_reads_who_clicked(slack: Synth) -> None:
    token, _, _ = ids(slack)
    found = variables(slack, API)
    assert found["AGENT_WAIT_SLACK_BOT_TOKEN_ARN"] == {"Ref": token}
    assert found["AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"] == SIGNING_SECRET_ARN
    assert json.loads(found["AGENT_WAIT_SLACK_GROUPS"]) == SLACK_GROUPS
    assert "AGENT_WAIT_SLACK_CHANNELS" not in found  # it posts nothing
    assert "AGENT_WAIT_SLACK_MESSAGES_TABLE" not in found


def test_the_messages_table_is_keyed_by_question_on_demand_with_ttl_named_and_encrypted(slack: Synth) -> None:
    _, key, table = ids(slack)
    resource = slack.json["Resources"][table]
    props = resource["Properties"]
    assert props["AttributeDefinitions"] == [{"AttributeName": "question_id", "AttributeType": "S"}]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"] == {
        "KMSMasterKeyId": {"Fn::GetAtt": [key, "Arn"]},
        "SSEEnabled": True,
        "SSEType": "KMS",
    }
    assert props["TableName"] == "refunds-slack-slack-messages"
    assert "GlobalSecondaryIndexes" not in props
    assert resource["DeletionPolicy"] == "Delete"  # the construct's removal policy
    outputs = {k.removeprefix("AgentWait")[:-8]: v for k, v in slack.json["Outputs"].items()}
    assert outputs["SlackMessagesTableName"]["Value"] == {"Ref": table}


def test_the_router_and_the_sweep_read_the_bot_token_and_the_messages_but_never_the_signing_secret(
    slack: Synth,
) -> None:
    token, key, table = ids(slack)
    for handler in (ROUTER, SWEEP):
        granted = actions_on(statements(slack, role_of(slack, handler)))
        assert granted[ref(token)] == {"secretsmanager:GetSecretValue"}, handler
        assert granted[getatt(table)] == {"dynamodb:GetItem", "dynamodb:UpdateItem"}, handler
        assert KMS_READ_WRITE | {"kms:Decrypt"} <= granted[getatt(key)], handler  # the table's and the secret's key
        assert "agent-wait/slack-signing-secret" not in json.dumps(sorted(granted)), handler


def test_the_router_and_the_sweep_may_find_a_question_by_its_id_to_say_who_answered(slack: Synth) -> None:
    # GIVEN a stack with Slack, whose announcer redraws a decided question from its row (`ledger.find`)
    questions, _ = _question_table(slack)
    for handler in (ROUTER, SWEEP):
        granted = actions_on(statements(slack, role_of(slack, handler)))
        # THEN its router and sweep may query the question table's `by_question` index
        by_question = [r for r in granted if questions in r and "/index/by_question" in r]
        assert by_question, handler
        assert all(granted[r] == {"dynamodb:Query"} for r in by_question), handler


def _question_table(synth: Synth) -> tuple[str, Any]:
    (found,) = [
        (k, v)
        for k, v in synth.json["Resources"].items()
        if v["Type"] == "AWS::DynamoDB::Table"
        and any(i["IndexName"] == "by_question" for i in v["Properties"].get("GlobalSecondaryIndexes", []))
    ]
    return found


def test_the_answer_api_reads_both_secrets_and_never_the_messages_table(slack: Synth) -> None:
    token, key, table = ids(slack)
    granted = actions_on(statements(slack, role_of(slack, API)))
    signing = {
        "Fn::Join": ["", [*SIGNING_SECRET_ARN["Fn::Join"][1][:-1], ":secret:agent-wait/slack-signing-secret-??????"]]
    }
    assert granted[ref(token)] == {"secretsmanager:GetSecretValue"}
    assert granted[json.dumps(signing, sort_keys=True)] == {"secretsmanager:GetSecretValue"}
    assert "kms:Decrypt" in granted[getatt(key)]  # the bot token's key
    assert getatt(table) not in granted


def test_slack_interactions_route_to_the_api_function_without_an_authorizer(slack: Synth) -> None:
    found = {r["Properties"]["RouteKey"]: r["Properties"] for r in slack.resources("AWS::ApiGatewayV2::Route").values()}
    route = found["POST /slack/interactions"]
    assert route["AuthorizationType"] == "NONE"
    assert "AuthorizerId" not in route
    assert route["Target"] == found["POST /questions/{question_id}/answer"]["Target"]  # the same function
    assert found["POST /questions/{question_id}/answer"]["AuthorizationType"] == "JWT"
    assert len(slack.resources("AWS::ApiGatewayV2::Integration")) == 1


def test_the_manifest_output_is_the_slack_app_with_the_deployed_interactivity_url(slack: Synth) -> None:
    (api_id,) = slack.resources("AWS::ApiGatewayV2::Api")
    outputs = {k.removeprefix("AgentWait")[:-8]: v for k, v in slack.json["Outputs"].items()}
    api_url = "https://abc123.execute-api.eu-west-1.amazonaws.com"
    deployed = json.loads(_deploy(outputs["SlackAppManifest"]["Value"], {f"{api_id}.ApiEndpoint": api_url}))
    assert deployed == manifest_for(api_url, name="Refunds")
    assert deployed["settings"]["interactivity"]["request_url"] == f"{api_url}/slack/interactions"
    assert "Slack app" in outputs["SlackAppManifest"]["Description"]


def test_the_manifest_asks_for_the_scopes_the_runtime_uses_and_nothing_else() -> None:
    manifest = manifest_for("https://abc123.execute-api.eu-west-1.amazonaws.com/")  # a trailing slash, dropped
    assert manifest == {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {"name": "agent-wait", "description": manifest["display_information"]["description"]},
        "features": {"bot_user": {"display_name": "agent-wait", "always_online": False}},
        "oauth_config": {
            "scopes": {
                "bot": [
                    "chat:write",
                    "channels:history",
                    "groups:history",
                    "users:read",
                    "users:read.email",
                    "usergroups:read",
                ]
            }
        },
        "settings": {
            "interactivity": {
                "is_enabled": True,
                "request_url": "https://abc123.execute-api.eu-west-1.amazonaws.com/slack/interactions",
            },
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }
    assert list(SLACK_BOT_SCOPES) == manifest["oauth_config"]["scopes"]["bot"]
    assert len(manifest["display_information"]["description"]) <= 140  # Slack's limit


def _deploy(value: Any, known: dict[str, str]) -> str:
    """What CloudFormation makes of an output value: `Fn::Join`s joined, `GetAtt`s (`id.Attribute`) from `known`."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_deploy(part, known) for part in parts)
    if "Fn::GetAtt" in value:
        return known[".".join(value["Fn::GetAtt"])]
    raise AssertionError(f"unexpected intrinsic {value}")


# Props refused at synth: AgentWait is constructed (no synthesis); every problem is listed in one error.


def _agent(stack: Stack, **props: Any) -> AgentWait:
    return refund_agent(stack, **props)


def _props(stack: Stack, **fields: Any) -> SlackProps:
    """`SlackProps` with secrets imported by name and `fields`."""
    return SlackProps(
        bot_token=secretsmanager.Secret.from_secret_name_v2(stack, "Token", "agent-wait/slack-bot-token"),
        signing_secret=secretsmanager.Secret.from_secret_name_v2(stack, "Signing", "agent-wait/slack-signing"),
        **fields,
    )


API_PROPS = {"answer_api": True, "answer_api_props": AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"])}


def test_slack_without_the_answer_api_is_refused_saying_why() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as raised:
        _agent(stack, slack=_props(stack, channels={"*": "C0123ABCD"}))
    assert raised.value.problems == (
        "slack needs answer_api=True: Slack's buttons and modals post to the answer API's POST /slack/interactions; "
        "pass answer_api=True with answer_api_props, or drop slack",
    )


def test_bad_channels_groups_and_name_are_refused_each_with_how_to_fix_it() -> None:
    stack = Stack(new_app(), "S")
    props = _props(
        stack,
        channels={"finance": "C0123ABCD", "*": "#approvals"},
        groups={"finance": "@finance-team"},
        app_name="An app name far longer than Slack allows",
    )
    with pytest.raises(AgentWaitPropsError) as raised:
        _agent(stack, slack=props, **API_PROPS)
    assert raised.value.problems == (
        "slack.channels keys must be a policy tag 'key:value' (such as 'approver_group:finance') or '*'; got 'finance'",
        "slack.channels values must be Slack channel ids (C..., G... or D..., in capitals: the channel's details "
        "show it, not its name); got '#approvals' for '*'",
        "slack.groups values must be Slack user group ids (S..., in capitals: not the @handle); got "
        "'@finance-team' for 'finance'",
        "slack.app_name must be 1 to 35 characters (Slack's limit); got 'An app name far longer than Slack allows'",
    )
    assert "AgentWait: 4 invalid prop(s)" in str(raised.value)


def test_no_channel_at_all_is_refused() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError, match=r"slack.channels must route at least one policy tag to a channel"):
        _agent(stack, slack=_props(stack, channels={}), **API_PROPS)


def _table(stack: Stack, partition_key: str) -> dynamodb.Table:
    string = dynamodb.AttributeType.STRING
    return dynamodb.Table(
        stack,
        "Messages",
        partition_key=dynamodb.Attribute(name=partition_key, type=string),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        time_to_live_attribute="ttl",
    )


def test_a_brought_messages_table_is_used_as_it_is_and_checked_for_its_key() -> None:
    stack = Stack(new_app(), "S")
    table = _table(stack, "question_id")
    agent = _agent(stack, slack=_props(stack, channels={"*": "C0123ABCD"}, messages_table=table), **API_PROPS)
    assert agent.slack_messages_table is table
    assert agent.node.try_find_child("SlackMessagesTable") is None
    assert agent.slack_app_manifest is not None
    resolved = stack.resolve(agent.router_function.role.node.find_child("DefaultPolicy").document.to_json())  # type: ignore[union-attr]
    assert {
        "Action": ["dynamodb:GetItem", "dynamodb:UpdateItem"],
        "Effect": "Allow",
        "Resource": stack.resolve(table.table_arn),
    } in resolved["Statement"]

    other = Stack(new_app(), "S")
    wrong = _table(other, "pk")
    with pytest.raises(AgentWaitPropsError, match=r"slack.messages_table must have the partition key 'question_id'"):
        _agent(other, slack=_props(other, channels={"*": "C0123ABCD"}, messages_table=wrong), **API_PROPS)
