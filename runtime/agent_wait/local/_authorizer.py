"""API Gateway's JWT authorizer and the dev sign-in, played on the local issuer (`agent_wait.local.jwt`).

A protected route's bearer token is checked against the issuer (RS256, issuer, audience, expiry) and its claims
are flattened to strings as API Gateway does (`"[finance ops]"`); a missing or bad token gets API Gateway's
`401 {"message":"Unauthorized"}` with its challenge. The dev sign-in (`POST /dev/token`) signs a token for a user and
groups picked by hand, and the inbox page's `config.json` offers it. Tokens are never logged.
"""

from __future__ import annotations

import json
from typing import Any

from agent_wait.local.jwt import (
    MAX_LIFETIME,
    LocalIssuer,
    TokenRejectedError,
    check_groups,
    check_user,
    flatten_claims,
    verify_token,
)

__all__ = ("UNAUTHORIZED", "authorized_claims", "challenge", "dev_sign_in_config", "dev_token")

UNAUTHORIZED = {"message": "Unauthorized"}
"""API Gateway's body for a request its JWT authorizer refuses."""


def authorized_claims(issuer: LocalIssuer, authorization: str | None) -> dict[str, str]:
    """The flattened claims of a valid `Authorization` header.

    Raises:
        TokenRejectedError: no bearer token, or one the authorizer refuses.
    """
    if not authorization or not authorization.strip():
        raise TokenRejectedError("no Authorization header")
    scheme, _, rest = authorization.strip().partition(" ")
    token = rest.strip() if scheme.lower() == "bearer" else authorization.strip()
    claims = verify_token(token, jwks=issuer.jwks(), issuer=issuer.url, audience=issuer.audience)
    return flatten_claims(claims)


def challenge(authorization: str | None, refused: TokenRejectedError) -> str:
    """The `WWW-Authenticate` header of a 401: a bare `Bearer` without a token, else why the token was refused."""
    if authorization is None:
        return "Bearer"
    return f'Bearer error="invalid_token", error_description="{refused.reason}"'


def dev_token(issuer: LocalIssuer, body: bytes) -> tuple[int, dict[str, Any]]:
    """The dev sign-in: `{"user": ..., "groups": [...], "expires_in": seconds}` → `{"token": ...}`."""
    try:
        data = json.loads(body or b"null")
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return 400, {"message": 'send JSON like {"user": "alice@example.com", "groups": ["finance"]}'}
    unknown = sorted(set(data) - {"user", "groups", "expires_in"})
    if unknown:
        return 400, {"message": f"unknown field(s) {unknown}; send user, groups and, optionally, expires_in"}
    lifetime = data.get("expires_in", issuer.lifetime)
    if not isinstance(lifetime, int) or isinstance(lifetime, bool) or not 1 <= lifetime <= MAX_LIFETIME:
        return 400, {"message": f"expires_in must be a whole number of seconds from 1 to {MAX_LIFETIME}"}
    try:
        user, groups = check_user(data.get("user")), check_groups(data.get("groups"))
    except ValueError as exc:
        return 400, {"message": str(exc)}
    token = issuer.token(user, groups, expires_in=lifetime)
    return 200, {
        "token": token,
        "token_type": "Bearer",
        "expires_in": lifetime,
        "issuer": issuer.url,
        "audience": issuer.audience,
    }


def dev_sign_in_config(issuer: LocalIssuer) -> dict[str, Any]:
    """What the inbox page's `config.json` says: sign in with the dev sign-in (`POST /dev/token`)."""
    return {
        "sign_in": "dev",
        # Same origin as the page, whichever name it was opened under (127.0.0.1, or localhost for passkeys): the
        # page's CSP lets it call its own origin only.
        "dev_token_url": "/dev/token",
        "issuer": issuer.url,
        "detail": "agent-wait dev: pick a user and groups; the local issuer signs a token for them",
    }
