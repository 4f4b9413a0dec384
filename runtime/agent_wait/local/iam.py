"""The emulator enforces IAM: each function's AWS calls are held to its own role from the synthesized template.

`EmulatedStack` runs the router, the sweep and the answer API in one process, with one set of credentials for the
embedded moto server. `LocalIam` gives each of them back its role: while a function runs (`acting_as`, set around
every handler call and cold start; a context variable, so it follows the call into LangGraph's and asyncio's worker
threads), every boto3 call it makes is judged before it is sent, against that role's policies as the template
attaches them (`agent_wait.local.iam_template`), the resource's own policy and its KMS key's policy, by AWS's rules
(`agent_wait.local.iam_policy`), for each action and resource the call touches (`agent_wait.local.iam_requests`). A
call the role may not make fails as AWS fails it: botocore raises its `ClientError` with the service's access-denied
code and AWS's message (`User: <role session> is not authorized to perform: <action> on resource: <ARN> because
...`), and the emulator logs one line naming the function, the role, the action and the resource.

Why not moto's own IAM check (`INITIAL_NO_AUTH_ACTION_COUNT = 0`): it is one switch for the whole process (every
other moto server and `mock_aws` in it would check too), it judges most services' calls against the resource `*`
(only SQS, IAM and STS name theirs), so a grant on one table would allow every table and a policy naming a table
ARN denies every DynamoDB call; it counts an `Allow` whose condition fails as a `Deny`, matches actions by case and
needs moto-issued, SigV4-signed keys per function. Here the judgement runs in the caller, where the function is
known, and sends nothing to moto that AWS would refuse.

Calls made outside every function (the CLI, the emulator setting itself up, a test reading the ledger) are the
operator's and are not judged. A function the template does not deploy (the answer API of a stack without one,
served locally anyway) has no role to hold it to and runs unjudged too. The functions share one environment here, the
emulator's own settings included: what a function reaches only through a setting the template does not give it is
granted to it (`local_grants`), and a stand-in for one of the template's resources (a webhook secret that holds no
URL here) is judged as the resource it stands in for (`aliases`); `agent_wait.local.stack_iam` works both out.

`AGENT_WAIT_LOCAL_IAM=off` (or `EmulatedStack(enforce_iam=False)`) turns the check off.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_wait.local.iam_policy import PolicyDocument, Request, evaluate
from agent_wait.local.iam_requests import Call, UnsupportedCallError, requests_for
from agent_wait.local.iam_template import FunctionRole, TemplateIam

__all__ = ("IAM_SWITCH", "Denial", "LocalIam", "enforce_iam_by_default")

IAM_SWITCH = "AGENT_WAIT_LOCAL_IAM"
"""`off` (or `0`, `false`, `no`) runs the emulator's functions unjudged, with all-powerful credentials."""

_ACTING: contextvars.ContextVar[str | None] = contextvars.ContextVar("agent_wait_local_iam_function", default=None)
"""The handler of the function whose code is running (None: the operator's)."""
_ACTIVE: list[LocalIam] = []
"""The check of the running `EmulatedStack` (one per process: it points the process's clients at its emulator)."""
_JUDGED = "agent_wait_local_iam_judged"
"""Marks a call in botocore's request context once it has been judged."""
_DENIED = "agent_wait_local_iam_denial"
"""Where a denial waits in botocore's request context between judging the parameters and sending."""

_DENIED_CODES = {
    "sqs": ("AccessDenied", 403),
    "sns": ("AuthorizationError", 403),
    "s3": ("AccessDenied", 403),
    "ses": ("AccessDenied", 403),
    "dynamodb": ("AccessDeniedException", 400),
    "secretsmanager": ("AccessDeniedException", 400),
    "kms": ("AccessDeniedException", 400),
    "events": ("AccessDeniedException", 400),
}
"""Each service's own code and status for a refused call (`AccessDeniedException`, 403 for the others)."""


def enforce_iam_by_default() -> bool:
    """The emulator judges its functions' calls unless `AGENT_WAIT_LOCAL_IAM` says off."""
    return os.environ.get(IAM_SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


@dataclass(frozen=True)
class Denial:
    """One call the emulator refused a function."""

    function: str
    """The function's handler."""
    role: str
    """Its role's logical id in the template."""
    action: str
    resource: str
    message: str
    """AWS's message, and what to do."""


class LocalIam:
    """Judge each function's AWS calls against its role (see the module docstring).

    Args:
        iam: the template's roles, resource policies and keys, resolved.
        client: returns a boto3 client on the emulator, for the look-ups a judgement needs (a secret's full ARN, the
            SES identity an address sends from); those run as the operator.
        aliases: local ARN -> the template resource's ARN it stands in for.
        local_grants: by handler, what the function may do here besides its role: on what only the emulator gives it
            (`agent_wait.local.stack_iam`).
        log: where each refusal is logged (the functions' own logger, so `agent-wait dev` shows it).
    """

    def __init__(
        self,
        iam: TemplateIam,
        *,
        client: Callable[[str], Any],
        account: str,
        aliases: Mapping[str, str] | None = None,
        local_grants: Mapping[str, Sequence[PolicyDocument]] | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.iam = iam
        self.account = account
        self.aliases = dict(aliases or {})
        self.local_grants = {handler: tuple(grants) for handler, grants in (local_grants or {}).items()}
        self.log = log or logging.getLogger("agent_wait.local")
        self.denials: list[Denial] = []
        """Every call refused so far, in order."""
        self._client = client
        self._secrets: dict[str, str] = {}

    # -- who is calling ------------------------------------------------------------------------------------------------

    def install(self) -> None:
        """Judge every boto3 client's calls in this process from now on (until `uninstall`)."""
        _register_hooks()
        _ACTIVE[:] = [self]

    def uninstall(self) -> None:
        if _ACTIVE and _ACTIVE[0] is self:
            _ACTIVE.clear()

    @contextlib.contextmanager
    def acting_as(self, handler: str) -> Iterator[None]:
        """Run the block as the function with this handler: its calls are judged against its role."""
        token = _ACTING.set(handler if handler in self.iam.roles else None)
        try:
            yield
        finally:
            _ACTING.reset(token)

    # -- judging ----------------------------------------------------------------------------------------------------

    def check(self, handler: str, call: Call) -> Denial | None:
        """The first of the call's authorisations the function's role is refused, recorded and logged; None if all
        are allowed."""
        role = self.iam.roles[handler]
        try:
            with _as_operator():
                requests = requests_for(call, self)
        except UnsupportedCallError as exc:
            return self._deny(role, f"{_prefix(call.service)}:{call.operation}", "*", f"because {exc}")
        for request in requests:
            refused = self._judge(role, request, call.region)
            if refused is not None:
                return self._deny(role, request.action, request.resource, refused)
        return None

    def _judge(self, role: FunctionRole, request: Request, region: str) -> str | None:
        resource = self.aliases.get(request.resource, request.resource)
        request = Request(request.action, resource, {**self._context(role, request, region), **request.context})
        is_key = resource.startswith("arn:aws:kms:") and ":key/" in resource
        resource_policy = self.iam.key_policies.get(resource) if is_key else self._resource_policy(resource)
        if is_key and resource_policy is None:
            return "because the key's policy is not in the template, so the emulator cannot tell what it allows"
        verdict = evaluate(
            (*role.policies, *self.local_grants.get(role.handler, ())),
            request,
            principal=role.arn,
            account=self.account,
            resource_policy=resource_policy,
            key_policy=is_key,
            boundary=role.boundary,
        )
        if verdict.allowed:
            return None
        notes = [*verdict.skipped, *(f"not in the template: {unknown}" for unknown in role.unknown)]
        return f"because {verdict.reason}" + (f" ({'; '.join(notes)})" if notes else "")

    def _context(self, role: FunctionRole, request: Request, region: str) -> dict[str, str | None]:
        """The global condition keys every request of this role carries here (a call's own keys are added)."""
        via = request.context.get("kms:viaservice")
        return {
            "aws:securetransport": "true",  # boto3 reaches AWS over TLS
            "aws:requestedregion": region,
            "aws:principalaccount": self.account,
            "aws:principalarn": role.arn,
            "aws:principaltype": "AssumedRole",
            "aws:sourceaccount": None,  # set only when a service calls on a resource's behalf
            "aws:sourcearn": None,
            "aws:viaawsservice": "true" if via else "false",
            "iam:passedtoservice": None,
            "kms:viaservice": None,
            "kms:calleraccount": self.account if request.action.lower().startswith("kms:") else None,
        }

    def _resource_policy(self, arn: str) -> PolicyDocument | None:
        policies = self.iam.resource_policies
        if arn in policies:
            return policies[arn]
        if arn.startswith("arn:aws:s3:::"):  # an object is governed by its bucket's policy
            return policies.get(arn.split("/", 1)[0])
        if arn.startswith("arn:aws:dynamodb:") and "/index/" in arn:
            return policies.get(arn.split("/index/", 1)[0])
        return None

    def _deny(self, role: FunctionRole, action: str, resource: str, because: str) -> Denial:
        function = role.handler.rsplit(".", 2)[-2]
        message = (
            f"User: arn:aws:sts::{self.account}:assumed-role/{role.role}/{function} is not authorized to perform: "
            f"{action} on resource: {resource} {because}. (agent-wait's local IAM check: the {function} function's "
            f"role {role.role} in the template does not allow it; grant it in the stack, or run with "
            f"{IAM_SWITCH}=off to skip the check)"
        )
        denial = Denial(role.handler, role.role, action, resource, message)
        self.denials.append(denial)
        self.log.error(message)
        return denial

    # -- what a judgement needs to know (`iam_requests.Deployment`) ---------------------------------------------------

    def key_of(self, arn: str) -> str | None:
        """The customer managed key that encrypts `arn` (an object by its bucket's, an index by its table's)."""
        keys = self.iam.keys
        owner = arn.split("/index/", 1)[0] if arn.startswith("arn:aws:dynamodb:") else arn
        if arn.startswith("arn:aws:s3:::"):
            owner = arn.split("/", 1)[0]
        named = keys.get(self.aliases.get(owner, owner))
        if named is None or named.startswith("alias/aws/") or ":alias/aws/" in named:
            return None  # none, or an AWS managed key: the service's own to use
        return self.key_arn(named)

    def key_arn(self, key_id: str) -> str:
        if key_id.startswith("arn:") and ":key/" in key_id:
            return key_id
        if key_id.startswith(("alias/", "arn:")):
            with _as_operator():
                return str(self._client("kms").describe_key(KeyId=key_id)["KeyMetadata"]["Arn"])
        return f"arn:aws:kms:us-east-1:{self.account}:key/{key_id}"

    def secret_arn(self, secret_id: str) -> str:
        if secret_id not in self._secrets:
            with _as_operator():
                try:
                    self._secrets[secret_id] = str(
                        self._client("secretsmanager").describe_secret(SecretId=secret_id)["ARN"]
                    )
                except Exception:  # not in the emulator: judged by the name it was asked by
                    return (
                        secret_id
                        if secret_id.startswith("arn:")
                        else f"arn:aws:secretsmanager:us-east-1:{self.account}:secret:{secret_id}"
                    )
        return self._secrets[secret_id]

    def durable_execution(self, execution: str) -> str:
        functions = self.iam.durable_functions
        if len(functions) != 1:
            found = "none" if not functions else f"{len(functions)}, and its ids do not say which one it plays"
            raise UnsupportedCallError(
                f"a durable execution of the SDK's local runner ({execution}): the template's durable functions, "
                f"which the runner plays: {found}"
            )
        return f"{functions[0]}:$LATEST/durable-execution/{execution}"

    def email_identity(self, address: str) -> str:
        with _as_operator():
            listed = self._client("sesv2").list_email_identities().get("EmailIdentities", [])
        return (
            address if address in {identity.get("IdentityName") for identity in listed} else address.rpartition("@")[2]
        )


@contextlib.contextmanager
def _as_operator() -> Iterator[None]:
    token = _ACTING.set(None)
    try:
        yield
    finally:
        _ACTING.reset(token)


def _prefix(service: str) -> str:
    return "ses" if service == "sesv2" else service


# -- botocore hooks -------------------------------------------------------------------------------------------------

_HOOKS_REGISTERED: list[bool] = []


def _register_hooks() -> None:
    """Add the two hooks to every botocore session made from now on (as moto's own `mock_aws` adds its stubber), and to
    boto3's default session if there is one already. They do nothing while no `LocalIam` is installed."""
    import boto3
    import botocore.handlers

    hooks = [
        ("creating-client-class", _remember_creator),
        ("before-parameter-build", _judge_parameters),
        ("before-call", _refuse_denied),
    ]
    if not _HOOKS_REGISTERED:
        botocore.handlers.BUILTIN_HANDLERS.extend(hooks)
        _HOOKS_REGISTERED.append(True)
    default = boto3.DEFAULT_SESSION
    if default is not None:
        for event, hook in hooks:
            default._session.register(event, hook, unique_id=f"agent-wait-local-iam-{event}")


def _remember_creator(base_classes: list[type], **_: Any) -> None:
    """Every client made from now on remembers the function that made it (`_CreatorAware`)."""
    if _CreatorAware not in base_classes:  # a session may hold the hook twice: built in, and registered on it
        base_classes.insert(0, _CreatorAware)


class _CreatorAware:
    """A client that calls as the function that made it when the call itself runs outside every function: a thread
    the function's code started without its context (the announcers' pool, Pydantic AI's worker) still calls with
    the function's credentials, as every call in its Lambda would."""

    _agent_wait_creator: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._agent_wait_creator = _ACTING.get()

    def _make_api_call(self, operation_name: str, api_params: Any) -> Any:
        make = super()._make_api_call  # type: ignore[misc]
        if _ACTING.get() is not None or self._agent_wait_creator is None:
            return make(operation_name, api_params)
        token = _ACTING.set(self._agent_wait_creator)
        try:
            return make(operation_name, api_params)
        finally:
            _ACTING.reset(token)


def _judge_parameters(params: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    handler = _ACTING.get()
    if not _ACTIVE or handler is None or _JUDGED in context:  # judged once, though a session may hold the hook twice
        return
    context[_JUDGED] = True
    call = Call(model.service_model.service_name, model.name, params, context.get("client_region") or "us-east-1")
    denial = _ACTIVE[0].check(handler, call)
    if denial is not None:
        context[_DENIED] = denial


def _refuse_denied(model: Any, context: Mapping[str, Any], **_: Any) -> tuple[Any, dict[str, Any]] | None:
    """Answer a denied call in place of the service, as the service answers it: botocore then raises the client's
    `ClientError` for the code (a modeled exception class where the service has one)."""
    denial = context.get(_DENIED)
    if denial is None:
        return None
    from botocore.awsrequest import AWSResponse

    code, status = _DENIED_CODES.get(_prefix(model.service_model.service_name), ("AccessDeniedException", 403))
    parsed = {
        "Error": {"Code": code, "Message": denial.message},
        "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": {}, "RequestId": "agent-wait-local-iam"},
    }
    return AWSResponse("", status, {}, _EmptyBody()), parsed


class _EmptyBody:
    """The raw body of an answered-in-place response."""

    @staticmethod
    def stream(**_: Any) -> Iterator[bytes]:
        yield b""
