"""Least privilege: exact statements per function, no wildcards, no managed policies, KMS only with a key."""

from __future__ import annotations

import json
from typing import Any

from tests.cdk.conftest import KMS_READ_WRITE, Synth, actions_on, getatt, ref, statements

QUESTION_READ = {"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
ROUTER_QUESTIONS = QUESTION_READ | {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"}
SWEEP_QUESTIONS = QUESTION_READ | {"dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"}
# UpdateItem: the saver holds the checkpoint a thread waits on (its TTL removed) and lets it go (a TTL again)
CHECKPOINTS = QUESTION_READ | {
    "dynamodb:PutItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:DeleteItem",
    "dynamodb:UpdateItem",
}
CONSUME = {
    "sqs:ReceiveMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueUrl",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
}
SEND = {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
# the tagging: every object is written with its retention tag, which a hold takes off and a release puts back
CHECKPOINT_OBJECTS = {
    "s3:GetObject",
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:PutObjectTagging",
    "s3:DeleteObjectTagging",
}
LOGS = {"logs:CreateLogStream", "logs:PutLogEvents"}


def ids(synth: Synth) -> dict[str, str]:
    r = synth.json["Resources"]

    def first(type_: str, part: str) -> str:
        return next(k for k, v in r.items() if v["Type"] == type_ and part in k)

    return {
        "questions": first("AWS::DynamoDB::Table", "QuestionTable"),
        "checkpoints": first("AWS::DynamoDB::Table", "CheckpointTable"),
        "entry": "AgentWaitEntryQueue74B3737D",
        "dlq": "AgentWaitEntryQueueDeadLetterQueueB64EFE3E",
        "router_logs": first("AWS::Logs::LogGroup", "Router"),
        "sweep_logs": first("AWS::Logs::LogGroup", "Sweep"),
        "refunds": next((k for k, v in r.items() if v["Type"] == "AWS::DynamoDB::Table" and "Refunds" in k), ""),
    }


def index_arn(table_id: str, index: str = "by_status") -> str:
    return json.dumps({"Fn::Join": ["", [{"Fn::GetAtt": [table_id, "Arn"]}, f"/index/{index}"]]}, sort_keys=True)


def test_router_gets_exactly_what_it_uses(refund: Synth) -> None:
    i = ids(refund)
    topic = next(iter(refund.resources("AWS::SNS::Topic")))
    (link_keys,) = refund.resources("AWS::SecretsManager::Secret")
    (bucket,) = refund.resources("AWS::S3::Bucket")
    assert actions_on(statements(refund, "AgentWaitRouter")) == {
        getatt(i["router_logs"]): LOGS,
        getatt(i["entry"]): CONSUME,  # from the event source; no send to the entry queue
        getatt(i["questions"]): ROUTER_QUESTIONS,  # by key and by thread: no index
        getatt(i["checkpoints"]): CHECKPOINTS,
        getatt(i["dlq"]): SEND,
        ref(topic): {"sns:Publish"},  # the one announcer: no bus by default
        getatt(i["refunds"]): {"dynamodb:PutItem"},  # the example's own side effect, granted by its stack
        ref(link_keys): {"secretsmanager:GetSecretValue"},  # signs the answer links its SNS envelopes carry
        # the checkpoint bucket: the saver's object calls, and listing so a missing object reads as NoSuchKey
        json.dumps({"Fn::Join": ["", [{"Fn::GetAtt": [bucket, "Arn"]}, "/*"]]}, sort_keys=True): CHECKPOINT_OBJECTS,
        getatt(bucket): {"s3:ListBucket"},
    }


def test_sweep_gets_exactly_what_it_uses(refund: Synth) -> None:
    i = ids(refund)
    topic = next(iter(refund.resources("AWS::SNS::Topic")))
    link_keys = next(iter(refund.resources("AWS::SecretsManager::Secret")))
    assert actions_on(statements(refund, "AgentWaitSweep")) == {
        getatt(i["sweep_logs"]): LOGS,
        getatt(i["questions"]): SWEEP_QUESTIONS,
        index_arn(i["questions"]): SWEEP_QUESTIONS,
        index_arn(i["questions"], "by_due_shard"): SWEEP_QUESTIONS,
        index_arn(i["questions"], "open_by_age_shard"): SWEEP_QUESTIONS,
        getatt(i["entry"]): SEND,
        ref(topic): {"sns:Publish"},
        ref(link_keys): {"secretsmanager:GetSecretValue"},  # a question announced again carries its links
    }


def _all_statements(synth: Synth) -> list[dict[str, Any]]:
    return [
        stmt
        for policy in synth.resources("AWS::IAM::Policy").values()
        for stmt in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


XRAY = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
"""What Lambda grants a function traced with X-Ray; X-Ray has no resource-level permissions, so only on `*`."""


def test_no_action_and_no_resource_is_a_wildcard(variant: Synth) -> None:
    for stmt in _all_statements(variant):
        if set(stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]) == XRAY:
            assert stmt["Resource"] == "*", stmt  # the one exception, and nothing else in its statement
            continue
        actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
        resources = stmt["Resource"] if isinstance(stmt["Resource"], list) else [stmt["Resource"]]
        assert not [a for a in actions if "*" in a], stmt
        assert not [r for r in resources if isinstance(r, str) and "*" in r], stmt
        assert "/index/*" not in json.dumps(resources), stmt


def test_no_managed_policies_on_the_function_roles(variant: Synth) -> None:
    for role_id, role in variant.resources("AWS::IAM::Role").items():
        if "Router" in role_id or "Sweep" in role_id or "AnswerApi" in role_id:
            assert "ManagedPolicyArns" not in role["Properties"], role_id


def test_no_kms_statement_without_a_customer_key(refund: Synth) -> None:
    assert not [s for s in _all_statements(refund) if "kms:" in json.dumps(s["Action"])]


def test_customer_key_is_granted_with_explicit_actions(features: Synth) -> None:
    key = getatt("Key961B73FD")
    router = actions_on(statements(features, "AgentWaitRouter"))
    sweep = actions_on(statements(features, "AgentWaitSweep"))
    # tables (read/write), dead letters and the topic (send), the entry queue's event source (decrypt)
    assert router[key] == KMS_READ_WRITE
    assert {"kms:GenerateDataKey", "kms:Decrypt"} <= sweep[key]


def test_grant_send_starts_sends_to_the_entry_queue_and_uses_its_key(features: Synth) -> None:
    assert actions_on(statements(features, "Caller")) == {
        getatt("AgentWaitEntryQueue74B3737D"): SEND,
        getatt("Key961B73FD"): {"kms:GenerateDataKey", "kms:Decrypt"},
    }


def test_grant_send_answers_sends_to_the_entry_queue(embedded: Synth) -> None:
    assert actions_on(statements(embedded, "ApiRole")) == {getatt("AgentWaitEntryQueue74B3737D"): SEND}


def test_xray_is_granted_only_to_traced_functions(refund: Synth, features: Synth) -> None:
    for prefix in ("AgentWaitRouter", "AgentWaitSweep"):
        assert not [s for s in statements(refund, prefix) if "xray:" in json.dumps(s["Action"])]
        assert actions_on(statements(features, prefix))[json.dumps("*")] == XRAY


def test_both_functions_may_read_the_webhook_secrets_and_decrypt_them(features: Synth) -> None:
    # the signing secret and the URL's secret
    secrets = features.resources("AWS::SecretsManager::Secret")
    assert len(secrets) == 2
    for prefix in ("AgentWaitRouter", "AgentWaitSweep"):
        granted = actions_on(statements(features, prefix))
        for secret in secrets:
            assert granted[ref(secret)] == {"secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"}
        assert "kms:Decrypt" in granted[getatt("Key961B73FD")]


def test_no_secret_statement_without_a_webhook_secret_or_link_keys(embedded: Synth) -> None:
    assert not [s for s in _all_statements(embedded) if "secretsmanager:" in json.dumps(s["Action"])]
