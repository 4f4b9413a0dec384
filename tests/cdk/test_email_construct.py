"""Email on `AgentWait`: the sends table, the SES configuration set counting bounces and complaints, the alarm on
them, `ses:SendEmail` scoped to the identity and the configuration set, the router's and the sweep's settings and
link keys, cdk-nag and cfn-lint clean, and props refused at construction.

One synthesized stack (`email` below); the prop checks construct without synthesizing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from cfnlint.api import lint
from tests.cdk.conftest import (
    EXAMPLES,
    ISSUER,
    KMS_READ_WRITE,
    Synth,
    actions_on,
    getatt,
    inline_code,
    new_app,
    statements,
    synth,
)

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps, EmailProps

ROUTER, SWEEP, API = "agent_wait.host.router.handler", "agent_wait.host.sweep.handler", "agent_wait.host.api.handler"
SENDS_KEYS = [{"AttributeName": "question_id", "KeyType": "HASH"}]
GROUPS = {"finance": ["ana@example.com", "dana@example.com"]}
TAGS = {"approver_group:finance-managers": ["max@example.com"], "*": ["desk@example.com"]}


def arn(*resource: Any) -> dict[str, Any]:
    """An SES ARN in the stack's partition, region and account, as `Stack.format_arn` writes it."""
    return {
        "Fn::Join": [
            "",
            ["arn:", {"Ref": "AWS::Partition"}, ":ses:", {"Ref": "AWS::Region"}, ":", {"Ref": "AWS::AccountId"},
             *resource],
        ]
    }  # fmt: skip


@pytest.fixture(scope="module")
def email() -> Synth:
    """Email as an answer channel under a customer key, with a prefix (so every name is fixed)."""
    app = new_app()
    stack = Stack(app, "Email")
    key = kms.Key(stack, "Key", enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY)
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        topic=False,
        bus=False,
        encryption_key=key,
        removal_policy=RemovalPolicy.DESTROY,
        resource_name_prefix="refunds-mail",
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"]),
        email=EmailProps(
            sender="Approvals <approvals@mail.example.com>",
            identity="example.com",
            groups=GROUPS,
            tags=TAGS,
            reply_to=["finance-desk@example.com", "cfo@example.com"],
        ),
    )
    return synth(app, stack)


def variables(synth: Synth, handler: str) -> dict[str, Any]:
    _, function = synth.one("AWS::Lambda::Function", Handler=handler)
    return function["Properties"]["Environment"]["Variables"]


def role_of(synth: Synth, handler: str) -> str:
    _, function = synth.one("AWS::Lambda::Function", Handler=handler)
    return function["Properties"]["Role"]["Fn::GetAtt"][0]


def test_the_router_and_the_sweep_get_the_email_settings_the_api_url_and_the_link_keys(email: Synth) -> None:
    table, _ = email.one("AWS::DynamoDB::Table", KeySchema=SENDS_KEYS)
    (keys,) = [k for k in email.resources("AWS::SecretsManager::Secret") if "LinkKeys" in k]
    (api,) = email.resources("AWS::ApiGatewayV2::Api")
    configuration_set, _ = email.one("AWS::SES::ConfigurationSet")
    for handler in (ROUTER, SWEEP):
        found = variables(email, handler)
        assert found["AGENT_WAIT_EMAIL_FROM"] == "Approvals <approvals@mail.example.com>", handler
        assert json.loads(found["AGENT_WAIT_EMAIL_RECIPIENTS"]) == {"groups": GROUPS, "tags": TAGS}, handler
        assert found["AGENT_WAIT_EMAIL_SENDS_TABLE"] == {"Ref": table}, handler
        assert found["AGENT_WAIT_EMAIL_CONFIGURATION_SET"] == {"Ref": configuration_set}, handler
        assert found["AGENT_WAIT_EMAIL_REPLY_TO"] == "finance-desk@example.com,cfo@example.com", handler
        assert found["AGENT_WAIT_LINK_KEYS_ARN"] == {"Ref": keys}, handler
        assert api in json.dumps(found["AGENT_WAIT_API_URL"]), handler
        assert "AGENT_WAIT_LINK_ANNOUNCERS" not in found, handler  # no envelope carries links: only the emails
    assert not any(name.startswith("AGENT_WAIT_EMAIL_") for name in variables(email, API))  # it sends nothing


def test_only_the_router_and_the_sweep_may_send_and_only_as_the_identity_with_the_configuration_set(
    email: Synth,
) -> None:
    table, _ = email.one("AWS::DynamoDB::Table", KeySchema=SENDS_KEYS)
    (key,) = email.resources("AWS::KMS::Key")
    name, _ = email.one("AWS::SES::ConfigurationSet")
    identity, configuration_set = arn(":identity/example.com"), arn(":configuration-set/", {"Ref": name})
    for handler in (ROUTER, SWEEP):
        found = statements(email, role_of(email, handler))
        ses = [s for s in found if any(str(a).startswith("ses:") for a in _list(s["Action"]))]
        assert len(ses) == 1, handler
        assert sorted(_list(ses[0]["Action"])) == ["ses:SendEmail", "ses:SendRawEmail"], handler
        assert ses[0]["Resource"] == [identity, configuration_set], handler
        granted = actions_on(found)
        assert granted[getatt(table)] == {"dynamodb:GetItem", "dynamodb:UpdateItem"}, handler
        assert granted[getatt(key)] >= KMS_READ_WRITE, handler
    api = statements(email, role_of(email, API))
    assert not [s for s in api if any(str(a).startswith("ses:") for a in _list(s["Action"]))]
    assert getatt(table) not in actions_on(api)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_the_sends_table_is_keyed_by_question_on_demand_with_ttl_named_and_encrypted(email: Synth) -> None:
    table, resource = email.one("AWS::DynamoDB::Table", KeySchema=SENDS_KEYS)
    (key,) = email.resources("AWS::KMS::Key")
    props = resource["Properties"]
    assert props["TableName"] == "refunds-mail-email-sends"
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"]["KMSMasterKeyId"] == {"Fn::GetAtt": [key, "Arn"]}
    outputs = {k.removeprefix("AgentWait")[:-8]: v for k, v in email.json["Outputs"].items()}
    assert outputs["EmailSendsTableName"]["Value"] == {"Ref": table}
    assert outputs["EmailConfigurationSetName"]["Value"] == {"Ref": email.one("AWS::SES::ConfigurationSet")[0]}


def test_the_configuration_set_counts_bounces_and_complaints_in_cloudwatch(email: Synth) -> None:
    name, configuration_set = email.one("AWS::SES::ConfigurationSet")
    assert configuration_set["Properties"]["Name"] == "refunds-mail-email"
    assert configuration_set["Properties"]["ReputationOptions"] == {"ReputationMetricsEnabled": True}
    _, destination = email.one("AWS::SES::ConfigurationSetEventDestination")
    props = destination["Properties"]
    assert props["ConfigurationSetName"] == {"Ref": name}
    event = props["EventDestination"]
    assert event["Enabled"] is True
    assert sorted(event["MatchingEventTypes"]) == ["bounce", "complaint"]
    (dimension,) = event["CloudWatchDestination"]["DimensionConfigurations"]
    assert dimension == {
        "DimensionName": "ses:configuration-set",
        "DimensionValueSource": "messageTag",
        "DefaultDimensionValue": {"Ref": name},
    }


def test_an_alarm_fires_on_any_bounce_or_complaint_beside_the_other_alarms(email: Synth) -> None:
    name, _ = email.one("AWS::SES::ConfigurationSet")
    alarms = email.resources("AWS::CloudWatch::Alarm")
    (bounces,) = [a["Properties"] for k, a in alarms.items() if "EmailBounces" in k]
    assert len(alarms) == 7  # the six of AgentWaitAlarms, and this one
    assert (bounces["Threshold"], bounces["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert bounces["TreatMissingData"] == "notBreaching"
    metrics = {m["Id"]: m for m in bounces["Metrics"]}
    assert metrics.keys() == {"expr_1", "bounces", "complaints"}
    assert metrics["expr_1"]["Expression"] == "FILL(bounces, 0) + FILL(complaints, 0)"
    for metric_id, metric_name in (("bounces", "Bounce"), ("complaints", "Complaint")):
        stat = metrics[metric_id]["MetricStat"]
        assert stat["Metric"]["Namespace"] == "AWS/SES"
        assert stat["Metric"]["MetricName"] == metric_name
        assert stat["Metric"]["Dimensions"] == [{"Name": "ses:configuration-set", "Value": {"Ref": name}}]
        assert (stat["Stat"], stat["Period"]) == ("Sum", 300)
        assert metrics[metric_id]["ReturnData"] is False


def test_cdk_nag_and_cfn_lint_find_nothing(email: Synth) -> None:
    report_path = email.outdir / "validation-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {"pluginReports": []}
    assert [v for p in report["pluginReports"] for v in p.get("violations", [])] == []
    matches = lint(json.dumps(email.json), regions=["us-east-1"])
    assert [f"{m.rule.id} {m.message}" for m in matches if m.rule.id.startswith("E")] == []


def test_without_an_identity_the_senders_domain_is_the_one_granted() -> None:
    stack = Stack(new_app(), "S")
    agent = AgentWait(
        stack,
        "A",
        graph="g:g",
        code=inline_code(),
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"]),
        email=EmailProps(sender="approvals@example.org", tags={"*": ["desk@example.org"]}),
    )
    policy = json.dumps(stack.resolve(agent.router_function.role.node.find_child("DefaultPolicy").document.to_json()))  # type: ignore[union-attr]
    assert ":identity/example.org" in policy
    assert agent.email_configuration_set is not None
    assert agent.alarms is not None
    assert agent.alarms.email_bounces is not None


def construct(**email: Any) -> None:
    props = {"sender": "Approvals <approvals@example.com>", "tags": {"*": ["desk@example.com"]}, **email}
    AgentWait(
        Stack(new_app(), "S"),
        "A",
        graph="g:g",
        code=inline_code(),
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"]),
        email=EmailProps(**props),
    )


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        ({"sender": "approvals"}, "email.sender must be an address, or 'Name <address>'; got 'approvals'"),
        ({"sender": "A <a@example.com>\r\nBcc: x@evil.test"}, "email.sender must be an address"),
        ({"identity": "other.example"}, "email.identity must be the sender's address or domain (or a parent domain)"),
        ({"identity": "not a domain"}, "email.identity must be a domain name or an address verified in SES"),
        ({"tags": {}}, "email.groups or email.tags must name at least one address"),
        ({"tags": {"finance": ["a@example.com"]}}, "email.tags keys must be a policy tag 'key:value'"),
        ({"tags": {"*": ["nobody"]}}, "email.tags values must be addresses (local@domain.tld); got 'nobody' for '*'"),
        ({"groups": {"finance": "ana@example.com"}}, "email.groups values must be lists of addresses; got the string"),
        ({"reply_to": ["desk"]}, "email.reply_to must list addresses; 'desk' is not one"),
        ({"configuration_set_name": "has spaces"}, "email.configuration_set_name must be 1 to 64 letters"),
    ],
)
def test_bad_props_are_refused_with_what_to_do(props: dict[str, Any], problem: str) -> None:
    with pytest.raises(AgentWaitPropsError) as caught:
        construct(**props)
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems


def test_a_parent_domain_or_the_address_itself_is_a_fine_identity() -> None:
    construct(sender="a@mail.example.com", identity="example.com")
    construct(sender="a@example.com", identity="A@Example.com")


def test_email_needs_the_answer_api_with_links() -> None:
    email = EmailProps(sender="a@example.com", tags={"*": ["b@example.com"]})
    with pytest.raises(AgentWaitPropsError, match="email needs answer_api=True with links on"):
        AgentWait(Stack(new_app(), "S"), "A", graph="g:g", code=inline_code(), email=email)
    no_links = AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"], links=False)
    with pytest.raises(AgentWaitPropsError, match="email needs answer_api=True with links on"):
        AgentWait(
            Stack(new_app(), "S"),
            "A",
            graph="g:g",
            code=inline_code(),
            answer_api=True,
            answer_api_props=no_links,
            email=email,
        )


def test_a_brought_sends_table_needs_the_question_id_key() -> None:
    stack = Stack(new_app(), "S")
    wrong = dynamodb.Table(stack, "T", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING))
    with pytest.raises(AgentWaitPropsError, match=r"email\.sends_table must have the partition key 'question_id'"):
        AgentWait(
            stack,
            "A",
            graph="g:g",
            code=inline_code(),
            answer_api=True,
            answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"]),
            email=EmailProps(sender="a@example.com", tags={"*": ["b@example.com"]}, sends_table=wrong),
        )
