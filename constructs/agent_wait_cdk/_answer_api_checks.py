"""The rules of `AnswerApi`'s props: one way to sign in, what goes with links and the inbox, and the limits.

`AnswerApi.check_props` is `check_answer_api_props`; `AgentWait` runs it on `answer_api_props` under
`answer_api_props.`, so a problem is named as the user writes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aws_cdk import Duration, Token
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_secretsmanager as secretsmanager

from agent_wait_cdk._inbox import InboxSignIn, check_inbox
from agent_wait_cdk._lambda_function import check_function, check_log_level
from agent_wait_cdk._validate import PropChecks

__all__ = ("check_answer_api_props",)

_TIMEOUT_LIMIT = Duration.seconds(30)
"""API Gateway HTTP APIs wait at most 30 seconds for an integration."""
_ORIGIN = re.compile(r"https://[A-Za-z0-9.-]+(:\d{1,5})?|http://(localhost|127\.0\.0\.1)(:\d{1,5})?")
_CLAIM = re.compile(r"[^\s,]+")
_GROUP = re.compile(r"[^\s,]{1,256}")
"""A group name as a groups claim lists it: no spaces or commas (they separate groups)."""


def check_answer_api_props(
    checks: PropChecks,
    *,
    jwt_issuer: str | None = None,
    jwt_audience: Sequence[str] = (),
    user_pool: cognito.IUserPool | None = None,
    user_pool_clients: Sequence[cognito.IUserPoolClient] = (),
    sign_in_domain: cognito.UserPoolDomain | None = None,
    inbox_callback_urls: Sequence[str] = (),
    inbox_sign_in: InboxSignIn | None = None,
    inbox: bool = True,
    links: bool = True,
    link_keys: secretsmanager.ISecret | None = None,
    groups_claim: str | None = None,
    audit_group: str | None = None,
    cors_allowed_origins: Sequence[str] = (),
    throttle_rate_limit: float | None = None,
    throttle_burst_limit: int | None = None,
    timeout: Duration | None = None,
    memory_size: int | None = None,
    log_level: str | None = None,
) -> None:
    """Record every problem of `AnswerApi`'s props in `checks`: one way to sign in, the inbox's sign-in, link
    keys only with links, a claim name, CORS origins, limits (None: not given)."""
    _check_sign_in(
        checks,
        jwt_issuer=jwt_issuer,
        jwt_audience=jwt_audience,
        user_pool=user_pool,
        user_pool_clients=user_pool_clients,
        inbox_client=sign_in_domain is not None,
    )
    check_inbox(
        checks,
        inbox=inbox,
        sign_in_domain=sign_in_domain,
        inbox_sign_in=inbox_sign_in,
        inbox_callback_urls=inbox_callback_urls,
        user_pool=user_pool,
        jwt_audience=jwt_audience,
    )
    if link_keys is not None and not links:
        checks.fail("link_keys", "cannot go with links=False: there are no links to sign; drop one")
    if groups_claim is not None and not Token.is_unresolved(groups_claim) and not _CLAIM.fullmatch(groups_claim):
        checks.fail(
            "groups_claim", f"must be one JWT claim name such as 'cognito:groups' or 'groups'; got {groups_claim!r}"
        )
    if audit_group is not None and not Token.is_unresolved(audit_group) and not _GROUP.fullmatch(audit_group):
        checks.fail(
            "audit_group", f"must be one group name such as 'auditors' (no spaces or commas); got {audit_group!r}"
        )
    for origin in cors_allowed_origins:
        if not Token.is_unresolved(origin) and not _ORIGIN.fullmatch(origin):
            checks.fail(
                "cors_allowed_origins",
                "must list origins such as 'https://approvals.example.com' (https, host and optional port, "
                f"no path, no '*'; http only for localhost); got {origin!r}",
            )
    checks.int_between("throttle_rate_limit", throttle_rate_limit, minimum=1, maximum=10000, unit="requests per second")
    checks.int_between("throttle_burst_limit", throttle_burst_limit, minimum=1, maximum=5000, unit="requests")
    checks.duration_between("timeout", timeout, minimum=Duration.seconds(1), maximum=_TIMEOUT_LIMIT)
    check_function(checks, timeout=None, memory_size=memory_size)
    check_log_level(checks, log_level)


def _check_sign_in(
    checks: PropChecks,
    *,
    jwt_issuer: str | None,
    jwt_audience: Sequence[str],
    user_pool: cognito.IUserPool | None,
    user_pool_clients: Sequence[cognito.IUserPoolClient],
    inbox_client: bool = False,
) -> None:
    """Exactly one way to sign in: `jwt_issuer` + `jwt_audience` (OIDC) or `user_pool` + `user_pool_clients`
    (or the inbox's own client, with `sign_in_domain`)."""
    oidc = jwt_issuer is not None or bool(jwt_audience)
    pool = user_pool is not None or bool(user_pool_clients)
    if not oidc and not pool:
        checks.fail(
            "jwt_issuer",
            "and jwt_audience (any OIDC issuer), or user_pool and user_pool_clients (Cognito), must be given: "
            "the signed-in routes need a JWT authorizer; got neither",
        )
        return
    if oidc and pool:
        checks.fail(
            "user_pool",
            "cannot go with jwt_issuer/jwt_audience: the API has one JWT authorizer; pass jwt_issuer and "
            "jwt_audience (any OIDC issuer) or user_pool and user_pool_clients (Cognito), not both",
        )
        return
    if oidc:
        if jwt_issuer is None:
            checks.fail("jwt_issuer", "must be given with jwt_audience: the https URL of the tokens' issuer; got None")
        elif not Token.is_unresolved(jwt_issuer) and not jwt_issuer.startswith("https://"):
            checks.fail(
                "jwt_issuer",
                f"must be the issuer's https:// URL (API Gateway reads its OpenID configuration); got {jwt_issuer!r}",
            )
        if not jwt_audience:
            checks.fail("jwt_audience", "must list at least 1 audience (a client id) with jwt_issuer; got 0")
        return
    if user_pool is None:
        checks.fail("user_pool", "must be given with user_pool_clients: the pool that issues the tokens; got None")
    if not user_pool_clients and not inbox_client:
        checks.fail(
            "user_pool_clients",
            "must list at least 1 app client of user_pool (or give sign_in_domain, and the inbox's client is "
            "made for you); got 0",
        )
