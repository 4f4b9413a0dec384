"""A local fake of the Slack Web API over real HTTP, and the other side of Slack's interactivity requests.

`FakeSlack` is a `ThreadingHTTPServer` on 127.0.0.1 at a random port. Point the official client at it::

    with FakeSlack() as fake:
        client = slack_sdk.WebClient(token=fake.token, base_url=fake.url + "/api/")
        client.chat_postMessage(channel="C1", text="hi")

It answers the Web API methods agent-wait uses (`auth.test`, `chat.postMessage`, `chat.update`,
`chat.postEphemeral`, `views.open`, `views.update`, `users.info`, `usergroups.users.list`,
`conversations.history`) in the shapes api.slack.com documents, keeps the state of what was posted, and
records every call. It accepts both encodings a client may use: `application/x-www-form-urlencoded` (fields that
carry JSON, such as `blocks` or `view`, arrive as JSON strings) and `application/json`; the token comes from
`Authorization: Bearer ...` or a `token` field, as Slack allows.

Slack answers an error with HTTP 200 and `{"ok": false, "error": "..."}`; a rate limit is HTTP 429 with a
`Retry-After` header. `fail_next` injects either.

The other direction, Slack calling the app: `click` sends a `block_actions` payload for a button of a posted
message, `submit_view` a `view_submission` for an opened modal, both form-encoded as `payload=<json>` and signed
with `X-Slack-Signature` as "Verifying requests from Slack" describes. Each payload carries a `response_url` on
this server (`POST /response/<id>`), which records what the app posts there and applies it to the message as
Slack does (`replace_original`, `delete_original`, `response_type`).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

__all__ = [
    "Call",
    "Delivery",
    "Ephemeral",
    "FakeSlack",
    "PostedMessage",
    "RawRequest",
    "ResponsePost",
    "slack_json",
    "slack_signature",
]

JSON_FIELDS = frozenset({"blocks", "attachments", "metadata", "view"})
"""Arguments that carry JSON: a form-encoded request sends them as JSON strings."""


def slack_signature(secret: str, timestamp: str | int, body: str | bytes) -> str:
    """`v0=` and the hex HMAC-SHA256, keyed with the signing secret, of `v0:{timestamp}:{body}`."""
    raw = body if isinstance(body, bytes) else body.encode()
    base = f"v0:{timestamp}:".encode() + raw
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def slack_json(value: Any) -> str:
    """JSON as Slack writes it in interaction payloads: compact, with `/` escaped as `\\/`."""
    return json.dumps(value, separators=(",", ":")).replace("/", "\\/")


class Call(NamedTuple):
    """One Web API call: the method and its arguments as received (the token left out)."""

    method: str
    params: dict[str, Any]


class RawRequest(NamedTuple):
    """One HTTP request to the fake, as it arrived (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    body: bytes


class Delivery(NamedTuple):
    """What an endpoint answered to a request the fake sent it."""

    status: int
    headers: dict[str, str]
    """Header names lower-cased."""
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True)
class PostedMessage:
    """The current state of one posted message (a snapshot: later calls do not change it)."""

    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    """The parent's ts for a thread reply; None for a message in the channel itself."""
    metadata: dict[str, Any] | None
    updated: int
    """How many times it was changed, by `chat.update` or through a response_url."""
    replies: tuple[PostedMessage, ...]
    deleted: bool = False
    user: str = ""

    def as_slack(self) -> dict[str, Any]:
        """The message object as Slack includes it in API answers and interaction payloads."""
        message: dict[str, Any] = {
            "type": "message",
            "subtype": "bot_message",
            "text": self.text,
            "ts": self.ts,
            "user": self.user,
            "blocks": copy.deepcopy(self.blocks),
        }
        if self.thread_ts is not None:
            message["thread_ts"] = self.thread_ts
        elif self.replies:
            message["thread_ts"] = self.ts
            message["reply_count"] = len(self.replies)
        if self.metadata is not None:
            message["metadata"] = copy.deepcopy(self.metadata)
        return message


@dataclass(frozen=True)
class Ephemeral:
    """A message only one user sees (`chat.postEphemeral`, or a response_url answer of type ephemeral)."""

    channel: str
    user: str
    text: str
    blocks: list[dict[str, Any]]
    message_ts: str
    thread_ts: str | None


@dataclass(frozen=True)
class ResponsePost:
    """One JSON body an app posted to a response_url."""

    response_id: str
    body: dict[str, Any]
    channel: str
    message_ts: str | None
    user: str


@dataclass
class _Message:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    metadata: dict[str, Any] | None
    user: str
    updated: int = 0
    deleted: bool = False


@dataclass
class _ResponseTarget:
    channel: str
    message_ts: str | None
    user: str
    thread_ts: str | None


@dataclass
class _Failure:
    error: str
    status: int
    retry_after: int | None


@dataclass
class _User:
    user_id: str
    email: str | None
    team_id: str
    name: str
    real_name: str
    is_bot: bool
    deleted: bool


class _ApiError(Exception):
    def __init__(self, error: str, status: int = 200, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.extra = extra


@dataclass
class FakeSlack:
    """A fake Slack workspace and Web API. Use as a context manager, or `start()` and `stop()`."""

    token: str = "xoxb-test"
    team_id: str = "T123"
    team_domain: str = "agent-wait-test"
    app_id: str = "A123"
    bot_user_id: str = "UBOT"
    bot_id: str = "BBOT"
    first_ts: int = 1733300000
    """The seconds part of the first message ts; later ones increase from it."""

    calls: list[Call] = field(default_factory=list)
    requests: list[RawRequest] = field(default_factory=list)
    ephemeral: list[Ephemeral] = field(default_factory=list)
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Every view opened, by view id, as it is now."""
    responses: list[ResponsePost] = field(default_factory=list)
    interactions: list[dict[str, Any]] = field(default_factory=list)
    """Every payload `click` and `submit_view` sent."""

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._messages: dict[tuple[str, str], _Message] = {}
        self._ts_counter = itertools.count(1)
        self._ids = itertools.count(1)
        self._failures: dict[str, list[_Failure]] = {}
        self._users: dict[str, _User] = {}
        self._groups: dict[str, tuple[str, list[str]]] = {}
        self._channels: dict[str, tuple[str, bool]] = {}
        self._triggers: dict[str, bool] = {}
        self._response_targets: dict[str, _ResponseTarget] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> FakeSlack:
        if self._server is not None:
            return self
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                fake._handle(self)

            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:  # a client that gave up
                pass

        self._server = Server(("127.0.0.1", 0), Handler)
        # A short poll interval keeps stop() quick (the default would add half a second).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-slack", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL, without a trailing slash; the Web API is under `/api/`."""
        if self._server is None:
            raise RuntimeError("FakeSlack is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- the workspace ---------------------------------------------------------------------------------------------

    def add_user(
        self,
        user_id: str,
        *,
        email: str | None = None,
        team_id: str | None = None,
        name: str | None = None,
        real_name: str | None = None,
        is_bot: bool = False,
        deleted: bool = False,
    ) -> None:
        """A user `users.info` knows."""
        with self._lock:
            handle = name or (email.split("@")[0] if email else user_id.lower())
            self._users[user_id] = _User(
                user_id, email, team_id or self.team_id, handle, real_name or handle, is_bot, deleted
            )

    def add_group(self, group_id: str, handle: str, users: list[str]) -> None:
        """A user group (`<!subteam^ID>`) whose members `usergroups.users.list` lists."""
        with self._lock:
            self._groups[group_id] = (handle, list(users))

    def add_channel(self, channel_id: str, name: str = "general", *, member: bool = True) -> None:
        """Register a channel. Once any is registered, posting elsewhere fails with `channel_not_found`, and
        posting where the bot is not a member with `not_in_channel`; before that, every channel exists."""
        with self._lock:
            self._channels[channel_id] = (name, member)

    def fail_next(
        self, method: str, error: str = "ratelimited", *, status: int | None = None, retry_after: int | None = None
    ) -> None:
        """Make the next call of `method` fail. `ratelimited` is HTTP 429 with `Retry-After` (default 1 second);
        any other error is Slack's HTTP 200 with `ok: false`, unless `status` says otherwise. Calls queue up."""
        limited = error in ("ratelimited", "rate_limited")
        failure = _Failure(
            error,
            status if status is not None else (429 if limited else 200),
            retry_after if retry_after is not None else (1 if limited else None),
        )
        with self._lock:
            self._failures.setdefault(method, []).append(failure)

    def issue_trigger_id(self) -> str:
        """A trigger id `views.open` accepts once, as Slack issues with an interaction."""
        with self._lock:
            n = next(self._ids)
            trigger_id = f"{n}{self.first_ts}.{self.team_id[1:] or '1'}.{hashlib.sha256(str(n).encode()).hexdigest()}"
            self._triggers[trigger_id] = False
            return trigger_id

    # -- what happened -------------------------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        """The arguments of every call of `method`, in order."""
        with self._lock:
            return [params for name, params in self.calls if name == method]

    def messages(self, channel: str | None = None, *, include_deleted: bool = False) -> list[PostedMessage]:
        """Every message posted in a channel (not thread replies: those are in each message's `replies`), oldest
        first, in its current state; of one channel, or of all."""
        with self._lock:
            return [
                self._snapshot(message)
                for message in self._ordered()
                if message.thread_ts is None
                and (channel is None or message.channel == channel)
                and (include_deleted or not message.deleted)
            ]

    def message(self, channel: str, ts: str) -> PostedMessage:
        """One message, a reply or not, by channel and ts; KeyError if it was never posted."""
        with self._lock:
            return self._snapshot(self._messages[(channel, ts)])

    # -- Slack calling the app ---------------------------------------------------------------------------------

    def click(
        self,
        endpoint_url: str,
        message: PostedMessage,
        action_id: str,
        value: str | None = None,
        *,
        user_id: str = "U123",
        team_id: str | None = None,
        signing_secret: str = "",
        timestamp: int | None = None,
        tamper: bool = False,
        trigger_id: str | None = None,
        channel_name: str | None = None,
    ) -> Delivery:
        """Click the button `action_id` of a posted message, as Slack reports it: a signed `block_actions`
        payload POSTed to `endpoint_url`. `value` overrides the button's own value. `tamper` changes the body
        after signing it (the signature no longer matches)."""
        current = self.message(message.channel, message.ts)
        block_id, element = _find_element(current.blocks, action_id)
        team = team_id or self.team_id
        action: dict[str, Any] = {
            "action_id": action_id,
            "block_id": block_id,
            "type": element.get("type", "button"),
            "action_ts": f"{time.time():.6f}",
        }
        if "text" in element:
            action["text"] = copy.deepcopy(element["text"])
        chosen = value if value is not None else element.get("value")
        if chosen is not None:
            action["value"] = chosen
        if "style" in element:
            action["style"] = element["style"]
        container: dict[str, Any] = {
            "type": "message",
            "message_ts": current.ts,
            "channel_id": current.channel,
            "is_ephemeral": False,
        }
        if current.thread_ts is not None:
            container["thread_ts"] = current.thread_ts
        response_id = self._new_response_target(current.channel, current.ts, user_id, current.thread_ts)
        payload: dict[str, Any] = {
            "type": "block_actions",
            "user": self._payload_user(user_id, team),
            "api_app_id": self.app_id,
            "token": "legacy-verification-token",
            "container": container,
            "trigger_id": trigger_id or self.issue_trigger_id(),
            "team": {"id": team, "domain": self.team_domain},
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": current.channel, "name": channel_name or self._channel_name(current.channel)},
            "message": self._payload_message(current),
            "state": {"values": {}},
            "response_url": f"{self.url}/response/{response_id}",
            "actions": [action],
        }
        return self._deliver(endpoint_url, payload, signing_secret, timestamp, tamper)

    def submit_view(
        self,
        endpoint_url: str,
        view: Mapping[str, Any] | str,
        values: Mapping[str, Mapping[str, Any]],
        *,
        user_id: str = "U123",
        team_id: str | None = None,
        signing_secret: str = "",
        timestamp: int | None = None,
        tamper: bool = False,
    ) -> Delivery:
        """Submit an opened modal (its view, or view id) as Slack reports it: a signed `view_submission` payload.

        `values` is `{block_id: {action_id: value}}` with plain Python values: a str for `plain_text_input`, a
        number or str for `number_input`, an option value for `static_select` and `radio_buttons`, a list of
        option values for `checkboxes`, an ISO date for `datepicker`. They become Slack's `state.values` shape,
        with every input block of the view present (null where nothing was entered, as Slack sends)."""
        view_id = view if isinstance(view, str) else str(view["id"])
        with self._lock:
            current = copy.deepcopy(self.views[view_id])
        team = team_id or self.team_id
        current["state"] = {"values": _state_values(current.get("blocks", []), values)}
        payload: dict[str, Any] = {
            "type": "view_submission",
            "team": {"id": team, "domain": self.team_domain},
            "user": self._payload_user(user_id, team),
            "api_app_id": self.app_id,
            "token": "legacy-verification-token",
            "trigger_id": self.issue_trigger_id(),
            "view": current,
            "response_urls": [],
            "enterprise": None,
            "is_enterprise_install": False,
        }
        return self._deliver(endpoint_url, payload, signing_secret, timestamp, tamper)

    def post_signed(
        self,
        url: str,
        body: str | bytes,
        secret: str,
        timestamp: int | str | None = None,
        signature: str | None = None,
        *,
        content_type: str = "application/x-www-form-urlencoded",
        headers: Mapping[str, str] | None = None,
    ) -> Delivery:
        """POST a raw body with Slack's signature headers (computed unless `signature` is given); `headers` adds
        or replaces any (an empty value drops the header)."""
        raw = body if isinstance(body, bytes) else body.encode()
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        sent = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature if signature is not None else slack_signature(secret, stamp, raw),
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
        }
        for name, value in (headers or {}).items():
            for existing in [key for key in sent if key.lower() == name.lower()]:
                del sent[existing]
            if value:
                sent[name] = value
        return _send(url, raw, sent)

    # -- internals: interactions ------------------------------------------------------------------------------

    def _deliver(self, url: str, payload: dict[str, Any], secret: str, timestamp: int | None, tamper: bool) -> Delivery:
        with self._lock:
            self.interactions.append(copy.deepcopy(payload))
        body = urllib.parse.urlencode({"payload": slack_json(payload)})
        stamp = int(time.time()) if timestamp is None else timestamp
        signature = slack_signature(secret, stamp, body)
        if tamper:
            body = body.replace("block_actions", "block_actionz", 1).replace("view_submission", "view_submissiom", 1)
        return self.post_signed(url, body, secret, stamp, signature)

    def _payload_user(self, user_id: str, team_id: str) -> dict[str, Any]:
        known = self._users.get(user_id)
        name = known.name if known else user_id.lower()
        return {"id": user_id, "username": name, "name": name, "team_id": known.team_id if known else team_id}

    def _channel_name(self, channel: str) -> str:
        known = self._channels.get(channel)
        return known[0] if known else "general"

    def _new_response_target(self, channel: str, message_ts: str | None, user: str, thread_ts: str | None) -> str:
        with self._lock:
            response_id = f"{self.team_id}/{next(self._ids)}/{hashlib.sha256(channel.encode()).hexdigest()[:24]}"
            self._response_targets[response_id] = _ResponseTarget(channel, message_ts, user, thread_ts)
            return response_id

    # -- internals: state ---------------------------------------------------------------------------------------

    def _ordered(self) -> list[_Message]:
        return sorted(self._messages.values(), key=lambda message: float(message.ts))

    def _snapshot(self, message: _Message) -> PostedMessage:
        replies = tuple(
            self._snapshot(reply)
            for reply in self._ordered()
            if reply.channel == message.channel and reply.thread_ts == message.ts and not reply.deleted
        )
        return PostedMessage(
            channel=message.channel,
            ts=message.ts,
            text=message.text,
            blocks=copy.deepcopy(message.blocks),
            thread_ts=message.thread_ts,
            metadata=copy.deepcopy(message.metadata),
            updated=message.updated,
            replies=replies,
            deleted=message.deleted,
            user=message.user,
        )

    def _next_ts(self) -> str:
        n = next(self._ts_counter)
        return f"{self.first_ts + n // 10000}.{(n % 10000) * 100:06d}"

    def _post(
        self, channel: str, text: str, blocks: list[dict[str, Any]], thread_ts: str | None, metadata: Any
    ) -> _Message:
        message = _Message(channel, self._next_ts(), text, blocks, thread_ts, metadata, self.bot_user_id)
        self._messages[(channel, message.ts)] = message
        return message

    def _check_channel(self, channel: str) -> None:
        if not channel:
            raise _ApiError("channel_not_found")
        if self._channels:
            known = self._channels.get(channel)
            if known is None:
                raise _ApiError("channel_not_found")
            if not known[1]:
                raise _ApiError("not_in_channel")

    # -- internals: HTTP ----------------------------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        parsed = urllib.parse.urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in request.headers.items()}
        with self._lock:
            self.requests.append(RawRequest(request.path, headers, body))
        if parsed.path.startswith("/response/"):
            status, answer, extra_headers = self._response_url(parsed.path.removeprefix("/response/"), body)
        elif parsed.path.startswith("/api/"):
            status, answer, extra_headers = self._api(parsed.path.removeprefix("/api/"), parsed.query, headers, body)
        else:
            status, answer, extra_headers = 404, {"ok": False, "error": "not_found"}, {}
        data = json.dumps(answer).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json; charset=utf-8")
        request.send_header("Content-Length", str(len(data)))
        for name, value in extra_headers.items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(data)

    def _api(
        self, method: str, query: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        params: dict[str, Any] = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        try:
            if content_type == "application/json":
                decoded = json.loads(body or b"{}")
                if not isinstance(decoded, dict):
                    raise _ApiError("invalid_json")
                params.update(decoded)
            elif body:
                params.update(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
        except (ValueError, UnicodeDecodeError):
            return 200, {"ok": False, "error": "invalid_json"}, {}
        token = params.pop("token", None)
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            token = authorization[7:].strip()
        with self._lock:
            self.calls.append(Call(method, copy.deepcopy(params)))
            handler = _METHODS.get(method)
            if handler is None:
                return 404, {"ok": False, "error": "unknown_method", "req_method": method}, {}
            if not token:
                return 200, {"ok": False, "error": "not_authed"}, {}
            if token != self.token:
                return 200, {"ok": False, "error": "invalid_auth"}, {}
            queued = self._failures.get(method)
            if queued:
                failure = queued.pop(0)
                extra = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
                return failure.status, {"ok": False, "error": failure.error}, extra
            try:
                answer = handler(self, _decode_json_fields(params))
            except _ApiError as error:
                return error.status, {"ok": False, "error": error.error, **error.extra}, {}
            return 200, {"ok": True, **answer}, {}

    def _response_url(self, response_id: str, body: bytes) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            target = self._response_targets.get(response_id)
            if target is None:
                return 404, {"ok": False, "error": "unknown_response_url"}, {}
            try:
                posted = json.loads(body or b"{}")
            except ValueError:
                return 400, {"ok": False, "error": "invalid_payload"}, {}
            if not isinstance(posted, dict):
                return 400, {"ok": False, "error": "invalid_payload"}, {}
            self.responses.append(ResponsePost(response_id, posted, target.channel, target.message_ts, target.user))
            original = self._messages.get((target.channel, target.message_ts or ""))
            text = str(posted.get("text", ""))
            blocks = list(posted.get("blocks") or [])
            if _truthy(posted.get("delete_original")):
                if original is not None:
                    original.deleted = True
                    original.updated += 1
            elif _truthy(posted.get("replace_original")) and original is not None:
                original.text = text
                original.blocks = _with_ids(blocks)
                original.updated += 1
            elif posted.get("response_type") == "in_channel":
                thread = posted.get("thread_ts") or target.thread_ts
                self._post(target.channel, text, _with_ids(blocks), thread, None)
            else:
                self.ephemeral.append(
                    Ephemeral(target.channel, target.user, text, _with_ids(blocks), self._next_ts(), target.thread_ts)
                )
            return 200, {"ok": True}, {}

    # -- Web API methods ---------------------------------------------------------------------------------------

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": f"https://{self.team_domain}.slack.com/",
            "team": self.team_domain,
            "user": "agent-wait",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        self._check_channel(channel)
        text = str(params.get("text") or "")
        blocks = params.get("blocks") or []
        if not text and not blocks and not params.get("attachments"):
            raise _ApiError("no_text")
        if not isinstance(blocks, list):
            raise _ApiError("invalid_blocks")
        thread_ts = params.get("thread_ts") or None
        if thread_ts is not None:
            parent = self._messages.get((channel, str(thread_ts)))
            if parent is None or parent.deleted:
                raise _ApiError("thread_not_found")
            thread_ts = parent.thread_ts or parent.ts  # a reply to a reply joins the same thread
        metadata = params.get("metadata") or None
        message = self._post(channel, text, _with_ids(blocks), thread_ts, metadata)
        return {"channel": channel, "ts": message.ts, "message": self._slack_message(message)}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        self._check_channel(channel)
        message = self._messages.get((channel, str(params.get("ts", ""))))
        if message is None or message.deleted:
            raise _ApiError("message_not_found")
        if "blocks" not in params and "text" not in params and "attachments" not in params:
            raise _ApiError("no_text")
        if "text" in params:
            message.text = str(params["text"] or "")
        if "blocks" in params:
            blocks = params["blocks"] or []
            if not isinstance(blocks, list):
                raise _ApiError("invalid_blocks")
            message.blocks = _with_ids(blocks)
        if "metadata" in params:
            message.metadata = params["metadata"] or None
        message.updated += 1
        return {
            "channel": channel,
            "ts": message.ts,
            "text": message.text,
            "message": self._slack_message(message),
        }

    def _chat_post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        self._check_channel(channel)
        user = str(params.get("user") or "")
        if not user:
            raise _ApiError("user_not_found")
        if self._users and user not in self._users:
            raise _ApiError("user_not_found")
        text = str(params.get("text") or "")
        blocks = params.get("blocks") or []
        if not text and not blocks and not params.get("attachments"):
            raise _ApiError("no_text")
        ts = self._next_ts()
        self.ephemeral.append(Ephemeral(channel, user, text, _with_ids(blocks), ts, params.get("thread_ts") or None))
        return {"message_ts": ts}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        trigger_id = str(params.get("trigger_id") or "")
        if not trigger_id:
            raise _ApiError("invalid_arguments", response_metadata={"messages": ["[ERROR] missing trigger_id"]})
        if trigger_id not in self._triggers:
            raise _ApiError("invalid_trigger_id")
        if self._triggers[trigger_id]:
            raise _ApiError("exchanged_trigger_id")
        view = _check_view(params.get("view"))
        self._triggers[trigger_id] = True
        view_id = f"V{next(self._ids):010d}"
        opened = self._full_view(view_id, view, root_view_id=view_id)
        self.views[view_id] = opened
        return {"view": copy.deepcopy(opened)}

    def _views_update(self, params: dict[str, Any]) -> dict[str, Any]:
        view_id = str(params.get("view_id") or "")
        external_id = str(params.get("external_id") or "")
        if not view_id and external_id:
            view_id = next((key for key, view in self.views.items() if view.get("external_id") == external_id), "")
        current = self.views.get(view_id)
        if current is None:
            raise _ApiError("not_found")
        if params.get("hash") and params["hash"] != current["hash"]:
            raise _ApiError("hash_conflict")
        view = _check_view(params.get("view"))
        updated = self._full_view(view_id, view, root_view_id=current["root_view_id"])
        self.views[view_id] = updated
        return {"view": copy.deepcopy(updated)}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self._users.get(str(params.get("user") or ""))
        if user is None:
            raise _ApiError("user_not_found")
        profile: dict[str, Any] = {
            "real_name": user.real_name,
            "display_name": user.name,
            "real_name_normalized": user.real_name,
            "display_name_normalized": user.name,
            "team": user.team_id,
        }
        if user.email is not None:
            profile["email"] = user.email
        return {
            "user": {
                "id": user.user_id,
                "team_id": user.team_id,
                "name": user.name,
                "real_name": user.real_name,
                "deleted": user.deleted,
                "is_bot": user.is_bot,
                "is_app_user": False,
                "is_restricted": False,
                "is_ultra_restricted": False,
                "tz": "Europe/London",
                "profile": profile,
            }
        }

    def _usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        group = self._groups.get(str(params.get("usergroup") or ""))
        if group is None:
            raise _ApiError("no_such_subteam")
        return {"users": list(group[1])}

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        self._check_channel(channel)
        limit = int(params.get("limit") or 100)
        newest_first = [
            self._slack_message(message)
            for message in reversed(self._ordered())
            if message.channel == channel and message.thread_ts is None and not message.deleted
        ]
        return {"messages": newest_first[:limit], "has_more": len(newest_first) > limit, "pin_count": 0}

    def _slack_message(self, message: _Message) -> dict[str, Any]:
        return self._payload_message(self._snapshot(message))

    def _payload_message(self, message: PostedMessage) -> dict[str, Any]:
        answer = message.as_slack()
        answer.update({"bot_id": self.bot_id, "app_id": self.app_id, "team": self.team_id})
        if message.updated:
            answer["edited"] = {"user": self.bot_user_id, "ts": message.ts}
        return answer

    def _full_view(self, view_id: str, view: dict[str, Any], *, root_view_id: str) -> dict[str, Any]:
        blocks = _with_ids(view.get("blocks") or [])
        full = {
            "id": view_id,
            "team_id": self.team_id,
            "type": view["type"],
            "title": view.get("title"),
            "blocks": blocks,
            "close": view.get("close"),
            "submit": view.get("submit"),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "external_id": view.get("external_id", ""),
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "state": {"values": {}},
            "previous_view_id": None,
            "root_view_id": root_view_id,
            "app_id": self.app_id,
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }
        full["hash"] = f"{int(time.time())}.{hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()[:8]}"
        return full


_METHODS = {
    "auth.test": FakeSlack._auth_test,
    "chat.postMessage": FakeSlack._chat_post_message,
    "chat.update": FakeSlack._chat_update,
    "chat.postEphemeral": FakeSlack._chat_post_ephemeral,
    "views.open": FakeSlack._views_open,
    "views.update": FakeSlack._views_update,
    "users.info": FakeSlack._users_info,
    "usergroups.users.list": FakeSlack._usergroups_users_list,
    "conversations.history": FakeSlack._conversations_history,
}


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in ("true", "1"))


def _decode_json_fields(params: dict[str, Any]) -> dict[str, Any]:
    decoded = dict(params)
    for name in JSON_FIELDS & decoded.keys():
        value = decoded[name]
        if isinstance(value, str) and value:
            try:
                decoded[name] = json.loads(value)
            except ValueError as error:
                raise _ApiError(f"invalid_{name}") from error
    return decoded


def _check_view(view: Any) -> dict[str, Any]:
    if not isinstance(view, dict) or view.get("type") not in ("modal", "home"):
        raise _ApiError("invalid_arguments")
    if view["type"] == "modal" and not isinstance(view.get("title"), dict):
        raise _ApiError("invalid_arguments")
    return view


_block_ids = itertools.count(1)


def _with_ids(blocks: list[Any]) -> list[dict[str, Any]]:
    """Blocks as Slack stores them: a generated `block_id` where none was given, and an `action_id` on every
    interactive element without one."""
    stored: list[dict[str, Any]] = []
    for block in copy.deepcopy(blocks):
        if not isinstance(block, dict):
            raise _ApiError("invalid_blocks")
        block.setdefault("block_id", f"b{next(_block_ids):05d}")
        elements = list(block.get("elements") or []) if block.get("type") == "actions" else []
        for key in ("accessory", "element"):
            if isinstance(block.get(key), dict):
                elements.append(block[key])
        for element in elements:
            if isinstance(element, dict) and element.get("type") not in (None, "image", "mrkdwn", "plain_text"):
                element.setdefault("action_id", f"a{next(_block_ids):05d}")
        stored.append(block)
    return stored


def _elements(block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if block.get("type") == "actions":
        yield from (element for element in block.get("elements") or [] if isinstance(element, dict))
    for key in ("accessory", "element"):
        if isinstance(block.get(key), dict):
            yield block[key]


def _find_element(blocks: list[dict[str, Any]], action_id: str) -> tuple[str, dict[str, Any]]:
    for block in blocks:
        for element in _elements(block):
            if element.get("action_id") == action_id:
                return str(block["block_id"]), element
    raise KeyError(f"no element with action_id {action_id!r} in the message")


def _option(element: dict[str, Any], value: Any) -> dict[str, Any]:
    for option in element.get("options") or []:
        if option.get("value") == value:
            return copy.deepcopy(option)
    for group in element.get("option_groups") or []:
        for option in group.get("options") or []:
            if option.get("value") == value:
                return copy.deepcopy(option)
    raise KeyError(f"no option with value {value!r} in {element.get('action_id')!r}")


def _state_value(element: dict[str, Any], value: Any) -> dict[str, Any]:
    kind = str(element.get("type"))
    state: dict[str, Any] = {"type": kind}
    if kind in ("static_select", "radio_buttons"):
        state["selected_option"] = None if value is None else _option(element, value)
    elif kind in ("checkboxes", "multi_static_select"):
        state["selected_options"] = [_option(element, one) for one in value or []]
    elif kind == "datepicker":
        state["selected_date"] = value
    elif kind == "timepicker":
        state["selected_time"] = value
    elif kind in ("users_select", "conversations_select", "channels_select"):
        state[f"selected_{kind.removesuffix('s_select').removesuffix('_select')}"] = value
    else:  # plain_text_input, number_input, email_text_input, url_text_input: Slack sends a string
        state["value"] = None if value is None else str(value)
    return state


def _state_values(blocks: list[dict[str, Any]], values: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    state: dict[str, dict[str, Any]] = {}
    for block in blocks:
        if block.get("type") != "input":
            continue
        element = block.get("element") or {}
        block_id, action_id = str(block["block_id"]), str(element.get("action_id"))
        given = values.get(block_id, {})
        state[block_id] = {action_id: _state_value(element, given.get(action_id))}
    unknown = [
        f"{block_id}.{action_id}"
        for block_id, actions in values.items()
        for action_id in actions
        if action_id not in state.get(block_id, {})
    ]
    if unknown:
        raise KeyError(f"no input for {', '.join(unknown)} in the view")
    return state


def _send(url: str, body: bytes, headers: Mapping[str, str]) -> Delivery:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with opener.open(request, timeout=10) as response:
            return Delivery(response.status, _lower(response.headers.items()), response.read())
    except urllib.error.HTTPError as error:
        with error:
            return Delivery(error.code, _lower(error.headers.items()), error.read())


def _lower(items: Any) -> dict[str, str]:
    return {str(name).lower(): str(value) for name, value in items}
