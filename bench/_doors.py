"""The refund stack as synthesized, on the emulator, answered through each door, with every AWS call, log line, API
request, Slack call and email of one lifecycle counted.

`app.py`'s `RefundAgentStack` is synthesized (no bundling) and deployed on the emulator (`EmulatedStack`): the same
announcers, link keys, checkpoint bucket and answer API it deploys, and the functions' own settings. The real Lambda
handlers run the bench's refund graph (`_refund_stack.build_graph`: no AWS calls of its own). Per door, one lifecycle:

- queue: a start and an approve on the entry queue, each received and deleted as the event source does;
- api: the start, then `POST /questions/{id}/answer` on the answer API's handler (what the inbox page and an app
  send), then the hand-over it queued, carried by the router;
- slack: the stack with `slack=SlackProps(...)` added; the router posts to a fake Slack (`tests/support/fake_slack.py`,
  over real HTTP), a person clicks Approve (a signed interaction to `/slack/interactions` on the local API), then the
  hand-over;
- email: the emulator's email settings (one recipient); the router emails through SES, the person opens the link's
  confirmation page (`GET`) and its script posts the token (`POST .../link/answer`), then the hand-over.

Logs: what each handler prints, as CloudWatch Logs would ingest it: the Powertools JSON lines at the stack's
`LOG_LEVEL`, the metrics' embedded-metric-format documents, warnings of the standard library's loggers, and per
invocation the three lines Lambda writes itself (`START`, `END`, `REPORT`); per API request, the access log line
(`ACCESS_LOG_FORMAT` filled in). Each line is counted as its UTF-8 bytes plus `LOG_EVENT_OVERHEAD`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from _refund_stack import LOG_EVENT_OVERHEAD, REGION, Call, CallCounter
from bench_router_memory import APPROVER

DOORS = ("queue", "api", "slack", "email")
DOOR_NAMES = {
    "queue": "queue (systems, the CLI)",
    "api": "answer API (inbox, apps)",
    "slack": "Slack buttons",
    "email": "email link",
}
GRAPH = "_refund_stack:build_graph"
SLACK_SIGNING_SECRET = "bench-slack-signing-secret-0123456789"
FUNCTION_NAMES = {
    "router": "RefundAgentStack-AgentWaitRouterC5B0A3E9-Q2w3E4r5T6y7",
    "api": "RefundAgentStack-AgentWaitAnswerApiHandler8D1F-Z9x8C7v6B5n4",
    "sweep": "RefundAgentStack-AgentWaitSweepF2A6D4C1-M1n2B3v4C5x6",
}
"""Names of the length CloudFormation generates (stack, logical id, suffix): each Powertools line carries the name and
the ARN, so their length is part of every line's bytes."""
_EMULATOR_CHANNELS = {
    "email": ("AGENT_WAIT_EMAIL_FROM", "AGENT_WAIT_EMAIL_RECIPIENTS", "AGENT_WAIT_EMAIL_SENDS_TABLE"),
    "teams": ("AGENT_WAIT_TEAMS_MODE", "AGENT_WAIT_TEAMS_SENDS_TABLE", "AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN"),
}
"""The channels the emulator turns on by itself for `agent-wait dev` (its previews), by their settings."""


@dataclass
class Lifecycle:
    """One lifecycle through one door: every AWS call, log line (bytes, by function) and request it made."""

    door: str
    calls: list[Call]
    log_lines: dict[str, list[int]]
    """Each line's billed bytes, by who wrote it (`router`, `api`, `api-access`)."""
    invocations: dict[str, int]
    slack_by_role: dict[str, int] = field(default_factory=dict)
    """Slack Web API calls and response-URL posts, by the function that made them."""
    emails: int = 0

    @property
    def log_bytes(self) -> int:
        return sum(sum(lines) for lines in self.log_lines.values())

    @property
    def api_requests(self) -> int:
        return self.invocations.get("api", 0)


@dataclass
class _Context:
    """The slice of a Lambda context Powertools reads, named as CloudFormation names the function."""

    role: str
    memory_limit_in_mb: int
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def function_name(self) -> str:
        return FUNCTION_NAMES[self.role]

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:123456789012:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    log_stream_name = "2026/12/07/[$LATEST]0123456789abcdef0123456789abcdef"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 300_000


def refund_template() -> dict[str, Any]:
    """`RefundAgentStack` as `app.py` builds it, synthesized without bundling."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    import app as refund_app
    from aws_cdk import App

    built = refund_app.build(App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False))
    return built.synth().get_stack_by_name("RefundAgentStack").template


def slack_template() -> dict[str, Any]:
    """The refund stack's `AgentWait` props with Slack added (`SlackProps`: its secrets and messages table), as a
    deployment that answers in Slack synthesizes it."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App, RemovalPolicy, Stack
    from aws_cdk import aws_secretsmanager as secretsmanager
    from examples.refund_agent.settings import REFUND_ROUTER_MEMORY_MB
    from examples.refund_agent.stack import GRAPH_SOURCE, REFUND_GRAPH

    from agent_wait_cdk import AgentWait, AnswerApiProps, RouterProps, SlackProps

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, "RefundSlack")
    AgentWait(
        stack,
        "AgentWait",
        graph=REFUND_GRAPH,
        graph_source=GRAPH_SOURCE,
        removal_policy=RemovalPolicy.DESTROY,
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=APPROVER["iss"], jwt_audience=["approvals"]),
        link_announcers=("sns",),
        router=RouterProps(memory_size=REFUND_ROUTER_MEMORY_MB),
        slack=SlackProps(
            bot_token=secretsmanager.Secret(stack, "SlackBotToken"),
            signing_secret=secretsmanager.Secret(stack, "SlackSigningSecret"),
            channels={"*": "C0FINANCE"},
        ),
    )
    return app.synth().get_stack_by_name("RefundSlack").template


def function_memory(template: dict[str, Any], handler: str) -> int:
    """The memory the template gives the function with `handler`."""
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        if resource["Type"] == "AWS::Lambda::Function" and properties.get("Handler") == handler:
            return int(properties.get("MemorySize", 128))
    raise LookupError(f"no function with handler {handler} in the template")


class Emulated:
    """A template deployed on the emulator, its handlers counted: AWS calls (by role), log lines, invocations."""

    def __init__(self, template: dict[str, Any], counter: CallCounter) -> None:
        self.template = template
        self.counter = counter
        self.memory = {
            "router": function_memory(template, "agent_wait.host.router.handler"),
            "api": function_memory(template, "agent_wait.host.api.handler"),
        }
        self.printed = io.StringIO()
        self.lines: dict[str, list[int]] = {}
        self.invocations: dict[str, int] = {}
        self.local: Any = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Emulated:
        import boto3

        from agent_wait.local.stack import EmulatedStack

        self.local = EmulatedStack(
            self.template,
            enforce_iam=False,
            extra_environment={"AGENT_WAIT_GRAPH": GRAPH, "POWERTOOLS_METRICS_DISABLED": "false"},
        )
        self._stack.enter_context(self.local)
        self._stack.enter_context(_quiet_handlers(self.printed))
        self.local.cold_start()  # the handlers' clients are made from now on, so the counter sees their calls
        self.sqs = boto3.Session(region_name=REGION).client("sqs", endpoint_url=self.local.endpoint_url)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    # -- one lifecycle through each door ----------------------------------------------------------------------------

    def lifecycle(self, door: str, n: int, slack: Any = None) -> Lifecycle:
        """One lifecycle through `door` on thread `order-<door>-<n>`; what it cost."""
        self.counter.calls.clear()
        self.lines, self.invocations = {}, {}
        thread = f"order-{door}-{n}"
        slack_by_role: dict[str, int] = {}

        def to_slack() -> int:
            return len(slack.requests) if slack is not None else 0

        emails = self._emails()
        before = to_slack()
        self._send({"thread_id": thread, "input": {"order_id": thread, "amount": 900}}, thread)
        self._route()
        slack_by_role["router"] = to_slack() - before
        question = self._asked(thread)
        before = to_slack()
        if door == "queue":
            self._send({"thread_id": thread, "question_id": question, "answer": {"action": "approve"}}, thread)
        elif door == "api":
            self._api("POST", f"/questions/{question}/answer", {"answer": {"action": "approve"}}, claims=APPROVER)
        elif door == "slack":
            self._click(slack, question)
        elif door == "email":
            self._follow_link(question)
        slack_by_role["api"] = to_slack() - before
        before = to_slack()
        self._route()
        slack_by_role["router"] += to_slack() - before
        return Lifecycle(
            door,
            list(self.counter.calls),
            dict(self.lines),
            dict(self.invocations),
            slack_by_role=slack_by_role,
            emails=len(self._emails()) - len(emails),
        )

    def _send(self, message: dict[str, Any], thread: str) -> None:
        from agent_wait.contract.messages import group_id_for

        with self._as("sender"):
            self.sqs.send_message(
                QueueUrl=self.local.queue_url,
                MessageBody=json.dumps(message),
                MessageGroupId=group_id_for(thread),
                MessageDeduplicationId=uuid.uuid4().hex,
            )

    def _route(self) -> None:
        """The event source: receive the one message waiting, hand it to the router's handler, delete it."""
        from agent_wait.host import router
        from agent_wait.local.events import event_record

        with self._as("event source"):
            (message,) = self.sqs.receive_message(
                QueueUrl=self.local.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=0
            )["Messages"]
        arn = f"arn:aws:sqs:{REGION}:123456789012:{self.local.queue_url.rsplit('/', 1)[-1]}"
        context = _Context("router", self.memory["router"])
        with self._invoked("router"):
            response = router.handler({"Records": [event_record(message, arn)]}, context)
        if response.get("batchItemFailures"):
            raise RuntimeError(f"the router failed the bench's message: {response}")
        with self._as("event source"):
            self.sqs.delete_message(QueueUrl=self.local.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def _api(self, method: str, path: str, body: Any, *, claims: Any = None) -> dict[str, Any]:
        from tests.support.api_events import http_event

        from agent_wait.host import api

        headers = {"idempotency-key": uuid.uuid4().hex} if method == "POST" else {}
        event = http_event(method, path, body, headers=headers, claims=claims)
        with self._invoked("api"):
            response = api.handler(event, _Context("api", self.memory["api"]))
        self._access_line(method, path, response)
        if response["statusCode"] >= 400:
            raise RuntimeError(f"the answer API refused the bench: {response['statusCode']} {response['body']}")
        return response

    def _click(self, slack: Any, question: str) -> None:
        """Approve in Slack: the signed interaction goes to the local API over HTTP, as Slack sends it."""
        [message] = [
            m for m in slack.messages() if (m.metadata or {}).get("event_payload", {}).get("question_id") == question
        ]
        endpoint = f"{self.local.api_url}/slack/interactions"
        with self._invoked("api"):
            reply = slack.click(
                endpoint, message, "agent_wait:answer:approve", user_id="U0FINANCE", signing_secret=SLACK_SIGNING_SECRET
            )
        self._access_line("POST", "/slack/interactions", {"statusCode": reply.status, "body": ""})

    def _follow_link(self, question: str) -> None:
        """What a person's click on the email's Approve does: the confirmation page, then its script's POST."""
        from agent_wait.local.email_preview import sent_emails

        [email] = [e for e in sent_emails() if e.question_id == question]
        links = {m[1].lower(): m[2] for m in re.finditer(r"^(\w+): (http://\S+)$", email.text, re.MULTILINE)}
        parts = urllib.parse.urlsplit(links["approve"])
        self._api("GET", parts.path, None)
        self._api("POST", f"{parts.path.removesuffix('/confirm')}/link/answer", {"token": parts.fragment})

    def _asked(self, thread: str) -> str:
        table = self.local.client("dynamodb")
        items = table.query(
            TableName=self.local.table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :w)",
            ExpressionAttributeValues={":pk": {"S": f"THREAD#{thread}"}, ":w": {"S": "WAIT#"}},
        )["Items"]
        (question,) = [item["sk"]["S"].removeprefix("WAIT#") for item in items]
        return question

    def _emails(self) -> list[Any]:
        from agent_wait.local.email_preview import sent_emails

        return list(sent_emails())

    # -- counting ---------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _as(self, role: str) -> Iterator[None]:
        previous, self.counter.role = self.counter.role, role
        try:
            yield
        finally:
            self.counter.role = previous

    @contextlib.contextmanager
    def _invoked(self, role: str) -> Iterator[None]:
        """One invocation of `role`'s function: its calls, and every line it prints, counted as its."""
        self.printed.seek(0)
        self.printed.truncate()
        metrics = io.StringIO()
        with self._as(role), contextlib.redirect_stdout(metrics):
            yield
        lines = [line for line in (self.printed.getvalue() + metrics.getvalue()).splitlines() if line.strip()]
        request = uuid.uuid4()
        memory = self.memory[role]
        lines += [  # what Lambda itself writes for every invocation (text format)
            f"START RequestId: {request} Version: $LATEST",
            f"END RequestId: {request}",
            f"REPORT RequestId: {request}\tDuration: 245.67 ms\tBilled Duration: 246 ms\tMemory Size: {memory} MB\t"
            "Max Memory Used: 118 MB\t",
        ]
        self.lines.setdefault(role, []).extend(len(line.encode()) + LOG_EVENT_OVERHEAD for line in lines)
        self.invocations[role] = self.invocations.get(role, 0) + 1

    def _access_line(self, method: str, path: str, response: dict[str, Any]) -> None:
        """API Gateway's access log line for the request (`ACCESS_LOG_FORMAT`, as the stage writes it)."""
        from agent_wait_cdk._answer_api_http import ACCESS_LOG_FORMAT

        values = {
            "$context.requestId": "Q2w3E4r5T6y7U8i=",
            "$context.identity.sourceIp": "203.0.113.10",
            "$context.requestTime": "07/Dec/2026:19:04:22 +0000",
            "$context.routeKey": f"{method} {_route_key(path)}",
            "$context.path": path,
            "$context.status": str(response["statusCode"]),
            "$context.protocol": "HTTP/1.1",
            "$context.responseLength": str(len(str(response.get("body") or ""))),
            "$context.responseLatency": "246",
            "$context.integrationStatus": str(response["statusCode"]),
            "$context.integrationErrorMessage": "-",
            "$context.authorizer.error": "-",
        }
        line = re.sub(r"\$context\.[\w.]+", lambda m: values.get(m.group(0), "-"), ACCESS_LOG_FORMAT)
        self.lines.setdefault("api-access", []).append(len(line.encode()) + LOG_EVENT_OVERHEAD)


def _route_key(path: str) -> str:
    """The route a path matched, as API Gateway names it (ids replaced by their parameter)."""
    parts = path.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "questions":
        parts[1] = "{question_id}"
    return "/" + "/".join(parts[:2]) + ("/{proxy+}" if len(parts) > 2 else "")


@contextlib.contextmanager
def _quiet_handlers(printed: io.StringIO) -> Iterator[None]:
    """The handlers' Powertools lines copied into `printed` (formatted as they print them), not onto the bench's
    stdout; standard-library lines at WARNING and above (Lambda's runtime drops the rest) copied as its text format."""
    from agent_wait.host import api, router, sweep

    shared = logging.getLogger(router.logger.service)
    copy = logging.StreamHandler(printed)
    copy.setFormatter(router.logger.registered_formatter)
    handlers = {id(h): h for h in (router.logger.registered_handler, sweep.logger.registered_handler)}
    handlers[id(api.logger.registered_handler)] = api.logger.registered_handler
    streams = [(h, h.stream) for h in handlers.values()]  # type: ignore[attr-defined]
    with open(os.devnull, "w") as nowhere:
        for handler, _ in streams:
            handler.stream = nowhere  # type: ignore[attr-defined]
        shared.addHandler(copy)
        stdlib = logging.StreamHandler(printed)
        stdlib.setLevel(logging.WARNING)
        stdlib.setFormatter(
            logging.Formatter("[%(levelname)s]\t%(asctime)s\t00000000-0000-0000-0000-000000000000\t%(message)s")
        )
        root = logging.getLogger()
        root.addHandler(stdlib)
        try:
            yield
        finally:
            root.removeHandler(stdlib)
            shared.removeHandler(copy)
            for handler, stream in streams:
                handler.stream = stream  # type: ignore[attr-defined]


def start_slack(emulated: Emulated) -> Any:
    """A fake Slack with finance's approver, the stack's Slack secrets filled in and its functions pointed at it."""
    from tests.support.fake_slack import FakeSlack

    slack = FakeSlack().start()
    slack.add_user("U0FINANCE", email=APPROVER["email"])
    local = emulated.local
    secrets = local.client("secretsmanager")
    secrets.put_secret_value(SecretId=local.environment["AGENT_WAIT_SLACK_BOT_TOKEN_ARN"], SecretString=slack.token)
    secrets.put_secret_value(
        SecretId=local.environment["AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"], SecretString=SLACK_SIGNING_SECRET
    )
    settings = {"AGENT_WAIT_SLACK_API_URL": f"{slack.url}/api/"}
    local.environment.update(settings)
    local._set_env(settings)
    local.cold_start()
    return slack


@contextlib.contextmanager
def only_channels(emulated: Emulated, *channels: str) -> Iterator[None]:
    """The stack as deployed: without the channels the emulator turns on by itself for its previews (email, Teams;
    the refund stack has neither), but `channels`."""
    local = emulated.local
    dropped = [name for channel, names in _EMULATOR_CHANNELS.items() if channel not in channels for name in names]
    kept = {name: local.environment.pop(name) for name in dropped if name in local.environment}
    for name in kept:
        os.environ.pop(name, None)
    local.cold_start()
    try:
        yield
    finally:
        local.environment.update(kept)
        local._set_env(kept)
        local.cold_start()
