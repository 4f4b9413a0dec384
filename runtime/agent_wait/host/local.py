"""The whole product on a laptop: an embedded AWS emulator, the deployed template, the Lambda handlers.

`LocalStack` starts moto in server mode on 127.0.0.1, deploys the synthesized CloudFormation template
of an `AgentWait` stack into moto's CloudFormation (the same tables, queues, topic and bus the
constructs deploy: there is no second definition to drift), and drives the same router and sweep
handlers as Lambda: a loop over the entry queue stands in for the SQS event source, and `sweep()`
for the schedule. Beside them, the answer API's routes are served on 127.0.0.1 (`api_url`) behind a
local JWT authorizer and issuer (`issuer`), as API Gateway would serve them (`agent_wait.host._local_api`).
Everything runs in this process; `stop()` (or leaving the `with` block) ends it.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_wait._time import clock_scope, utc_now
from agent_wait.errors import require_extra
from agent_wait.messages import group_id_for

__all__ = (
    "API_HANDLER",
    "ROUTER_HANDLER",
    "SWEEP_HANDLER",
    "LocalStack",
    "PumpResult",
    "local_template",
    "require_emulator",
)

ROUTER_HANDLER = "agent_wait.host.router.handler"
SWEEP_HANDLER = "agent_wait.host.sweep.handler"
API_HANDLER = "agent_wait.host.api.handler"

logger = logging.getLogger("agent_wait.local")

# What cannot run on the emulator: functions need Docker, IAM is not enforced, schedules never fire; moto's
# CloudFormation skips Cognito and API Gateway v2 resources (the answer API is served locally instead).
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
    "AWS::SNS::Subscription",
    "AWS::Cognito::",
    "AWS::ApiGatewayV2::",
    "Custom::",
)


# What moto's CloudFormation skips but the local stack needs: created with boto3 after the stack (`_create_secrets`).
_CREATED_AFTER = ("AWS::SecretsManager::Secret",)
_GENERATED_LENGTH = 32
"""Secrets Manager's default `PasswordLength` for a generated secret string."""


def require_emulator() -> None:
    """Raise `MissingExtraError` naming the `local` extra unless the emulator and the local issuer import."""
    for package in ("moto", "flask", "jwt", "cryptography"):  # the emulator, its server, the local issuer
        require_extra("agent_wait.host.local (agent-wait dev)", package, "local")


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
    skipped = _DROPPED_TYPES + _CREATED_AFTER
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


def _functions(template: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`{handler: environment variables}` for every Lambda function in the template."""
    found: dict[str, dict[str, Any]] = {}
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == "AWS::Lambda::Function":
            props = resource.get("Properties", {})
            found[props.get("Handler", "")] = props.get("Environment", {}).get("Variables", {})
    return found


@dataclass
class PumpResult:
    """What one pass over the entry queue did."""

    handled: int = 0
    failed: int = 0
    outcomes: list[Any] = field(default_factory=list)
    """Every message's `agent_wait.host.Outcome`, in order."""


class _Context:
    """The slice of a Lambda context the Powertools decorators read."""

    def __init__(self, handler: str) -> None:
        self.function_name = handler.rsplit(".", 2)[-2]
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "local"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 300_000


class LocalStack:
    """Run an `AgentWait` stack's template on an embedded moto server and drive its handlers.

    Args:
        template: the synthesized CloudFormation template (a dict).
        stack_name: the name for the local stack; unique by default (moto keeps one state per process).
        clock: now, in UTC; the local demo moves it forward to show a deadline pass.
        extra_environment: variables the functions get besides those in the template.
        api_port: the answer API's port on 127.0.0.1; 0 picks a free one (see `api_url`).

    Example:
        with LocalStack(template) as local:
            local.send({"thread_id": "order-1", "input": {...}})
            local.pump()
            token = local.issuer.token("alice@example.com", ["finance"])
            # GET {local.api_url}/questions with "Authorization: Bearer {token}"
    """

    _running: LocalStack | None = None

    def __init__(
        self,
        template: Mapping[str, Any],
        *,
        stack_name: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        extra_environment: Mapping[str, str] | None = None,
        api_port: int = 0,
    ) -> None:
        self.template = dict(template)
        self.stack_name = stack_name or f"agent-wait-local-{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self.extra_environment = dict(extra_environment or {})
        self.endpoint_url = ""
        self.environment: dict[str, str] = {}
        self.outputs: dict[str, str] = {}
        self._server: Any = None
        self._saved_env: dict[str, str | None] = {}
        self._session: Any = None
        self._deployed: dict[str, Any] = {}
        self.api_port = api_port
        self.api_url = ""
        """The answer API's base URL on 127.0.0.1, once started."""
        self.issuer: Any = None
        """The local JWT issuer (`agent_wait.host._local_jwt.LocalIssuer`) the API's authorizer trusts."""
        self._api: Any = None

    # -- lifecycle ------------------------------------------------------------------------------------

    def __enter__(self) -> LocalStack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the emulator, deploy the template, and point this process's AWS clients at it.

        Raises:
            MissingExtraError: the emulator is not installed (`pip install 'agent-wait[local]'`).
            RuntimeError: another `LocalStack` is running in this process (they would share its clients).
        """
        require_emulator()
        from moto.server import ThreadedMotoServer

        if LocalStack._running is not None:
            raise RuntimeError(
                f"a LocalStack ({LocalStack._running.stack_name}) is already running in this process; stop it first: "
                "it points this process's AWS clients at its emulator"
            )
        LocalStack._running = self

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per AWS call is noise here
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint_url = f"http://{host}:{port}"
        self._set_env(
            {
                "AWS_ENDPOINT_URL": self.endpoint_url,
                "AWS_ACCESS_KEY_ID": "local",
                "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_SESSION_TOKEN": "local",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_REGION": "us-east-1",
                "AWS_EC2_METADATA_DISABLED": "true",
            }
        )
        try:
            self._deploy()
            self._start_api()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the answer API and the emulator, and restore the environment. Safe to call twice."""
        if self._api is not None:
            self._api.stop()
            self._api = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}
        self._reset_handlers()
        if LocalStack._running is self:
            LocalStack._running = None

    def _set_env(self, values: Mapping[str, str]) -> None:
        for name, value in values.items():
            self._saved_env.setdefault(name, os.environ.get(name))
            os.environ[name] = value

    def client(self, service: str) -> Any:
        import boto3

        if self._session is None:
            self._session = boto3.Session(region_name="us-east-1")
        return self._session.client(service, endpoint_url=self.endpoint_url)

    # -- deployment -----------------------------------------------------------------------------------

    def _deploy(self) -> None:
        cloudformation = self.client("cloudformation")
        body = local_template(self.template, name_prefix=self.stack_name)
        self._deployed = body
        cloudformation.create_stack(StackName=self.stack_name, TemplateBody=json.dumps(body))
        stack = cloudformation.describe_stacks(StackName=self.stack_name)["Stacks"][0]
        if stack["StackStatus"] != "CREATE_COMPLETE":
            raise RuntimeError(
                f"local stack {self.stack_name} is {stack['StackStatus']}: {stack.get('StackStatusReason')}"
            )
        self.outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        physical = {
            r["LogicalResourceId"]: r["PhysicalResourceId"]
            for r in cloudformation.describe_stack_resources(StackName=self.stack_name)["StackResources"]
            if r.get("PhysicalResourceId")
        }
        physical.update(self._create_secrets())
        functions = _functions(self.template)
        environment: dict[str, str] = {}
        for handler in (ROUTER_HANDLER, SWEEP_HANDLER, API_HANDLER):
            for name, value in functions.get(handler, {}).items():
                resolved = self._resolve(value, physical)
                if resolved is not None:
                    environment[name] = resolved
        environment.update(self.extra_environment)
        # Embedded-metric-format lines on stdout are for CloudWatch; locally they only bury the output.
        environment.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        environment.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentWait")
        environment.setdefault("POWERTOOLS_SERVICE_NAME", "agent-wait")
        self.environment = environment
        self._set_env(environment)
        self._subscribe_queues_to_topics(physical)
        self._reset_handlers()

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

    def _start_api(self) -> None:
        """Serve the answer API on 127.0.0.1 and name it to the router, so envelopes' `reply_to` carry it."""
        from agent_wait.host import api
        from agent_wait.host._local_api import LocalApi

        self._api = LocalApi(self._invoke_api, port=self.api_port, clock=self._now)
        self.api_url, self.issuer = self._api.url, self._api.issuer
        self.environment["AGENT_WAIT_API_URL"] = self.api_url
        self._set_env({"AGENT_WAIT_API_URL": self.api_url})
        self._reset_handlers()
        api._context()  # the API's cold start now: a missing setting or unreadable link keys fail `start()`
        self._api.start()

    def _now(self) -> datetime:
        return self.clock()  # read on every call: `at()` swaps the clock

    @staticmethod
    def _invoke_api(event: dict[str, Any]) -> Any:
        from agent_wait.host import api

        return api.handler(event, _Context(API_HANDLER))

    def cold_start(self) -> None:
        """Make the next call of each function a cold start, as a deploy does: settings, clients and the link
        keys are read again (after rotating the link keys, say)."""
        self._reset_handlers()

    def _resolve(self, value: Any, physical: Mapping[str, str]) -> str | None:
        """Resolve the intrinsic functions CDK uses in environment variables against the local stack."""
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and "Ref" in value:
            return physical.get(value["Ref"]) or self._declared_name(value["Ref"])
        if isinstance(value, dict) and "Fn::GetAtt" in value:
            logical, attribute = value["Fn::GetAtt"]
            return self._attribute(logical, attribute, physical)
        if isinstance(value, dict) and "Fn::Join" in value:
            separator, parts = value["Fn::Join"]
            resolved = [self._resolve(part, physical) for part in parts]
            return None if any(part is None for part in resolved) else separator.join(str(p) for p in resolved)
        return None

    def _declared_name(self, logical: str) -> str | None:
        """The name a template gives a resource (moto reports no physical id for some, e.g. event buses)."""
        props = self._deployed.get("Resources", {}).get(logical, {}).get("Properties", {})
        for key in ("Name", "TableName", "QueueName", "TopicName"):
            if isinstance(props.get(key), str):
                return props[key]
        return None

    def _attribute(self, logical: str, attribute: str, physical: Mapping[str, str]) -> str | None:
        resource = self.template["Resources"].get(logical, {})
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
            return f"arn:aws:events:us-east-1:123456789012:event-bus/{identity}" if attribute == "Arn" else identity
        return None

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

    @staticmethod
    def _reset_handlers() -> None:
        import sys

        for module_name in ("agent_wait.host.router", "agent_wait.host.sweep", "agent_wait.host.api"):
            module = sys.modules.get(module_name)
            if module is not None:
                for cached in ("_router", "_sweep", "_settings", "_context", "_app"):
                    factory = getattr(module, cached, None)
                    if factory is not None:
                        factory.cache_clear()

    # -- driving the handlers ------------------------------------------------------------------------

    @property
    def queue_url(self) -> str:
        return self.environment["AGENT_WAIT_QUEUE_URL"]

    @property
    def table(self) -> str:
        return self.environment["AGENT_WAIT_TABLE"]

    def send(self, message: Mapping[str, Any], *, deduplication_id: str | None = None) -> str:
        """Put a start or an answer on the entry queue, grouped by its thread; returns the message id."""
        body = json.dumps(message)
        kwargs: dict[str, Any] = {
            "QueueUrl": self.queue_url,
            "MessageBody": body,
            "MessageGroupId": group_id_for(str(message.get("thread_id") or "no-thread")),
        }
        if deduplication_id is not None:
            kwargs["MessageDeduplicationId"] = deduplication_id
        return self.client("sqs").send_message(**kwargs)["MessageId"]

    def pump(self, *, max_batches: int = 50, wait_seconds: int = 0) -> PumpResult:
        """Feed the entry queue to the router handler, as the Lambda event source does, until it is empty."""
        from agent_wait.host import router

        sqs, result = self.client("sqs"), PumpResult()
        arn = sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        listener = result.outcomes.append
        router.OUTCOME_LISTENERS.append(listener)
        try:
            for _ in range(max_batches):
                received = sqs.receive_message(
                    QueueUrl=self.queue_url,
                    MaxNumberOfMessages=10,
                    WaitTimeSeconds=wait_seconds,
                    AttributeNames=["All"],
                    MessageSystemAttributeNames=["All"],
                ).get("Messages", [])
                if not received:
                    break
                # SQS stamps SentTimestamp in real time; the router judges answers by it, so it is moved
                # onto this stack's clock (the demo moves the clock to show a deadline pass).
                shift = self.clock() - datetime.now(UTC)
                event = {"Records": [_record(message, arn, shift=shift) for message in received]}
                with clock_scope(self.clock):
                    response = router.handler(event, _Context(ROUTER_HANDLER))
                failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
                for message in received:
                    if message["MessageId"] in failed:
                        sqs.change_message_visibility(
                            QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                        )
                    else:
                        sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
                result.handled += len(received) - len(failed)
                result.failed += len(failed)
        finally:
            router.OUTCOME_LISTENERS.remove(listener)
        return result

    def sweep(self) -> dict[str, Any]:
        """Run the sweep handler once, as the schedule would."""
        from agent_wait.host import sweep

        event = {"source": "aws.scheduler", "detail-type": "Scheduled Event", "time": self.clock().isoformat()}
        with clock_scope(self.clock):
            return sweep.handler(event, _Context(SWEEP_HANDLER))

    @contextmanager
    def at(self, clock: Callable[[], datetime]) -> Iterator[None]:
        previous, self.clock = self.clock, clock
        try:
            yield
        finally:
            self.clock = previous


def _record(message: Mapping[str, Any], arn: str, *, shift: timedelta = timedelta(0)) -> dict[str, Any]:
    """An SQS event record in the shape the Lambda event source delivers; `SentTimestamp` moved by `shift`."""
    attributes = dict(message.get("Attributes", {}))
    sent = int(attributes.get("SentTimestamp") or time.time() * 1000)
    sent_timestamp = str(sent + int(shift.total_seconds() * 1000))
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {
            "ApproximateReceiveCount": attributes.get("ApproximateReceiveCount", "1"),
            "SentTimestamp": sent_timestamp,
            "SenderId": attributes.get("SenderId", "local"),
            "ApproximateFirstReceiveTimestamp": attributes.get("ApproximateFirstReceiveTimestamp", "0"),
            "SequenceNumber": attributes.get("SequenceNumber", "0"),
            "MessageGroupId": attributes.get("MessageGroupId", ""),
            "MessageDeduplicationId": attributes.get("MessageDeduplicationId", ""),
        },
        "messageAttributes": {},
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": "us-east-1",
    }
