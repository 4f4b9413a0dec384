"""Deploy a pruned `AgentWait` template into the embedded emulator, and create what its CloudFormation skips.

moto's CloudFormation deploys tables, queues, topics and buses, but skips secrets, SNS subscriptions, tables' TTL
and buckets' lifecycle rules, and reports no physical id for some resources: `EmulatorDeployment` creates those with
boto3 and resolves the intrinsic functions CDK writes into the functions' environment variables against what was
deployed. It resolves
the template's policy documents the same way (`resolve_document`), for the emulator's IAM check: there the pseudo
parameters resolve too, and what was not deployed (a role, a function, a log group) gets a stand-in ARN.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_wait.errors import EmulatorError
from agent_wait.local.template import function_environments, local_template

__all__ = ("Deployed", "EmulatorDeployment")

_GENERATED_LENGTH = 32
"""Secrets Manager's default `PasswordLength` for a generated secret string."""
ACCOUNT = "123456789012"
"""The emulator's account id (moto's default)."""
REGION = "us-east-1"
"""The emulator's region."""
UNRESOLVED = "unresolved:"
"""What a reference to a resource the emulator has no ARN for resolves to in a policy document: it names nothing, so
an `Allow` naming it grants nothing here."""
_PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT,
    "AWS::URLSuffix": "amazonaws.com",
}


@dataclass(frozen=True)
class Deployed:
    """What a deployment made: the stack's outputs and the functions' environment, resolved."""

    outputs: dict[str, str]
    environment: dict[str, str]


class EmulatorDeployment:
    """One template deployed as one stack on the emulator the `client` factory reaches.

    Args:
        template: the synthesized CloudFormation template.
        stack_name: the local stack's name (also the prefix of the names the template leaves to CloudFormation).
        client: returns a boto3 client for a service, pointed at the emulator.
    """

    def __init__(self, template: Mapping[str, Any], stack_name: str, client: Callable[[str], Any]) -> None:
        self.template = dict(template)
        self.stack_name = stack_name
        self.client = client
        self._deployed: dict[str, Any] = {}
        self._physical: dict[str, str] = {}

    def deploy(self, handlers: Sequence[str]) -> Deployed:
        """Create the stack and what moto skips; `handlers`' environment variables resolved against it.

        Raises:
            RuntimeError: moto's CloudFormation did not complete the stack (its reason is in the message).
        """
        cloudformation = self.client("cloudformation")
        body = local_template(self.template, name_prefix=self.stack_name)
        self._deployed = body
        cloudformation.create_stack(StackName=self.stack_name, TemplateBody=json.dumps(body))
        stack = cloudformation.describe_stacks(StackName=self.stack_name)["Stacks"][0]
        if stack["StackStatus"] != "CREATE_COMPLETE":
            raise EmulatorError(
                f"local stack {self.stack_name} is {stack['StackStatus']}: {stack.get('StackStatusReason')}"
            )
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        physical = {
            r["LogicalResourceId"]: r["PhysicalResourceId"]
            for r in cloudformation.describe_stack_resources(StackName=self.stack_name)["StackResources"]
            if r.get("PhysicalResourceId")
        }
        physical.update(self._create_secrets())
        self._physical = physical
        self._set_expiry(physical)
        functions = function_environments(self.template)
        environment: dict[str, str] = {}
        for handler in handlers:
            for name, value in functions.get(handler, {}).items():
                resolved = self._resolve(value, physical)
                if resolved is not None:
                    environment[name] = resolved
        self._subscribe_queues_to_topics(physical)
        return Deployed(outputs=outputs, environment=environment)

    def _create_secrets(self) -> dict[str, str]:
        """Create the template's secrets (the answer API's link keys), which moto's CloudFormation skips.

        A `SecretString` is stored as given; a `GenerateSecretString` is generated as Secrets Manager would:
        its `SecretStringTemplate` with `GenerateStringKey` set to a random string of letters and digits.
        Returns their ARNs by logical id.
        """
        import secrets
        import string

        created: dict[str, str] = {}
        client = self.client("secretsmanager")
        for logical, resource in self.template.get("Resources", {}).items():
            if resource.get("Type") != "AWS::SecretsManager::Secret":
                continue
            props = resource.get("Properties", {})
            value = props.get("SecretString")
            generate = props.get("GenerateSecretString")
            if not isinstance(value, str):
                options = generate if isinstance(generate, dict) else {}
                length = int(options.get("PasswordLength", _GENERATED_LENGTH))
                alphabet = string.ascii_letters + string.digits
                random = "".join(secrets.choice(alphabet) for _ in range(length))
                key, shape = options.get("GenerateStringKey"), options.get("SecretStringTemplate")
                value = json.dumps({**json.loads(shape), key: random}) if key and shape else random
            name = f"{self.stack_name}-{logical}"
            created[logical] = client.create_secret(Name=name, SecretString=value)["ARN"]
        return created

    def _set_expiry(self, physical: Mapping[str, str]) -> None:
        """Turn on each table's TTL and put each bucket's lifecycle rules, which moto's CloudFormation skips (what they
        delete, the emulator deletes by its clock: `agent_wait.local.expiry`)."""
        from agent_wait.local.expiry import lifecycle_rules_from_template

        for logical, resource in self._deployed.get("Resources", {}).items():
            props, name = resource.get("Properties", {}), physical.get(logical)
            ttl = props.get("TimeToLiveSpecification") or {}
            if resource.get("Type") == "AWS::DynamoDB::Table" and ttl.get("Enabled") and name:
                self.client("dynamodb").update_time_to_live(
                    TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]}
                )
            rules = lifecycle_rules_from_template(props.get("LifecycleConfiguration") or {})
            if resource.get("Type") == "AWS::S3::Bucket" and rules and name:
                self.client("s3").put_bucket_lifecycle_configuration(
                    Bucket=name, LifecycleConfiguration={"Rules": rules}
                )

    def _resolve(self, value: Any, physical: Mapping[str, str], *, pseudo: bool = False) -> str | None:
        """Resolve the intrinsic functions CDK uses in environment variables against the local stack (and the pseudo
        parameters with `pseudo`: an environment leaves a value built from them unset, as an imported secret's ARN
        names nothing here)."""
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and "Ref" in value:
            if pseudo and value["Ref"] in _PSEUDO:
                return _PSEUDO[value["Ref"]]
            if pseudo and value["Ref"] == "AWS::StackName":
                return self.stack_name
            return physical.get(value["Ref"]) or self._declared_name(value["Ref"])
        if isinstance(value, dict) and "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            logical, attribute = target if isinstance(target, list) else str(target).split(".", 1)
            return self._attribute(logical, attribute, physical)
        if isinstance(value, dict) and "Fn::Join" in value:
            separator, parts = value["Fn::Join"]
            resolved = [self._resolve(part, physical, pseudo=pseudo) for part in parts]
            return None if any(part is None for part in resolved) else separator.join(str(p) for p in resolved)
        if pseudo and isinstance(value, dict) and "Fn::Sub" in value:
            return self._sub(value["Fn::Sub"], physical)
        return None

    def _sub(self, value: Any, physical: Mapping[str, str]) -> str | None:
        text, variables = (value, {}) if isinstance(value, str) else (value[0], dict(value[1]))
        unresolved = False

        def one(match: re.Match[str]) -> str:
            nonlocal unresolved
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                found = self._resolve(variables[name], physical, pseudo=True)
            elif "." in name:
                found = self._resolve({"Fn::GetAtt": name.split(".", 1)}, physical, pseudo=True)
            else:
                found = self._resolve({"Ref": name}, physical, pseudo=True)
            unresolved = unresolved or found is None
            return found or ""

        resolved = re.sub(r"\$\{([^}]+)\}", one, text)
        return None if unresolved else resolved

    def resolve_document(self, node: Any) -> Any:
        """`node` (a policy document, a principal, a key id) with every intrinsic function resolved against the
        local stack, pseudo parameters included; a value that cannot be resolved becomes `UNRESOLVED` and the
        reference, naming nothing. Call after `deploy`."""
        if isinstance(node, list):
            return [self.resolve_document(item) for item in node]
        if isinstance(node, dict):
            if len(node) == 1 and next(iter(node)) in _INTRINSICS:
                resolved = self._resolve(node, self._physical, pseudo=True)
                return resolved if resolved is not None else UNRESOLVED + json.dumps(node, sort_keys=True)
            return {key: self.resolve_document(value) for key, value in node.items()}
        return node

    def _declared_name(self, logical: str) -> str | None:
        """The name a template gives a resource (moto reports no physical id for some, e.g. event buses)."""
        props = self._deployed.get("Resources", {}).get(logical, {}).get("Properties", {})
        for key in ("Name", "TableName", "QueueName", "TopicName"):
            if isinstance(props.get(key), str):
                return props[key]
        return None

    def _attribute(self, logical: str, attribute: str, physical: Mapping[str, str]) -> str | None:
        resource = self.template["Resources"].get(logical, {})
        stand_in = _stand_in_arn(resource, logical) if attribute == "Arn" else None
        if stand_in is not None:
            return stand_in
        kind, identity = resource.get("Type"), physical.get(logical) or self._declared_name(logical)
        if identity is None:
            return None
        if kind == "AWS::SQS::Queue":
            names = {"Arn": "QueueArn", "QueueName": "QueueName", "QueueUrl": None}
            if attribute == "QueueUrl":
                return identity
            attrs = self.client("sqs").get_queue_attributes(QueueUrl=identity, AttributeNames=["QueueArn"])
            arn = attrs["Attributes"]["QueueArn"]
            return arn if names.get(attribute) == "QueueArn" else arn.rsplit(":", 1)[-1]
        if kind in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
            table = self.client("dynamodb").describe_table(TableName=identity)["Table"]
            return {"Arn": table["TableArn"], "StreamArn": table.get("LatestStreamArn")}.get(attribute)
        if kind == "AWS::SNS::Topic":
            return identity if attribute in ("TopicArn", "Arn") else identity.rsplit(":", 1)[-1]
        if kind == "AWS::Events::EventBus":
            return f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{identity}" if attribute == "Arn" else identity
        if kind == "AWS::S3::Bucket" and attribute == "Arn":
            return f"arn:aws:s3:::{identity}"
        if kind == "AWS::KMS::Key" and attribute == "Arn":
            return identity if identity.startswith("arn:") else f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{identity}"
        if kind == "AWS::SecretsManager::Secret" and attribute in ("Arn", "Id"):
            return identity
        return None

    @property
    def physical_ids(self) -> dict[str, str]:
        """Each deployed resource's physical id by logical id (a secret's is its ARN), once deployed."""
        return dict(self._physical)

    def _subscribe_queues_to_topics(self, physical: Mapping[str, str]) -> None:
        """moto's CloudFormation skips subscriptions: create the template's SQS subscriptions with boto3."""
        sns = self.client("sns")
        for resource in self.template.get("Resources", {}).values():
            if resource.get("Type") != "AWS::SNS::Subscription":
                continue
            props = resource.get("Properties", {})
            if props.get("Protocol") != "sqs":
                continue
            topic = self._resolve(props.get("TopicArn"), physical)
            endpoint = self._resolve(props.get("Endpoint"), physical)
            if topic and endpoint:
                attributes = {"RawMessageDelivery": str(props.get("RawMessageDelivery", False)).lower()}
                if props.get("FilterPolicy"):
                    attributes["FilterPolicy"] = json.dumps(props["FilterPolicy"])
                sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=endpoint, Attributes=attributes)


_INTRINSICS = frozenset(
    {"Ref", "Fn::GetAtt", "Fn::Join", "Fn::Sub", "Fn::Select", "Fn::Split", "Fn::If", "Fn::ImportValue"}
)
"""The intrinsic functions a value can be; only `Ref`, `Fn::GetAtt`, `Fn::Join` and `Fn::Sub` resolve here."""


def _stand_in_arn(resource: Mapping[str, Any], logical: str) -> str | None:
    """The ARN of a resource the emulator does not deploy (a role, a function, a log group), by the name the template
    gives it or its logical id: what a policy names it by (`iam:PassRole` on a role) and what the functions are told."""
    props = resource.get("Properties", {})
    kind = resource.get("Type")
    if kind == "AWS::IAM::Role":
        name = props.get("RoleName") if isinstance(props.get("RoleName"), str) else logical
        return (
            f"arn:aws:iam::{ACCOUNT}:role{props.get('Path', '/') if isinstance(props.get('Path'), str) else '/'}{name}"
        )
    if kind == "AWS::Lambda::Function":
        name = props.get("FunctionName") if isinstance(props.get("FunctionName"), str) else logical
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
    if kind == "AWS::Logs::LogGroup":
        name = props.get("LogGroupName") if isinstance(props.get("LogGroupName"), str) else logical
        return f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{name}:*"
    return None
