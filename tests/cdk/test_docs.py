"""docs/constructs.md stays true to the code: its snippets synthesize, its tables name every prop and variable."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest
from aws_cdk.assertions import Template
from tests.cdk.conftest import REPO, new_app, statements, synth

from agent_wait_cdk import AgentWait, AnswerApi, EntryQueueProps, RetentionProps, RouterProps, SlackProps, SweepProps

DOC = (REPO / "docs" / "constructs.md").read_text()


def _snippet(heading: str) -> dict[str, object]:
    """Run the first python snippet of the section `heading` and return what it defined."""
    section = DOC.split(f"\n{heading}\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"the section {heading!r} has no python snippet"
    namespace: dict[str, object] = {}
    exec(compile(match.group(1), "docs/constructs.md", "exec"), namespace)
    return namespace


@pytest.fixture
def refunds_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snippets' `src/refunds_service` package, in the directory they run from."""
    package = tmp_path / "src" / "refunds_service"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("graph = None\n")
    monkeypatch.chdir(tmp_path)  # graph_source paths resolve from where `cdk` runs


@pytest.mark.usefixtures("refunds_service")
def test_the_embedding_snippet_synthesizes() -> None:
    namespace = _snippet("## Embed it in your own app")
    app = new_app()
    stack = namespace["RefundsServiceStack"](app, "RefundsService")  # type: ignore[operator]
    template = Template.from_stack(stack)  # type: ignore[arg-type]
    template.resource_count_is("AWS::DynamoDB::Table", 2)  # theirs + the checkpoint table
    template.resource_count_is("AWS::SNS::Topic", 1)
    template.resource_count_is("AWS::Events::EventBus", 0)


@pytest.mark.usefixtures("refunds_service")
def test_the_answer_api_snippet_synthesizes_with_nothing_for_cdk_nag() -> None:
    namespace = _snippet("## `AnswerApi`")
    app = new_app()
    stack = namespace["ApprovalsStack"](app, "Approvals")  # type: ignore[operator]
    result = synth(app, stack)  # type: ignore[arg-type]  # cdk-nag runs as a validation plugin: a finding fails here
    result.template.resource_count_is("AWS::ApiGatewayV2::Route", 27)  # 21 signed in, 4 link, 2 inbox
    result.template.has_resource_properties("AWS::Cognito::UserPoolClient", {"AllowedOAuthFlows": ["code"]})
    result.template.has_resource_properties("AWS::ApiGatewayV2::Authorizer", {"AuthorizerType": "JWT"})
    result.template.has_resource_properties("AWS::Cognito::UserPoolGroup", {"GroupName": "finance"})


@pytest.mark.usefixtures("refunds_service")
def test_the_slack_snippet_synthesizes_with_nothing_for_cdk_nag() -> None:
    namespace = _snippet("## Slack")
    app = new_app()
    stack = namespace["SlackApprovalsStack"](app, "SlackApprovals")  # type: ignore[operator]
    result = synth(app, stack)  # type: ignore[arg-type]  # cdk-nag runs as a validation plugin: a finding fails here
    result.template.resource_count_is("AWS::ApiGatewayV2::Route", 28)  # 21 signed in, 4 link, 2 inbox, 1 Slack
    result.template.has_resource_properties(
        "AWS::ApiGatewayV2::Route", {"RouteKey": "POST /slack/interactions", "AuthorizationType": "NONE"}
    )
    result.template.has_resource_properties(
        "AWS::DynamoDB::Table", {"KeySchema": [{"AttributeName": "question_id", "KeyType": "HASH"}]}
    )
    outputs = {key.removeprefix("AgentWait")[:-8] for key in result.json["Outputs"]}
    assert {"SlackAppManifest", "SlackMessagesTableName", "AnswerApiUrl"} <= outputs


MODEL_SECTION = "## Giving the graph its model and secrets"


@pytest.mark.usefixtures("refunds_service")
def test_the_model_and_secrets_snippet_grants_the_router_bedrock_and_the_secret() -> None:
    # GIVEN the section's stack, synthesized with cdk-nag (a finding fails here)
    namespace = _snippet(MODEL_SECTION)
    app = new_app()
    stack = namespace["ModelAccessStack"](app, "ModelAccess")  # type: ignore[operator]
    result = synth(app, stack)  # type: ignore[arg-type]
    (_, router) = result.one("AWS::Lambda::Function", Handler="agent_wait.host.router.handler")
    role_id = router["Properties"]["Role"]["Fn::GetAtt"][0]
    stmts = statements(result, role_id)
    # THEN the router may invoke exactly that model ...
    model_arn = {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":bedrock:",
                {"Ref": "AWS::Region"},
                "::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0",
            ],
        ]
    }
    assert {
        "Action": ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
        "Effect": "Allow",
        "Resource": model_arn,
    } in stmts
    # ... and read the secret, whose ARN (not its value) is in its environment
    reads = [s for s in stmts if s["Action"] == ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]]
    assert len(reads) == 1
    variables = router["Properties"]["Environment"]["Variables"]
    secret_arn = ["arn:", {"Ref": "AWS::Partition"}, ":secretsmanager:", {"Ref": "AWS::Region"}, ":"]
    secret_arn += [{"Ref": "AWS::AccountId"}, ":secret:refunds/openai-api-key"]
    assert variables["OPENAI_API_KEY_SECRET_ARN"] == {"Fn::Join": ["", secret_arn]}
    assert reads[0]["Resource"] == {"Fn::Join": ["", [*secret_arn[:-1], secret_arn[-1] + "-??????"]]}
    assert variables["MODEL_ID"] == "anthropic.claude-3-5-haiku-20241022-v1:0"
    # AND the sweep got neither
    (_, sweep) = result.one("AWS::Lambda::Function", Handler="agent_wait.host.sweep.handler")
    assert "OPENAI_API_KEY_SECRET_ARN" not in sweep["Properties"]["Environment"]["Variables"]
    sweep_stmts = statements(result, sweep["Properties"]["Role"]["Fn::GetAtt"][0])
    assert not [s for s in sweep_stmts if "bedrock:InvokeModel" in s["Action"]]


def test_the_graph_module_snippet_reads_the_key_once_from_secrets_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3
    from moto import mock_aws

    section = DOC.split(f"\n{MODEL_SECTION}\n", 1)[1].split("\n## ", 1)[0]
    snippets = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(snippets) == 2, "expected the stack snippet and the graph module snippet"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        arn = boto3.client("secretsmanager").create_secret(Name="refunds/openai-api-key", SecretString="sk-test")["ARN"]
        monkeypatch.setenv("OPENAI_API_KEY_SECRET_ARN", arn)
        namespace: dict[str, object] = {}
        exec(compile(snippets[1], "docs/constructs.md", "exec"), namespace)  # importing it calls nothing
        key = namespace["openai_api_key"]
        assert key() == "sk-test"  # type: ignore[operator]
        boto3.client("secretsmanager").put_secret_value(SecretId=arn, SecretString="sk-rotated")
        assert key() == "sk-test"  # type: ignore[operator]  # read once per cold start


def _props_table(heading: str) -> set[str]:
    """The names in the first column of the table under `heading`, up to the next heading."""
    table = re.split(r"\n##+ ", DOC.split(f"\n{heading}\n", 1)[1], maxsplit=1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE))


def test_every_agent_wait_prop_is_in_the_props_table() -> None:
    params = set(inspect.signature(AgentWait.__init__).parameters) - {"self", "scope", "id"}
    assert _props_table("## `AgentWait` props") == params


@pytest.mark.parametrize(
    "props", [RouterProps, SweepProps, EntryQueueProps, SlackProps, RetentionProps], ids=lambda props: props.__name__
)
def test_every_field_of_a_props_class_is_in_its_own_table(props: type) -> None:
    assert _props_table(f"### `{props.__name__}`") == {field.name for field in dataclasses.fields(props)}


def test_every_answer_api_prop_is_in_its_props_table() -> None:
    table = DOC.split("## `AnswerApi`", 1)[1].split("### Props", 1)[1].split("\n### ", 1)[0]
    first_cells = re.findall(r"^\| ([^|]+) \|", table, re.MULTILINE)
    documented = {name for cell in first_cells for name in re.findall(r"`(\w+)`", cell)}
    params = set(inspect.signature(AnswerApi.__init__).parameters) - {"self", "scope", "id"}
    assert documented == params


def test_every_environment_variable_is_documented() -> None:
    from agent_wait import schema

    for setting in schema.Settings:
        assert f"`{setting.value}`" in DOC, setting.value


@pytest.mark.usefixtures("refunds_service")
def test_the_email_snippet_synthesizes_with_nothing_for_cdk_nag() -> None:
    namespace = _snippet("## Email")
    app = new_app()
    stack = namespace["EmailApprovalsStack"](app, "EmailApprovals")  # type: ignore[operator]
    result = synth(app, stack)  # type: ignore[arg-type]  # cdk-nag runs as a validation plugin: a finding fails here
    result.template.resource_count_is("AWS::SES::ConfigurationSet", 1)
    result.template.resource_count_is("AWS::SES::ConfigurationSetEventDestination", 1)
    result.template.has_resource_properties(
        "AWS::DynamoDB::Table", {"KeySchema": [{"AttributeName": "question_id", "KeyType": "HASH"}]}
    )
    outputs = {key.removeprefix("AgentWait")[:-8] for key in result.json["Outputs"]}
    assert {"EmailSendsTableName", "EmailConfigurationSetName", "AnswerApiUrl"} <= outputs
