"""Who may send what on the entry queue: the router's trusted, start and answer sender lists.

SQS stamps each message with its sender's IAM unique id (`SenderId`, `AROA...:session` for a role); the
router compares the part before the `:` with `AGENT_WAIT_TRUSTED_SENDERS`, `AGENT_WAIT_START_SENDERS` and
`AGENT_WAIT_ANSWER_SENDERS`. A role created in the app knows its id only at deploy time, so the lists are
CloudFormation `RoleId` attributes joined lazily: a grant made after `AgentWait` was constructed still lands.
"""

from __future__ import annotations

import re
from typing import cast

import jsii
from aws_cdk import IResolveContext, IStringProducer, Lazy, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from agent_wait_cdk._validate import AgentWaitPropsError

__all__ = ("SenderLists", "role_id", "sender_id")

_PRINCIPAL_ID = re.compile(r"[A-Z0-9]{8,128}")
"""What the runtime accepts: `AROA...` (a role), `AIDA...` (a user), or an account id (its root)."""


def role_id(role: iam.Role) -> str:
    """The CloudFormation `RoleId` (`AROA...`) of a role created in this app."""
    return cast(iam.CfnRole, role.node.default_child).attr_role_id


def sender_id(grantee: iam.IGrantable, principal_id: str | None, *, construct: str, method: str) -> str:
    """The IAM unique id SQS will stamp on `grantee`'s messages.

    Raises:
        AgentWaitPropsError: `principal_id` is malformed, or it is needed (the grantee is not a role created
            in this app) and missing.
    """
    if principal_id is not None:
        if not Token.is_unresolved(principal_id) and not _PRINCIPAL_ID.fullmatch(principal_id):
            raise AgentWaitPropsError(
                construct,
                [
                    f"{method}: principal_id must be an IAM unique id, 8 to 128 capital letters and digits "
                    f"('AROA...' for a role, 'AIDA...' for a user); got {principal_id!r}"
                ],
            )
        return principal_id
    principal = grantee.grant_principal
    if isinstance(principal, iam.Role) and isinstance(principal.node.default_child, iam.CfnRole):
        return role_id(principal)
    raise AgentWaitPropsError(
        construct,
        [
            f"{method}: principal_id is needed for the grantee {_describe(principal)}: only a role "
            "created in this app (iam.Role, or a function's role) tells its unique id at synth time. Pass "
            "principal_id= with its IAM unique id (aws iam get-role --role-name NAME --query Role.RoleId gives "
            "AROA...; get-user ... --query User.UserId gives AIDA...)"
        ],
    )


def _describe(principal: iam.IPrincipal) -> str:
    node = getattr(principal, "node", None)
    return repr(node.path) if node is not None else repr(str(principal))


@jsii.implements(IStringProducer)
class _JoinedIds:
    """Produces `a,b,c` from a list that may still grow until synthesis.

    Uncached (`Lazy.uncached_string`): the list is read whenever the router's environment is resolved, so
    an early `stack.resolve` cannot freeze it before the last grant (a cached lazy value is produced once).
    """

    def __init__(self, ids: list[str]) -> None:
        self._ids = ids

    def produce(self, context: IResolveContext) -> str | None:
        return ",".join(self._ids)


class SenderLists:
    """The router's sender variables; each list is added to the router's environment on its first id."""

    def __init__(self, router: lambda_.Function) -> None:
        self._router = router
        self._lists: dict[str, list[str]] = {}

    def add(self, variable: str, ids: list[str]) -> None:
        """Add `ids` to `variable` (once each); the variable appears on the router with its first id."""
        joined = self._lists.get(variable)
        if joined is None:
            joined = self._lists[variable] = []
            self._router.add_environment(variable, Lazy.uncached_string(_JoinedIds(joined)))
        for value in ids:
            if value not in joined:
                joined.append(value)
