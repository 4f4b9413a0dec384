"""`AgentWait(precise_deadlines=True)` on the `answering` synth (no synth of its own): the schedule group, the role
Scheduler assumes, what the router, the sweep and the answer API may do with the group's schedules, their settings."""

from __future__ import annotations

from typing import Any

from tests.cdk.conftest import Synth, statements

from agent_wait_cdk import _shapes as shapes

HANDLERS = {
    "router": "agent_wait.host.router.handler",
    "sweep": "agent_wait.host.sweep.handler",
    "api": "agent_wait.host.api.handler",
}
KEEP = {"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule"}


def _function(synth: Synth, handler: str) -> tuple[str, dict[str, Any]]:
    return synth.one("AWS::Lambda::Function", Handler=handler)


def test_one_schedule_group_and_a_role_only_scheduler_assumes_to_invoke_only_the_sweep(answering: Synth) -> None:
    (group,) = answering.resources("AWS::Scheduler::ScheduleGroup").values()
    name = group["Properties"]["Name"]
    assert isinstance(name, str), "a literal name: the functions' AGENT_WAIT_SCHEDULE_GROUP"
    assert len(name) <= 64
    roles = {
        logical: role
        for logical, role in answering.resources("AWS::IAM::Role").items()
        if "scheduler.amazonaws.com" in str(role["Properties"]["AssumeRolePolicyDocument"])
    }
    ((logical, role),) = roles.items()
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    (invoke,) = statements(answering, logical)
    _, sweep = _function(answering, HANDLERS["sweep"])
    assert invoke["Action"] == "lambda:InvokeFunction"
    assert sweep["Properties"]["FunctionName"] in str(invoke["Resource"]), "the sweep, by the name it is given"


def test_the_router_the_sweep_and_the_api_keep_the_groups_schedules_and_pass_only_that_role(answering: Synth) -> None:
    (group,) = answering.resources("AWS::Scheduler::ScheduleGroup").values()
    name = group["Properties"]["Name"]
    for role_of, handler in HANDLERS.items():
        _, function = _function(answering, handler)
        variables = function["Properties"]["Environment"]["Variables"]
        assert variables[shapes.ENV_SCHEDULE_GROUP] == name, role_of
        assert shapes.ENV_SCHEDULE_TARGET_ARN in variables, role_of
        assert shapes.ENV_SCHEDULE_ROLE_ARN in variables, role_of
        role = function["Properties"]["Role"]["Fn::GetAtt"][0]
        granted = statements(answering, role)
        keep = [s for s in granted if set(s["Action"] if isinstance(s["Action"], list) else [s["Action"]]) == KEEP]
        assert len(keep) == 1, f"{role_of}: one statement keeps the schedules"
        assert f":schedule/{name}/*" in str(keep[0]["Resource"]), f"{role_of}: only this group's schedules"
        (passing,) = [s for s in granted if s["Action"] == "iam:PassRole"]
        assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}
