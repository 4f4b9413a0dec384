"""IAM policy evaluation for the emulator: may this role make this call, by AWS's documented rules?

The emulator holds each function to its role's policies from the synthesized template (`agent_wait.local.iam`).
This module is the judgement, and only that: given the role's identity-based policies, the resource's own policy
if it has one, and one request (an action, the resource it touches, the condition keys it carries), it answers
allow or deny, and why, as AWS's policy evaluation logic does within one account:

- an explicit `Deny` in any policy that applies wins;
- otherwise an `Allow` is needed: in an identity-based policy, or in the resource's policy naming the role;
- a KMS key is the exception: its key policy must allow the role itself, or allow the account (which hands the
  decision to the role's identity-based policies), as KMS requires;
- a permissions boundary, when the role has one, must allow the call too.

Matched as AWS matches: actions case-insensitively with `*` and `?`; resources case-sensitively with `*` and `?`
inside each `:`-separated ARN segment (a `*` ending a segment reaches past `:`); `NotAction` and `NotResource`;
`Principal` by ARN, account and `*` in resource policies.

What it cannot judge it never allows: a condition operator or key it does not know, a policy variable, a
`NotPrincipal`. An `Allow` carrying one is not counted (the call may then be refused, saying which statement was
skipped and why); a `Deny` carrying one is taken to apply. The supported operators are `CONDITION_OPERATORS` (each
with `IfExists`); the keys are the ones a request names in its context (`agent_wait.local.iam_requests`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = (
    "CONDITION_OPERATORS",
    "Effect",
    "PolicyDocument",
    "Request",
    "Statement",
    "Verdict",
    "evaluate",
)


class Effect(StrEnum):
    """A statement's effect."""

    ALLOW = "Allow"
    """Grants what it matches."""
    DENY = "Deny"
    """Refuses what it matches, whatever else grants it."""


@dataclass(frozen=True)
class Request:
    """One authorisation AWS makes for a call (a call may need several: a batch over two tables, a KMS key)."""

    action: str
    """`service:Action`, e.g. `dynamodb:UpdateItem`."""
    resource: str
    """The ARN the action touches, or `*` for an action without resource-level permissions."""
    context: Mapping[str, str | None] = field(default_factory=dict)
    """Condition keys this request is judged with, lower-cased: a value, or None for a key the emulator knows is
    absent from this request (a negated operator then matches). A key not listed is one it cannot supply."""


@dataclass(frozen=True)
class Statement:
    """One statement of a policy, as written (lists normalised)."""

    effect: Effect
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] | None = None
    resources: tuple[str, ...] = ()
    not_resources: tuple[str, ...] | None = None
    principals: tuple[str, ...] | None = None
    """A resource policy's `Principal` (`AWS` values and `*`); None in an identity-based policy."""
    conditions: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """`{operator: {key: values}}`."""
    unsupported: str | None = None
    """Why this statement cannot be judged here (a `NotPrincipal`, a policy variable), or None."""
    sid: str = ""
    policy: str = ""
    """The name of the policy it belongs to, for messages."""

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, policy: str = "") -> Statement:
        """A statement from its JSON form (`Action` or `NotAction`, `Resource` or `NotResource`, ...)."""
        unsupported = []
        if "NotPrincipal" in raw:
            unsupported.append("NotPrincipal")
        text = repr(raw)
        if "${" in text:
            unsupported.append("a policy variable (${...})")
        conditions: dict[str, dict[str, tuple[str, ...]]] = {}
        for operator, block in dict(raw.get("Condition") or {}).items():
            conditions[str(operator)] = {str(key): _strings(values) for key, values in dict(block).items()}
        return cls(
            effect=Effect(raw.get("Effect", "Allow")),
            actions=_strings(raw.get("Action")),
            not_actions=_strings(raw["NotAction"]) if "NotAction" in raw else None,
            resources=_strings(raw.get("Resource")),
            not_resources=_strings(raw["NotResource"]) if "NotResource" in raw else None,
            principals=_principals(raw["Principal"]) if "Principal" in raw else None,
            conditions=conditions,
            unsupported=", ".join(unsupported) or None,
            sid=str(raw.get("Sid", "")),
            policy=policy,
        )

    @property
    def name(self) -> str:
        where = f"{self.policy} " if self.policy else ""
        return f"{where}statement {self.sid}".strip() if self.sid else f"a statement of {self.policy or 'a policy'}"

    def covers(self, request: Request) -> bool:
        """The statement's action and resource elements match the request (conditions aside)."""
        if self.not_actions is not None:
            if any(action_matches(pattern, request.action) for pattern in self.not_actions):
                return False
        elif not any(action_matches(pattern, request.action) for pattern in self.actions):
            return False
        if self.not_resources is not None:
            return not any(resource_matches(pattern, request.resource) for pattern in self.not_resources)
        return any(resource_matches(pattern, request.resource) for pattern in self.resources)

    def names_principal(self, principal: str, account: str) -> str | None:
        """In a resource policy: `"role"` when it names this principal itself (or everyone), `"account"` when it
        names the principal's account (the account's own policies then decide), else None."""
        for named in self.principals or ():
            if named in ("*", principal):
                return "role"
            if named in (account, f"arn:aws:iam::{account}:root"):
                return "account"
        return None


@dataclass(frozen=True)
class PolicyDocument:
    """A named policy: its statements."""

    name: str
    statements: tuple[Statement, ...]

    @classmethod
    def parse(cls, name: str, document: Mapping[str, Any]) -> PolicyDocument:
        raw = document.get("Statement", [])
        statements = raw if isinstance(raw, list) else [raw]
        return cls(name, tuple(Statement.parse(s, policy=name) for s in statements))


@dataclass(frozen=True)
class Verdict:
    """What `evaluate` decided about one request."""

    allowed: bool
    reason: str
    """Why, in AWS's words: `no identity-based policy allows the X action`, `with an explicit deny in ...`."""
    skipped: tuple[str, ...] = ()
    """Statements that might have allowed the request but could not be judged here, and why."""


CONDITION_OPERATORS = (
    "StringEquals",
    "StringNotEquals",
    "StringEqualsIgnoreCase",
    "StringNotEqualsIgnoreCase",
    "StringLike",
    "StringNotLike",
    "ArnEquals",
    "ArnLike",
    "ArnNotEquals",
    "ArnNotLike",
    "Bool",
    "Null",
)
"""The condition operators judged here, each also with `IfExists`. Any other makes its statement unjudgeable."""


def evaluate(
    identity: Sequence[PolicyDocument],
    request: Request,
    *,
    principal: str,
    account: str,
    resource_policy: PolicyDocument | None = None,
    key_policy: bool = False,
    boundary: Sequence[PolicyDocument] | None = None,
) -> Verdict:
    """Judge one request made by `principal` (a role ARN) of `account` (see the module docstring for the rules).

    Args:
        identity: the role's identity-based policies.
        request: what is asked.
        principal: the role's ARN, matched against a resource policy's `Principal`.
        account: the account id the role belongs to.
        resource_policy: the resource's own policy (a queue's, a topic's, a bucket's, a secret's, a key's).
        key_policy: `resource_policy` is a KMS key policy: the key must allow the role or its account.
        boundary: the role's permissions boundary, when it has one.
    """
    skipped: list[str] = []
    identity_result = _judge((s for p in identity for s in p.statements), request, skipped)
    resource_role, resource_account = None, None
    if resource_policy is not None:
        by_role = [s for s in resource_policy.statements if s.names_principal(principal, account) == "role"]
        by_account = [s for s in resource_policy.statements if s.names_principal(principal, account) == "account"]
        resource_role = _judge(by_role, request, skipped)
        resource_account = _judge(by_account, request, skipped)
    boundary_result = (
        None if boundary is None else _judge((s for p in boundary for s in p.statements), request, skipped)
    )
    for where, result in (
        ("an identity-based policy", identity_result),
        ("a resource-based policy", resource_role),
        ("a resource-based policy", resource_account),
        ("a permissions boundary", boundary_result),
    ):
        if result is Effect.DENY:
            return Verdict(False, f"with an explicit deny in {where}", tuple(skipped))
    if boundary is not None and boundary_result is not Effect.ALLOW:
        return Verdict(False, f"no permissions boundary allows the {request.action} action", tuple(skipped))
    if key_policy:
        if resource_role is Effect.ALLOW:
            return Verdict(True, "the key policy allows it", tuple(skipped))
        if resource_account is not Effect.ALLOW:
            return Verdict(False, f"the key policy does not allow the {request.action} action", tuple(skipped))
        if identity_result is Effect.ALLOW:
            return Verdict(
                True, "an identity-based policy allows it (the key policy trusts the account)", tuple(skipped)
            )
        return Verdict(False, f"no identity-based policy allows the {request.action} action", tuple(skipped))
    if identity_result is Effect.ALLOW or resource_role is Effect.ALLOW:
        return Verdict(True, "allowed", tuple(skipped))
    return Verdict(False, f"no identity-based policy allows the {request.action} action", tuple(skipped))


def _judge(statements: Iterable[Statement], request: Request, skipped: list[str]) -> Effect | None:
    """DENY if a statement denies, else ALLOW if one allows, else None. Unjudgeable statements are noted in
    `skipped` and counted only as denials."""
    allowed = False
    for statement in statements:
        if not statement.covers(request):
            continue
        problem = statement.unsupported
        matched = False
        if problem is None:
            try:
                matched = _conditions_hold(statement.conditions, request.context)
            except _UnsupportedConditionError as exc:
                problem = str(exc)
        if problem is not None:
            if statement.effect is Effect.DENY:
                skipped.append(f"{statement.name}: a Deny with {problem}, which the emulator takes to apply")
                return Effect.DENY
            skipped.append(f"{statement.name}: an Allow with {problem}, which the emulator cannot judge")
            continue
        if matched and statement.effect is Effect.DENY:
            return Effect.DENY
        allowed = allowed or matched
    return Effect.ALLOW if allowed else None


class _UnsupportedConditionError(Exception):
    """A condition this module cannot judge (its text says which)."""


def _conditions_hold(
    conditions: Mapping[str, Mapping[str, tuple[str, ...]]], context: Mapping[str, str | None]
) -> bool:
    """Every operator, and every key under it, holds (AWS ANDs them; the values of one key are ORed)."""
    for operator, keys in conditions.items():
        base, if_exists = (operator[: -len("IfExists")], True) if operator.endswith("IfExists") else (operator, False)
        if base not in CONDITION_OPERATORS:
            raise _UnsupportedConditionError(f"the condition operator {operator}")
        for key, values in keys.items():
            if key.lower() not in context:
                raise _UnsupportedConditionError(
                    f"the condition key {key}, which the emulator cannot supply for this call"
                )
            if not _holds(base, context[key.lower()], values, if_exists=if_exists):
                return False
    return True


_NEGATED = {"StringNotEquals", "StringNotEqualsIgnoreCase", "StringNotLike", "ArnNotEquals", "ArnNotLike"}


def _holds(operator: str, actual: str | None, values: tuple[str, ...], *, if_exists: bool) -> bool:
    if operator == "Null":  # {"key": "true"}: the key is absent
        return any((actual is None) == (value.lower() == "true") for value in values)
    if actual is None:  # AWS: a missing key fails a positive operator and satisfies a negated one
        return if_exists or operator in _NEGATED
    positive = operator.replace("Not", "", 1) if operator in _NEGATED else operator
    if positive == "StringEquals":
        found = actual in values
    elif positive == "StringEqualsIgnoreCase":
        found = actual.lower() in {value.lower() for value in values}
    elif positive == "StringLike":
        found = any(_pattern(value, ignore_case=False).fullmatch(actual) for value in values)
    elif positive in ("ArnEquals", "ArnLike"):
        found = any(resource_matches(value, actual) for value in values)
    else:  # Bool
        found = actual.lower() in {value.lower() for value in values}
    return not found if operator in _NEGATED else found


def action_matches(pattern: str, action: str) -> bool:
    """`pattern` (with `*` and `?`) names `action`; IAM compares actions without regard to case."""
    return bool(_pattern(pattern, ignore_case=True).fullmatch(action))


def resource_matches(pattern: str, arn: str) -> bool:
    """`pattern` names the resource `arn`: `*` alone names every resource; otherwise segment by segment, split at
    `:`. `*` and `?` stay inside their segment, except a `*` that ends one, which reaches past `:` as AWS's does;
    `/` is no boundary (`table/t/index/*` names every index of `t`)."""
    if pattern == "*":
        return True
    return bool(_arn_pattern(pattern).fullmatch(arn))


@functools.lru_cache(maxsize=4096)
def _arn_pattern(glob: str) -> re.Pattern[str]:
    parts = []
    for i, c in enumerate(glob):
        if c == "*":
            ends_segment = i + 1 == len(glob) or glob[i + 1] == ":"
            parts.append(".*" if ends_segment else "[^:]*")
        else:
            parts.append("[^:]" if c == "?" else re.escape(c))
    return re.compile("".join(parts), re.DOTALL)


@functools.lru_cache(maxsize=4096)
def _pattern(glob: str, *, ignore_case: bool) -> re.Pattern[str]:
    translated = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(translated, re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return (str(value),)


def _principals(value: Any) -> tuple[str, ...]:
    """`Principal`'s `AWS` values and `*`; service principals are left out (a service is never the caller here)."""
    if value == "*":
        return ("*",)
    if isinstance(value, Mapping):
        return _strings(value.get("AWS"))
    return ()
