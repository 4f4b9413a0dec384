"""The rules of the router's and the sweep's props: Lambda's and SQS's limits, the event source's concurrency within
the router's reservation, network props only with a VPC, the sweep's rate in whole minutes.

`RouterFunction.check_props` and `SweepFunction.check_props` are `check_router_function` and `check_sweep_function`;
`AgentWait` reports them under `router.` and `sweep.` (`_agent_wait_checks.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration, Token
from aws_cdk import aws_ec2 as ec2

from agent_wait_cdk._lambda_function import check_function
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "MAX_EVENT_SOURCE_CONCURRENCY",
    "MIN_EVENT_SOURCE_CONCURRENCY",
    "check_max_concurrency",
    "check_network",
    "check_router_function",
    "check_sweep_function",
)

MIN_EVENT_SOURCE_CONCURRENCY, MAX_EVENT_SOURCE_CONCURRENCY = 2, 1000
"""The range of an SQS event source's maximum concurrency (Lambda's `ScalingConfig.MaximumConcurrency`)."""


def check_router_function(
    checks: PropChecks,
    *,
    timeout: Duration | None = None,
    memory_size: int | None = None,
    batch_size: int | None = None,
    reserved_concurrent_executions: int | None = None,
    max_concurrency: int | None = None,
    vpc: ec2.IVpc | None = None,
    vpc_subnets: ec2.SubnetSelection | None = None,
    security_groups: Sequence[ec2.ISecurityGroup] | None = None,
) -> None:
    """Record every out-of-range prop of `RouterFunction` in `checks` (Lambda's and SQS's limits), and network props
    without a VPC; None means not given."""
    check_function(checks, timeout=timeout, memory_size=memory_size)
    checks.int_between("batch_size", batch_size, minimum=1, maximum=10, unit="records")
    checks.int_between(
        "reserved_concurrent_executions",
        reserved_concurrent_executions,
        minimum=0,
        maximum=10000,
        unit="executions",
    )
    check_max_concurrency(
        checks, max_concurrency=max_concurrency, reserved_concurrent_executions=reserved_concurrent_executions
    )
    check_network(checks, vpc=vpc, vpc_subnets=vpc_subnets, security_groups=security_groups)


def check_sweep_function(
    checks: PropChecks,
    *,
    rate: Duration | None = None,
    timeout: Duration | None = None,
    memory_size: int | None = None,
    limit: int | None = None,
) -> None:
    """Record every out-of-range prop of `SweepFunction` in `checks`; None means not given."""
    checks.duration_between("rate", rate, minimum=Duration.minutes(1), maximum=Duration.days(1), unit="minutes")
    if rate is not None and not rate.is_unresolved() and rate.to_seconds(integral=False) % 60:
        checks.fail("rate", f"must be a whole number of minutes; got {rate.to_seconds(integral=False):g} seconds")
    check_function(checks, timeout=timeout, memory_size=memory_size)
    checks.int_between("limit", limit, minimum=1, maximum=10000, unit="questions")


def check_network(
    checks: PropChecks,
    *,
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None,
    security_groups: Sequence[ec2.ISecurityGroup] | None,
) -> None:
    """`vpc_subnets` and `security_groups` place a function in `vpc`: without one, they have nothing to shape."""
    if vpc is not None:
        return
    for field, value in (("vpc_subnets", vpc_subnets), ("security_groups", security_groups)):
        if value is not None:
            named = checks.name("vpc")
            checks.fail(field, f"places the router in a VPC, but there is no {named}; pass {named} too, or drop it")


def check_max_concurrency(
    checks: PropChecks, *, max_concurrency: int | None, reserved_concurrent_executions: int | None
) -> None:
    """The event source's `max_concurrency` lies in Lambda's range and, with a reservation, within it.

    Only `max_concurrency` is checked here (`check_router_function` checks the reservation's own range).
    """
    checks.int_between(
        "max_concurrency",
        max_concurrency,
        minimum=MIN_EVENT_SOURCE_CONCURRENCY,
        maximum=MAX_EVENT_SOURCE_CONCURRENCY,
        unit="concurrent invocations",
    )
    reserved = reserved_concurrent_executions
    # Reserving 0 stops the router on purpose (an emergency switch): nothing runs, so nothing is throttled.
    if (
        max_concurrency is not None
        and reserved is not None
        and not Token.is_unresolved(max_concurrency)
        and not Token.is_unresolved(reserved)
        and 0 < reserved < max_concurrency
    ):
        checks.fail(
            "max_concurrency",
            f"must be at most {checks.name('reserved_concurrent_executions')} when both are set (the event "
            "source would start invocations Lambda throttles, and each throttled batch spends a receive of "
            f"its records); got {max_concurrency} and {reserved_concurrent_executions}",
        )
