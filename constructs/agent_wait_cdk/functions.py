"""`RouterFunction` (the entry queue's consumer) and `SweepFunction` (the scheduled sweep), and the props
`AgentWait` passes through to them whole (`RouterProps`, `SweepProps`).

Each prop is documented twice, on its construct and on its props object, as a user meets it in one or the other.
Their rules are in `_function_checks.py`; what every function shares is in `_lambda_function.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._defaults import ONE_MINUTE
from agent_wait_cdk._function_checks import check_max_concurrency, check_router_function, check_sweep_function
from agent_wait_cdk._lambda_function import LAMBDA_RUNTIME, lambda_function
from agent_wait_cdk._shapes import ROUTER_HANDLER, SWEEP_HANDLER
from agent_wait_cdk._validate import PropChecks

__all__ = ("LAMBDA_RUNTIME", "RouterFunction", "RouterProps", "SweepFunction", "SweepProps", "check_max_concurrency")


@dataclass(frozen=True, kw_only=True)
class RouterProps:
    """The router's own props, as `AgentWait(router=RouterProps(...))` takes them.

    Each field is the `RouterFunction` prop of that name, except `environment`, which holds only your extra
    variables: AgentWait adds its own to them. AgentWait supplies the rest of `RouterFunction`'s props: the
    code, the entry queue, and `architecture`, `log_retention`, `removal_policy` and `tracing`, which stay
    flat on AgentWait because every function it creates must share them (and the bundle, `architecture`).
    The VPC props are here, not there, because only the router runs in the VPC: the graph runs there, and
    the sweep and the answer API stay outside it.

    Example:
        RouterProps(timeout=Duration.minutes(2), memory_size=2048, environment={"MODEL_ID": "my-model"})
    """

    timeout: Duration = ONE_MINUTE
    """The function's timeout. Default 1 minute: one graph step between two interrupts; raise it for slow
    model calls. The entry queue's visibility timeout must be at least six times this (the queue AgentWait
    creates gets exactly that), and a thread's lease is this plus a minute."""
    memory_size: int = 512
    """The function's memory, 128 to 10,240 MB. Default 512 MB: the cheapest warm lifecycle on the measured curve
    when AWS answers fast, with room for a model SDK; a light graph is cheaper at 256-320 MB when AWS answers slowly,
    at a longer cold start (docs/scaling.md, "The router's memory"); 1024 MB halves a cold start, which is
    CPU-bound."""
    batch_size: int = 10
    """Records per invocation, 1 to 10. Default 10, the FIFO maximum: fewer receive and delete calls; the
    records of one thread stay in order."""
    reserved_concurrent_executions: int | None = None
    """Concurrency reserved for the router, 0 to 10,000 (0 stops it). Default None, unreserved: reserving
    takes from the account's pool, and new accounts may not have enough to reserve at all."""
    max_concurrency: int | None = None
    """The most invocations the entry queue's event source runs at once, 2 to 1,000
    (`ScalingConfig.MaximumConcurrency`). Default None: not set, so the router scales to the threads with
    messages waiting (one FIFO message group each), up to Lambda's own ceiling. Set it to keep account
    concurrency for other functions or to cap the load on the tables; messages past it wait in the queue,
    they are not throttled. At most `reserved_concurrent_executions` when both are set."""
    environment: Mapping[str, str] | None = None
    """Extra variables for the router, where the graph runs: a model id, a secret's ARN (never a secret's
    value, which anyone who may read the function's configuration could read). Default None: only
    AgentWait's own. A key AgentWait or Lambda sets (`AGENT_WAIT_*`, `LOG_LEVEL`, `POWERTOOLS_*`,
    `AWS_REGION`, ...) is refused, by name."""
    layers: Sequence[lambda_.ILayerVersion] = ()
    """Lambda layers for the router. Default (): the bundle holds everything; add a layer for what it should
    not (a large native library, a shared extension)."""
    vpc: ec2.IVpc | None = None
    """Run the router in this VPC, for a graph that calls private resources. Default None: no VPC, so it
    reaches AWS's public endpoints directly. In a VPC it needs egress to DynamoDB, SQS, SNS, EventBridge and
    S3 (and the webhook, whatever the graph calls): a NAT gateway or VPC endpoints, which AgentWait does not
    create. The router's role gets Lambda's network interface actions."""
    vpc_subnets: ec2.SubnetSelection | None = None
    """The router's subnets in `vpc`. Default None: CDK's default, the VPC's private subnets. Needs `vpc`."""
    security_groups: Sequence[ec2.ISecurityGroup] | None = None
    """The router's security groups. Default None: one CDK creates, all egress allowed. Needs `vpc`."""

    def as_kwargs(self) -> dict[str, Any]:
        """These props as keyword arguments of `RouterFunction`, `environment` holding only the extra variables."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True, kw_only=True)
class SweepProps:
    """The sweep's own props, as `AgentWait(sweep=SweepProps(...))` takes them.

    Each field is the `SweepFunction` prop of that name. AgentWait supplies the rest (the code, its
    variables, and `architecture`, `log_retention`, `removal_policy` and `tracing`, shared by every function).

    Example:
        SweepProps(rate=Duration.minutes(5), limit=600, timeout=Duration.minutes(2))
    """

    rate: Duration = ONE_MINUTE
    """How often the sweep runs, in whole minutes, 1 minute to 1 day. Default 1 minute: a question expires
    at most a minute after its deadline, for about 43,000 short runs a month."""
    timeout: Duration = ONE_MINUTE
    """The function's timeout. Default 1 minute, the default rate: a run should finish before the next one
    starts."""
    memory_size: int = 512
    """The function's memory, 128 to 10,240 MB. Default 512 MB: the sweep queries and sends; it does not run
    the graph."""
    limit: int | None = None
    """The most due questions one run handles, 1 to 10,000 (`AGENT_WAIT_SWEEP_LIMIT`). Default None: the
    runtime's 100 (deadlines, reminders, escalation steps, announcement retries); raise it with `timeout`."""

    def as_kwargs(self) -> dict[str, Any]:
        """These props as keyword arguments of `SweepFunction` (and of `SweepFunction.check_props`)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


class RouterFunction(Construct):
    """The router: `agent_wait.host.router.handler`, fed by the entry FIFO queue, reporting item failures.

    The event source reports batch item failures, so one failed record (and the rest of its thread's
    group) is retried while the others are deleted. Receiving from the queue, and decrypting it when it
    has a customer managed key, is granted by the event source; every other permission is granted by
    `AgentWait`.

    Example:
        router = RouterFunction(self, "Router", code=code, entry_queue=queue, environment=env)

    Args:
        scope: the parent construct.
        id: the construct id.
        code: the Lambda code (`LambdaBundle.for_function("router").code()`, which the sweep shares).
        entry_queue: the FIFO queue of starts and answers.
        environment: the variables of `agent_wait.contract.schema.Settings` (and Powertools').
        timeout: Default 1 minute: one graph step between two interrupts. Raise it for slow model calls;
            the entry queue's visibility timeout must stay at least six times this.
        memory_size: Default 512 MB, the cheapest warm lifecycle on the measured curve when AWS answers fast
            (docs/scaling.md, "The router's memory"); more memory shortens a cold start, which is CPU-bound.
        architecture: Default x86_64, the widest wheel coverage; arm64 is cheaper per GB-second and
            supported by the bundler.
        batch_size: records per invocation. Default 10, the FIFO maximum; records of one thread stay in order.
        reserved_concurrent_executions: Default None (unreserved): reserving takes from the account's pool,
            and new accounts may not have enough to reserve at all.
        max_concurrency: the most invocations the event source runs at once (its `ScalingConfig`), 2 to 1,000.
            Default None: not set, so the event source scales to the number of active message groups (one per
            thread with records waiting) up to Lambda's own ceiling. Set it to leave the account's concurrency
            to other functions, or to cap the rate the router puts on the tables. It reserves nothing, and must
            not exceed `reserved_concurrent_executions` when both are set: the event source would start more
            invocations than Lambda lets run, and each throttled batch spends one of its records' receives.
        log_retention: Default one month: enough to debug last week's incident, short enough to be cheap.
        removal_policy: the log group's. Default RETAIN.
        tracing: X-Ray tracing mode. Default None: not set (no X-Ray traces, no X-Ray permissions); set the
            environment's `POWERTOOLS_TRACE_DISABLED` to match (`AgentWait` does).
        vpc: run the router in this VPC (to reach private resources: a database, an internal model endpoint).
            Default None: no VPC, so it reaches AWS's public endpoints directly. In a VPC it needs egress
            to DynamoDB, SQS, SNS, EventBridge (and Secrets Manager, X-Ray, whatever the graph calls):
            a NAT gateway or VPC endpoints, which this construct does not create. The role gets Lambda's
            network interface actions.
        vpc_subnets: where in `vpc`. Default None: CDK's default, the private subnets. Needs `vpc`.
        security_groups: Default None: CDK creates one that allows all outbound traffic. Needs `vpc`.
        layers: Lambda layers added to the router (for example a dependency too big for the bundle).
            Default (): none; the bundle holds everything.
        function_name: a fixed name; the log group is then `/aws/lambda/<name>`. Default None: generated, so
            stacks never collide.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        code: lambda_.Code,
        entry_queue: sqs.IQueue,
        environment: Mapping[str, str],
        timeout: Duration = ONE_MINUTE,
        memory_size: int = 512,
        architecture: lambda_.Architecture = lambda_.Architecture.X86_64,
        batch_size: int = 10,
        reserved_concurrent_executions: int | None = None,
        max_concurrency: int | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        tracing: lambda_.Tracing | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        layers: Sequence[lambda_.ILayerVersion] = (),
        function_name: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(
            checks,
            timeout=timeout,
            memory_size=memory_size,
            batch_size=batch_size,
            reserved_concurrent_executions=reserved_concurrent_executions,
            max_concurrency=max_concurrency,
            vpc=vpc,
            vpc_subnets=vpc_subnets,
            security_groups=security_groups,
        )
        checks.raise_if_any()
        self.function, self.role, self.log_group = lambda_function(
            self,
            handler=ROUTER_HANDLER,
            function_name=function_name,
            description="agent-wait router: applies starts and answers from the entry queue, resumes the graph",
            code=code,
            environment=environment,
            timeout=timeout,
            memory_size=memory_size,
            architecture=architecture,
            log_retention=log_retention,
            removal_policy=removal_policy,
            reserved_concurrent_executions=reserved_concurrent_executions,
            tracing=tracing,
            vpc=vpc,
            vpc_subnets=vpc_subnets,
            security_groups=security_groups,
            layers=layers,
        )
        self.event_source = sources.SqsEventSource(
            entry_queue, batch_size=batch_size, report_batch_item_failures=True, max_concurrency=max_concurrency
        )
        self.function.add_event_source(self.event_source)

    check_props = staticmethod(check_router_function)
    """Record every out-of-range prop in `checks` (`_function_checks.check_router_function`)."""


class SweepFunction(Construct):
    """The sweep: `agent_wait.host.sweep.handler`, run by an EventBridge rule every `rate`.

    Each run reads only the open questions something is due on (the question table's `by_due_shard` index, each
    shard once): it
    sends the default answer of each one past its deadline through the entry queue (so one code path applies
    every answer), announces again those whose announcement failed, announces reminders and escalation
    steps as they fall due, and emits the `OldestOpenQuestionAgeSeconds` and `SweepErrors` metrics the alarms
    watch.

    Example:
        sweep = SweepFunction(self, "Sweep", code=code, environment=env, rate=Duration.minutes(5))

    Args:
        scope: the parent construct.
        id: the construct id.
        code: the Lambda code (`LambdaBundle.for_function("sweep").code()`, the router's asset).
        environment: the variables of `agent_wait.contract.schema.Settings` (and Powertools').
        rate: how often the sweep runs, in whole minutes. Default 1 minute: a question expires at most a
            minute after its deadline, for about 43,000 short invocations a month.
        timeout: Default 1 minute, the default rate: a run should finish before the next one starts.
        memory_size: Default 512 MB: the sweep queries and sends; it does not run the graph.
        limit: the most due questions one run handles, 1 to 10,000, set as `AGENT_WAIT_SWEEP_LIMIT`.
            Default None: not set, so the runtime's 100; raise it with `timeout`.
        architecture: Default x86_64 (see `RouterFunction`).
        log_retention: Default one month.
        removal_policy: the log group's. Default RETAIN.
        tracing: X-Ray tracing mode. Default None: not set (see `RouterFunction`).
        function_name: a fixed name; the log group is then `/aws/lambda/<name>`. Default None: generated.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        code: lambda_.Code,
        environment: Mapping[str, str],
        rate: Duration = ONE_MINUTE,
        timeout: Duration = ONE_MINUTE,
        memory_size: int = 512,
        limit: int | None = None,
        architecture: lambda_.Architecture = lambda_.Architecture.X86_64,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        tracing: lambda_.Tracing | None = None,
        function_name: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(checks, rate=rate, timeout=timeout, memory_size=memory_size, limit=limit)
        checks.raise_if_any()
        if limit is not None:
            environment = {**environment, shapes.ENV_SWEEP_LIMIT: str(limit)}
        self.function, self.role, self.log_group = lambda_function(
            self,
            handler=SWEEP_HANDLER,
            function_name=function_name,
            description="agent-wait sweep: expires overdue questions, re-announces, reminds and escalates",
            code=code,
            environment=environment,
            timeout=timeout,
            memory_size=memory_size,
            architecture=architecture,
            log_retention=log_retention,
            removal_policy=removal_policy,
            tracing=tracing,
        )
        self.schedule = events.Rule(
            self,
            "Schedule",
            description="Runs the agent-wait sweep",
            schedule=events.Schedule.rate(rate),
            # A failed run is not retried: the next run, one `rate` later, does the same work.
            targets=[targets.LambdaFunction(self.function, retry_attempts=0)],  # pyright: ignore[reportArgumentType]
        )

    check_props = staticmethod(check_sweep_function)
    """Record every out-of-range prop in `checks` (`_function_checks.check_sweep_function`)."""
