"""`PreciseDeadlines`: EventBridge Scheduler one-time schedules that wake the sweep for one question at its time.

`AgentWait(precise_deadlines=True)` creates it: a schedule group, the role Scheduler assumes to invoke the sweep
function (`lambda:InvokeFunction` on it, nothing else), and for each function that keeps schedules (the router,
the sweep, the answer API) `scheduler:CreateSchedule`, `UpdateSchedule` and `DeleteSchedule` on the group's
schedules, `iam:PassRole` of that role to Scheduler only, and the three `AGENT_WAIT_SCHEDULE_*` variables. The
runtime puts a question's schedules when it records the question and after each follow-up, and deletes them at its
decision (`agent_wait.engine.schedules`); the sweep's minute stays the safety net.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, ArnFormat, Names, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from constructs import Construct

from agent_wait_cdk import _perms
from agent_wait_cdk import _shapes as shapes

__all__ = ("PreciseDeadlines", "precise_sweep_name")


class PreciseDeadlines(Construct):
    """The schedule group and the role that let a question's deadline and follow-ups wake the sweep on time.

    Args:
        sweep_function_name: the physical name of the function each schedule invokes with
            `{"question": {"thread_id", "question_id"}}`. A name, not the function: the sweep's own environment names
            its ARN, which a reference to the function itself would make a circular dependency.
        group_name: the schedule group's name. Default: one unique to this construct's path (64 characters at
            most), so two stacks never share a group.

    Example:
        deadlines = PreciseDeadlines(self, "PreciseDeadlines", sweep_function_name="orders-agent-wait-sweep")
        deadlines.grant_keep_schedules(router)  # and the sweep, and the answer API
    """

    def __init__(self, scope: Construct, id: str, *, sweep_function_name: str, group_name: str | None = None) -> None:
        super().__init__(scope, id)
        name = group_name or Names.unique_resource_name(self, max_length=64, separator="-")
        self.group = scheduler.ScheduleGroup(self, "Group", schedule_group_name=name)
        self.group_name = name
        """The group's name, literal (not a token), as the functions' `AGENT_WAIT_SCHEDULE_GROUP`."""
        self.role = iam.Role(
            self,
            "InvokeRole",
            assumed_by=iam.ServicePrincipal(  # type: ignore[arg-type]
                "scheduler.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
            ),
            description="EventBridge Scheduler invokes the agent-wait sweep for one question's deadline or follow-up",
        )
        stack = Stack.of(self)
        self.target_arn = stack.format_arn(
            service="lambda",
            resource="function",
            resource_name=sweep_function_name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        """The sweep function's ARN, built from its name."""
        iam.Grant.add_to_principal(
            grantee=self.role, actions=list(_perms.SCHEDULER_INVOKE), resource_arns=[self.target_arn]
        )
        self.schedules_arn = stack.format_arn(
            service="scheduler",
            resource="schedule",
            resource_name=f"{name}/*",
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        """Every schedule of the group."""

    @property
    def environment(self) -> dict[str, str]:
        """The variables a function that keeps schedules needs."""
        return {
            shapes.ENV_SCHEDULE_GROUP: self.group_name,
            shapes.ENV_SCHEDULE_TARGET_ARN: self.target_arn,
            shapes.ENV_SCHEDULE_ROLE_ARN: self.role.role_arn,
        }

    def grant_keep_schedules(self, function: lambda_.Function) -> iam.Grant:
        """Let `function` put and delete the group's schedules and pass the invoke role to Scheduler; sets its
        `AGENT_WAIT_SCHEDULE_*` variables."""
        schedules = self.schedules_arn
        grant = iam.Grant.add_to_principal(
            grantee=function, actions=list(_perms.SCHEDULES_MANAGE), resource_arns=[schedules]
        )
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=list(_perms.PASS_SCHEDULER_ROLE),
                resources=[self.role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
            )
        )
        for name, value in self.environment.items():
            function.add_environment(name, value)
        role: Any = function.role
        if isinstance(role, Construct):
            Validations.of(role).acknowledge(
                Acknowledgment(
                    id=f"AwsSolutions-IAM5[Resource::{_flattened(Stack.of(role).resolve(schedules))}]",
                    reason=(
                        "Each question's schedules are named by its id and step when it is asked, so no statement "
                        "can list them; the grant is create, update and delete in this stack's schedule group alone."
                    ),
                )
            )
        return grant


def precise_sweep_name(scope: Construct) -> str:
    """A physical name for the sweep function when `AgentWait(precise_deadlines=True)` has no name prefix: unique to
    the construct's path, within Lambda's 64 characters."""
    return Names.unique_resource_name(scope, max_length=58, separator="-") + "-sweep"


def _flattened(node: Any) -> str:
    """A resolved ARN as cdk-nag names it in a finding (`arn:<AWS::Partition>:scheduler:...`)."""
    if isinstance(node, str):
        return node
    if isinstance(node, dict) and "Fn::Join" in node:
        delimiter, items = node["Fn::Join"]
        return str(delimiter).join(_flattened(item) for item in items)
    if isinstance(node, dict) and "Fn::GetAtt" in node:
        resource, attribute = node["Fn::GetAtt"]
        return f"<{resource}.{attribute}>"
    if isinstance(node, dict) and "Ref" in node:
        return f"<{node['Ref']}>"
    return str(node)
