"""Who may send what on the entry queue: the router's trusted, start and answer senders, and the send grants."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import CfnParameter, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template
from tests.cdk.conftest import IMPORTED_ROLE_ID, Synth, actions_on, getatt, inline_code, new_app, statements

from agent_wait_cdk import AgentWait, AgentWaitPropsError

SEND = {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
KMS_SEND = {"kms:GenerateDataKey", "kms:Decrypt"}


def router_environment(template: dict[str, Any]) -> dict[str, Any]:
    """The router's environment variables in a template (as JSON)."""
    resources = template["Resources"]
    (router,) = [
        r
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == "agent_wait.host.router.handler"
    ]
    return router["Properties"]["Environment"]["Variables"]


def sender_ids(value: Any) -> list[str]:
    """A sender list as ids: a role created in the app shows as `<logical id>.RoleId`, any other id as given."""
    parts = value["Fn::Join"][1] if isinstance(value, dict) and "Fn::Join" in value else [value]
    text = "".join(part if isinstance(part, str) else ".".join(part["Fn::GetAtt"]) for part in parts)
    return text.split(",")


def role_id_of(synth: Synth, prefix: str) -> str:
    (logical_id,) = [k for k in synth.resources("AWS::IAM::Role") if k.startswith(prefix)]
    return f"{logical_id}.RoleId"


def test_the_router_trusts_the_sweep_and_the_answer_api(answering: Synth) -> None:
    env = router_environment(answering.json)
    assert sender_ids(env["AGENT_WAIT_TRUSTED_SENDERS"]) == [
        role_id_of(answering, "AgentWaitSweepServiceRole"),
        role_id_of(answering, "AgentWaitAnswerApiFunctionServiceRole"),
    ]


def test_without_the_api_the_router_trusts_the_sweep_alone(quiet: Synth) -> None:
    env = router_environment(quiet.json)
    assert sender_ids(env["AGENT_WAIT_TRUSTED_SENDERS"]) == [role_id_of(quiet, "AgentWaitSweepServiceRole")]
    for name in ("AGENT_WAIT_API_URL", "AGENT_WAIT_LINK_KEYS_ARN", "AGENT_WAIT_LINK_ANNOUNCERS"):
        assert name not in env, name


def test_the_sender_lists_are_the_router_s_alone(answering: Synth) -> None:
    """The sweep and the API read no sender list: only the router decides what a queue message may do."""
    for handler in ("agent_wait.host.sweep.handler", "agent_wait.host.api.handler"):
        _, function = answering.one("AWS::Lambda::Function", Handler=handler)
        assert not [name for name in function["Properties"]["Environment"]["Variables"] if name.endswith("_SENDERS")]


def test_the_router_knows_the_api_url_and_signs_links_for_the_named_announcers(answering: Synth) -> None:
    env = router_environment(answering.json)
    (secret_id,) = answering.resources("AWS::SecretsManager::Secret")
    (api_id,) = answering.resources("AWS::ApiGatewayV2::Api")
    assert env["AGENT_WAIT_API_URL"]["Fn::Join"][1][:2] == ["https://", {"Ref": api_id}]
    assert env["AGENT_WAIT_LINK_KEYS_ARN"] == {"Ref": secret_id}
    assert env["AGENT_WAIT_LINK_ANNOUNCERS"] == "sns,webhook"
    granted = actions_on(statements(answering, "AgentWaitRouter"))
    assert granted[f'{{"Ref": "{secret_id}"}}'] == {"secretsmanager:GetSecretValue"}
    assert "kms:Decrypt" in granted[getatt("Key961B73FD")]


def test_the_sweep_signs_the_same_links_when_it_announces_a_question_again(answering: Synth) -> None:
    _, sweep = answering.one("AWS::Lambda::Function", Handler="agent_wait.host.sweep.handler")
    env, router_env = sweep["Properties"]["Environment"]["Variables"], router_environment(answering.json)
    for name in ("AGENT_WAIT_API_URL", "AGENT_WAIT_LINK_KEYS_ARN", "AGENT_WAIT_LINK_ANNOUNCERS"):
        assert env[name] == router_env[name], name
    (secret_id,) = answering.resources("AWS::SecretsManager::Secret")
    granted = actions_on(statements(answering, "AgentWaitSweep"))
    assert granted[f'{{"Ref": "{secret_id}"}}'] == {"secretsmanager:GetSecretValue"}


def test_without_link_announcers_the_router_never_reads_the_link_keys(cognito_api: Synth) -> None:
    env = router_environment(cognito_api.json)
    assert env["AGENT_WAIT_API_URL"]["Fn::Join"][1][0] == "https://"
    assert "AGENT_WAIT_LINK_KEYS_ARN" not in env
    assert "AGENT_WAIT_LINK_ANNOUNCERS" not in env
    assert not [s for s in statements(cognito_api, "AgentWaitRouter") if "secretsmanager:" in str(s["Action"])]


def test_grant_send_starts_names_the_role_a_start_sender_and_grants_only_sends(answering: Synth) -> None:
    env = router_environment(answering.json)
    assert sender_ids(env["AGENT_WAIT_START_SENDERS"]) == [role_id_of(answering, "Caller")]
    assert actions_on(statements(answering, "Caller")) == {
        getatt("AgentWaitEntryQueue74B3737D"): SEND,
        getatt("Key961B73FD"): KMS_SEND,
    }


def test_grant_send_answers_names_each_grantee_once_with_an_imported_role_by_its_id(answering: Synth) -> None:
    """Grants made after AgentWait was constructed land (the list is joined at synthesis), each id once."""
    env = router_environment(answering.json)
    assert sender_ids(env["AGENT_WAIT_ANSWER_SENDERS"]) == [role_id_of(answering, "Ops"), IMPORTED_ROLE_ID]
    assert actions_on(statements(answering, "Ops")) == {
        getatt("AgentWaitEntryQueue74B3737D"): SEND,
        getatt("Key961B73FD"): KMS_SEND,
    }
    assert actions_on(statements(answering, "approvals")) == actions_on(statements(answering, "Ops"))


def test_a_function_grantee_is_named_by_its_role_and_a_token_id_is_accepted() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), alarms=False, outputs=False)
    worker = lambda_.Function(stack, "Worker", runtime=lambda_.Runtime.PYTHON_3_13, handler="w.h", code=inline_code())
    agent.grant_send_starts(worker)
    user = iam.User(stack, "Operator")
    user_id = CfnParameter(stack, "OperatorId").value_as_string
    agent.grant_send_answers(user, principal_id=user_id)
    env = router_environment(Template.from_stack(stack).to_json())
    (worker_role,) = [k for k in Template.from_stack(stack).find_resources("AWS::IAM::Role") if k.startswith("Worker")]
    assert sender_ids(env["AGENT_WAIT_START_SENDERS"]) == [f"{worker_role}.RoleId"]
    assert env["AGENT_WAIT_ANSWER_SENDERS"] == {"Ref": "OperatorId"}


def test_the_deprecated_grants_warn_and_do_what_the_new_ones_do() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), alarms=False, outputs=False)
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    with pytest.warns(
        DeprecationWarning, match=re.escape("AgentWait.grant_start is deprecated; use AgentWait.grant_send_starts")
    ):
        agent.grant_start(caller)
    with pytest.warns(
        DeprecationWarning, match=re.escape("AgentWait.grant_answer is deprecated; use AgentWait.grant_send_answers")
    ):
        agent.grant_answer(caller, principal_id="AROAEXAMPLEOTHER01")
    env = router_environment(Template.from_stack(stack).to_json())
    (caller_role,) = [k for k in Template.from_stack(stack).find_resources("AWS::IAM::Role") if k.startswith("Caller")]
    assert sender_ids(env["AGENT_WAIT_START_SENDERS"]) == [f"{caller_role}.RoleId"]
    assert sender_ids(env["AGENT_WAIT_ANSWER_SENDERS"]) == ["AROAEXAMPLEOTHER01"]


def _imported(stack: Stack) -> iam.IRole:
    return iam.Role.from_role_arn(stack, "Imported", "arn:aws:iam::123456789012:role/approvals")


def test_an_imported_role_needs_its_principal_id() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), alarms=False, outputs=False)
    with pytest.raises(AgentWaitPropsError) as info:
        agent.grant_send_answers(_imported(stack))
    (problem,) = info.value.problems
    assert problem.startswith("grant_send_answers: principal_id is needed for the grantee 'S/Imported'")
    assert "Pass principal_id= with its IAM unique id" in problem
    assert "aws iam get-role --role-name NAME --query Role.RoleId" in problem
    assert info.value.construct == "S/AgentWait"
    assert "AGENT_WAIT_ANSWER_SENDERS" not in router_environment(Template.from_stack(stack).to_json())


@pytest.mark.parametrize("principal_id", ["aroaexample1234", "AROA-EXAMPLE-1", "AROA", "arn:aws:iam::1:role/x"])
def test_a_malformed_principal_id_is_refused(principal_id: str) -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), alarms=False, outputs=False)
    caller = iam.Role(stack, "Caller", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    with pytest.raises(
        AgentWaitPropsError,
        match=re.escape(f"grant_send_starts: principal_id must be an IAM unique id, 8 to 128 capital letters and "
                        f"digits ('AROA...' for a role, 'AIDA...' for a user); got {principal_id!r}"),
    ):  # fmt: skip
        agent.grant_send_starts(caller, principal_id=principal_id)
    policies = Template.from_stack(stack).find_resources("AWS::IAM::Policy").values()
    assert not [p for p in policies if "Caller" in str(p["Properties"]["Roles"])], "nothing granted for a refused id"
