"""The inbox page's routes on the answer API (`GET /inbox`, `GET /inbox/{asset}`) through `create_app`, with HTTP
API events that carry no authorizer claims (API Gateway serves them without the JWT authorizer); its sign-in
settings; and the local server's dev sign-in config. The page itself is tested in Chromium (tests/browser)."""

from __future__ import annotations

import json
import re
import urllib.request
from html.parser import HTMLParser
from importlib.resources import files
from typing import Any

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.errors import ConfigurationError
from agent_wait.host.api import ApiContext, SignIn, create_app
from agent_wait.host.links import LinkKeys
from agent_wait.host.settings import HostSettings
from agent_wait.ledger import InMemoryLedger
from agent_wait.local.api_server import LocalApi

COGNITO = "https://approvals.auth.eu-west-1.amazoncognito.com"
SIGN_IN = SignIn(authorize_url=f"{COGNITO}/oauth2/authorize", token_url=f"{COGNITO}/oauth2/token", client_id="c1ient")
PAGE_MODULES = sorted(
    path.name
    for path in (files("agent_wait.host.api") / "pages").iterdir()
    if path.name.endswith(".js") and path.name not in ("confirm.js", "inbox-sw.js")
)
"""The inbox's script: every module in `pages/` but the link page's own and the service worker (a classic script the
page registers, never loads)."""
SIGN_IN_ENV = {
    Settings.TABLE.value: "questions",
    Settings.QUEUE_URL.value: "https://sqs.eu-west-1.amazonaws.com/123456789012/entry.fifo",
    Settings.SIGN_IN_URL.value: SIGN_IN.authorize_url,
    Settings.SIGN_IN_TOKEN_URL.value: SIGN_IN.token_url,
    Settings.SIGN_IN_CLIENT_ID.value: SIGN_IN.client_id,
}


def get(path: str, sign_in: SignIn | None = None, *, link_keys: Any = None) -> tuple[int, dict[str, str], str]:
    ledger = InMemoryLedger()
    service = AnswerService(ledger, InMemoryEntryQueue())
    context = ApiContext(ledger=ledger, service=service, sign_in=sign_in, link_keys=link_keys)
    event = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": "abc123.execute-api.eu-west-1.amazonaws.com"},
        "requestContext": {"http": {"method": "GET", "path": path}, "stage": "$default", "routeKey": "$default"},
        "isBase64Encoded": False,
    }
    raw = create_app(lambda: context).resolve(event, {})
    return raw["statusCode"], {k.lower(): v for k, v in raw["headers"].items()}, raw.get("body") or ""


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline = ""
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._script = False

    def handle_data(self, data: str) -> None:
        if self._script:
            self.inline += data


def test_the_page_loads_only_its_own_files_under_a_strict_policy() -> None:
    status, headers, body = get("/inbox")
    parsed = _Tags()
    parsed.feed(body)

    assert status == 200
    assert headers["content-type"].startswith("text/html")
    # Relative URLs on this API (any stage or base path), nothing inline, no handler attributes.
    assets = sorted(
        str(attrs.get("src") or attrs.get("href")) for tag, attrs in parsed.tags if tag in {"script", "link"}
    )
    modules = sorted(f"inbox/{name}" for name in PAGE_MODULES)
    app = ["inbox/manifest.webmanifest", "inbox/icon-192.png", "inbox/icon-192.png"]  # manifest, icon, touch icon
    assert assets == sorted(["inbox/inbox.css", "inbox/look.css", *modules, *app])
    # one script, a module (the others are its imports, fetched at once through `modulepreload` links)
    scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
    assert scripts == [{"type": "module", "src": "inbox/inbox-main.js"}]
    assert parsed.inline.strip() == ""
    assert not any("style" in attrs or any(k.startswith("on") for k in attrs) for _, attrs in parsed.tags)
    policy = headers["content-security-policy"]
    for directive in (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self';",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types inbox-worker;",  # one policy, made once, for the service worker's URL only
        "manifest-src 'self'",
        "worker-src 'self'",
    ):
        assert directive in policy
    assert (headers["cache-control"], headers["referrer-policy"]) == ("no-store", "no-referrer")


def test_every_control_has_an_accessible_name_and_the_status_line_is_live() -> None:
    parsed = _Tags()
    parsed.feed(get("/inbox")[2])
    labelled = {attrs.get("for") for tag, attrs in parsed.tags if tag == "label"}
    controls = [attrs for tag, attrs in parsed.tags if tag in ("input", "select", "textarea")]

    assert controls
    assert all(attrs.get("id") in labelled for attrs in controls)
    assert all(attrs.get("type") in ("button", "submit") for tag, attrs in parsed.tags if tag == "button")
    status = next(attrs for _, attrs in parsed.tags if attrs.get("id") == "status")
    assert (status.get("role"), status.get("aria-live")) == ("status", "polite")


@pytest.mark.parametrize(
    ("name", "kind"),
    [*((name, "text/javascript") for name in PAGE_MODULES), ("inbox.css", "text/css"), ("look.css", "text/css")],
)
def test_each_file_is_served_from_the_package(name: str, kind: str) -> None:
    status, headers, body = get(f"/inbox/{name}")

    assert status == 200
    assert headers["content-type"].startswith(kind)
    assert body == (files("agent_wait.host.api") / "pages" / name).read_text(encoding="utf-8")
    assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "name", ["inbox.html", "inbox.js", "confirm.js", "..%2F_inbox.py", "..%2Fpages%2Fshared.js", "%2E%2E", "secret"]
)
def test_the_page_serves_only_its_own_files(name: str) -> None:
    status, _, body = get(f"/inbox/{name}")

    assert (status, json.loads(body)["reason"]) == (404, "no_such_file")


@pytest.mark.parametrize("name", [*PAGE_MODULES, "confirm.js"])
def test_the_script_never_writes_html(name: str) -> None:
    script = (files("agent_wait.host.api") / "pages" / name).read_text(encoding="utf-8")
    code = "\n".join(line for line in script.splitlines() if not line.strip().startswith("//"))

    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function", code)


def test_without_sign_in_settings_the_page_asks_for_a_token_and_never_offers_the_dev_sign_in() -> None:
    status, headers, body = get("/inbox/config.json")
    config = json.loads(body)

    assert status == 200
    assert config["sign_in"] == "token"
    assert "AGENT_WAIT_SIGN_IN_URL" in config["detail"]
    assert headers["cache-control"] == "no-store"


def test_with_sign_in_settings_the_page_signs_in_by_oidc_and_may_reach_only_the_token_endpoint() -> None:
    config = json.loads(get("/inbox/config.json", SIGN_IN)[2])
    policy = get("/inbox", SIGN_IN)[1]["content-security-policy"]

    assert config == {
        "sign_in": "oidc",
        "authorize_url": f"{COGNITO}/oauth2/authorize",
        "token_url": f"{COGNITO}/oauth2/token",
        "client_id": "c1ient",
        "scopes": "openid email",
    }
    assert f"connect-src 'self' {COGNITO};" in policy


def test_the_confirmation_page_shares_the_inbox_look() -> None:
    keys = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k1-secret-" + "a" * 40}))
    pages = files("agent_wait.host.api") / "pages"

    status, headers, body = get("/questions/q-1/confirm/look.css", link_keys=keys)

    # confirm.css imports look.css relatively, so the link page loads it from its own asset route
    assert '@import url("look.css");' in (pages / "confirm.css").read_text(encoding="utf-8")
    assert (status, body) == (200, (pages / "look.css").read_text(encoding="utf-8"))
    assert headers["content-type"].startswith("text/css")


# -- settings -------------------------------------------------------------------------------------------------


def test_sign_in_settings_are_read_together() -> None:
    settings = HostSettings.from_env("api", environ={**SIGN_IN_ENV, Settings.SIGN_IN_SCOPES.value: " openid  profile "})

    assert SignIn.from_settings(settings) == SignIn(
        authorize_url=SIGN_IN.authorize_url, token_url=SIGN_IN.token_url, client_id="c1ient", scopes="openid profile"
    )
    unset = HostSettings.from_env("api", environ={k: SIGN_IN_ENV[k] for k in list(SIGN_IN_ENV)[:2]})
    assert SignIn.from_settings(unset) is None


def test_a_sign_in_setting_alone_is_refused_naming_the_missing_ones() -> None:
    environ = {k: v for k, v in SIGN_IN_ENV.items() if k != Settings.SIGN_IN_TOKEN_URL.value}

    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("api", environ=environ)

    assert raised.value.variables == (Settings.SIGN_IN_TOKEN_URL.value,)
    assert (
        "AGENT_WAIT_SIGN_IN_URL, AGENT_WAIT_SIGN_IN_CLIENT_ID set without AGENT_WAIT_SIGN_IN_TOKEN_URL"
        in raised.value.message
    )


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (Settings.SIGN_IN_URL, "http://login.example.com/authorize", "must be an https:// URL"),
        (Settings.SIGN_IN_TOKEN_URL, "login.example.com/token", "must be an https:// URL"),
        (Settings.SIGN_IN_CLIENT_ID, "my client", "must be a client id without spaces"),
        (Settings.SIGN_IN_SCOPES, 'openid "email"', "must be scopes separated by spaces"),
    ],
)
def test_malformed_sign_in_settings_are_refused(variable: Settings, value: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("api", environ={**SIGN_IN_ENV, variable.value: value})

    assert raised.value.variables == (variable.value,)
    assert message in raised.value.message


def test_a_loopback_issuer_may_use_http() -> None:
    environ = {**SIGN_IN_ENV, Settings.SIGN_IN_URL.value: "http://127.0.0.1:9000/authorize"}

    assert HostSettings.from_env("api", environ=environ).sign_in_url == "http://127.0.0.1:9000/authorize"


# -- the local server -----------------------------------------------------------------------------------------


def test_only_the_local_server_offers_the_dev_sign_in_and_the_page_reaches_the_handler_without_an_authorizer() -> None:
    seen: list[dict[str, Any]] = []

    def handler(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event)
        return {"statusCode": 200, "headers": {"Content-Type": "text/html"}, "body": "<!doctype html>"}

    with LocalApi(handler) as api:
        with urllib.request.urlopen(f"{api.url}/inbox/config.json", timeout=10) as response:
            config = json.loads(response.read())
        with urllib.request.urlopen(f"{api.url}/inbox", timeout=10) as response:
            assert response.status == 200

    assert config["sign_in"] == "dev"
    assert config["dev_token_url"] == "/dev/token"  # the page's own origin, whichever name it was opened under
    assert [event["routeKey"] for event in seen] == ["GET /inbox"]
    assert "authorizer" not in seen[0]["requestContext"]
