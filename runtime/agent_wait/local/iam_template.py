"""The IAM a synthesized template gives its functions, read for the emulator's IAM check (`agent_wait.local.iam`).

For each function the emulator runs (by its handler): its role (the function's `Role`) and every policy the
template attaches to that role (`AWS::IAM::Policy` and `AWS::IAM::ManagedPolicy` naming it, the role's inline
`Policies` and `ManagedPolicyArns`, its `PermissionsBoundary`), resolved against the local stack. Beside them, the
policies the template puts on resources (queues, topics, buckets, secrets, tables, and each KMS key's key policy),
and which customer managed key encrypts what, since a call on an encrypted resource uses its key too.

AWS managed policies come from moto's copy of them. A policy the template only names by ARN (a customer managed
policy made elsewhere) cannot be read here: the role is judged without it, which can refuse a call AWS allows,
never the reverse, and `FunctionRole.unknown` says so in every refusal.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_wait.local.iam_policy import PolicyDocument

__all__ = ("FunctionRole", "TemplateIam", "template_iam")

_AWS_MANAGED = "arn:aws:iam::aws:policy/"


@dataclass(frozen=True)
class FunctionRole:
    """One function's role and what it may do, resolved."""

    handler: str
    role: str
    """The role's logical id in the template (its name when the function takes a role made elsewhere)."""
    arn: str
    policies: tuple[PolicyDocument, ...]
    boundary: tuple[PolicyDocument, ...] | None = None
    """The role's permissions boundary, when it has one."""
    unknown: tuple[str, ...] = ()
    """What the role holds that the template does not show (a managed policy by ARN, a role made elsewhere)."""


@dataclass(frozen=True)
class TemplateIam:
    """What the template says about who may do what, resolved against the local stack."""

    roles: Mapping[str, FunctionRole]
    """By handler."""
    resource_policies: Mapping[str, PolicyDocument] = field(default_factory=dict)
    """By the ARN of the resource they are attached to (a bucket's by the bucket's ARN)."""
    key_policies: Mapping[str, PolicyDocument] = field(default_factory=dict)
    """By key ARN."""
    keys: Mapping[str, str] = field(default_factory=dict)
    """The key each encrypted resource names (an ARN, a key id or an alias), by the resource's ARN."""
    durable_functions: tuple[str, ...] = ()
    """The ARNs of the template's durable functions (those with a `DurableConfig`)."""


Resolve = Callable[[Any], Any]
"""Resolves a template fragment against the local stack (`EmulatorDeployment.resolve_document`)."""


def template_iam(template: Mapping[str, Any], resolve: Resolve, handlers: Iterable[str] | None = None) -> TemplateIam:
    """Read the template's IAM for the functions with these handlers, every function's by default (see the module
    docstring)."""
    resources: Mapping[str, Any] = template.get("Resources", {})
    if handlers is None:
        handlers = [
            str(r["Properties"]["Handler"])
            for r in resources.values()
            if r.get("Type") == "AWS::Lambda::Function" and isinstance(r.get("Properties", {}).get("Handler"), str)
        ]
    roles = {}
    for handler in handlers:
        function = _function(resources, handler)
        if function is not None:
            roles[handler] = _role_of(resources, handler, function, resolve)
    return TemplateIam(
        roles=roles,
        resource_policies=_resource_policies(resources, resolve),
        key_policies={
            str(resolve({"Fn::GetAtt": [logical, "Arn"]})): _document(
                f"the key policy of {logical}", resolve(r["Properties"].get("KeyPolicy", {}))
            )
            for logical, r in resources.items()
            if r.get("Type") == "AWS::KMS::Key"
        },
        keys=_encryption_keys(resources, resolve),
        durable_functions=tuple(
            str(resolve({"Fn::GetAtt": [logical, "Arn"]}))
            for logical, r in resources.items()
            if r.get("Type") == "AWS::Lambda::Function" and r.get("Properties", {}).get("DurableConfig")
        ),
    )


def _function(resources: Mapping[str, Any], handler: str) -> Mapping[str, Any] | None:
    for resource in resources.values():
        if resource.get("Type") == "AWS::Lambda::Function" and resource.get("Properties", {}).get("Handler") == handler:
            return resource
    return None


def _role_of(resources: Mapping[str, Any], handler: str, function: Mapping[str, Any], resolve: Resolve) -> FunctionRole:
    reference = function.get("Properties", {}).get("Role")
    logical = _logical_target(reference)
    if logical is None or logical not in resources:  # a role made elsewhere, named by ARN
        arn = str(resolve(reference))
        name = arn.rsplit("/", 1)[-1]
        policies = [_document(lid, resolve(r["Properties"]["PolicyDocument"])) for lid, r in _attached(resources, name)]
        return FunctionRole(
            handler, name, arn, tuple(policies), unknown=(f"the policies {name} holds outside the template",)
        )
    role = resources[logical].get("Properties", {})
    arn = str(resolve({"Fn::GetAtt": [logical, "Arn"]}))
    policies = [_document(lid, resolve(r["Properties"]["PolicyDocument"])) for lid, r in _attached(resources, logical)]
    for inline in role.get("Policies", []) or []:
        policies.append(_document(str(inline.get("PolicyName", logical)), resolve(inline.get("PolicyDocument", {}))))
    unknown: list[str] = []
    for managed in role.get("ManagedPolicyArns", []) or []:
        found = _managed(resources, managed, resolve)
        if found is None:
            unknown.append(f"the managed policy {json.dumps(managed) if not isinstance(managed, str) else managed}")
        else:
            policies.append(found)
    boundary = None
    if role.get("PermissionsBoundary") is not None:
        found = _managed(resources, role["PermissionsBoundary"], resolve)
        # A boundary the emulator cannot read allows nothing here, rather than everything.
        boundary = (found,) if found is not None else ()
        if found is None:
            unknown.append("its permissions boundary, which is not in the template")
    return FunctionRole(handler, logical, arn, tuple(policies), boundary, tuple(unknown))


def _attached(resources: Mapping[str, Any], role: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The template's policies attached to `role` (a logical id, or the name of a role made elsewhere)."""
    found = []
    for logical, resource in resources.items():
        if resource.get("Type") not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            continue
        named = resource.get("Properties", {}).get("Roles", []) or []
        if any(entry == role or _logical_target(entry) == role for entry in named):
            found.append((logical, resource))
    return found


def _managed(resources: Mapping[str, Any], reference: Any, resolve: Resolve) -> PolicyDocument | None:
    logical = _logical_target(reference)
    if logical is not None and resources.get(logical, {}).get("Type") == "AWS::IAM::ManagedPolicy":
        return _document(logical, resolve(resources[logical]["Properties"]["PolicyDocument"]))
    arn = resolve(reference)
    if isinstance(arn, str) and arn.startswith(_AWS_MANAGED):
        document = _aws_managed().get(arn.rsplit("/", 1)[-1])
        return _document(arn, document["Document"]) if document else None
    return None


@functools.cache
def _aws_managed() -> dict[str, Any]:
    """AWS's managed policies, as moto ships them (read only when a role names one)."""
    from moto.iam.aws_managed_policies import aws_managed_policies_data

    return json.loads(aws_managed_policies_data)


_RESOURCE_POLICY_TARGETS = {
    "AWS::SQS::QueuePolicy": "Queues",
    "AWS::SNS::TopicPolicy": "Topics",
    "AWS::S3::BucketPolicy": "Bucket",
    "AWS::SecretsManager::ResourcePolicy": "SecretId",
}
"""Each resource-policy type and the property naming what it is attached to."""
_POLICY_PROPERTY = {"AWS::SecretsManager::ResourcePolicy": "ResourcePolicy"}


def _resource_policies(resources: Mapping[str, Any], resolve: Resolve) -> dict[str, PolicyDocument]:
    found: dict[str, PolicyDocument] = {}
    for logical, resource in resources.items():
        kind, props = resource.get("Type"), resource.get("Properties", {})
        if kind in _RESOURCE_POLICY_TARGETS:
            targets = props.get(_RESOURCE_POLICY_TARGETS[kind])
            document = _document(logical, resolve(props.get(_POLICY_PROPERTY.get(kind, "PolicyDocument"), {})))
            for target in targets if isinstance(targets, list) else [targets]:
                arn = _arn_of(resources, target, resolve)
                if arn is not None:
                    found[arn] = _merged(found.get(arn), document)
        elif kind == "AWS::DynamoDB::Table" and isinstance(props.get("ResourcePolicy"), Mapping):
            arn = str(resolve({"Fn::GetAtt": [logical, "Arn"]}))
            found[arn] = _document(logical, resolve(props["ResourcePolicy"].get("PolicyDocument", {})))
    return found


def _arn_of(resources: Mapping[str, Any], reference: Any, resolve: Resolve) -> str | None:
    """The ARN of the resource `reference` points at (a queue's `Ref` is its URL, a bucket's its name)."""
    logical = _logical_target(reference)
    if logical is not None and logical in resources:
        arn = resolve({"Fn::GetAtt": [logical, "Arn"]})
        if resources[logical].get("Type") == "AWS::SNS::Topic":
            arn = resolve({"Ref": logical})
        return arn if isinstance(arn, str) and arn.startswith("arn:") else None
    value = resolve(reference)
    return value if isinstance(value, str) and value.startswith("arn:") else None


_KEY_PROPERTIES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "AWS::SQS::Queue": lambda p: p.get("KmsMasterKeyId"),
    "AWS::SNS::Topic": lambda p: p.get("KmsMasterKeyId"),
    "AWS::SecretsManager::Secret": lambda p: p.get("KmsKeyId"),
    "AWS::Events::EventBus": lambda p: p.get("KmsKeyIdentifier"),
    "AWS::DynamoDB::Table": lambda p: (p.get("SSESpecification") or {}).get("KMSMasterKeyId"),
    "AWS::S3::Bucket": lambda p: next(
        (
            rule.get("ServerSideEncryptionByDefault", {}).get("KMSMasterKeyID")
            for rule in (p.get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration", [])
            if rule.get("ServerSideEncryptionByDefault", {}).get("SSEAlgorithm") in ("aws:kms", "aws:kms:dsse")
        ),
        None,
    ),
}
"""Where each resource type names the KMS key that encrypts it."""


def _encryption_keys(resources: Mapping[str, Any], resolve: Resolve) -> dict[str, str]:
    keys: dict[str, str] = {}
    for logical, resource in resources.items():
        read = _KEY_PROPERTIES.get(resource.get("Type", ""))
        key = read(resource.get("Properties", {})) if read else None
        if key is None:
            continue
        arn = _arn_of(resources, {"Ref": logical}, resolve)
        if arn is not None:
            keys[arn] = str(resolve(key))
    return keys


def _logical_target(reference: Any) -> str | None:
    """The logical id a `Ref` or `Fn::GetAtt` points at, else None."""
    if isinstance(reference, Mapping):
        if "Ref" in reference and isinstance(reference["Ref"], str):
            return reference["Ref"]
        target = reference.get("Fn::GetAtt")
        if isinstance(target, list) and target:
            return str(target[0])
        if isinstance(target, str):
            return target.split(".", 1)[0]
    return None


def _document(name: str, document: Any) -> PolicyDocument:
    return PolicyDocument.parse(name, document if isinstance(document, Mapping) else {})


def _merged(first: PolicyDocument | None, second: PolicyDocument) -> PolicyDocument:
    return second if first is None else PolicyDocument(first.name, first.statements + second.statements)
