"""The router's own props: extra environment, VPC placement, layers; and their refusals.

One stack sets them all, synthesized once with cdk-nag as a validation plugin (a finding fails it). The VPC,
its subnets, the security group and the layer are imported, so the stack holds only what AgentWait makes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_lambda as lambda_
from tests.cdk.conftest import Synth, inline_code, lone_router_function, new_app, statements, synth

from agent_wait_cdk import AgentWait, AgentWaitPropsError, RouterProps

ROUTER, SWEEP = "agent_wait.host.router.handler", "agent_wait.host.sweep.handler"
LAYER_ARN = "arn:aws:lambda:us-east-1:123456789012:layer:model-client:3"
VPC_ACTIONS = [
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
]


@pytest.fixture(scope="module")
def placed() -> Synth:
    """Router environment, a VPC with chosen subnets and security group, and a layer."""
    app = new_app()
    stack = Stack(app, "Placed")
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0abc",
        availability_zones=["us-east-1a", "us-east-1b"],
        private_subnet_ids=["subnet-0private1", "subnet-0private2"],
        isolated_subnet_ids=["subnet-0isolated1", "subnet-0isolated2"],
    )
    group = ec2.SecurityGroup.from_security_group_id(stack, "Group", "sg-0router")
    layer = lambda_.LayerVersion.from_layer_version_arn(stack, "Layer", LAYER_ARN)
    AgentWait(
        stack,
        "AgentWait",
        graph="m:g",
        code=inline_code(),
        router=RouterProps(
            environment={"MODEL_ID": "anthropic.claude-3-5-haiku-20241022-v1:0", "OPENAI_API_KEY_SECRET_ARN": "arn"},
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            security_groups=[group],
            layers=[layer],
        ),
    )
    return synth(app, stack)


def router(result: Synth) -> tuple[str, dict[str, Any]]:
    return result.one("AWS::Lambda::Function", Handler=ROUTER)


def sweep(result: Synth) -> tuple[str, dict[str, Any]]:
    return result.one("AWS::Lambda::Function", Handler=SWEEP)


def test_router_environment_is_added_beside_agent_waits_own(placed: Synth) -> None:
    variables = router(placed)[1]["Properties"]["Environment"]["Variables"]
    assert variables["MODEL_ID"] == "anthropic.claude-3-5-haiku-20241022-v1:0"
    assert variables["OPENAI_API_KEY_SECRET_ARN"] == "arn"
    assert variables["AGENT_WAIT_GRAPH"] == "m:g"  # AgentWait's own are all still there
    assert variables["LOG_LEVEL"] == "INFO"


def test_router_environment_is_the_routers_only(placed: Synth) -> None:
    variables = sweep(placed)[1]["Properties"]["Environment"]["Variables"]
    assert "MODEL_ID" not in variables
    assert "OPENAI_API_KEY_SECRET_ARN" not in variables


def test_the_router_runs_in_the_chosen_subnets_with_the_chosen_security_group(placed: Synth) -> None:
    assert router(placed)[1]["Properties"]["VpcConfig"] == {
        "SubnetIds": ["subnet-0isolated1", "subnet-0isolated2"],
        "SecurityGroupIds": ["sg-0router"],
    }
    assert "VpcConfig" not in sweep(placed)[1]["Properties"]  # router only
    assert not placed.resources("AWS::EC2::VPCEndpoint")  # the construct creates no endpoints


def test_the_routers_role_may_manage_its_network_interfaces_before_the_function_exists(placed: Synth) -> None:
    # GIVEN the router in a VPC, with a role AgentWait made (CDK adds these only to a role it makes itself)
    _, function = router(placed)
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    stmts = statements(placed, role_id)
    # THEN the role has Lambda's network interface actions, on `*` (Lambda names the interfaces) ...
    assert {"Action": VPC_ACTIONS, "Effect": "Allow", "Resource": "*"} in stmts
    # ... attached before the function is created (Lambda checks them then)
    (policy_id,) = [
        k for k, v in placed.resources("AWS::IAM::Policy").items() if {"Ref": role_id} in v["Properties"]["Roles"]
    ]
    assert policy_id in function["DependsOn"], function["DependsOn"]
    # AND the sweep's role has none
    sweep_role = sweep(placed)[1]["Properties"]["Role"]["Fn::GetAtt"][0]
    assert not [s for s in statements(placed, sweep_role) if "ec2:CreateNetworkInterface" in s["Action"]]


def test_router_layers_are_attached_to_the_router_only(placed: Synth) -> None:
    assert router(placed)[1]["Properties"]["Layers"] == [LAYER_ARN]
    assert "Layers" not in sweep(placed)[1]["Properties"]


def test_without_a_vpc_the_router_has_no_network_interface_permissions(refund: Synth) -> None:
    _, function = router(refund)
    assert "VpcConfig" not in function["Properties"]
    assert "Layers" not in function["Properties"]
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    assert not [s for s in statements(refund, role_id) if "ec2:CreateNetworkInterface" in s["Action"]]


def test_router_environment_may_not_set_what_agent_wait_or_lambda_sets() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as caught:
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            router=RouterProps(
                environment={
                    "MODEL_ID": "fine",
                    "AGENT_WAIT_GRAPH": "other:graph",
                    "LOG_LEVEL": "DEBUG",
                    "POWERTOOLS_TRACE_DISABLED": "false",
                    "POWERTOOLS_METRICS_NAMESPACE": "Mine",
                    "AWS_REGION": "eu-west-1",
                }
            ),
        )
    assert caught.value.problems == (
        "router.environment must not set a variable the construct or Lambda sets; got "
        "AGENT_WAIT_GRAPH (every AGENT_WAIT_* variable is AgentWait's own; set it through its props), "
        "LOG_LEVEL (set by log_level), POWERTOOLS_TRACE_DISABLED (set by tracing), "
        "POWERTOOLS_METRICS_NAMESPACE (fixed: the namespace the alarms watch), AWS_REGION (reserved by Lambda)",
    )


def test_a_variable_agent_wait_adds_later_is_refused_too() -> None:
    # GIVEN a name AgentWait sets only after construction (when a sender is granted)
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError, match=re.escape("got AGENT_WAIT_START_SENDERS (every AGENT_WAIT_*")):
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            router=RouterProps(environment={"AGENT_WAIT_START_SENDERS": ""}),
        )


def test_subnets_and_security_groups_need_a_vpc() -> None:
    stack = Stack(new_app(), "S")
    group = ec2.SecurityGroup.from_security_group_id(stack, "Group", "sg-0router")
    with pytest.raises(AgentWaitPropsError) as caught:
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            router=RouterProps(
                vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
                security_groups=[group],
            ),
        )
    assert caught.value.problems == (
        "router.vpc_subnets places the router in a VPC, but there is no router.vpc; pass router.vpc too, or drop it",
        "router.security_groups places the router in a VPC, but there is no router.vpc; pass router.vpc too, or "
        "drop it",
    )


def test_router_function_on_its_own_checks_its_network_props_too() -> None:
    with pytest.raises(AgentWaitPropsError, match=re.escape("S/Router: 1 invalid prop(s):\n  - vpc_subnets places")):
        lone_router_function(vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED))
