"""The emulator holds each function to its role from the template (`agent_wait.local.iam`): a grant taken out of the
refund stack's router fails a local round trip, naming the action and the resource; with the grant, or with the
check switched off, the same round trip refunds."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from tests.support.refund_world import RefundWorld, refund_stack

pytestmark = pytest.mark.timeout(180)

ROUTER_POLICY = "AgentWaitRouterServiceRoleDefaultPolicy"
"""The start of the logical id of the router's role's policy in the refund template."""


def without_router_grant(template: dict[str, Any], action: str, resource_prefix: str) -> dict[str, Any]:
    """`template` with the router's statement granting `action` on the resource whose logical id starts with
    `resource_prefix` taken out (and only that one)."""
    changed = copy.deepcopy(template)
    (policy,) = [r for lid, r in changed["Resources"].items() if lid.startswith(ROUTER_POLICY)]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    kept = [
        s
        for s in statements
        if not (s["Action"] == action and f'"Fn::GetAtt": ["{resource_prefix}' in json.dumps(s["Resource"]))
    ]
    assert len(kept) == len(statements) - 1, "the refund template's router grants this once"
    policy["Properties"]["PolicyDocument"]["Statement"] = kept
    return changed


def refund_under_the_limit(world: RefundWorld) -> tuple[str, Any]:
    """Start a refund the policy approves by itself: the router runs the agent, which writes the refund."""
    thread = "order-iam-check"
    world.local.send(
        {"thread_id": thread, "input": {"order_id": thread, "amount": 200, "kind": "refund"}, "start_id": thread},
        deduplication_id=thread,
    )
    (outcome,) = world.local.pump().outcomes
    return thread, outcome


@pytest.fixture
def refunds_table(refund_template: dict[str, Any]) -> str:
    (logical,) = [lid for lid in refund_template["Resources"] if lid.startswith("Refunds")]
    return logical


def test_a_round_trip_the_routers_role_grants_passes_with_iam_enforced(refund_template: dict[str, Any]) -> None:
    # GIVEN the refund stack as synthesized, with the emulator's IAM check on
    with refund_stack(refund_template, "iam-granted") as world:
        assert world.local.iam is not None
        # WHEN a refund under the limit runs
        thread, _ = refund_under_the_limit(world)
        # THEN it is refunded, and nothing was refused (the `iam_denials` fixture checks that too)
        assert world.refunds(thread) == [200]
        assert world.local.iam.denials == []


def test_a_grant_taken_from_the_routers_role_fails_the_round_trip_naming_the_action_and_resource(
    refund_template: dict[str, Any], refunds_table: str, iam_denials: list[Any]
) -> None:
    # GIVEN the refund stack without the router's dynamodb:PutItem on the refunds table
    template = without_router_grant(refund_template, "dynamodb:PutItem", refunds_table)
    with refund_stack(template, "iam-missing") as world:
        table_arn = f"arn:aws:dynamodb:us-east-1:123456789012:table/{world.local.environment['REFUND_TABLE']}"
        # WHEN a refund under the limit runs
        thread, outcome = refund_under_the_limit(world)
        # THEN nothing is refunded: the agent's write was refused as AWS refuses it
        assert world.refunds(thread) == []
        assert outcome.reason == "agent_failed"
        assert f"dynamodb:PutItem on resource: {table_arn}" in str(outcome.error)
        (denial,) = world.local.iam.denials
        assert (denial.action, denial.resource) == ("dynamodb:PutItem", table_arn)
        # AND the error names the function's role, the action and the resource, and how to fix it
        assert "assumed-role/AgentWaitRouterServiceRole" in denial.message
        assert f"is not authorized to perform: dynamodb:PutItem on resource: {table_arn}" in denial.message
        assert "grant it in the stack" in denial.message
    assert iam_denials == [denial]
    iam_denials.clear()  # expected here: the autouse check fails any other test that was refused a call


def test_with_the_check_off_the_same_stack_runs_unjudged(
    refund_template: dict[str, Any], refunds_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the stack without the grant, and AGENT_WAIT_LOCAL_IAM=off
    monkeypatch.setenv("AGENT_WAIT_LOCAL_IAM", "off")
    template = without_router_grant(refund_template, "dynamodb:PutItem", refunds_table)
    with refund_stack(template, "iam-off") as world:
        # WHEN a refund under the limit runs
        thread, _ = refund_under_the_limit(world)
        # THEN it refunds with the emulator's all-powerful credentials, and no check was installed
        assert world.local.iam is None
        assert world.refunds(thread) == [200]
