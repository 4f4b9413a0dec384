"""The whole product on a laptop: an embedded AWS emulator, the deployed template, the Lambda handlers.

`EmulatedStack` starts moto in server mode on 127.0.0.1, deploys the synthesized CloudFormation template
of an `AgentWait` stack into moto's CloudFormation (the same tables, queues, topic and bus the
constructs deploy: there is no second definition to drift; `agent_wait.local.template` prunes what cannot run
locally, `agent_wait.local.deploy` deploys the rest), and drives the same router and sweep
handlers as Lambda: a loop over the entry queue stands in for the SQS event source, and `sweep()`
for the schedule. Beside them, the answer API's routes are served on 127.0.0.1 (`api_url`) behind a
local JWT authorizer and issuer (`issuer`), as API Gateway would serve them (`agent_wait.local.api_server`).
Each function runs as its own role from the template: its AWS calls are judged against that role's policies, and
one the role does not grant fails as it would on AWS, naming the action and the resource (`agent_wait.local.iam`;
`AGENT_WAIT_LOCAL_IAM=off` or `enforce_iam=False` turns that off). What AWS deletes by itself (items past their TTL,
objects a bucket's lifecycle rule expires) `expire()` deletes by the stack's clock (`agent_wait.local.expiry`).
Everything runs in this process; `stop()` (or leaving the `with` block) ends it.

Long on purpose: the stack's lifecycle (deploy, serve, pump, sweep, stop) reads best as one class; what it starts is in
the modules it names.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_wait.common.times import clock_scope, utc_now
from agent_wait.contract.messages import group_id_for
from agent_wait.contract.schema import Settings
from agent_wait.errors import EmulatorError, require_extra
from agent_wait.local.deploy import EmulatorDeployment
from agent_wait.local.email_setup import local_email_settings, local_link_keys
from agent_wait.local.events import event_record
from agent_wait.local.handlers import API_HANDLER, HANDLERS, ROUTER_HANDLER, SWEEP_HANDLER, LambdaContext
from agent_wait.local.iam import LocalIam, enforce_iam_by_default
from agent_wait.local.push_setup import local_push_settings
from agent_wait.local.schedules import local_schedule_settings
from agent_wait.local.template import local_template

__all__ = (
    "API_HANDLER",
    "ROUTER_HANDLER",
    "SWEEP_HANDLER",
    "EmulatedStack",
    "PumpResult",
    "local_template",
    "require_emulator",
)

logger = logging.getLogger("agent_wait.local")


def require_emulator() -> None:
    """Raise `MissingExtraError` naming the `local` extra unless the emulator and the local issuer import."""
    for package in ("moto", "flask", "jwt", "cryptography"):  # the emulator, its server, the local issuer
        require_extra("agent_wait.local.stack (agent-wait dev)", package, "local")


@dataclass
class PumpResult:
    """What one pass over the entry queue did."""

    handled: int = 0
    failed: int = 0
    outcomes: list[Any] = field(default_factory=list)
    """Every message's `agent_wait.host.Outcome`, in order."""


class EmulatedStack:
    """Run an `AgentWait` stack's template on an embedded moto server and drive its handlers.

    Args:
        template: the synthesized CloudFormation template (a dict).
        stack_name: the name for the local stack; unique by default (moto keeps one state per process).
        clock: now, in UTC; the local demo moves it forward to show a deadline pass.
        extra_environment: variables the functions get besides those in the template.
        api_port: the answer API's port on 127.0.0.1; 0 picks a free one (see `api_url`), or the state folder's.
        enforce_iam: hold each function to its role's policies (`agent_wait.local.iam`). Default: on, unless
            `AGENT_WAIT_LOCAL_IAM=off`.
        state_dir: a folder the stack's state is kept in across restarts (`agent_wait.local.state`); None: memory only.

    Example:
        with EmulatedStack(template) as local:
            local.send({"thread_id": "order-1", "input": {...}})
            local.pump()
            token = local.issuer.token("alice@example.com", ["finance"])
            # GET {local.api_url}/questions with "Authorization: Bearer {token}"
    """

    _running: EmulatedStack | None = None

    def __init__(
        self,
        template: Mapping[str, Any],
        *,
        stack_name: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        extra_environment: Mapping[str, str] | None = None,
        api_port: int = 0,
        enforce_iam: bool | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        iam_principals: tuple[Any, ...] | None = None,
    ) -> None:
        self.template = dict(template)
        self.iam_principals = iam_principals
        """The access keys the API's IAM authorizer knows (`POST /mcp/iam`, `agent_wait.local.sigv4`); None: the
        emulator's own credentials."""
        self.stack_name = stack_name or f"agent-wait-local-{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self.extra_environment = dict(extra_environment or {})
        self.features_off: dict[str, str] = {}
        """The stack's features this installation cannot serve, each with the extra that brings it (`agent-wait dev`
        prints them): `mcp`, `a2a`, `push`, `passkey`."""
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
        """The local JWT issuer (`agent_wait.local.jwt.LocalIssuer`) the API's authorizer trusts."""
        self._api: Any = None
        self.teams_cards: Any = None
        """The cards posted to the local Teams webhook, once started (`agent_wait.local.teams_preview.TeamsCards`)."""
        self.webhooks: Any = None
        """What the URL-secret webhooks posted to the local receivers, once started (`agent_wait.local.webhooks`)."""
        self.webhooks_routed: list[str] = []
        self.push_service: Any = None
        """The local push service pushes reach, once started (`agent_wait.local.push_service.LocalPushService`): a
        subscription made with `push_service.subscribe(key)` gets its pushes here, over real HTTP."""
        """The webhook settings sent to the local receivers (their secrets held no URL on the emulator)."""
        self.enforce_iam = enforce_iam_by_default() if enforce_iam is None else enforce_iam
        self.iam: LocalIam | None = None
        """The IAM check (`agent_wait.local.iam.LocalIam`, its `denials`), once started with `enforce_iam`."""
        self._deployment: EmulatorDeployment | None = None
        self._expiry: Any = None  # `agent_wait.local.expiry.LocalExpiry`, once started
        self.state_dir = state_dir
        self.state: Any = None  # the state folder opened (`agent_wait.local.state.DevState`), once started

    # -- lifecycle ------------------------------------------------------------------------------------

    def __enter__(self) -> EmulatedStack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the emulator, deploy the template, and point this process's AWS clients at it.

        Raises:
            MissingExtraError: the emulator is not installed (`pip install 'agent-wait[local]'`).
            ConfigurationError: a function's setting is wrong, or its agent cannot be loaded (names what to fix).
            RuntimeError: another `EmulatedStack` is running in this process (they would share its clients).
            StateFileError: `state_dir`'s saved state cannot be loaded (names the file, and `--fresh`).
        """
        require_emulator()
        from moto.server import ThreadedMotoServer

        if EmulatedStack._running is not None:
            raise EmulatorError(
                f"an EmulatedStack ({EmulatedStack._running.stack_name}) is already running in this process; stop it "
                "first: it points this process's AWS clients at its emulator"
            )
        if self.state_dir is not None:
            from agent_wait.local.state import DevState

            self.state = DevState.open(self.state_dir, self.template)
            self.stack_name, self.api_port = self.state.stack_name, self.state.api_port(self.api_port)
        EmulatedStack._running = self

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
            if self.state is not None:
                self.state.empty_emulator(self.endpoint_url)
            self._deploy()
            from agent_wait.local.expiry import LocalExpiry

            self._expiry = LocalExpiry(self.client)
            self._expiry.install()  # objects written from here on are as old as the stack's clock says
            if self.state is not None:
                self.state.restore(self)
            self._start_api()
            if self.state is not None:
                self.state.started(self)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the answer API and the emulator, and restore the environment. Safe to call twice.

        Raises:
            StateFileError: the state could not be saved to `state_dir` (everything stopped; the last save stays).
        """
        if self._api is not None:
            self._api.stop()
            self._api = None
        if self.push_service is not None:
            self.push_service.stop()
            self.push_service = None
        # What it holds, to the state folder, before the emulator forgets it; a failure is raised once stopped.
        unsaved = self.state.save(self) if self.state is not None and self._server is not None else None
        if self.iam is not None:
            self.iam.uninstall()
        if self._expiry is not None:
            self._expiry.uninstall()
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
        if EmulatedStack._running is self:
            EmulatedStack._running = None
        if unsaved is not None:
            raise unsaved

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
        deployment = EmulatorDeployment(self.template, self.stack_name, self.client)
        deployed = deployment.deploy(HANDLERS)
        self._deployment = deployment
        self.outputs = deployed.outputs
        environment = {**deployed.environment, **self.extra_environment}
        # The construct trusts the sweep's and the answer API's roles, which do not exist here: every local sender
        # (the sweep, the API, the CLI) is the emulator's one identity, so that is the one to trust. Without it the
        # router would warn about a setting nobody running the emulator can act on.
        from moto.sqs.models import DEFAULT_SENDER_ID  # the SenderId moto stamps on every message

        environment.setdefault(Settings.TRUSTED_SENDERS.value, DEFAULT_SENDER_ID)
        # Signed answer links work locally whatever the template says: with no keys of its own (no answer API, or
        # one without links), the stack gets keys here, so the API verifies what `agent-wait link` signs. Links
        # still ride only on the announcers the template names (`AGENT_WAIT_LINK_ANNOUNCERS`).
        if not environment.get(Settings.LINK_KEYS_ARN.value):
            environment[Settings.LINK_KEYS_ARN.value] = local_link_keys(self.client, self.stack_name)
        environment.update(local_email_settings(environment, self.client, self.stack_name))  # shown at /dev/email
        environment = self._without_missing_extras(environment)
        if "push" not in self.features_off:
            environment.update(local_push_settings(environment, self.client, self.stack_name))  # to `push_service`
        # Precise deadlines: the schedules' target and role are a function and a role, not deployed here.
        sweep_arn = LambdaContext(SWEEP_HANDLER).invoked_function_arn
        environment.update(local_schedule_settings(environment, self.client, sweep_arn=sweep_arn))
        # A2A push receivers run on this machine too: let the router and the API post to loopback addresses here.
        environment.update(local_agent_card(environment))
        # Embedded-metric-format lines on stdout are for CloudWatch; locally they only bury the output.
        environment.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        environment.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentWait")
        environment.setdefault("POWERTOOLS_SERVICE_NAME", "agent-wait")
        self.environment = environment
        self._set_env(environment)
        self._reset_handlers()

    @property
    def passkey_url(self) -> str:
        """The inbox where passkeys work, `http://localhost:<port>/inbox`: WebAuthn's relying party is a host name,
        never an IP address, and localhost is a secure context over plain HTTP. Empty before `start()`."""
        return self.api_url.replace("//127.0.0.1:", "//localhost:", 1) + "/inbox" if self.api_url else ""

    def _without_missing_extras(self, environment: dict[str, str]) -> dict[str, str]:
        """`environment` with each feature whose library is not installed turned off, and noted in `features_off`:
        `pip install 'agent-wait[local]'` serves the rest, and `agent-wait[local,mcp,a2a,push,passkey]` everything.
        A deployed function never does this: its bundle keeps what its stack turns on."""
        wanted = {
            "mcp": ("mcp", Settings.MCP_POLICIES.value, "the MCP server (/mcp)"),
            "a2a": ("a2a", Settings.AGENT_CARD.value, "A2A (/a2a)"),
            "push": ("pywebpush", None, "web push to the inbox"),
            "passkey": ("webauthn", None, "passkeys in the inbox"),
        }
        for extra, (module, setting, what) in wanted.items():
            if importlib.util.find_spec(module) is not None or (setting is not None and not environment.get(setting)):
                continue
            self.features_off[extra] = f"{what}: pip install 'agent-wait[{extra}]'"
            if setting is not None:
                environment = {name: value for name, value in environment.items() if name != setting}
        return environment

    def _passkey_origin(self) -> dict[str, str]:
        """Passkeys on, for the inbox opened on localhost, unless the template or the caller set an origin (or the
        `passkey` extra is not installed)."""
        if self.environment.get(Settings.PASSKEY_ORIGIN.value) or "passkey" in self.features_off:
            return {}
        return {Settings.PASSKEY_ORIGIN.value: self.passkey_url.removesuffix("/inbox")}

    def _load_agent(self) -> None:
        """The router's cold start now, before anything is served: an agent that cannot load (a wrong
        `AGENT_WAIT_GRAPH`, a factory that raises) fails `start()` with its `ConfigurationError`, rather than
        the first start message."""
        from agent_wait.host import router

        with self.running_as(ROUTER_HANDLER):
            router._router()

    def _start_api(self) -> None:
        """Serve the answer API on 127.0.0.1 and name it to the router, so envelopes' `reply_to` carry it."""
        from agent_wait.host import api
        from agent_wait.local.api_server import LocalApi
        from agent_wait.local.sigv4 import DEV_PRINCIPAL
        from agent_wait.local.teams_preview import TeamsCards, local_teams_sends, route_teams_locally
        from agent_wait.local.webhooks import WebhookSink, route_webhooks_locally

        self.teams_cards = TeamsCards()  # the cards the stack posts to its local Teams webhook (`/dev/teams`)
        self.webhooks = WebhookSink()  # what its URL-secret webhooks post here (`/dev/webhooks`)
        from agent_wait.local.push_service import LocalPushService

        self.push_service = LocalPushService()  # where the stack's web pushes go (subscriptions it made)
        self.push_service.start()
        self._api = LocalApi(
            self._invoke_api,
            port=self.api_port,
            clock=self._now,
            slack_preview=self.slack_preview,
            email_preview=self.email_preview,
            signing_key=self.state.signing_key if self.state is not None else None,
            iam_principals=self.iam_principals if self.iam_principals is not None else (DEV_PRINCIPAL,),
            dev_routes=lambda method, path, body: (
                self.teams_cards.handle(method, path, body)
                or self.webhooks.handle(method, path, body)
                or self.push_service.dev_route(method, path, body)
            ),
        )
        self.api_url, self.issuer = self._api.url, self._api.issuer
        secrets = self.client("secretsmanager")
        webhooks = route_webhooks_locally(self.environment, self.api_url, secrets, name=self.stack_name)
        self.webhooks_routed = sorted(webhooks)
        routed = {
            **route_teams_locally(self.environment, self.api_url, secrets, name=self.stack_name),
            **local_teams_sends(self.environment, self.client("dynamodb"), name=self.stack_name),
            **webhooks,
        }
        routed.update(self._passkey_origin())
        self.environment.update({"AGENT_WAIT_API_URL": self.api_url, **routed})
        self._set_env({"AGENT_WAIT_API_URL": self.api_url, **routed})
        self._reset_handlers()
        self._install_iam()
        with self.running_as(API_HANDLER):
            api._context()  # the API's cold start now: a missing setting or unreadable link keys fail `start()`
        self._load_agent()  # and the router's, which needs the API's URL
        self._api.start()

    def _install_iam(self) -> None:
        """From here on, each function's calls are judged against its role (with what the emulator added itself)."""
        if not self.enforce_iam or self._deployment is None:
            return
        from agent_wait.local.stack_iam import local_iam

        self.iam = local_iam(
            self.template,
            self._deployment,
            running=self.environment,
            client=self.client,
            log=logging.getLogger(self.environment.get("POWERTOOLS_SERVICE_NAME", "agent-wait")),
        )
        self.iam.install()

    def running_as(self, handler: str) -> contextlib.AbstractContextManager[None]:
        """Run the block as the function with this handler (`ROUTER_HANDLER`, ...): its AWS calls are judged against
        its role. Outside every such block a call is the operator's, and not judged."""
        return self.iam.acting_as(handler) if self.iam is not None else contextlib.nullcontext()

    def slack_preview(self, *, limit: int = 20) -> str:
        """Each question's Slack message as it would look now (`agent_wait.local.slack_preview`)."""
        from agent_wait.local.slack_preview import preview_questions

        return preview_questions(self, limit=limit)

    def email_preview(self, *, limit: int = 30) -> str:
        """Every email sent through the emulator's SES, rendered (`agent_wait.local.email_preview`)."""
        from agent_wait.local.email_preview import preview_page, sent_emails

        return preview_page(sent_emails(), limit=limit)

    def _now(self) -> datetime:
        return self.clock()  # read on every call: `at()` swaps the clock

    def _invoke_api(self, event: dict[str, Any]) -> Any:
        from agent_wait.host import api

        with self.running_as(API_HANDLER):  # the local API server's requests are the API function's
            return api.handler(event, LambdaContext(API_HANDLER))

    def use_agent(self, graph: str) -> None:
        """Host another agent (`AGENT_WAIT_GRAPH`, `module:attribute`) on this stack, as deploying the router with a
        new graph does: the handlers start cold with it, and it is loaded now, so one that cannot load fails here."""
        self.environment[Settings.GRAPH.value] = graph
        self._set_env({Settings.GRAPH.value: graph})
        self._reset_handlers()
        if self._api is not None:  # the API's cold start too, in this environment, as a deploy's would be
            from agent_wait.host import api

            with self.running_as(API_HANDLER):
                api._context()
        self._load_agent()

    def cold_start(self) -> None:
        """Make the next call of each function a cold start, as a deploy does: settings, clients and the link
        keys are read again (after rotating the link keys, say)."""
        self._reset_handlers()

    @staticmethod
    def _reset_handlers() -> None:
        """The handlers build their state again from the environment on their next call (each one's `reset()`)."""
        from agent_wait.host import api, router, sweep

        for handler in (router, sweep, api):
            handler.reset()

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
                    MessageAttributeNames=["All"],  # a sender's trace context (agent_wait.engine.tracing)
                ).get("Messages", [])
                if not received:
                    break
                # SQS stamps SentTimestamp in real time; the router judges answers by it, so it is moved
                # onto this stack's clock (the demo moves the clock to show a deadline pass).
                shift = self.clock() - datetime.now(UTC)
                event = {"Records": [event_record(message, arn, shift=shift) for message in received]}
                with clock_scope(self.clock), self.running_as(ROUTER_HANDLER):
                    response = router.handler(event, LambdaContext(ROUTER_HANDLER))
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
        with clock_scope(self.clock), self.running_as(SWEEP_HANDLER):
            return sweep.handler(event, LambdaContext(SWEEP_HANDLER))

    def expire(self) -> Any:
        """Delete what AWS would have deleted by the stack's clock: table items past their TTL, objects a bucket's
        lifecycle rule expires (`agent_wait.local.expiry.Expired` says how many)."""
        if self._expiry is None:
            raise EmulatorError("the local stack is not started; start() it before expire()")
        return self._expiry.run(self.clock())

    @contextmanager
    def at(self, clock: Callable[[], datetime]) -> Iterator[None]:
        previous, self.clock = self.clock, clock
        try:
            yield
        finally:
            self.clock = previous


def local_agent_card(environment: Mapping[str, str]) -> dict[str, str]:
    """`AGENT_WAIT_AGENT_CARD` with `private_push` on, when the stack turns A2A on (`AgentWait(a2a=...)`): locally a
    push receiver is on 127.0.0.1, which a deployed stack refuses (docs/a2a.md, "Push notifications"). Else nothing."""
    card = environment.get(Settings.AGENT_CARD.value)
    if not card:
        return {}
    try:
        fields = json.loads(card)
    except ValueError:
        return {}  # the API's cold start names what is wrong with it
    if not isinstance(fields, dict):
        return {}
    return {Settings.AGENT_CARD.value: json.dumps({**fields, "private_push": True})}
