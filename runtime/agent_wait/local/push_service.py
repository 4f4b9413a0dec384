"""A push service on 127.0.0.1, so `agent-wait dev` pushes with no account: what a browser's push service does with an
application server's push, from the RFCs.

- RFC 8030 (Generic Event Delivery Using HTTP Push): a push is a `POST` to the subscription's endpoint with a `TTL`
  header; the service answers `201 Created` with a `Location` naming the message, and `404`/`410` for a subscription
  that no longer exists (§7.3), which the application server must stop using;
- RFC 8291 (Message Encryption for Web Push): the body is `Content-Encoding: aes128gcm` (RFC 8188): a header of
  salt (16 bytes), record size (4), key id length (1) and key id (the sender's 65-byte P-256 point), then records;
  at most 4096 bytes. Only the browser holds the key to read it: the service keeps it as it came;
- RFC 8292 (VAPID): `Authorization: vapid t=<JWT>, k=<public key>`; the JWT is ES256-signed by that key, its `aud`
  is the endpoint's origin, its `exp` at most 24 hours ahead, and a `sub` says whom to contact. A subscription made
  with an application server key (`applicationServerKey`) takes pushes signed with that key only (§4.2: 403).

`LocalPushService.subscribe(key)` makes an endpoint, as a browser's `pushManager.subscribe` asks its service for one;
`gone(endpoint)` makes the service answer 410 for it from then on. `received` keeps every push it took, encrypted
(`agent_wait.local.push_service.ReceivedPush`): a test decrypts it with the keys of the subscription it made.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ("MAX_PUSH_BYTES", "RECEIVED_PATH", "LocalPushService", "ReceivedPush")

RECEIVED_PATH = "/dev/push/received.json"
"""Where `agent-wait dev`'s API shows what the push service took, newest first (each push still encrypted)."""

MAX_PUSH_BYTES = 4096
"""The largest encrypted push a service must take (RFC 8291 §4)."""
_DAY = 24 * 60 * 60


@dataclass(frozen=True, slots=True)
class ReceivedPush:
    """One push the service took, as a device would get it."""

    endpoint: str
    body: bytes
    """The `aes128gcm` content, still encrypted."""
    headers: dict[str, str] = field(default_factory=dict)
    """The request's headers, lower-cased names (`ttl`, `urgency`, `content-encoding`, `authorization`)."""
    message_id: str = ""


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class LocalPushService:
    """A push service over real HTTP on 127.0.0.1 (see the module docstring). Start it, or use it as a context."""

    def __init__(self) -> None:
        self.received: list[ReceivedPush] = []
        self._keys: dict[str, str | None] = {}
        self._gone: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    def __enter__(self) -> LocalPushService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        service = self

        class Handler(_Handler):
            push_service = service

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, name="local-push-service", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def subscribe(self, application_server_key: str | None = None) -> str:
        """A new endpoint, for pushes signed with `application_server_key` (base64url) when one is given."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._keys[token] = application_server_key.rstrip("=") if application_server_key else None
        return f"{self.url}/push/{token}"

    def gone(self, endpoint: str, status: int = 410) -> None:
        """From now on, answer `status` (410 Gone, or 404) for pushes to `endpoint`."""
        with self._lock:
            self._gone[self._token(endpoint)] = status

    def pushes_to(self, endpoint: str) -> list[ReceivedPush]:
        """The pushes taken for `endpoint`, in order."""
        with self._lock:
            return [push for push in self.received if push.endpoint == endpoint]

    def dev_route(self, method: str, path: str, body: bytes) -> tuple[int, bytes, dict[str, str]] | None:
        """`GET /dev/push/received.json` on the local API: every push taken, newest first, as the device got it (its
        device id, headers, size and the encrypted body in base64url); None for any other request."""
        if method != "GET" or path != RECEIVED_PATH:
            return None
        from agent_wait.channels.push.subscriptions import device_id

        with self._lock:
            taken = list(reversed(self.received))
        shown = [
            {
                "device": device_id(push.endpoint),
                "message_id": push.message_id,
                "ttl": push.headers.get("ttl"),
                "urgency": push.headers.get("urgency"),
                "content_encoding": push.headers.get("content-encoding"),
                "bytes": len(push.body),
                "body": base64.urlsafe_b64encode(push.body).rstrip(b"=").decode(),
            }
            for push in taken
        ]
        return 200, json.dumps(shown).encode(), {"Content-Type": "application/json", "Cache-Control": "no-store"}

    def _token(self, endpoint: str) -> str:
        return urllib.parse.urlsplit(endpoint).path.rsplit("/", 1)[-1]

    def take(self, token: str, headers: dict[str, str], body: bytes) -> tuple[int, str]:
        """Judge one push (RFC 8030, 8291, 8292); (status, detail or the message's path)."""
        with self._lock:
            if token not in self._keys:
                return 404, "no such subscription"
            if token in self._gone:
                return self._gone[token], "subscription gone"
            expected_key = self._keys[token]
        if "ttl" not in headers or not headers["ttl"].isdigit():
            return 400, "a push needs a TTL header (RFC 8030 section 5.2)"
        if headers.get("content-encoding") != "aes128gcm":
            return 415, "the body must be Content-Encoding: aes128gcm (RFC 8291)"
        if len(body) > MAX_PUSH_BYTES:
            return 413, f"an encrypted push is at most {MAX_PUSH_BYTES} bytes (RFC 8291 section 4)"
        if len(body) < 21 + 65 or body[20] != 65 or body[21] != 4:
            return 400, "the aes128gcm header must carry the sender's 65-byte P-256 key as its key id (RFC 8291)"
        problem = _vapid_problem(headers.get("authorization", ""), audience=self.url, expected_key=expected_key)
        if problem is not None:
            return problem
        message_id = secrets.token_urlsafe(12)
        with self._lock:
            self.received.append(ReceivedPush(f"{self.url}/push/{token}", body, dict(headers), message_id))
        return 201, f"/message/{message_id}"


def _vapid_problem(authorization: str, *, audience: str, expected_key: str | None) -> tuple[int, str] | None:
    """Why the VAPID `Authorization` does not hold (RFC 8292), or None."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec

    scheme, _, rest = authorization.partition(" ")
    params = dict(part.strip().split("=", 1) for part in rest.split(",") if "=" in part)
    if scheme.lower() != "vapid" or "t" not in params or "k" not in params:
        return 401, "Authorization must be 'vapid t=<JWT>, k=<public key>' (RFC 8292 section 3)"
    key = params["k"].strip().rstrip("=")
    if expected_key is not None and key != expected_key:
        return 403, "signed with another key than the subscription's applicationServerKey (RFC 8292 section 4.2)"
    try:
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _b64(key))
        claims: dict[str, Any] = jwt.decode(
            params["t"].strip(), public, algorithms=["ES256"], audience=audience, options={"require": ["exp", "aud"]}
        )
    except (ValueError, jwt.PyJWTError) as exc:
        return 401, f"the VAPID token does not verify: {type(exc).__name__}"
    if int(claims["exp"]) > time.time() + _DAY:
        return 401, "the VAPID token's exp is more than 24 hours ahead (RFC 8292 section 2)"
    if not str(claims.get("sub") or "").startswith(("mailto:", "https:")):
        return 401, "the VAPID token needs a sub: a mailto: or https: contact (RFC 8292 section 2.1)"
    return None


class _Handler(BaseHTTPRequestHandler):
    push_service: LocalPushService

    def log_message(self, format: str, *args: Any) -> None:
        pass  # an endpoint is a capability: not logged

    def do_POST(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if not path.startswith("/push/"):
            self._reply(404, {"detail": "pushes go to /push/<subscription>"})
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, detail = self.push_service.take(path.removeprefix("/push/"), headers, body)
        if status == 201:
            self.send_response(201)
            self.send_header("Location", detail)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._reply(status, {"detail": detail})

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
