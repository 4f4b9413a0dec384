"""The checkpoint bucket: created by default (encrypted, SSL only, private), used by the router alone through
`AGENT_WAIT_CHECKPOINT_BUCKET`; an opt-out and a bucket of your own.

The default and customer-key variants are the session's `refund` and `features` stacks; the opt-out and the
brought bucket are synthesized once here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_s3 as s3
from tests.cdk.conftest import EXAMPLES, KMS_READ_WRITE, Synth, actions_on, getatt, new_app, statements, synth

from agent_wait_cdk import AgentWait, AgentWaitPropsError

OBJECT_ACTIONS = {"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:PutObjectTagging", "s3:DeleteObjectTagging"}


def _agent(stack: Stack, **props: Any) -> AgentWait:
    return AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        **props,
    )


@pytest.fixture(scope="module")
def without_bucket() -> Synth:
    app = new_app()
    stack = Stack(app, "NoCheckpointBucket")
    _agent(stack, checkpoint_bucket=False)
    return synth(app, stack)


@pytest.fixture(scope="module")
def own_bucket() -> tuple[Synth, str]:
    app = new_app()
    stack = Stack(app, "OwnCheckpointBucket")
    bucket = s3.Bucket.from_bucket_name(stack, "Theirs", "their-checkpoints")
    agent = _agent(stack, existing_checkpoint_bucket=bucket)
    assert agent.checkpoint_bucket is bucket
    return synth(app, stack), "their-checkpoints"


def _router_env(synth: Synth) -> dict[str, Any]:
    (router,) = [
        r
        for r in synth.resources("AWS::Lambda::Function").values()
        if r["Properties"]["Handler"].endswith("router.handler")
    ]
    return router["Properties"]["Environment"]["Variables"]


def _sweep_env(synth: Synth) -> dict[str, Any]:
    (sweep,) = [
        r
        for r in synth.resources("AWS::Lambda::Function").values()
        if r["Properties"]["Handler"].endswith("sweep.handler")
    ]
    return sweep["Properties"]["Environment"]["Variables"]


def _object_arn(logical_id: str) -> str:
    return json.dumps({"Fn::Join": ["", [{"Fn::GetAtt": [logical_id, "Arn"]}, "/*"]]}, sort_keys=True)


def test_the_bucket_is_encrypted_and_private(refund: Synth, features: Synth) -> None:
    _, bucket = refund.one("AWS::S3::Bucket")
    props = bucket["Properties"]
    assert props["BucketEncryption"] == {
        "ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
    }
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    # one rule: the objects the saver tags for the retention (never one a thread waits on: tests/cdk/test_retention.py)
    assert [rule["Id"] for rule in props["LifecycleConfiguration"]["Rules"]] == ["CheckpointRetention"]
    assert "VersioningConfiguration" not in props
    # With a customer key: SSE-KMS under it, with a bucket key (fewer KMS calls)
    _, keyed = features.one("AWS::S3::Bucket")
    (rule,) = keyed["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"] == {"Fn::GetAtt": ["Key961B73FD", "Arn"]}
    assert rule["BucketKeyEnabled"] is True


def test_the_bucket_is_retained_unless_told(quiet: Synth, refund: Synth) -> None:
    for synthesized, policy in ((quiet, "Retain"), (refund, "Delete")):
        logical_id, _ = synthesized.one("AWS::S3::Bucket")
        resource = synthesized.json["Resources"][logical_id]
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == (policy, policy)


def test_the_bucket_refuses_every_request_without_tls(refund: Synth) -> None:
    logical_id, _ = refund.one("AWS::S3::Bucket")
    (policy,) = refund.resources("AWS::S3::BucketPolicy").values()
    assert policy["Properties"]["Bucket"] == {"Ref": logical_id}
    (deny,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny"
    assert deny["Action"] == "s3:*"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert deny["Principal"] == {"AWS": "*"}


def test_only_the_router_gets_the_bucket_with_exactly_the_saver_calls(refund: Synth) -> None:
    logical_id, _ = refund.one("AWS::S3::Bucket")
    router = actions_on(statements(refund, "AgentWaitRouter"))
    assert router[_object_arn(logical_id)] == OBJECT_ACTIONS
    assert router[getatt(logical_id)] == {"s3:ListBucket"}
    assert _router_env(refund)["AGENT_WAIT_CHECKPOINT_BUCKET"] == {"Ref": logical_id}
    # Nobody else: not the sweep's role nor any other, and not the sweep's environment
    for policy in refund.resources("AWS::IAM::Policy").values():
        if any(role["Ref"].startswith("AgentWaitRouter") for role in policy["Properties"]["Roles"]):
            continue
        assert logical_id not in json.dumps(policy), policy["Properties"]["Roles"]
    assert "AGENT_WAIT_CHECKPOINT_BUCKET" not in _sweep_env(refund)


def test_with_a_customer_key_the_router_may_use_it_for_the_bucket(features: Synth) -> None:
    logical_id, _ = features.one("AWS::S3::Bucket")
    router = actions_on(statements(features, "AgentWaitRouter"))
    assert router[_object_arn(logical_id)] == OBJECT_ACTIONS
    assert router[getatt("Key961B73FD")] >= KMS_READ_WRITE


def test_checkpoint_bucket_false_creates_no_bucket_and_sets_no_variable(without_bucket: Synth) -> None:
    assert without_bucket.resources("AWS::S3::Bucket") == {}
    assert without_bucket.resources("AWS::S3::BucketPolicy") == {}
    assert "AGENT_WAIT_CHECKPOINT_BUCKET" not in _router_env(without_bucket)
    assert not any(
        action.startswith("s3:")
        for actions in actions_on(statements(without_bucket, "AgentWaitRouter")).values()
        for action in actions
    )


def test_a_bucket_of_your_own_is_used_and_granted_not_created(own_bucket: tuple[Synth, str]) -> None:
    synthesized, name = own_bucket
    assert synthesized.resources("AWS::S3::Bucket") == {}
    env = synthesized.resolve(_router_env(synthesized)["AGENT_WAIT_CHECKPOINT_BUCKET"])
    assert env == name
    router = actions_on(statements(synthesized, "AgentWaitRouter"))
    bucket_arn = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{name}"]]}
    objects = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{name}/*"]]}
    assert router[json.dumps(objects, sort_keys=True)] == OBJECT_ACTIONS
    assert router[json.dumps(bucket_arn, sort_keys=True)] == {"s3:ListBucket"}


def test_a_bucket_of_your_own_cannot_go_with_the_switch_off() -> None:
    app = new_app()
    stack = Stack(app, "Contradiction")
    bucket = s3.Bucket.from_bucket_name(stack, "Theirs", "their-checkpoints")
    with pytest.raises(AgentWaitPropsError, match="existing_checkpoint_bucket cannot go with checkpoint_bucket=False"):
        _agent(stack, checkpoint_bucket=False, existing_checkpoint_bucket=bucket)
