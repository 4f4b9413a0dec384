"""What an AWS call asks IAM for: its actions, the resources they touch, and the condition keys it carries.

One boto3 call can need several authorisations: `BatchGetItem` over two tables is one per table, a
`TransactWriteItems` one per item with the item's own action, `CreateSchedule` also passes its target's role
(`iam:PassRole`), and a call on a resource encrypted with a customer managed key also uses the key (`kms:Decrypt`,
`kms:GenerateDataKey`, asked by the service on the caller's behalf, `kms:ViaService` naming it). `requests_for`
returns them all, from the call's own parameters, as AWS computes them for the services agent-wait's functions
call: DynamoDB, SQS, SNS, EventBridge, EventBridge Scheduler, Secrets Manager, S3, SES (v1 and v2), KMS, Lambda
(invoking, and durable functions' callbacks), STS, CloudWatch and X-Ray.

A call this module cannot place raises `UnsupportedCallError` naming it: the emulator refuses it rather than guess.

Long on purpose: one small mapper per service, kept side by side as the one table of what each call asks of IAM.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Any, Protocol
from urllib.parse import urlsplit

from agent_wait.local.iam_policy import Request

__all__ = ("Deployment", "UnsupportedCallError", "requests_for")


class UnsupportedCallError(Exception):
    """A call whose resource or action the emulator cannot tell (its text says which and why)."""


class Deployment(Protocol):
    """What `requests_for` needs to know of the local stack beyond a call's parameters."""

    account: str

    def key_of(self, arn: str) -> str | None:
        """The ARN of the customer managed key that encrypts the resource `arn`, or None."""
        ...

    def secret_arn(self, secret_id: str) -> str:
        """The full ARN of the secret named `secret_id` (a name, a partial or a full ARN)."""
        ...

    def key_arn(self, key_id: str) -> str:
        """The ARN of the KMS key named `key_id` (an id, an alias, or an ARN)."""
        ...

    def email_identity(self, address: str) -> str:
        """The SES identity that sends from `address`: the address itself if verified, else its domain."""
        ...

    def durable_execution(self, execution: str) -> str:
        """The ARN of the durable execution the durable SDK's local runner names `execution` (its ids are not ARNs:
        the runner plays the template's one durable function)."""
        ...


@dataclass(frozen=True)
class Call:
    """One boto3 call: the client's service and region, the operation and its parameters."""

    service: str
    operation: str
    params: Mapping[str, Any]
    region: str


def requests_for(call: Call, deployment: Deployment) -> list[Request]:
    """Every authorisation `call` needs (see the module docstring).

    Raises:
        UnsupportedCallError: the emulator cannot tell what the call touches.
    """
    mapper = _MAPPERS.get(call.service)
    if mapper is None:
        raise UnsupportedCallError(f"the emulator does not know which resources {call.service} calls touch")
    return mapper(call, _Arns(call.region, deployment.account), deployment)


@dataclass(frozen=True)
class _Arns:
    region: str
    account: str

    def of(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{self.account}:{resource}"


_Mapper = Callable[[Call, _Arns, Deployment], list[Request]]


def _request(action: str, resource: str, **context: str | None) -> Request:
    return Request(action, resource, {key.replace("__", ":").lower(): value for key, value in context.items()})


def _via(service: str, key: str | None, region: str, actions: tuple[str, ...], account: str) -> list[Request]:
    """The KMS requests a service makes with `key` on the caller's behalf (none for an AWS owned or managed key)."""
    if key is None:
        return []
    via = f"{service}.{region}.amazonaws.com"
    return [_request(action, key, kms__ViaService=via, kms__CallerAccount=account) for action in actions]


# -- DynamoDB ----------------------------------------------------------------------------------------------------------

_TRANSACT_ITEM_ACTIONS = {
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "Get": "dynamodb:GetItem",
}
"""A transaction is authorised item by item, each with the action of its kind (there is no transaction action)."""
_DYNAMODB_ITEM_CALLS = frozenset(
    {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem"}
)
_DYNAMODB_ACCOUNT_CALLS = frozenset({"ListTables", "DescribeLimits", "DescribeEndpoints"})


def _dynamodb(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    params = call.params

    def table(name: str) -> str:
        return name if name.startswith("arn:") else arns.of("dynamodb", f"table/{name}")

    def with_key(requests: list[Request], tables: list[str]) -> list[Request]:
        # DynamoDB decrypts a customer-managed-key table's key with the caller's rights (then caches it a while).
        for arn in dict.fromkeys(tables):
            requests += _via("dynamodb", deployment.key_of(arn), call.region, ("kms:Decrypt",), arns.account)
        return requests

    if call.operation in ("TransactWriteItems", "TransactGetItems"):
        pairs = [
            (_TRANSACT_ITEM_ACTIONS[kind], table(body["TableName"]))
            for item in params.get("TransactItems", [])
            for kind, body in item.items()
        ]
        return with_key([_request(action, arn) for action, arn in pairs], [arn for _, arn in pairs])
    if call.operation in ("BatchGetItem", "BatchWriteItem"):
        tables = [table(name) for name in params.get("RequestItems", {})]
        return with_key([_request(f"dynamodb:{call.operation}", arn) for arn in tables], tables)
    if call.operation in _DYNAMODB_ACCOUNT_CALLS:
        return [_request(f"dynamodb:{call.operation}", "*")]
    if "TableName" not in params and "TableArn" not in params and "ResourceArn" not in params:
        raise UnsupportedCallError(
            f"dynamodb {call.operation} names no table the emulator can read (PartiQL is not judged)"
        )
    arn = table(params.get("TableName") or params.get("TableArn") or params["ResourceArn"])
    resource = f"{arn}/index/{params['IndexName']}" if params.get("IndexName") else arn
    requests = [_request(f"dynamodb:{call.operation}", resource)]
    return with_key(requests, [arn]) if call.operation in _DYNAMODB_ITEM_CALLS else requests


# -- SQS ---------------------------------------------------------------------------------------------------------------

_SQS_BATCH = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
"""SQS authorises a batch as its single-message action."""
_SQS_KMS = {"SendMessage": ("kms:GenerateDataKey", "kms:Decrypt"), "ReceiveMessage": ("kms:Decrypt",)}
"""What SQS asks of a queue's customer managed key for a producer and for a consumer (SQS's SSE guide)."""


def _sqs(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    params = call.params
    action = _SQS_BATCH.get(call.operation, call.operation)
    if call.operation in ("ListQueues",):
        return [_request(f"sqs:{action}", "*")]
    if params.get("QueueUrl"):
        account, name = urlsplit(str(params["QueueUrl"])).path.strip("/").split("/")[-2:]
        arn = f"arn:aws:sqs:{call.region}:{account}:{name}"
    elif params.get("QueueName"):
        owner = params.get("QueueOwnerAWSAccountId") or arns.account
        arn = f"arn:aws:sqs:{call.region}:{owner}:{params['QueueName']}"
    else:
        raise UnsupportedCallError(f"sqs {call.operation} names no queue")
    kms = _SQS_KMS.get(action, ())
    return [_request(f"sqs:{action}", arn), *_via("sqs", deployment.key_of(arn), call.region, kms, arns.account)]


# -- SNS, EventBridge, Scheduler ------------------------------------------------------------------------------------


def _sns(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    params = call.params
    action = "Publish" if call.operation == "PublishBatch" else call.operation
    arn = params.get("TopicArn") or params.get("TargetArn") or params.get("ResourceArn")
    if call.operation in ("ListTopics", "ListSubscriptions"):
        return [_request(f"sns:{action}", "*")]
    if not arn:
        raise UnsupportedCallError(f"sns {call.operation} names no topic (an SMS publish is not judged)")
    kms = ("kms:GenerateDataKey", "kms:Decrypt") if action == "Publish" else ()
    return [
        _request(f"sns:{action}", str(arn)),
        *_via("sns", deployment.key_of(str(arn)), call.region, kms, arns.account),
    ]


def _events(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    def bus(name: str) -> str:
        return name if name.startswith("arn:") else arns.of("events", f"event-bus/{name}")

    if call.operation == "PutEvents":
        if call.params.get("EndpointId"):
            raise UnsupportedCallError("events PutEvents through a global endpoint is not judged")
        buses = dict.fromkeys(bus(entry.get("EventBusName") or "default") for entry in call.params.get("Entries", []))
        requests = [_request("events:PutEvents", arn) for arn in buses]
        for arn in buses:
            requests += _via("events", deployment.key_of(arn), call.region, ("kms:GenerateDataKey",), arns.account)
        return requests
    if call.operation in ("DescribeEventBus",):
        return [_request(f"events:{call.operation}", bus(call.params.get("Name") or "default"))]
    raise UnsupportedCallError(f"events {call.operation} is not judged")


def _scheduler(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    params = call.params
    if call.operation in ("ListSchedules", "ListScheduleGroups"):
        return [_request(f"scheduler:{call.operation}", "*")]
    if call.operation.endswith("ScheduleGroup"):
        return [_request(f"scheduler:{call.operation}", arns.of("scheduler", f"schedule-group/{params['Name']}"))]
    if "Name" not in params:
        raise UnsupportedCallError(f"scheduler {call.operation} names no schedule")
    group = params.get("GroupName") or "default"
    requests = [_request(f"scheduler:{call.operation}", arns.of("scheduler", f"schedule/{group}/{params['Name']}"))]
    role = (params.get("Target") or {}).get("RoleArn")
    if role:  # naming the role Scheduler assumes is passing it (Scheduler's guide: iam:PassRole)
        requests.append(_request("iam:PassRole", str(role), iam__PassedToService="scheduler.amazonaws.com"))
    if params.get("KmsKeyArn"):
        raise UnsupportedCallError("scheduler schedules under a customer managed key are not judged")
    return requests


# -- Secrets Manager, KMS ---------------------------------------------------------------------------------------------


def _secretsmanager(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    if call.operation in ("ListSecrets", "GetRandomPassword", "BatchGetSecretValue"):
        if call.operation == "BatchGetSecretValue":
            raise UnsupportedCallError("secretsmanager BatchGetSecretValue is not judged")
        return [_request(f"secretsmanager:{call.operation}", "*")]
    secret_id = call.params.get("SecretId") or call.params.get("Name")
    if not secret_id:
        raise UnsupportedCallError(f"secretsmanager {call.operation} names no secret")
    arn = deployment.secret_arn(str(secret_id))
    requests = [_request(f"secretsmanager:{call.operation}", arn)]
    if call.operation == "GetSecretValue":
        requests += _via("secretsmanager", deployment.key_of(arn), call.region, ("kms:Decrypt",), arns.account)
    return requests


def _kms(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    if call.operation in ("ListKeys", "ListAliases", "GenerateRandom", "CreateKey"):
        return [_request(f"kms:{call.operation}", "*")]
    key_id = call.params.get("KeyId") or call.params.get("DestinationKeyId")
    if not key_id:
        raise UnsupportedCallError(f"kms {call.operation} names no key (a Decrypt without KeyId is not judged)")
    return [_request(f"kms:{call.operation}", deployment.key_arn(str(key_id)), kms__ViaService=None)]


# -- S3 ----------------------------------------------------------------------------------------------------------------

_S3_OBJECT_ACTIONS = {
    "GetObject": "s3:GetObject",
    "HeadObject": "s3:GetObject",
    "PutObject": "s3:PutObject",
    "CreateMultipartUpload": "s3:PutObject",
    "UploadPart": "s3:PutObject",
    "CompleteMultipartUpload": "s3:PutObject",
    "AbortMultipartUpload": "s3:AbortMultipartUpload",
    "DeleteObject": "s3:DeleteObject",
    "GetObjectTagging": "s3:GetObjectTagging",
    "PutObjectTagging": "s3:PutObjectTagging",
    "DeleteObjectTagging": "s3:DeleteObjectTagging",
}
"""S3 authorises an object call as the object action it stands for (`HeadObject` is a `GetObject`)."""
_S3_BUCKET_ACTIONS = {
    "ListObjects": "s3:ListBucket",
    "ListObjectsV2": "s3:ListBucket",
    "HeadBucket": "s3:ListBucket",
    "ListObjectVersions": "s3:ListBucketVersions",
    "GetBucketLocation": "s3:GetBucketLocation",
}
_S3_KMS = {"s3:GetObject": ("kms:Decrypt",), "s3:PutObject": ("kms:GenerateDataKey",)}
"""What S3 asks of a bucket's customer managed key: decrypt to read an object, a data key to write one."""


def _s3(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    params = call.params
    if call.operation == "ListBuckets":
        return [_request("s3:ListAllMyBuckets", "*")]
    bucket = str(params.get("Bucket") or "")
    if not bucket:
        raise UnsupportedCallError(f"s3 {call.operation} names no bucket")
    bucket_arn = f"arn:aws:s3:::{bucket}"
    key = deployment.key_of(bucket_arn)

    def on_object(action: str, name: str) -> list[Request]:
        requests = [_request(action, f"{bucket_arn}/{name}")]
        return requests + _via("s3", key, call.region, _S3_KMS.get(action, ()), arns.account)

    if call.operation in _S3_BUCKET_ACTIONS:
        return [_request(_S3_BUCKET_ACTIONS[call.operation], bucket_arn)]
    if call.operation == "DeleteObjects":
        names = [str(item["Key"]) for item in (params.get("Delete") or {}).get("Objects", [])]
        return [_request("s3:DeleteObject", f"{bucket_arn}/{name}") for name in names]
    if call.operation == "CopyObject":
        source = params.get("CopySource")
        source_bucket, source_key = (
            (source["Bucket"], source["Key"]) if isinstance(source, Mapping) else str(source).lstrip("/").split("/", 1)
        )
        requests = [_request("s3:GetObject", f"arn:aws:s3:::{source_bucket}/{source_key}")]
        requests += _via(
            "s3", deployment.key_of(f"arn:aws:s3:::{source_bucket}"), call.region, ("kms:Decrypt",), arns.account
        )
        return requests + on_object("s3:PutObject", str(params["Key"])) + _tagged(params, bucket_arn)
    if call.operation in _S3_OBJECT_ACTIONS:
        requests = on_object(_S3_OBJECT_ACTIONS[call.operation], str(params["Key"]))
        return requests + (_tagged(params, bucket_arn) if call.operation == "PutObject" else [])
    raise UnsupportedCallError(f"s3 {call.operation} is not judged")


def _tagged(params: Mapping[str, Any], bucket_arn: str) -> list[Request]:
    """An object written with tags (`Tagging`) also needs `s3:PutObjectTagging` on it, as S3 asks."""
    return [_request("s3:PutObjectTagging", f"{bucket_arn}/{params['Key']}")] if params.get("Tagging") else []


# -- SES ---------------------------------------------------------------------------------------------------------------


def _ses(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    """SES (v1 `ses` and v2 `sesv2`; both authorise as `ses:`): a send on the identity it sends from (the address,
    else its domain), and on its configuration set when it names one."""
    params = call.params
    if call.operation in ("ListEmailIdentities", "ListIdentities", "GetAccount", "GetSendQuota"):
        return [_request(f"ses:{call.operation}", "*")]
    if call.operation not in ("SendEmail", "SendRawEmail"):
        raise UnsupportedCallError(f"{call.service} {call.operation} is not judged")
    sender = params.get("FromEmailAddress") or params.get("Source")
    if not sender and call.operation == "SendRawEmail":
        raise UnsupportedCallError("ses SendRawEmail without Source is not judged (the sender is inside the message)")
    if not sender:
        raise UnsupportedCallError(f"{call.service} SendEmail names no sender (FromEmailAddress)")
    address = parseaddr(str(sender))[1] or str(sender)
    identity = params.get("FromEmailAddressIdentityArn") or arns.of(
        "ses", f"identity/{deployment.email_identity(address)}"
    )
    context = {"ses__FromAddress": address}
    requests = [_request(f"ses:{call.operation}", str(identity), **context)]
    if params.get("ConfigurationSetName"):
        configuration = arns.of("ses", f"configuration-set/{params['ConfigurationSetName']}")
        requests.append(_request(f"ses:{call.operation}", configuration, **context))
    return requests


# -- Lambda, STS, CloudWatch, X-Ray ---------------------------------------------------------------------------------

_CALLBACK_CALLS = frozenset(
    {
        "SendDurableExecutionCallbackSuccess",
        "SendDurableExecutionCallbackFailure",
        "SendDurableExecutionCallbackHeartbeat",
    }
)


def _lambda(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    params = call.params
    if call.operation in _CALLBACK_CALLS:
        execution = _callback_execution(str(params.get("CallbackId", "")))
        return [_request(f"lambda:{call.operation}", _execution_arn(execution, deployment))]
    if call.operation == "GetDurableExecutionHistory":
        execution = str(params["DurableExecutionArn"])
        return [_request("lambda:GetDurableExecutionHistory", _execution_arn(execution, deployment))]
    if call.operation in ("Invoke", "InvokeAsync", "GetFunction", "GetFunctionConfiguration"):
        name = str(params["FunctionName"])
        arn = name if name.startswith("arn:") else arns.of("lambda", f"function:{name}")
        action = "InvokeFunction" if call.operation.startswith("Invoke") else call.operation
        return [_request(f"lambda:{action}", arn)]
    raise UnsupportedCallError(f"lambda {call.operation} is not judged")


def _callback_execution(callback_id: str) -> str:
    """The durable execution a callback belongs to, which Lambda authorises the completion on. Lambda's ids are
    opaque; the durable SDK's local runner writes its execution into them (base64 JSON, `arn`), and only those are
    read here."""
    try:
        execution = json.loads(base64.b64decode(callback_id, validate=True)).get("arn")
    except (binascii.Error, ValueError, AttributeError):
        execution = None
    if not isinstance(execution, str) or not execution:
        raise UnsupportedCallError(
            "a durable callback id that names no execution (only the SDK's local runner's are read)"
        )
    return execution


def _execution_arn(execution: str, deployment: Deployment) -> str:
    return execution if execution.startswith("arn:") else deployment.durable_execution(execution)


def _sts(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
    if call.operation == "GetCallerIdentity":
        return []  # AWS never refuses it, whatever a policy says
    raise UnsupportedCallError(f"sts {call.operation} is not judged")


def _without_resources(prefix: str, operations: frozenset[str]) -> _Mapper:
    """A service whose actions the functions call have no resource-level permissions (`Resource: *`)."""

    def mapper(call: Call, arns: _Arns, deployment: Deployment) -> list[Request]:
        if call.operation not in operations:
            raise UnsupportedCallError(f"{call.service} {call.operation} is not judged")
        return [_request(f"{prefix}:{call.operation}", "*")]

    return mapper


_MAPPERS: dict[str, _Mapper] = {
    "dynamodb": _dynamodb,
    "sqs": _sqs,
    "sns": _sns,
    "events": _events,
    "scheduler": _scheduler,
    "secretsmanager": _secretsmanager,
    "kms": _kms,
    "s3": _s3,
    "ses": _ses,
    "sesv2": _ses,
    "lambda": _lambda,
    "sts": _sts,
    "cloudwatch": _without_resources("cloudwatch", frozenset({"PutMetricData"})),
    "xray": _without_resources("xray", frozenset({"PutTraceSegments", "PutTelemetryRecords"})),
}
