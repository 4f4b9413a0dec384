"""The approvals inbox on `AnswerApi`: its two routes, and how the page signs people in.

The page (`GET /inbox`) and its files (`GET /inbox/{asset}`) hold no question data, so API Gateway serves
them without the authorizer; the page signs the person in and calls the signed-in routes with their
token. It signs in with the OAuth 2.0 authorization code flow and PKCE, as a public client (no secret),
at the issuer the function's `AGENT_WAIT_SIGN_IN_*` settings name. Two ways to give them:

- a Cognito user pool with a domain (`sign_in_domain`): `AnswerApi` makes the page's app client, with
  the page's own URL as its callback, and its authorizer accepts that client's tokens;
- any other OIDC issuer (`InboxSignIn`): you register a public client whose redirect URI is the page's
  URL (`AnswerApi.inbox_url`) and give its endpoints and id; its id must be in `jwt_audience`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Token
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._validate import PropChecks

__all__ = (
    "DEFAULT_INBOX_SCOPES",
    "INBOX_ROUTES",
    "INBOX_ROUTES_OPEN",
    "InboxSignIn",
    "check_inbox",
    "inbox_client",
)

INBOX_ROUTES = (("GET", "/inbox"), ("GET", "/inbox/{asset}"))
"""The page and its files (script, style, `config.json`): no authorizer, no question data."""
INBOX_ROUTES_OPEN = (
    "The approvals inbox page and its static script, style and sign-in configuration hold no question data; the "
    "page signs the person in and calls the data routes, which all need the JWT authorizer."
)
"""Why the page's routes need no authorizer (cdk-nag AwsSolutions-APIG4)."""
DEFAULT_INBOX_SCOPES = ("openid", "email", "profile")
"""What the page asks for: an ID token with the person's email and name."""
_COGNITO_SCOPES = {
    "openid": cognito.OAuthScope.OPENID,
    "email": cognito.OAuthScope.EMAIL,
    "profile": cognito.OAuthScope.PROFILE,
    "phone": cognito.OAuthScope.PHONE,
}
_SCOPE = re.compile(r"[!#-\[\]-~]+")
_CALLBACK = re.compile(r"https://[^\s#]+|http://(localhost|127\.0\.0\.1)(:\d+)?(/[^\s#]*)?")


@dataclass(frozen=True)
class InboxSignIn:
    """How the inbox page signs in at an OIDC issuer other than a Cognito pool with `sign_in_domain`.

    Register a public client (authorization code grant, PKCE, no secret) whose redirect URI is the page's
    URL (`AnswerApi.inbox_url`, or the stack output `AnswerApiUrl` followed by `inbox`), and put its id in
    the API's `jwt_audience`: the page calls the API with the ID token, whose `aud` is the client id.

    Example:
        InboxSignIn(
            authorize_url="https://login.example.com/oauth2/v1/authorize",
            token_url="https://login.example.com/oauth2/v1/token",
            client_id="approvals-inbox",
        )
    """

    authorize_url: str
    """The issuer's authorization endpoint (https)."""
    token_url: str
    """The issuer's token endpoint (https); the page posts the code there from the browser, so it must
    allow cross-origin requests from the API's origin."""
    client_id: str
    """The public client's id."""
    scopes: Sequence[str] = DEFAULT_INBOX_SCOPES
    """The scopes the page asks for."""

    def environment(self) -> dict[str, str]:
        """The API function's `AGENT_WAIT_SIGN_IN_*` variables."""
        return {
            shapes.ENV_SIGN_IN_URL: self.authorize_url,
            shapes.ENV_SIGN_IN_TOKEN_URL: self.token_url,
            shapes.ENV_SIGN_IN_CLIENT_ID: self.client_id,
            shapes.ENV_SIGN_IN_SCOPES: " ".join(self.scopes),
        }


def inbox_client(
    scope: Construct,
    *,
    user_pool: cognito.IUserPool,
    domain: cognito.UserPoolDomain,
    callback_urls: Sequence[str],
    scopes: Sequence[str] = DEFAULT_INBOX_SCOPES,
) -> tuple[cognito.UserPoolClient, InboxSignIn]:
    """The page's app client on `user_pool` (code grant with PKCE, no secret), and the sign-in through `domain`."""
    client = cognito.UserPoolClient(
        scope,
        "InboxClient",
        user_pool=user_pool,
        user_pool_client_name="agent-wait-inbox",
        generate_secret=False,  # a page cannot keep a secret: PKCE protects the code instead
        auth_flows=cognito.AuthFlow(),  # no password or SRP flows on this client: only the hosted sign-in
        o_auth=cognito.OAuthSettings(
            flows=cognito.OAuthFlows(authorization_code_grant=True),
            scopes=[_COGNITO_SCOPES[name] for name in scopes],
            callback_urls=list(callback_urls),
            logout_urls=list(callback_urls),
        ),
        prevent_user_existence_errors=True,
        supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
    )
    base = domain.base_url()
    sign_in = InboxSignIn(
        authorize_url=f"{base}/oauth2/authorize",
        token_url=f"{base}/oauth2/token",
        client_id=client.user_pool_client_id,
        scopes=tuple(scopes),
    )
    return client, sign_in


def check_inbox(
    checks: PropChecks,
    *,
    inbox: bool,
    sign_in_domain: cognito.UserPoolDomain | None,
    inbox_sign_in: InboxSignIn | None,
    inbox_callback_urls: Sequence[str],
    user_pool: cognito.IUserPool | None,
    jwt_audience: Sequence[str],
) -> None:
    """Record every problem with the inbox props: one way to sign in, and each way with what it needs."""
    if not inbox:
        for prop, value in (("sign_in_domain", sign_in_domain), ("inbox_sign_in", inbox_sign_in)):
            if value is not None:
                checks.fail(prop, "cannot go with inbox=False: there is no page to sign in to; drop one")
    if sign_in_domain is not None and user_pool is None:
        checks.fail("sign_in_domain", "needs user_pool: it is that pool's domain; got no user_pool")
    if sign_in_domain is not None and inbox_sign_in is not None:
        checks.fail(
            "inbox_sign_in",
            "cannot go with sign_in_domain: the page signs in one way; sign_in_domain for a Cognito user pool, "
            "inbox_sign_in for any other issuer",
        )
    elif inbox_sign_in is not None and user_pool is not None:
        checks.fail(
            "inbox_sign_in",
            "is for an issuer other than Cognito; with user_pool, pass its domain as sign_in_domain instead",
        )
    elif inbox_sign_in is not None:
        _check_sign_in(checks, inbox_sign_in, jwt_audience)
    if inbox_callback_urls and sign_in_domain is None:
        checks.fail(
            "inbox_callback_urls",
            "needs sign_in_domain: they are added to the app client AnswerApi makes for the page",
        )
    for url in inbox_callback_urls:
        if not Token.is_unresolved(url) and not _CALLBACK.fullmatch(url):
            checks.fail(
                "inbox_callback_urls",
                f"must be https:// URLs (http:// only on localhost) of pages that sign in; got {url!r}",
            )


def _check_sign_in(checks: PropChecks, sign_in: InboxSignIn, jwt_audience: Sequence[str]) -> None:
    for name, url in (("authorize_url", sign_in.authorize_url), ("token_url", sign_in.token_url)):
        if not Token.is_unresolved(url) and not url.startswith("https://"):
            checks.fail(f"inbox_sign_in.{name}", f"must be an https:// URL of the issuer; got {url!r}")
    client_id = sign_in.client_id
    if not Token.is_unresolved(client_id):
        if not client_id or any(c.isspace() for c in client_id):
            checks.fail("inbox_sign_in.client_id", f"must be a client id without spaces; got {client_id!r}")
        elif not any(Token.is_unresolved(a) for a in jwt_audience) and client_id not in jwt_audience:
            checks.fail(
                "inbox_sign_in.client_id",
                f"must be one of jwt_audience {list(jwt_audience)}: the page calls the API with the ID token, "
                f"whose aud is the client id; got {client_id!r}",
            )
    if not sign_in.scopes or not all(isinstance(s, str) and _SCOPE.fullmatch(s) for s in sign_in.scopes):
        checks.fail("inbox_sign_in.scopes", f"must list scopes such as 'openid'; got {list(sign_in.scopes)}")
