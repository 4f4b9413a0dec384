"""The inbox page's sign-in settings, checked: its OIDC authorization and token endpoints and client
(`AGENT_WAIT_SIGN_IN_URL`, `AGENT_WAIT_SIGN_IN_TOKEN_URL`, `AGENT_WAIT_SIGN_IN_CLIENT_ID`: all three or none) and the
scopes it asks for (`AGENT_WAIT_SIGN_IN_SCOPES`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.host._patterns import LOOPBACK_URL

__all__ = ("DEFAULT_SIGN_IN_SCOPES", "sign_in_settings")

DEFAULT_SIGN_IN_SCOPES = "openid email"
"""What the inbox page asks the issuer for when `AGENT_WAIT_SIGN_IN_SCOPES` is unset: an ID token with the email."""
_SIGN_IN = (Settings.SIGN_IN_URL, Settings.SIGN_IN_TOKEN_URL, Settings.SIGN_IN_CLIENT_ID)
_CLIENT_ID = re.compile(r"[\x21-\x7e]{1,256}")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
"""A scope token as RFC 6749 section 3.3 allows it: printable, no space, quote or backslash."""


def sign_in_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """The inbox page's OIDC sign-in: all three of URL, token URL and client id, or none; checked."""
    given = [name for name in _SIGN_IN if value[name] is not None]
    if given and len(given) < len(_SIGN_IN):
        missing = [name.value for name in _SIGN_IN if value[name] is None]
        problems.append(
            f"{', '.join(name.value for name in given)} set without {', '.join(missing)}: the inbox page's sign-in "
            "needs the authorization endpoint, the token endpoint and the client id together (or none of them)"
        )
        wrong.extend(missing)
    for name in (Settings.SIGN_IN_URL, Settings.SIGN_IN_TOKEN_URL):
        url = value[name]
        if url is not None and not (url.startswith("https://") or LOOPBACK_URL.fullmatch(url)):
            problems.append(
                f"{name.value} must be an https:// URL (http:// only on localhost), such as "
                f"'https://example.auth.us-east-1.amazoncognito.com/oauth2/authorize'; got {url!r}"
            )
            wrong.append(name.value)
    client_id = value[Settings.SIGN_IN_CLIENT_ID]
    if client_id is not None and not _CLIENT_ID.fullmatch(client_id):
        problems.append(f"{Settings.SIGN_IN_CLIENT_ID.value} must be a client id without spaces; got {client_id!r}")
        wrong.append(Settings.SIGN_IN_CLIENT_ID.value)
    scopes = value[Settings.SIGN_IN_SCOPES] or DEFAULT_SIGN_IN_SCOPES
    if not all(_SCOPE.fullmatch(scope) for scope in scopes.split()):
        problems.append(
            f"{Settings.SIGN_IN_SCOPES.value} must be scopes separated by spaces, such as 'openid email'; "
            f"got {scopes!r}"
        )
        wrong.append(Settings.SIGN_IN_SCOPES.value)
    return {
        "sign_in_url": value[Settings.SIGN_IN_URL],
        "sign_in_token_url": value[Settings.SIGN_IN_TOKEN_URL],
        "sign_in_client_id": client_id,
        "sign_in_scopes": " ".join(scopes.split()),
    }
