"""From a phone: the inbox installed as an app and a question pushed to it, in Chromium at 390x844 against the refund
stack on the emulator (whose local push service takes the pushes over real HTTP, as a browser's would).

Headless Chromium cannot reach a real push service to subscribe, so each test subscribes the way the page does,
through `POST /push/subscriptions` with the person's token, with a subscription whose keys it holds
(`tests.support.push_device.Device`, an endpoint at the stack's push service): it can then decrypt what the push
service received. The service worker is handed that push through Chromium's DevTools
(`ServiceWorker.deliverPushMessage`), as the push service would hand it to the browser. Screenshots go to
`/tmp/shots-push/` (or `AGENT_WAIT_SCREENSHOTS`).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import EXPECT_MS, GRAPH, LARGE, Inbox, running_inbox
from tests.support.push_device import Device

PHONE = {"width": 390, "height": 844}
SHOTS = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or "/tmp/shots-push")


@pytest.fixture(scope="module")
def inbox(refund_template: dict[str, Any], browser: Any) -> Iterator[Inbox]:
    with running_inbox(refund_template, browser, GRAPH) as running:
        yield running


def call(inbox: Inbox, method: str, path: str, user: str, groups: list[str], body: Any = None) -> tuple[int, Any]:
    """One request to the answer API as `user`, as the page makes it (bearer token, JSON)."""
    token = inbox.local.issuer.token(user, groups)
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{inbox.local.api_url}{path}",
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def subscribe(inbox: Inbox, user: str, groups: list[str] | None = None) -> Device:
    """Subscribe `user` as the page does: the API's key, an endpoint the push service makes for it, the route."""
    status, key = call(inbox, "GET", "/push/key", user, groups or [])
    assert status == 200, key
    device = Device(inbox.local.push_service.subscribe(key["public_key"]))
    status, made = call(inbox, "POST", "/push/subscriptions", user, groups or [], device.subscription())
    assert status == 201, made
    return device


def phone(inbox: Inbox, user: str = "ana@example.com", groups: str = "finance") -> Any:
    """A phone-sized page (390x844, touch), signed in, allowed to show notifications."""
    from playwright.sync_api import expect

    context = inbox.browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2, locale="en-GB", timezone_id="UTC"
    )
    context.set_default_timeout(EXPECT_MS)
    context.grant_permissions(["notifications"], origin=inbox.local.api_url)
    page = context.new_page()
    page.errors = []  # pyright: ignore[reportAttributeAccessIssue]
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(inbox.url)
    page.get_by_label("User").fill(user)
    page.get_by_label("Groups").fill(groups)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#who")).to_contain_text(user)
    return page


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def worker_registration(page: Any) -> dict[str, Any]:
    """The service worker's registration once active: its scope and script."""
    return page.evaluate(
        """() => navigator.serviceWorker.ready.then(r => ({scope: r.scope, script: r.active.scriptURL}))"""
    )


def test_the_inbox_is_installable_and_registers_its_service_worker(inbox: Inbox) -> None:
    from playwright.sync_api import expect

    page = phone(inbox)
    # THEN the manifest is linked, served as a manifest, and says how to install the app
    href = page.locator('link[rel="manifest"]').get_attribute("href")
    assert href == "inbox/manifest.webmanifest"
    manifest = page.evaluate(
        """(href) => fetch(href).then(r => r.json().then(body => ({type: r.headers.get("content-type"), body})))""",
        href,
    )
    assert manifest["type"].startswith("application/manifest+json")
    body = manifest["body"]
    assert body["display"] == "standalone"
    assert body["name"]
    assert body["short_name"]
    assert body["start_url"] == "../inbox#/"
    assert body["scope"] == "../inbox"
    sizes = {icon["sizes"] for icon in body["icons"] if icon["type"] == "image/png"}
    assert {"192x192", "512x512"} <= sizes
    for icon in body["icons"]:  # every icon is there, a PNG of its size
        size = page.evaluate(
            """(src) => fetch(src).then(r => r.blob()).then(b => createImageBitmap(b)).then(i => i.width)""",
            f"inbox/{icon['src']}",
        )
        assert f"{size}x{size}" == icon["sizes"]
    # AND the service worker is registered for the inbox page, and controls it once reloaded
    registered = worker_registration(page)
    assert registered["scope"] == f"{inbox.url}"
    assert registered["script"] == f"{inbox.url}/inbox-sw.js"
    page.reload()
    expect(page.locator("#who")).to_contain_text("ana@example.com")
    assert page.evaluate("() => Boolean(navigator.serviceWorker.controller)")
    # AND Trusted Types still hold: the worker's policy cannot be made again, no other can be made, no HTML written
    refused = page.evaluate(
        """() => [
            () => trustedTypes.createPolicy("inbox-worker", {createScriptURL: (url) => url}),
            () => trustedTypes.createPolicy("another", {createHTML: (text) => text}),
            () => { document.createElement("div").innerHTML = "<b>x</b>"; },
        ].map((attempt) => { try { attempt(); return "allowed"; } catch (error) { return error.name; } })"""
    )
    assert refused == ["TypeError", "TypeError", "TypeError"]
    # AND, signed in, the page offers notifications on this device
    expect(page.get_by_role("button", name="Notify me on this device")).to_be_visible()
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    shot(page, "phone-list.png")


def test_a_question_is_pushed_once_to_each_subscriber_and_opens_with_approve_on_the_first_screen(
    inbox: Inbox,
) -> None:
    from playwright.sync_api import expect

    # GIVEN three people subscribed, each on one device
    people = {user: subscribe(inbox, user, ["finance"]) for user in ("ana@example.com", "dana@example.com")}
    people["eve@example.com"] = subscribe(inbox, "eve@example.com", ["sales"])  # the refund names no answerers
    # WHEN a question is asked
    start: dict[str, Any] = {"thread_id": f"order-{uuid.uuid4().hex[:6]}", "start_id": uuid.uuid4().hex}
    start["input"] = {"order_id": start["thread_id"], "amount": LARGE, "kind": "refund"}
    question = _run(inbox, start)
    # THEN the push service received exactly one encrypted push per person, which decrypts to the question's link
    payloads = {}
    for user, device in people.items():
        pushes = inbox.local.push_service.pushes_to(device.endpoint)
        assert len(pushes) == 1, (user, pushes)
        assert pushes[0].headers["content-encoding"] == "aes128gcm"
        payloads[user] = device.decrypt(pushes[0].body)
    payload = payloads["ana@example.com"]
    assert payload["url"] == f"{inbox.url}#/questions/{question}"
    assert payload["title"] == "Your answer is needed"
    assert "refund(" in payload["body"]
    assert "Answer by" in payload["body"]
    assert "900" not in json.dumps(payload)  # no argument value: the policy does not allow it
    # AND agent-wait dev shows what its push service took, still encrypted
    from agent_wait.channels.push.subscriptions import device_id

    with urllib.request.urlopen(f"{inbox.local.api_url}/dev/push/received.json", timeout=60) as response:
        taken = json.loads(response.read())
    ana = [push for push in taken if push["device"] == device_id(people["ana@example.com"].endpoint)]
    assert [(push["content_encoding"], push["ttl"]) for push in ana] == [("aes128gcm", "86400")]

    # WHEN wait.created is delivered again (the same start redelivered: its open question is republished)
    assert _run(inbox, start) == question  # "start replayed; agent not run": its open question republished
    # THEN nobody is pushed to twice
    for device in people.values():
        assert len(inbox.local.push_service.pushes_to(device.endpoint)) == 1

    # WHEN the push reaches ana's phone: the service worker shows it as a notification
    page = phone(inbox)
    worker_registration(page)
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + EXPECT_MS / 1000
    while not any(r["scopeURL"] == inbox.url for r in registrations) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    registration = next(r for r in registrations if r["scopeURL"] == inbox.url and not r["isDeleted"])
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": inbox.local.api_url, "registrationId": registration["registrationId"], "data": json.dumps(payload)},
    )
    shown = _notifications(page)
    assert shown == [
        {
            "title": payload["title"],
            "body": payload["body"],
            "tag": f"agent-wait:{question}",
            "url": f"{inbox.url}#/questions/{question}",
        }
    ]
    # AND opening its link shows the question, with Approve and Reject on the first screen
    page.goto(shown[0]["url"])
    expect(page.locator("#detail-id")).to_have_text(question)
    for name in ("Approve", "Reject"):
        button = page.get_by_role("button", name=name, exact=True)
        expect(button).to_be_visible()
        box = button.bounding_box()
        assert box is not None, name
        assert box["y"] + box["height"] <= PHONE["height"], (name, box)
    call_line = page.locator("#call-line")
    expect(call_line).to_be_visible()
    assert call_line.bounding_box()["y"] < PHONE["height"]  # pyright: ignore[reportOptionalSubscript]
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]
    shot(page, "phone-question-from-push.png")


def test_a_subscription_the_push_service_reports_gone_is_removed(inbox: Inbox) -> None:
    # GIVEN a person subscribed on a device whose push service now says it is gone
    device = subscribe(inbox, "gone@example.com", ["finance"])
    inbox.local.push_service.gone(device.endpoint, 410)
    # WHEN a question is asked
    inbox.ask()
    # THEN the subscription is removed: removing it again finds nothing
    from agent_wait.channels.push.subscriptions import device_id

    status, problem = call(inbox, "DELETE", f"/push/subscriptions/{device_id(device.endpoint)}", "gone@example.com", [])
    assert (status, problem["reason"]) == (404, "unknown_device")
    # AND a person's own subscription is removed by them through the same route (204)
    kept = subscribe(inbox, "kept@example.com", [])
    assert call(inbox, "DELETE", f"/push/subscriptions/{device_id(kept.endpoint)}", "kept@example.com", [])[0] == 204


def test_a_reminder_pushes_again_once(inbox: Inbox) -> None:
    # GIVEN a subscriber and a question they were pushed
    device = subscribe(inbox, "rita@example.com", ["finance"])
    _, question = inbox.ask()

    def pushed() -> list[str]:  # the titles of the pushes rita got for this question (the others remind too)
        decrypted = (device.decrypt(push.body) for push in inbox.local.push_service.pushes_to(device.endpoint))
        return [payload["title"] for payload in decrypted if payload["question_id"] == question]

    assert pushed() == ["Your answer is needed"]
    # WHEN its reminder falls due (the refund policy reminds after four hours) and the sweep runs twice
    inbox.clock.offset += timedelta(hours=5)
    inbox.local.sweep()
    inbox.local.sweep()
    # THEN one more push, the reminder
    assert pushed() == ["Your answer is needed", "Reminder: your answer is needed"]


def _notifications(page: Any) -> list[dict[str, Any]]:
    """The notifications the service worker shows, once it shows one (polled: it shows it when the push arrives)."""
    deadline = time.monotonic() + EXPECT_MS / 1000
    while True:
        shown = page.evaluate(
            """() => navigator.serviceWorker.ready.then(r => r.getNotifications()).then(found => found.map(n => ({
                title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url})))"""
        )
        if shown or time.monotonic() > deadline:
            return shown
        page.wait_for_timeout(250)


def _run(inbox: Inbox, start: dict[str, Any]) -> str:
    """Send `start` (again, under its own start id, as SQS redelivers it) and let the router run it (or republish
    what it asked); the one question it waits on."""
    inbox.local.send(start, deduplication_id=uuid.uuid4().hex)
    result = inbox.local.pump()
    assert result.failed == 0, result
    asked = [q for outcome in result.outcomes for q in outcome.asked]
    assert len(asked) == 1, asked
    return asked[0]
