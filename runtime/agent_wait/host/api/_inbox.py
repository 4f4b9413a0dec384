"""The approvals inbox: one web page on the answer API where people list, read and answer questions.

Routes (API Gateway serves them WITHOUT the JWT authorizer: they hold no question content; the page's
script signs in and then calls the `/questions` routes with a bearer token):

    GET /inbox                   the page (static HTML; every value it shows is set as text by its script)
    GET /inbox/{asset}           its files: the ES modules of its script (`INBOX_MODULES`: `inbox-main.js`
                                 starts the page, one module per view; `shared.js` is the link page's too),
                                 `inbox.css` and `look.css` (the look the link page shares), the
                                 app's manifest, icons and service worker (`inbox-sw.js`), and
                                 `config.json`, how to sign in

`config.json` says `{"sign_in": "oidc", "authorize_url", "token_url", "client_id", "scopes"}` when the
sign-in settings are set (the authorization code flow with PKCE against the API's issuer, as a public
client whose callback URL is this page), else `{"sign_in": "token"}`: the page asks for a bearer token.
Only `agent-wait dev`'s local server answers `{"sign_in": "dev"}` (its own dev sign-in); this app never does.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.schema import Settings
from agent_wait.host.api._context import ApiContext, SignIn
from agent_wait.host.api._pages import page_file, secured
from agent_wait.host.api._problems import json_response, problem

__all__ = (
    "APP_FILES",
    "INBOX_FILES",
    "INBOX_MODULES",
    "WORKER",
    "WORKER_POLICY",
    "inbox_content_security_policy",
    "inbox_routes",
    "sign_in_config",
)

INBOX_MODULES = (
    "inbox-main.js",
    "inbox-api.js",
    "inbox-session.js",
    "inbox-reading.js",
    "inbox-list.js",
    "inbox-question.js",
    "inbox-facts.js",
    "inbox-fields.js",
    "inbox-forms.js",
    "inbox-answer.js",
    "inbox-operators.js",
    "insights.js",
    "inbox-grant-words.js",
    "inbox-grant-form.js",
    "inbox-grant-box.js",
    "inbox-grants-page.js",
    "inbox-passkey.js",
    "inbox-push.js",
    "shared.js",
)
"""The page's script: plain ES modules the browser loads as they are (no build step), `inbox-main.js` first; they
import each other relatively (`./shared.js`), so every one is a file of this route."""
APP_FILES = ("manifest.webmanifest", "icon-192.png", "icon-512.png", "icon-maskable-512.png")
"""What makes the inbox an installable app: its web app manifest and icons (the service worker is `WORKER`)."""
WORKER = "inbox-sw.js"
"""The inbox's service worker (the shell offline; a push shown as a notification that opens the question)."""
WORKER_CONTENT_SECURITY_POLICY = "default-src 'none'; connect-src 'self'; img-src 'self'"
"""The service worker's own policy: it fetches the page's shell from this API and shows its icon, nothing else."""
WORKER_POLICY = "inbox-worker"
"""The one Trusted Types policy the page may make (once): it turns the service worker's own URL, and nothing else,
into a `TrustedScriptURL` for `navigator.serviceWorker.register`; it makes no HTML and no script."""
INBOX_FILES = frozenset({*INBOX_MODULES, *APP_FILES, WORKER, "inbox.css", "look.css"})
"""The page's own files, served by name only (nothing else under `pages/` is reachable here); the page refers to
them relatively (`inbox/inbox-main.js`), so they load under any base path."""
CONFIG = "config.json"
"""The asset name the page reads its sign-in from."""


def inbox_content_security_policy(sign_in: SignIn | None) -> str:
    """Only the page's own script and style; it talks to this API and, when it signs in by OIDC, the token endpoint.

    No inline script or style, no framing, no form posts, no `<base>`; and Trusted Types with no policy, so no
    script can write HTML through `innerHTML` and its kin: the page builds every element and sets text. As an app, its
    manifest, its service worker and its icons come from this API only; registering the worker takes a trusted script
    URL, so one policy may be made, once (`WORKER_POLICY`, in `inbox-push.js`), and it makes only the worker's URL.
    """
    connect = "'self'"
    if sign_in is not None:
        parts = urllib.parse.urlsplit(sign_in.token_url)
        connect += f" {parts.scheme}://{parts.netloc}"
    return (
        f"default-src 'none'; script-src 'self'; style-src 'self'; connect-src {connect}; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; "
        f"trusted-types {WORKER_POLICY}; manifest-src 'self'; worker-src 'self'; img-src 'self'"
    )


def sign_in_config(sign_in: SignIn | None) -> dict[str, Any]:
    """What `config.json` says: how the page signs a person in."""
    if sign_in is None:
        return {
            "sign_in": "token",
            "detail": (
                f"Sign-in is not set up on this API ({Settings.SIGN_IN_URL.value}, {Settings.SIGN_IN_TOKEN_URL.value}, "
                f"{Settings.SIGN_IN_CLIENT_ID.value}): paste a token from its issuer."
            ),
        }
    return {
        "sign_in": "oidc",
        "authorize_url": sign_in.authorize_url,
        "token_url": sign_in.token_url,
        "client_id": sign_in.client_id,
        "scopes": sign_in.scopes,
    }


def inbox_routes(context: Callable[[], ApiContext]) -> Router:
    """The inbox page's routes; `context()` gives the sign-in settings.

    Returns:
        A Powertools `Router` for `APIGatewayHttpResolver.include_router`.
    """
    router = Router()

    @router.get("/inbox")
    def inbox_page() -> Response:
        policy = inbox_content_security_policy(context().sign_in)
        return page_file("inbox.html", content_security_policy=policy)

    @router.get("/inbox/<asset>")
    def inbox_asset(asset: str) -> Response:
        if asset == CONFIG:
            return secured(json_response(200, sign_in_config(context().sign_in)))
        if asset not in INBOX_FILES:
            known = sorted(INBOX_FILES | {CONFIG})
            return secured(problem(404, "no_such_file", f"the inbox page uses only {known}"))
        if asset == WORKER:
            # Its scope is the page, <root>/inbox, one level above the worker's own folder: allowed by name.
            allowed = {"Service-Worker-Allowed": "../inbox"}
            return page_file(asset, content_security_policy=WORKER_CONTENT_SECURITY_POLICY, headers=allowed)
        return page_file(asset)

    return router
