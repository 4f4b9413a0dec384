"""A stack with `AgentWait(precise_deadlines=True)` runs on the emulator, as `agent-wait dev` runs it.

The template names the schedule group, the sweep function's ARN and Scheduler's role; the emulator deploys no
function and no role, so the function's ARN resolves to nothing and the role to its stand-in ARN (the one its
`iam:PassRole` grant names, which the emulator's IAM check holds the functions to). Before the local stack filled the
target in, every handler refused to start ("precise deadlines need AGENT_WAIT_SCHEDULE_GROUP, ..._TARGET_ARN,
..._ROLE_ARN together"), and so did `agent-wait dev`. Here the stack starts, the router puts a question's schedules
in the emulator's Scheduler, and the emulated delivery `agent-wait dev` runs (`stack_delivery`) fires them through
the local sweep at their time: the deadline applies the policy's default without any minute sweep.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.engine.schedules import Step, schedule_name
from agent_wait.local.schedules import stack_delivery


@pytest.fixture(scope="module")
def precise_template() -> dict[str, Any]:
    from aws_cdk import App, Stack
    from examples.refund_agent.stack import GRAPH_SOURCE, REFUND_GRAPH

    from agent_wait_cdk import AgentWait

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, "PreciseLocal")
    AgentWait(stack, "AgentWait", graph=REFUND_GRAPH, graph_source=GRAPH_SOURCE, precise_deadlines=True)
    return app.synth().get_stack_by_name("PreciseLocal").template


@pytest.fixture(scope="module")
def world(precise_template: dict[str, Any]) -> Iterator[Any]:
    from examples.refund_agent.demo import MovableClock, World

    from agent_wait.cli._dev import Observer
    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(precise_template, clock=clock, stack_name=f"precise-{uuid.uuid4().hex[:8]}")
    local.start()  # refused to start before: no target or role for the schedules
    try:
        yield World(local, clock, Observer(local), io.StringIO())
    finally:
        local.stop()


def test_the_local_stack_fills_in_the_schedules_target_and_names_the_templates_role(
    world: Any, precise_template: dict[str, Any]
) -> None:
    environment = world.local.environment
    group = environment[Settings.SCHEDULE_GROUP.value]
    (role,) = [
        lid
        for lid, r in precise_template["Resources"].items()
        if r["Type"] == "AWS::IAM::Role" and lid.startswith("AgentWaitPreciseDeadlinesInvokeRole")
    ]
    assert environment[Settings.SCHEDULE_TARGET_ARN.value].endswith(":function:sweep")
    assert environment[Settings.SCHEDULE_ROLE_ARN.value] == f"arn:aws:iam::123456789012:role/{role}"
    assert world.local.client("scheduler").get_schedule_group(Name=group)["Name"] == group


def test_a_deadline_fires_from_its_schedule_on_the_emulator(world: Any) -> None:
    thread = f"precise-{uuid.uuid4().hex[:8]}"
    question = world.question_of(world.start(thread, 900))
    scheduler = world.local.client("scheduler")
    group = world.local.environment[Settings.SCHEDULE_GROUP.value]
    names = {s["Name"] for s in scheduler.list_schedules(GroupName=group)["Schedules"]}
    # The deadline (P3D), the first reminder (PT4H) and the first escalation step (P2D), put by the router.
    steps = (Step.DEADLINE.value, f"{Step.REMINDER.value}1", f"{Step.ESCALATION.value}1")
    assert {schedule_name(question, step) for step in steps} <= names

    delivery = stack_delivery(world.local)
    assert delivery is not None
    world.clock.offset += timedelta(days=3, minutes=1)  # nobody answers; no minute sweep runs
    fired = {d.name for d in delivery.deliver_due()}
    assert schedule_name(question, Step.DEADLINE.value) in fired
    world.pump()  # the woken sweep sent the deadline's answer to the entry queue; the router applies it

    row = world.row(thread, question)
    assert (row["outcome"], row["answered_by"]) == ("expired", "agent-wait:deadline")
    assert row["answer"]["action"] == "reject"
    assert row["status"] == "resumed"  # the agent received the default and finished
    remaining = {s["Name"] for s in scheduler.list_schedules(GroupName=group)["Schedules"]}
    assert not {n for n in remaining if n.startswith(schedule_name(question, ""))}  # fired or cleared at the decision
