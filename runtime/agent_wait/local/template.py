"""Prune a synthesized `AgentWait` template to what moto's CloudFormation can deploy (for the local runner)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

__all__ = ("CREATED_AFTER", "function_environments", "local_template")

# What cannot run on the emulator: functions need Docker, IAM is not enforced (nor resource policies: moto's
# CloudFormation has no bucket policy), schedules never fire; moto's CloudFormation skips Cognito and API Gateway v2
# resources (the answer API is served locally instead).
_DROPPED_TYPES = (
    "AWS::CDK::Metadata",
    "AWS::Lambda::",
    "AWS::IAM::",
    "AWS::Scheduler::",
    "AWS::Events::Rule",
    "AWS::Logs::",
    "AWS::CloudWatch::",
    "AWS::SQS::QueuePolicy",
    "AWS::SNS::TopicPolicy",
    "AWS::S3::BucketPolicy",
    "AWS::SNS::Subscription",
    "AWS::Cognito::",
    "AWS::ApiGatewayV2::",
    "Custom::",
)


_LOCAL_KEY_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:*", "Resource": "*"}],
}
"""The policy a customer managed key gets on the emulator, which enforces none."""

# What moto's CloudFormation skips but the local stack needs: created with boto3 after the stack (`EmulatorDeployment`).
CREATED_AFTER = ("AWS::SecretsManager::Secret",)


def _references(node: Any) -> set[str]:
    """Logical ids a template fragment takes a value from (Ref, Fn::GetAtt)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                target = value[0] if isinstance(value, list) else str(value).split(".")[0]
                found.add(target)
            elif key == "DependsOn":
                continue  # ordering only; pruned below instead of dropping the dependant
            else:
                found |= _references(value)
    elif isinstance(node, list):
        for item in node:
            found |= _references(item)
    return found


def local_template(template: Mapping[str, Any], *, name_prefix: str) -> dict[str, Any]:
    """The part of a synthesized template that moto's CloudFormation can deploy.

    Drops `Parameters`, `Rules`, CDK metadata and what cannot run locally (functions, IAM, schedules,
    alarms, policies), then anything that references what was dropped; gives FIFO queues and topics
    explicit `.fifo` names (moto does not generate them).
    """
    resources = copy.deepcopy(dict(template.get("Resources", {})))
    for resource in resources.values():
        if resource.get("Type") == "AWS::KMS::Key":
            # A key policy names the functions' roles, which are not deployed here (and nothing enforces IAM):
            # the key gets one that names nobody, instead of taking down every table, queue and topic it
            # encrypts with it. As text: moto keeps the policy as given and reads it back with `json.loads`.
            resource.setdefault("Properties", {})["KeyPolicy"] = json.dumps(_LOCAL_KEY_POLICY)
    skipped = _DROPPED_TYPES + CREATED_AFTER
    dropped = {lid for lid, r in resources.items() if str(r.get("Type", "")).startswith(skipped)}
    changed = True
    while changed:  # drop whatever depends on a dropped resource, to a fixed point
        changed = False
        for lid, resource in resources.items():
            if lid not in dropped and _references(resource) & dropped:
                dropped.add(lid)
                changed = True
    kept = {lid: r for lid, r in resources.items() if lid not in dropped}
    for lid, resource in kept.items():
        props = resource.setdefault("Properties", {})
        depends = resource.get("DependsOn")
        if depends is not None:
            kept_depends = [d for d in ([depends] if isinstance(depends, str) else depends) if d not in dropped]
            if kept_depends:
                resource["DependsOn"] = kept_depends
            else:
                resource.pop("DependsOn")
        if resource["Type"] == "AWS::SQS::Queue" and props.get("FifoQueue") and "QueueName" not in props:
            props["QueueName"] = f"{name_prefix}-{lid}"[:75] + ".fifo"
        if resource["Type"] == "AWS::SNS::Topic" and props.get("FifoTopic") and "TopicName" not in props:
            props["TopicName"] = f"{name_prefix}-{lid}"[:251] + ".fifo"
        # Names the template fixes are made unique per local stack: moto keeps one state per process.
        if resource["Type"] == "AWS::Events::EventBus" and isinstance(props.get("Name"), str):
            props["Name"] = f"{name_prefix}-{props['Name']}"[:256]
    outputs = {
        key: value
        for key, value in dict(template.get("Outputs", {})).items()
        if not _references(value) & dropped and "Export" not in value
    }
    return {"Resources": kept, "Outputs": outputs}


def function_environments(template: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`{handler: environment variables}` for every Lambda function in the template."""
    found: dict[str, dict[str, Any]] = {}
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == "AWS::Lambda::Function":
            props = resource.get("Properties", {})
            found[props.get("Handler", "")] = props.get("Environment", {}).get("Variables", {})
    return found
