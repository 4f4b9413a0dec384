"""The web push routes (`/push/key`, `/push/subscriptions`) and the inbox's app files (manifest, icons, service worker)
through `create_app`, as API Gateway invokes the function; the browser side is in tests/browser/test_inbox_push.py."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from tests.support.api_events import call, http_event
from tests.support.push_device import Device

from agent_wait.channels.push import InMemoryPushSubscriptions, VapidKeys
from agent_wait.channels.push.subscriptions import device_id
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.api._push_inbox import PushInbox
from agent_wait.ledger import InMemoryLedger

KEYS = VapidKeys.generate()
ANA = {"iss": "https://issuer.example.com", "sub": "u-ana", "email": "Ana@Example.com", "email_verified": "true",
       "cognito:groups": "[finance ops]"}  # fmt: skip
BOB = {"iss": "https://issuer.example.com", "sub": "u-bob"}


def app(push: PushInbox | None) -> Any:
    ledger = InMemoryLedger()
    context = ApiContext(ledger=ledger, service=AnswerService(ledger, InMemoryEntryQueue()), push=push)
    return create_app(lambda: context)


@pytest.fixture
def subscriptions() -> InMemoryPushSubscriptions:
    return InMemoryPushSubscriptions()


@pytest.fixture
def api(subscriptions: InMemoryPushSubscriptions) -> Any:
    return app(PushInbox(KEYS.public_key, subscriptions))


def test_the_page_gets_the_vapid_public_key_and_never_the_private_one(api: Any) -> None:
    reply = call(api, "GET", "/push/key", claims=ANA)
    assert (reply.status, reply.json()) == (200, {"public_key": KEYS.public_key})
    assert KEYS.private_key not in reply.body


def test_a_subscription_is_kept_under_the_persons_key_and_device_with_their_groups(
    api: Any, subscriptions: InMemoryPushSubscriptions
) -> None:
    device = Device("https://fcm.googleapis.com/fcm/send/abc")
    # WHEN ana subscribes, twice from the same device (a second sign-in)
    first = call(api, "POST", "/push/subscriptions", device.subscription(), claims=ANA)
    again = call(api, "POST", "/push/subscriptions", device.subscription(), claims=ANA)
    # THEN one subscription, under her verified address and the device's id, with her token's groups and subject
    assert first.status == again.status == 201
    assert first.json() == {
        "device": device_id(device.endpoint),
        "person": "ana@example.com",
        "groups": ["finance", "ops"],
    }
    [kept] = subscriptions.of("ana@example.com")
    assert (kept.endpoint, kept.p256dh, kept.subject) == (
        device.endpoint,
        device.p256dh,
        "https://issuer.example.com#u-ana",
    )
    # AND a person without a verified address is kept under their issuer and subject
    call(api, "POST", "/push/subscriptions", Device("https://updates.push.services.mozilla.com/wpush/v2/x").subscription(),
         claims=BOB)  # fmt: skip
    assert len(subscriptions.of("https://issuer.example.com#u-bob")) == 1


def test_only_its_owner_removes_a_subscription(api: Any, subscriptions: InMemoryPushSubscriptions) -> None:
    device = Device("https://web.push.apple.com/QAbc")
    call(api, "POST", "/push/subscriptions", device.subscription(), claims=ANA)
    path = f"/push/subscriptions/{device_id(device.endpoint)}"
    # WHEN bob tries to remove ana's THEN 404, and it stays; WHEN ana does THEN 204, and it is gone
    refused = call(api, "DELETE", path, claims=BOB)
    assert (refused.status, refused.json()["reason"]) == (404, "unknown_device")
    assert len(subscriptions.of("ana@example.com")) == 1
    assert call(api, "DELETE", path, claims=ANA).status == 204
    assert subscriptions.of("ana@example.com") == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"endpoint": "https://169.254.169.254/latest", "keys": {}}, "endpoint"),
        ({"endpoint": "http://127.0.0.1:8080/push/x", "keys": {}}, "endpoint"),  # only agent-wait dev takes loopback
        ({"endpoint": "https://fcm.googleapis.com/x", "keys": {"p256dh": "x", "auth": "y"}}, "keys.p256dh"),
        ("{not json", "subscription"),
    ],
)
def test_a_subscription_that_is_not_a_push_services_is_refused_with_what_to_send(
    api: Any, body: Any, field: str
) -> None:
    reply = call(api, "POST", "/push/subscriptions", body, claims=ANA)
    assert (reply.status, reply.json()["reason"], reply.json()["field"]) == (422, "bad_subscription", field)


def test_the_push_routes_need_a_token_and_push_set_up() -> None:
    assert call(app(PushInbox(KEYS.public_key, InMemoryPushSubscriptions())), "GET", "/push/key").status == 401
    off = call(app(None), "GET", "/push/key", claims=ANA)
    assert (off.status, off.json()["reason"]) == (404, "push_not_enabled")
    assert "docs/phone.md" in off.json()["detail"]


def test_the_service_worker_may_control_the_inbox_page_and_fetch_only_from_its_origin(api: Any) -> None:
    reply = call(api, "GET", "/inbox/inbox-sw.js")
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/javascript")
    assert reply.headers["service-worker-allowed"] == "../inbox"  # <root>/inbox/inbox-sw.js -> scope <root>/inbox
    assert reply.headers["content-security-policy"] == "default-src 'none'; connect-src 'self'; img-src 'self'"
    assert 'self.addEventListener("push"' in reply.body
    assert 'self.addEventListener("notificationclick"' in reply.body


def test_the_manifest_and_icons_are_served_as_what_they_are(api: Any) -> None:
    manifest = call(api, "GET", "/inbox/manifest.webmanifest")
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    icons = json.loads(manifest.body)["icons"]
    for icon in icons:
        raw = api.resolve(http_event("GET", f"/inbox/{icon['src']}"), {})
        assert raw["isBase64Encoded"] is True
        assert raw["headers"]["Content-Type"] == "image/png"
        png = base64.b64decode(raw["body"])
        width = int.from_bytes(png[16:20], "big")
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"{width}x{width}" == icon["sizes"]
