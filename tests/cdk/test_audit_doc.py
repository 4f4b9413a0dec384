"""`AnswerApiProps.audit_group` names the audit group on the answer API's function (and only there), and
docs/audit.md's snippet keeps decided rows as long as it says on the functions that decide (the router; the answer
API alike: tests/cdk/test_retention.py); a bad group name is refused with the other prop errors."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import EXAMPLES, ISSUER, REPO, new_app

from agent_wait.contract.schema import Settings
from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps

SNIPPETS = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "audit.md").read_text(encoding="utf-8"), re.DOTALL)


def _environments(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    functions = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    return {f["Handler"]: f.get("Environment", {}).get("Variables", {}) for f in functions if "Handler" in f}


def test_the_snippet_keeps_decided_rows_two_years_on_the_router_not_the_sweep() -> None:
    # GIVEN docs/audit.md's one snippet, run in a stack (as `self`)
    assert len(SNIPPETS) == 1
    stack = Stack(new_app(), "Audited")
    exec(SNIPPETS[0], {"self": stack})  # the page's own code
    # THEN the router keeps decided rows 730 days; the sweep, which never decides, is not told
    env = _environments(Template.from_stack(stack).to_json())
    router, sweep = env["agent_wait.host.router.handler"], env["agent_wait.host.sweep.handler"]
    assert router[Settings.DECIDED_RETENTION.value] == "P730D"
    assert Settings.DECIDED_RETENTION.value not in sweep


def test_the_audit_group_is_set_on_the_answer_api_alone() -> None:
    stack = Stack(new_app(), "AuditGroup")
    AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"], audit_group="auditors"),
    )
    env = _environments(Template.from_stack(stack).to_json())
    assert env["agent_wait.host.api.handler"][Settings.AUDIT_GROUP.value] == "auditors"
    assert Settings.AUDIT_GROUP.value not in env["agent_wait.host.router.handler"]


def test_a_group_name_with_a_space_or_a_comma_is_refused() -> None:
    stack = Stack(new_app(), "Refused")
    props = AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"], audit_group="audit team")
    with pytest.raises(AgentWaitPropsError, match="audit_group must be one group name such as 'auditors'"):
        AgentWait(stack, "AgentWait", graph="m:g", graph_source=[EXAMPLES], answer_api=True, answer_api_props=props)
