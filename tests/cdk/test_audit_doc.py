"""`AnswerApiProps.audit_group` names the audit group on the answer API's function (and only there), and
docs/audit.md's snippet sets the retention of decided rows on the two functions that decide (the router and the
API); a bad group name is refused with the other prop errors."""

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


def test_the_snippets_set_the_audit_group_and_the_retention() -> None:
    assert len(SNIPPETS) == 1
    app = new_app()
    stack = Stack(app, "Audited")
    agent_wait = AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"], audit_group="auditors"),
    )
    for snippet in SNIPPETS:
        exec(snippet, {"agent_wait": agent_wait})  # the page's own code, on this construct
    env = _environments(Template.from_stack(stack).to_json())
    api, router, sweep = (
        env["agent_wait.host.api.handler"],
        env["agent_wait.host.router.handler"],
        env["agent_wait.host.sweep.handler"],
    )
    assert api[Settings.AUDIT_GROUP.value] == "auditors"
    assert api[Settings.DECIDED_RETENTION.value] == router[Settings.DECIDED_RETENTION.value] == "P400D"
    assert Settings.AUDIT_GROUP.value not in router
    assert Settings.DECIDED_RETENTION.value not in sweep


def test_a_group_name_with_a_space_or_a_comma_is_refused() -> None:
    stack = Stack(new_app(), "Refused")
    props = AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["approvals"], audit_group="audit team")
    with pytest.raises(AgentWaitPropsError, match="audit_group must be one group name such as 'auditors'"):
        AgentWait(stack, "AgentWait", graph="m:g", graph_source=[EXAMPLES], answer_api=True, answer_api_props=props)
