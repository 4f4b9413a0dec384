"""A Lambda function the way every agent-wait function is made, and the variables every one of them gets.

Its own log group, a role that may write only there (no managed policy), python3.13, Powertools' variables;
the checks of the props all functions share (timeout, memory, log level) and of extra variables, which must
not set what the construct or Lambda sets. `RouterFunction`, `SweepFunction` and `AnswerApi` are built on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from agent_wait_cdk._shapes import METRICS_NAMESPACE, SERVICE_NAME, TRACE_DISABLED_VARIABLE
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "LAMBDA_RESERVED_VARIABLES",
    "LAMBDA_RUNTIME",
    "LOG_LEVELS",
    "check_extra_environment",
    "check_function",
    "check_log_level",
    "lambda_function",
    "powertools_environment",
)

LAMBDA_RUNTIME = lambda_.Runtime.PYTHON_3_13
"""The runtime the bundle is built for (`bundling.LAMBDA_PYTHON_VERSION`)."""
_MAX_TIMEOUT = Duration.minutes(15)
_VPC_ACTIONS = (
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
)
"""What Lambda's `AWSLambdaVPCAccessExecutionRole` allows: the function's network interfaces in the VPC."""


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""What Powertools' Logger takes as `LOG_LEVEL`."""


def check_log_level(checks: PropChecks, log_level: str | None) -> None:
    """`log_level` must be one of `LOG_LEVELS`; None means not given."""
    if log_level is not None and log_level not in LOG_LEVELS:
        checks.fail("log_level", f"must be one of {', '.join(LOG_LEVELS)}; got {log_level!r}")


def powertools_environment(*, log_level: str, tracing: lambda_.Tracing | None) -> dict[str, str]:
    """Powertools' variables, the same on every function: service, namespace, log level, tracer switch."""
    return {
        "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
        "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
        "LOG_LEVEL": log_level,
        # Powertools' Tracer is off outside Lambda on its own; on Lambda, only when X-Ray traces the function.
        TRACE_DISABLED_VARIABLE: "false" if tracing == lambda_.Tracing.ACTIVE else "true",
    }


LAMBDA_RESERVED_VARIABLES = frozenset(
    {
        "_HANDLER",
        "_X_AMZN_TRACE_ID",
        "AWS_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_DEFAULT_REGION",
        "AWS_EXECUTION_ENV",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
        "AWS_LAMBDA_FUNCTION_NAME",
        "AWS_LAMBDA_FUNCTION_VERSION",
        "AWS_LAMBDA_INITIALIZATION_TYPE",
        "AWS_LAMBDA_LOG_GROUP_NAME",
        "AWS_LAMBDA_LOG_STREAM_NAME",
        "AWS_LAMBDA_RUNTIME_API",
        "AWS_REGION",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "LAMBDA_RUNTIME_DIR",
        "LAMBDA_TASK_ROOT",
    }
)
"""The variables Lambda sets itself and refuses in a function's configuration (at deploy time)."""
_OWN_PREFIX = "AGENT_WAIT_"
_POWERTOOLS_PROPS = {
    "LOG_LEVEL": "set by log_level",
    TRACE_DISABLED_VARIABLE: "set by tracing",
    "POWERTOOLS_SERVICE_NAME": "fixed: the metrics' service dimension the alarms watch",
    "POWERTOOLS_METRICS_NAMESPACE": "fixed: the namespace the alarms watch",
}


def check_extra_environment(checks: PropChecks, field: str, environment: Mapping[str, str] | None) -> None:
    """Extra variables must not collide with the ones the construct sets (`AGENT_WAIT_*`, Powertools') or Lambda's.

    Every colliding key is named with the reason it is taken, in one problem.
    """
    if not environment:
        return
    taken = []
    for key in environment:
        if key.startswith(_OWN_PREFIX):
            taken.append(f"{key} (every {_OWN_PREFIX}* variable is AgentWait's own; set it through its props)")
        elif key in _POWERTOOLS_PROPS:
            taken.append(f"{key} ({_POWERTOOLS_PROPS[key]})")
        elif key in LAMBDA_RESERVED_VARIABLES:
            taken.append(f"{key} (reserved by Lambda)")
    if taken:
        checks.fail(field, f"must not set a variable the construct or Lambda sets; got {', '.join(taken)}")


def check_function(checks: PropChecks, *, timeout: Duration | None, memory_size: int | None) -> None:
    """Lambda's own limits: a timeout of 1 second to 15 minutes, 128 to 10,240 MB; None means not given."""
    checks.duration_between("timeout", timeout, minimum=Duration.seconds(1), maximum=_MAX_TIMEOUT)
    checks.int_between("memory_size", memory_size, minimum=128, maximum=10240, unit="MB")


def lambda_function(
    scope: Construct,
    *,
    handler: str,
    description: str,
    code: lambda_.Code,
    environment: Mapping[str, str],
    timeout: Duration,
    memory_size: int,
    architecture: lambda_.Architecture,
    log_retention: logs.RetentionDays,
    removal_policy: RemovalPolicy,
    reserved_concurrent_executions: int | None = None,
    tracing: lambda_.Tracing | None = None,
    vpc: ec2.IVpc | None = None,
    vpc_subnets: ec2.SubnetSelection | None = None,
    security_groups: Sequence[ec2.ISecurityGroup] | None = None,
    layers: Sequence[lambda_.ILayerVersion] = (),
    function_name: str | None = None,
) -> tuple[lambda_.Function, iam.Role, logs.LogGroup]:
    """A function with its own log group and a role that may write only to that log group.

    No managed policy: `AWSLambdaBasicExecutionRole` allows `logs:CreateLogGroup` on `*`, and the log group
    already exists, so `logs:CreateLogStream` and `logs:PutLogEvents` on it are all the function needs.
    With `Tracing.ACTIVE`, Lambda adds `xray:PutTraceSegments` and `xray:PutTelemetryRecords`, which X-Ray
    grants only on `*`. In a VPC, the role gets the network interface actions of Lambda's
    `AWSLambdaVPCAccessExecutionRole` (CDK adds them only to a role it creates itself), also only on `*`:
    Lambda creates the interfaces, so their ids are not known. That `*` finding is acknowledged, with its reasons.
    """
    log_group = logs.LogGroup(
        scope,
        "LogGroup",
        log_group_name=f"/aws/lambda/{function_name}" if function_name else None,  # Lambda's own name for it
        retention=log_retention,
        removal_policy=removal_policy,
    )
    role = iam.Role(
        scope,
        "ServiceRole",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),  # pyright: ignore[reportArgumentType]
        description=description,
    )
    log_group.grant_write(role)
    if vpc is not None:
        # Before the function: Lambda checks the role can create the interfaces when it creates the function,
        # and the function depends on the role, its default policy included.
        role.add_to_policy(iam.PolicyStatement(actions=list(_VPC_ACTIONS), resources=["*"]))
    function = lambda_.Function(
        scope,
        "Resource",
        runtime=LAMBDA_RUNTIME,
        function_name=function_name,
        handler=handler,
        code=code,
        description=description,
        environment=dict(environment),
        timeout=timeout,
        memory_size=memory_size,
        architecture=architecture,
        role=role,  # pyright: ignore[reportArgumentType]
        log_group=log_group,
        reserved_concurrent_executions=reserved_concurrent_executions,
        tracing=tracing,
        vpc=vpc,
        vpc_subnets=vpc_subnets,
        security_groups=list(security_groups) if security_groups is not None else None,
        layers=list(layers),
    )
    reasons = []
    if tracing == lambda_.Tracing.ACTIVE:
        reasons.append(
            "X-Ray tracing (tracing=Tracing.ACTIVE): xray:PutTraceSegments and xray:PutTelemetryRecords "
            "support no resource-level permissions, so Lambda grants them on '*'"
        )
    if vpc is not None:
        reasons.append(
            "in a VPC (vpc=...): Lambda creates and deletes the function's network interfaces itself, so "
            f"{', '.join(_VPC_ACTIONS)} name no interface the role could know; the same as AWS's "
            "AWSLambdaVPCAccessExecutionRole"
        )
    if reasons:
        Validations.of(role).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",  # only the `*` resource, not other wildcards
                reason="; ".join(reasons) + ". Every other statement of this role names its resources.",
            )
        )
    Validations.of(function).acknowledge(
        Acknowledgment(
            id="AwsSolutions-L1",
            reason=(
                "Pinned to python3.13 on purpose: the bundle's wheels are resolved for cp313 "
                "(LAMBDA_PYTHON_VERSION) and the runtime is tested on it; moving to a newer runtime is a "
                "deliberate change of both together."
            ),
        )
    )
    return function, role, log_group
