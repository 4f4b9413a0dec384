"""The MCP server on the answer API (`AgentWait(mcp=McpProps(...))`): `ask_person` answered as a Task.

Adds two routes to the answer API's HTTP API, both to its function: `POST /mcp` behind the JWT authorizer (people's
tools: the caller is the token's person) and, with `iam=True`, `POST /mcp/iam` behind an IAM authorizer (machine
clients sign with SigV4; the caller is the signing principal). Sets `AGENT_WAIT_MCP_POLICIES` on the function: the
named policies a call may ask under (a client picks one; it can never name answerers). Lets the function open
question rows (`dynamodb:PutItem`, conditioned in the code on no existing row). The runtime side is `agent_wait.mcp`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "MCP_IAM_ROUTES",
    "MCP_POLICIES_VARIABLE",
    "MCP_SIGNED_IN_ROUTES",
    "McpProps",
    "check_mcp_props",
    "grant_mcp_asks",
)

MCP_SIGNED_IN_ROUTES = (("POST", "/mcp"),)
"""The MCP server's route for people, behind the answer API's JWT authorizer."""
MCP_IAM_ROUTES = (("POST", "/mcp/iam"),)
"""The MCP server's route for machine clients, behind API Gateway's IAM authorizer (SigV4)."""
MCP_POLICIES_VARIABLE = shapes.ENV_MCP_POLICIES
"""The function's setting naming the policies (`agent_wait.mcp.policies.POLICIES_VARIABLE`)."""
_POLICY_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True, kw_only=True)
class McpProps:
    """The MCP server's props: the named policies `ask_person` may ask under, and which routes serve it.

    Example:
        McpProps(
            policies={"refunds": WaitPolicy(timeout="P1D", default={"action": "reject"}, answerer_groups=["finance"])},
            default_policy="refunds",
        )
    """

    policies: Mapping[str, Any]
    """Each policy by the name a client gives: an `agent_wait.policy.WaitPolicy`, or its `to_dict()` form (the
    constructs never import the runtime; anything with `to_dict()` is read so). Who may answer, the deadline and its
    default come from here, never from the client."""
    default_policy: str | None = None
    """The policy used when a call names none; None: a call must name one (or give tags selecting one)."""
    iam: bool = True
    """Also serve `POST /mcp/iam` behind an IAM authorizer, for machine clients (grant them `grant_invoke_mcp`)."""

    def policies_json(self) -> str:
        """`AGENT_WAIT_MCP_POLICIES`: `{"policies": {name: policy}, "default": name}`."""
        policies = {name: _policy_dict(policy) for name, policy in self.policies.items()}
        return json.dumps({"policies": policies, "default": self.default_policy}, sort_keys=True, separators=(",", ":"))

    def check(self, checks: PropChecks) -> None:
        """Record every problem of these props in `checks`."""
        if not self.policies:
            checks.fail("policies", "must name at least one policy; got none")
        for name in self.policies:
            if not name or set(name) - _POLICY_NAME_CHARS or len(name) > 64:
                checks.fail(
                    "policies", f"names must be 1 to 64 of a-z, 0-9, '-' and '_' (what a client types); got {name!r}"
                )
        if self.default_policy is not None and self.default_policy not in self.policies:
            checks.fail("default_policy", f"must be one of {sorted(self.policies)}; got {self.default_policy!r}")


def check_mcp_props(checks: PropChecks, mcp: McpProps | None, *, answer_api: bool) -> None:
    """Every problem of `mcp`, as `mcp.<field>`; the MCP server is served on the answer API."""
    if mcp is None:
        return
    prefixed = checks.prefixed("mcp.")
    mcp.check(prefixed)
    if not answer_api:
        prefixed.fail("policies", "need answer_api=True: the MCP server is served on the answer API")


def _policy_dict(policy: Any) -> dict[str, Any]:
    to_dict = getattr(policy, "to_dict", None)
    fields = to_dict() if callable(to_dict) else policy
    return dict(cast("Mapping[str, Any]", fields))


def grant_mcp_asks(grantee: iam.IGrantable, table: dynamodb.ITable) -> iam.Grant:
    """The MCP server opens a question's row (`PutItem`, conditioned in the code on no existing row)."""
    return _grants.grant_table(grantee, table, _perms.QUESTION_API_ASK, kms_actions=_perms.KMS_READ_WRITE)


def route_arn(api: apigwv2.HttpApi, method: str, path: str) -> str:
    """The `execute-api:Invoke` ARN of one route of `api`, on every stage."""
    return api.arn_for_execute_api(method, path)
