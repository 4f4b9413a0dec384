"""The answer API on 127.0.0.1: an HTTP front that does what API Gateway (HTTP API, JWT authorizer) does.

`LocalApi` listens on the loopback interface and turns each request into the payload-2.0 event an HTTP
API sends a Lambda, calls the handler with it, and writes the handler's response back
(`agent_wait.local._payload`). So the code under test is the deployed code.

On the routes the construct protects (`PROTECTED_ROUTES`) it plays the JWT authorizer
(`agent_wait.local._authorizer`): the bearer token is checked against the local issuer (RS256, issuer, audience,
expiry); a missing or bad token gets API Gateway's `401 {"message":"Unauthorized"}`, and a good one's claims reach
the handler in `requestContext.authorizer.jwt.claims`, flattened to strings as API Gateway does (`"[finance ops]"`).
Every other path (signed links, the page and its assets) reaches the handler with no authorizer. The MCP server's
`POST /mcp` is behind the JWT authorizer, its `POST /mcp/iam` behind the IAM authorizer (`agent_wait.local.sigv4`).

The same server is the local issuer: `GET /.well-known/jwks.json`, `GET /.well-known/openid-configuration`,
and the dev sign-in `POST /dev/token` `{"user": "alice@example.com", "groups": ["finance"]}` →
`{"token": ...}`. It also answers the inbox page's `GET /inbox/config.json` with `{"sign_in": "dev"}`, so
the page at `/inbox` offers the dev sign-in (pick a user and groups). Both exist only here, never in the
Lambda app, whose `config.json` names the API's OIDC issuer or asks for a token.

Request bodies, query strings and tokens are never logged: a line names the route, the status and the
time taken.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_wait.common.times import clock_scope
from agent_wait.local import sigv4
from agent_wait.local._authorizer import UNAUTHORIZED, authorized_claims, challenge, dev_sign_in_config, dev_token
from agent_wait.local._payload import lambda_response, request_event
from agent_wait.local.jwt import DEFAULT_AUDIENCE, LocalIssuer, TokenRejectedError
from agent_wait.local.routes import PROTECTED_ROUTES, PUBLIC_ROUTES

__all__ = (
    "DEV_SIGN_IN_CONFIG_PATH",
    "MAX_BODY_BYTES",
    "PROTECTED_ROUTES",
    "PUBLIC_ROUTES",
    "SLACK_PREVIEW_PATH",
    "ApiHandler",
    "LocalApi",
)

logger = logging.getLogger("agent_wait.local")

ApiHandler = Callable[[dict[str, Any]], Any]
"""One invocation of the API's Lambda: a payload-2.0 event in, its response out."""

SLACK_PREVIEW_PATH = "/dev/slack"
EMAIL_PREVIEW_PATH = "/dev/email"
"""Where `agent-wait dev` shows each question's Slack message as it would look, with no workspace."""
DEV_SIGN_IN_CONFIG_PATH = "/inbox/config.json"
"""Where the inbox page reads how to sign in; here the answer is the dev sign-in."""
MAX_BODY_BYTES = 10 * 1024 * 1024
"""API Gateway's payload limit for HTTP APIs (10 MB)."""

# Powertools keeps the current event on a class attribute (BaseRouter.current_event): two resolutions at
# once in one process would read each other's request. Lambda runs one event per environment at a time.
_INVOKE = threading.Lock()


def _compile(route: str) -> tuple[str, re.Pattern[str]]:
    method, _, template = route.partition(" ")
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    return method, re.compile(f"^{pattern}$")


_PROTECTED = tuple((route, *_compile(route)) for route in PROTECTED_ROUTES + sigv4.MCP_SIGNED_IN_ROUTES)
_PUBLIC = tuple((route, *_compile(route)) for route in PUBLIC_ROUTES)


def _match(method: str, path: str) -> tuple[str, dict[str, str], bool]:
    """(routeKey, path parameters, protected) for a request, `$default` when no route names it."""
    for routes, protected in ((_PROTECTED, True), (_PUBLIC, False)):
        for route, route_method, pattern in routes:
            found = pattern.match(path)
            if found and route_method in (method, "ANY"):
                return route, {k: urllib.parse.unquote(v) for k, v in found.groupdict().items()}, protected
    return "$default", {}, False


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    front: LocalApi


class LocalApi:
    """An HTTP API with a JWT authorizer, on 127.0.0.1, in front of a payload-2.0 handler.

    Args:
        handler: invokes the API's Lambda with one event; called one event at a time.
        port: the port to listen on; 0 picks a free one (see `url`).
        audience: the audience the authorizer accepts and the local issuer signs.
        clock: when given, each invocation runs inside `clock_scope(clock)` (a local stack's movable time).
        dev_sign_in: answer the inbox page's `config.json` here with the dev sign-in (the default); False lets
            the handler answer it, as deployed (tests of the page's OIDC sign-in).
        signing_key: the local issuer's (key id, PEM), kept from an earlier run; None makes a new one.
        iam_principals: the access keys the IAM authorizer (`POST /mcp/iam`) knows; the emulator's own by default.

    Example:
        with LocalApi(lambda event: app.resolve(event, context)) as api:
            token = api.issuer.token("alice@example.com", ["finance"])
            # curl -H "Authorization: Bearer $token" {api.url}/questions
    """

    def __init__(
        self,
        handler: ApiHandler,
        *,
        port: int = 0,
        audience: str = DEFAULT_AUDIENCE,
        clock: Callable[[], datetime] | None = None,
        dev_sign_in: bool = True,
        slack_preview: Callable[[], str] | None = None,
        dev_routes: Callable[[str, str, bytes], tuple[int, bytes, dict[str, str]] | None] | None = None,
        email_preview: Callable[[], str] | None = None,
        signing_key: tuple[str, str] | None = None,
        iam_principals: tuple[sigv4.LocalPrincipal, ...] = (sigv4.DEV_PRINCIPAL,),
    ) -> None:
        self.handler = handler
        self.iam_principals = iam_principals
        self.clock = clock
        self.dev_sign_in = dev_sign_in
        self.slack_preview = slack_preview
        self.email_preview = email_preview
        """Renders `GET /dev/email`: every email sent through the emulator's SES (`agent_wait.local.email_preview`)."""
        """Renders `GET /dev/slack`: each question's Slack message as it would look (`agent_wait.channels.slack`)."""
        self.dev_routes = dev_routes
        """Serves more `/dev/...` paths: `(method, path, body)` → `(status, body, headers)`, None when not its own
        (the local Teams webhook and `/dev/teams`)."""
        self._server = _Server(("127.0.0.1", port), _RequestHandler, bind_and_activate=True)
        self._server.front = self
        host, bound = self._server.server_address[:2]
        self.port = int(bound)
        self.url = f"http://{host}:{self.port}"
        """The API's base URL (also the issuer's)."""
        self.issuer = LocalIssuer(self.url, audience=audience, signing_key=signing_key)
        """The local JWT issuer; `issuer.token(user, groups)` signs in without HTTP."""
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LocalApi:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Serve requests on a background thread until `stop()`."""
        if self._thread is None:
            # A short poll: `stop()` waits for the loop to notice (0.5 s by default), and tests start and stop many.
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="agent-wait-local-api",
                daemon=True,
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port. Safe to call twice."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def authorize(self, authorization: str | None) -> dict[str, str]:
        """The flattened claims of a valid `Authorization` header.

        Raises:
            TokenRejectedError: no bearer token, or one the authorizer refuses.
        """
        return authorized_claims(self.issuer, authorization)

    def invoke(self, event: dict[str, Any]) -> Any:
        """Call the handler with `event`, one invocation at a time, on the API's clock."""
        with _INVOKE:
            if self.clock is None:
                return self.handler(event)
            with clock_scope(self.clock):
                return self.handler(event)

    def sign_in(self, body: bytes) -> tuple[int, dict[str, Any]]:
        """The dev sign-in: `{"user": ..., "groups": [...], "expires_in": seconds}` → `{"token": ...}`."""
        return dev_token(self.issuer, body)

    def sign_in_config(self) -> dict[str, Any]:
        """What the inbox page's `config.json` says here: sign in with the dev sign-in (`POST /dev/token`)."""
        return dev_sign_in_config(self.issuer)


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
"""The names a request to this server may carry in `Host`; the server listens on 127.0.0.1 only."""


def _loopback_host(host: str | None, port: int) -> bool:
    """Whether `Host` names this machine's loopback and this server's port (or no port: HTTP's default)."""
    host = (host or "").strip().lower()
    if host.endswith("]") or ":" not in host:  # no port: `[::1]`, `localhost`
        name, given = host, ""
    else:
        name, _, given = host.rpartition(":")
    return name in _LOOPBACK_NAMES and given in ("", str(port))


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server  # pyright: ignore[reportIncompatibleVariableOverride]
    server_version = "agent-wait-local-api"

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        # The base class logs the request line, query string and all: this server logs its own safe lines.
        return

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def do_OPTIONS(self) -> None:
        self._serve()

    def _serve(self) -> None:
        started = time.monotonic()
        front = self.server.front
        if not _loopback_host(self.headers.get("Host"), front.port):
            # A page elsewhere that rebinds its own name to 127.0.0.1 would reach this server from the developer's
            # browser (DNS rebinding): it would send its own name as Host. Only the loopback names are served.
            logger.info("local api: 421 for a Host that is not this machine's loopback")
            self._send_json(
                421, {"message": f"this server answers only for localhost:{front.port}, 127.0.0.1:{front.port}"}
            )
            return
        method = self.command
        path, _, query = self.path.partition("?")
        route, parameters, protected = _match(method, path)
        body = self._read_body()
        if body is None:
            return
        status = self._local_route(front, method, path, body)
        if status is None and (signed_route := sigv4.iam_route(method, path)) is not None:  # the IAM authorizer
            url, headers = f"http://{self.headers.get('Host')}{self.path}", dict(self.headers.items())
            try:
                signed = sigv4.iam_identity(front.iam_principals, method=method, url=url, headers=headers, body=body)
            except sigv4.SignatureRefusedError as exc:
                logger.info("local api: 403 on %s: %s", signed_route, exc.reason)
                self._send_json(403, sigv4.FORBIDDEN)
                return
            event = self._event(signed_route, path=path, query=query, parameters={}, body=body, claims=None, iam=signed)
            status, route = self._send_response(front, event, signed_route), signed_route
        elif status is None:
            claims: dict[str, str] | None = None
            if protected:
                try:
                    claims = front.authorize(self.headers.get("Authorization"))
                except TokenRejectedError as exc:
                    logger.info("local api: 401 on %s: %s", route, exc.reason)
                    authenticate = challenge(self.headers.get("Authorization"), exc)
                    self._send_json(401, UNAUTHORIZED, {"WWW-Authenticate": authenticate})
                    return
            status = self._send_response(
                front,
                self._event(route, path=path, query=query, parameters=parameters, body=body, claims=claims),
                route,
            )
        else:
            route = f"{method} {path}"
        logger.debug("local api: %s %s in %.0f ms", route, status, (time.monotonic() - started) * 1000)

    def _read_body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._send_json(411, {"message": "send a Content-Length; chunked bodies are not read here"})
            return None
        length_text = self.headers.get("Content-Length") or "0"
        length = int(length_text) if length_text.isdigit() else -1
        if length < 0:
            self._send_json(400, {"message": "Content-Length must be a whole number"})
            return None
        if length > MAX_BODY_BYTES:
            self._send_json(413, {"message": "Request Entity Too Large"})
            return None
        return self.rfile.read(length) if length else b""

    def _local_route(self, front: LocalApi, method: str, path: str, body: bytes) -> int | None:
        """Serve the issuer's own paths and return the status; None when the request is for the API."""
        if method == "GET" and path == "/.well-known/jwks.json":
            self._send_json(200, front.issuer.jwks())
            return 200
        if method == "GET" and path == "/.well-known/openid-configuration":
            self._send_json(200, front.issuer.openid_configuration())
            return 200
        if method == "GET" and path == DEV_SIGN_IN_CONFIG_PATH and front.dev_sign_in:
            self._send_json(200, front.sign_in_config(), {"Cache-Control": "no-store"})
            return 200
        if method == "GET" and path == SLACK_PREVIEW_PATH and front.slack_preview is not None:
            page = front.slack_preview().encode("utf-8")
            # A static page: one <style> element, no script and nothing loaded from elsewhere.
            policy = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
            self._send(200, page, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy}, [])
            return 200
        found = front.dev_routes(method, path, body) if front.dev_routes is not None else None
        if found is not None:
            status, data, headers = found
            self._send(status, data, headers, [])
            return status
        if method == "GET" and path == EMAIL_PREVIEW_PATH and front.email_preview is not None:
            page = front.email_preview().encode("utf-8")
            # No script; each email in a sandboxed srcdoc frame (its inline styles), its links opening a new tab.
            policy = "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; frame-ancestors 'none'"
            self._send(200, page, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy}, [])
            return 200
        if method == "POST" and path == "/dev/token":
            status, payload = front.sign_in(body)
            self._send_json(status, payload, {"Cache-Control": "no-store"})
            return status
        return None

    def _event(
        self,
        route: str,
        *,
        path: str,
        query: str,
        parameters: Mapping[str, str],
        body: bytes,
        claims: Mapping[str, str] | None,
        iam: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The payload-2.0 event API Gateway would send for this request."""
        return request_event(
            route,
            method=self.command,
            path=path,
            query=query,
            parameters=parameters,
            body=body,
            claims=claims,
            request_headers=self.headers.items(),
            client_ip=self.client_address[0],
            protocol=self.request_version,
            port=self.server.front.port,
            iam=iam,
        )

    def _send_response(self, front: LocalApi, event: dict[str, Any], route: str) -> int:
        try:
            response = front.invoke(event)
        except Exception as exc:  # API Gateway turns a failed invocation into a bare 500
            logger.error("local api: the handler raised %s on %s", type(exc).__name__, route)
            self._send_json(500, {"message": "Internal Server Error"})
            return 500
        status, data, headers, cookies = lambda_response(response)
        self._send(status, data, headers, cookies)
        return status

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self._send(status, data, {"Content-Type": "application/json", **(headers or {})}, [])

    def _send(self, status: int, data: bytes, headers: Mapping[str, str], cookies: list[str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        for cookie in cookies:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
