"""The question ledger table: keys, billing, GSI, TTL, recovery, encryption, removal policy, read grant."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template
from tests.cdk.conftest import Synth, actions_on, new_app, statements

from agent_wait_cdk import QuestionTable

QUESTION_TABLE_SHAPE = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "by_status",
            "KeySchema": [
                {"AttributeName": "status_shard", "KeyType": "HASH"},
                {"AttributeName": "expires_at", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["tags"]},
        },
        {
            "IndexName": "by_due_shard",
            "KeySchema": [
                {"AttributeName": "due", "KeyType": "HASH"},
                {"AttributeName": "due_at", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
        {
            "IndexName": "open_by_age_shard",
            "KeySchema": [
                {"AttributeName": "open_since", "KeyType": "HASH"},
                {"AttributeName": "asked_at", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
        {
            "IndexName": "by_question",
            "KeySchema": [
                {"AttributeName": "question_id", "KeyType": "HASH"},
                {"AttributeName": "pk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
    ],
    "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": True},
    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
}


def question_table(synth: Synth) -> tuple[str, dict]:
    return synth.one("AWS::DynamoDB::Table", KeySchema=QUESTION_TABLE_SHAPE["KeySchema"])


def test_question_table_has_the_ledger_shape(refund: Synth) -> None:
    refund.template.has_resource_properties("AWS::DynamoDB::Table", QUESTION_TABLE_SHAPE)
    _, table = question_table(refund)
    attributes = {a["AttributeName"]: a["AttributeType"] for a in table["Properties"]["AttributeDefinitions"]}
    assert attributes == {
        "pk": "S",
        "sk": "S",
        "status_shard": "S",
        "expires_at": "S",
        "due": "S",
        "due_at": "S",
        "asked_at": "S",
        "open_since": "S",
        "question_id": "S",
    }


def test_question_table_is_encrypted_with_the_aws_managed_key_by_default(refund: Synth) -> None:
    _, table = question_table(refund)
    assert table["Properties"]["SSESpecification"] == {"SSEEnabled": True}


def test_question_table_uses_the_customer_key_when_given(features: Synth) -> None:
    _, table = question_table(features)
    sse = table["Properties"]["SSESpecification"]
    assert sse["SSEEnabled"] is True
    assert sse["SSEType"] == "KMS"
    assert sse["KMSMasterKeyId"] == {"Fn::GetAtt": ["Key961B73FD", "Arn"]}


def test_question_table_is_retained_by_default() -> None:
    stack = Stack(new_app(), "S")
    QuestionTable(stack, "Questions")
    Template.from_stack(stack).has_resource(
        "AWS::DynamoDB::Table", {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}
    )


def test_removal_policy_prop_reaches_the_table(refund: Synth) -> None:
    """The refund demo passes DESTROY so `cdk destroy` cleans up."""
    refund.template.has_resource(
        "AWS::DynamoDB::Table",
        {"DeletionPolicy": "Delete", "Properties": Match.object_like({"KeySchema": QUESTION_TABLE_SHAPE["KeySchema"]})},
    )


def test_main_child_is_resource() -> None:
    stack = Stack(new_app(), "S")
    table = QuestionTable(stack, "Questions")
    assert table.node.default_child is not None
    assert table.table.node.id == "Resource"


@pytest.mark.parametrize("grant", ["grant_read_questions", "grant_router", "grant_sweep"])
def test_question_table_grants_cover_the_table_and_only_the_indexes_each_reader_queries(grant: str) -> None:
    stack = Stack(new_app(), "S")
    table = QuestionTable(stack, "Questions")
    role = iam.Role(stack, "Role", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    result = getattr(table, grant)(role)
    assert isinstance(result, iam.Grant)
    template = Template.from_stack(stack).to_json()
    policy = next(v for v in template["Resources"].values() if v["Type"] == "AWS::IAM::Policy")
    (stmt,) = policy["Properties"]["PolicyDocument"]["Statement"]
    arn = {"Fn::GetAtt": [stack.resolve(table.table.node.default_child.logical_id), "Arn"]}  # type: ignore[union-attr]
    indexes = {
        "grant_read_questions": ["by_status", "by_question"],
        "grant_router": [],
        "grant_sweep": ["by_status", "by_due_shard", "open_by_age_shard"],
    }
    resources = [arn, *({"Fn::Join": ["", [arn, f"/index/{name}"]]} for name in indexes[grant])]
    assert stmt["Resource"] == (resources if len(resources) > 1 else arn)
    expected = {
        "grant_read_questions": ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"],
        "grant_router": [
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
            "dynamodb:Query",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:ConditionCheckItem",
        ],
        "grant_sweep": [
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:ConditionCheckItem",
        ],
    }[grant]
    assert stmt["Action"] == expected


def test_agent_wait_grant_read_questions_is_read_only_with_kms_decrypt(features: Synth) -> None:
    stmts = statements(features, "Reader")
    by_resource = actions_on(stmts)
    table_id, _ = question_table(features)
    arn = {"Fn::GetAtt": [table_id, "Arn"]}
    assert by_resource[_j(arn)] == {"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
    assert by_resource[_j({"Fn::Join": ["", [arn, "/index/by_status"]]})] == by_resource[_j(arn)]
    assert by_resource[_j({"Fn::Join": ["", [arn, "/index/by_question"]]})] == by_resource[_j(arn)]
    assert by_resource[_j({"Fn::GetAtt": ["Key961B73FD", "Arn"]})] == {"kms:Decrypt", "kms:DescribeKey"}


def _j(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True)


UPGRADE = "agent-wait:question-table-indexes"


def _indexes_and_sweep_grant(context: dict[str, object]) -> tuple[list[tuple[str, str]], list[str]]:
    stack = Stack(new_app(**context), "S")
    table = QuestionTable(stack, "Questions")
    role = iam.Role(stack, "Role", assumed_by=iam.AccountRootPrincipal())  # type: ignore[arg-type]
    table.grant_sweep(role)
    template = Template.from_stack(stack).to_json()
    (resource,) = [v for v in template["Resources"].values() if v["Type"] == "AWS::DynamoDB::Table"]
    indexes = [
        (i["IndexName"], i["Projection"]["ProjectionType"]) for i in resource["Properties"]["GlobalSecondaryIndexes"]
    ]
    policy = next(v for v in template["Resources"].values() if v["Type"] == "AWS::IAM::Policy")
    (stmt,) = policy["Properties"]["PolicyDocument"]["Statement"]
    granted = [r["Fn::Join"][1][1].removeprefix("/index/") for r in stmt["Resource"] if "Fn::Join" in r]
    return indexes, granted


def test_the_upgrade_context_deploys_the_listed_indexes_and_grants_the_legacy_ones_too() -> None:
    # GIVEN the first upgrade step of a table from before the shards: the three legacy indexes (the unsharded
    # `by_status` named by its token), by_question, and one new index
    listed = "by_status_unsharded,by_due,open_by_age,by_question,by_due_shard"

    # WHEN the table is synthesized with the upgrade context
    indexes, granted = _indexes_and_sweep_grant({UPGRADE: listed})

    # THEN exactly those indexes exist (legacy ones project ALL, as they were deployed; the unsharded status index
    # under its own name, on `status`), and the sweep may query the new indexes and every predecessor the runtime
    # falls back to while a new one is missing
    assert indexes == [
        ("by_status", "ALL"),
        ("by_due", "ALL"),
        ("open_by_age", "ALL"),
        ("by_question", "KEYS_ONLY"),
        ("by_due_shard", "KEYS_ONLY"),
    ]
    assert granted == [
        "by_status",
        "by_due_shard",
        "open_by_age_shard",
        "by_status_shard",
        "by_due",
        "open_by_age",
    ]


def test_the_unsharded_by_status_keeps_its_old_keys_under_the_upgrade_context() -> None:
    stack = Stack(new_app(**{UPGRADE: "by_status_unsharded,by_question"}), "S")
    QuestionTable(stack, "Questions")
    (resource,) = Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()
    (status, _) = resource["Properties"]["GlobalSecondaryIndexes"]
    assert status["IndexName"] == "by_status"
    assert [k["AttributeName"] for k in status["KeySchema"]] == ["status", "expires_at"]


def test_a_table_deployed_with_by_status_shard_moves_to_by_status_in_two_deploys() -> None:
    # GIVEN a table deployed before the status index was renamed (`by_status_shard`, the same sharded keys)
    # WHEN the first deploy adds `by_status` beside it
    listed = "by_status_shard,by_due_shard,open_by_age_shard,by_question,by_status"
    indexes, granted = _indexes_and_sweep_grant({UPGRADE: listed})
    # THEN both exist, and the sweep may query both (the runtime reads `by_status_shard` until `by_status` exists)
    assert indexes == [
        ("by_status_shard", "INCLUDE"),
        ("by_due_shard", "KEYS_ONLY"),
        ("open_by_age_shard", "KEYS_ONLY"),
        ("by_question", "KEYS_ONLY"),
        ("by_status", "INCLUDE"),
    ]
    assert granted[:3] == ["by_status", "by_due_shard", "open_by_age_shard"]
    assert "by_status_shard" in granted


def test_the_two_status_indexes_that_share_a_name_cannot_both_be_listed() -> None:
    with pytest.raises(ValueError, match="by_status and by_status_unsharded are both the index named 'by_status'"):
        _indexes_and_sweep_grant({UPGRADE: "by_status_unsharded,by_status,by_question"})


def test_without_the_upgrade_context_only_the_current_indexes_are_deployed_and_granted() -> None:
    indexes, granted = _indexes_and_sweep_grant({})
    assert [name for name, _ in indexes] == ["by_status", "by_due_shard", "open_by_age_shard", "by_question"]
    assert granted == ["by_status", "by_due_shard", "open_by_age_shard"]


def test_an_unknown_index_in_the_upgrade_context_is_refused() -> None:
    with pytest.raises(ValueError, match="must list index names from"):
        _indexes_and_sweep_grant({UPGRADE: "by_status,by_typo"})
