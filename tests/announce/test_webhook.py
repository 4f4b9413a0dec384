"""WebhookAnnounce against a real HTTP receiver on 127.0.0.1: body, headers, signatures, failures."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import urllib.parse
import uuid
from typing import Any

import pytest

from agent_wait import (
    Question,
    SignatureError,
    WaitEnvelope,
    WaitPolicy,
    WebhookAnnounce,
    publish,
    verify_signature,
    verify_timestamped_signature,
)
from agent_wait.channels.announce import verify_standard_webhook

from .conftest import Receiver

SECRET = "whsec_ylEhkp/tHLafArlgCb7iYwUEVFBwzfRieHFneZAsb9Q="
"""A Standard Webhooks secret: "whsec_" + base64 of the 32-byte key."""
PREVIOUS_SECRET = "whsec_BZZkfvJjJfjX/6rKCOGtuejvK8Mu83oC5boWkz4we1M="
CANARY = "tok-CANARY-5f1e"
PERSONAL = "Zoë Secretname"
T = 1_800_000_000


def make_envelope() -> WaitEnvelope:
    return WaitEnvelope.create(
        Question(
            f"order-{uuid.uuid4().hex[:8]}",
            f"q-{uuid.uuid4().hex}",
            {"function": "issue_refund", "args": {"customer": PERSONAL, "amount": 410.25}},
            WaitPolicy(timeout="P3D", tags={"approver_group": "finance"}),
        )
    )


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


def origin(url: str) -> str:
    """scheme://host:port of a receiver URL, computed independently of the announcer."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def independent_standard_signature(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks v1 signature, from the specification's words: base64 HMAC-SHA256 keyed by the
    base64-decoded part of whsec_<base64>, over "<id>.<timestamp>.<body>"."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


# --- the request --------------------------------------------------------------------------------


def test_posts_the_envelope_json_as_the_body(receiver: Receiver):
    # GIVEN a webhook announcer pointed at a local receiver
    envelope = make_envelope()
    # WHEN an envelope is published
    report = publish(envelope, WebhookAnnounce(receiver.url))
    # THEN one POST arrived whose raw body is exactly envelope.to_json()
    assert report.ok, report.failed
    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    assert request.method == "POST"
    assert request.path == "/hooks/agent-wait"
    assert request.body == envelope.to_json().encode("utf-8")
    assert WaitEnvelope.from_json(request.body) == envelope
    assert request.headers["content-type"] == "application/json"


def test_sends_the_event_and_dedupe_key_headers(receiver: Receiver):
    envelope = make_envelope().for_transition("answered")
    WebhookAnnounce(receiver.url).announce(envelope)
    headers = receiver.requests[0].headers
    assert headers["x-agent-wait-event"] == "wait.answered"
    assert headers["x-agent-wait-dedupe-key"] == f"wait.answered:{envelope.question_id}"


def test_without_a_secret_no_signature_headers_are_sent(receiver: Receiver):
    WebhookAnnounce(receiver.url).announce(make_envelope())
    headers = receiver.requests[0].headers
    assert "x-agent-wait-signature" not in headers
    assert "x-agent-wait-timestamp-signature" not in headers
    assert not {"webhook-id", "webhook-timestamp", "webhook-signature"} & set(headers)


def test_with_a_secret_the_signature_is_the_hmac_of_the_raw_body(receiver: Receiver):
    # GIVEN a secret
    WebhookAnnounce(receiver.url, secret=SECRET).announce(make_envelope())
    request = receiver.requests[0]
    header = request.headers["x-agent-wait-signature"]
    # THEN the header is sha256=<hex HMAC-SHA256(secret, raw body)>, checked two independent ways
    expected = hmac.new(SECRET.encode(), request.body, hashlib.sha256).hexdigest()
    assert header == f"sha256={expected}"
    assert verify_signature(SECRET, request.body, header)


def test_with_a_secret_the_timestamp_signature_verifies_and_a_late_replay_is_refused(receiver: Receiver):
    # GIVEN an announcer whose clock reads T
    WebhookAnnounce(receiver.url, secret=SECRET, clock=lambda: T).announce(make_envelope())
    request = receiver.requests[0]
    header = request.headers["x-agent-wait-timestamp-signature"]
    # THEN a receiver at T accepts it
    assert header.startswith(f"t={T},sha256=")
    assert verify_timestamped_signature(SECRET, request.body, header, now=T + 5) == T
    # AND the same request replayed past the tolerance is refused as expired
    with pytest.raises(SignatureError, match=re.escape("beyond the 300s tolerance: a replay?")) as err:
        verify_timestamped_signature(SECRET, request.body, header, now=T + 301)
    assert err.value.reason == "expired"


def test_a_tampered_body_does_not_verify(receiver: Receiver):
    WebhookAnnounce(receiver.url, secret=SECRET, clock=lambda: T).announce(make_envelope())
    request = receiver.requests[0]
    tampered = request.body.replace(b"410.25", b"41025")
    assert tampered != request.body
    assert not verify_signature(SECRET, tampered, request.headers["x-agent-wait-signature"])
    with pytest.raises(SignatureError) as err:
        verify_timestamped_signature(SECRET, tampered, request.headers["x-agent-wait-timestamp-signature"], now=T)
    assert err.value.reason == "mismatch"


def test_a_bytes_secret_signs_like_its_str(receiver: Receiver):
    WebhookAnnounce(receiver.url, secret=SECRET.encode()).announce(make_envelope())
    request = receiver.requests[0]
    assert verify_signature(SECRET, request.body, request.headers["x-agent-wait-signature"])


# --- Standard Webhooks headers -------------------------------------------------------------------


def test_with_a_secret_the_standard_webhooks_headers_are_sent_and_verify(receiver: Receiver):
    # GIVEN an announcer with a whsec_ secret whose clock reads T
    envelope = make_envelope()
    WebhookAnnounce(receiver.url, secret=SECRET, clock=lambda: T).announce(envelope)
    request = receiver.requests[0]
    headers = request.headers
    # THEN webhook-id is the envelope's event_id and webhook-timestamp is T in unix seconds
    assert headers["webhook-id"] == envelope.event_id
    assert headers["webhook-timestamp"] == str(T)
    # AND webhook-signature is v1,<base64 HMAC over "<id>.<timestamp>.<body>"> under the decoded key
    expected = independent_standard_signature(SECRET, envelope.event_id, T, request.body)
    assert headers["webhook-signature"] == f"v1,{expected}"
    # AND our own verifier accepts it and returns the id to deduplicate on
    assert verify_standard_webhook(SECRET, request.body, headers, now=T + 1) == envelope.event_id


def test_the_legacy_signatures_stay_keyed_by_the_secret_text_byte_for_byte(receiver: Receiver):
    # GIVEN a whsec_ secret (decoded for webhook-signature)
    WebhookAnnounce(receiver.url, secret=SECRET, clock=lambda: T).announce(make_envelope())
    request = receiver.requests[0]
    # THEN the X-Agent-Wait-* headers are still keyed by the whole secret's UTF-8 text, as receivers expect
    text_key = SECRET.encode("utf-8")
    assert request.headers["x-agent-wait-signature"] == (
        f"sha256={hmac.new(text_key, request.body, hashlib.sha256).hexdigest()}"
    )
    timestamped = hmac.new(text_key, f"{T}.".encode() + request.body, hashlib.sha256).hexdigest()
    assert request.headers["x-agent-wait-timestamp-signature"] == f"t={T},sha256={timestamped}"


def test_rotation_every_secret_signs_webhook_signature_and_the_first_signs_the_legacy_headers(receiver: Receiver):
    # GIVEN a rotation in progress: the new secret first, the previous one second
    envelope = make_envelope()
    WebhookAnnounce(receiver.url, secret=[SECRET, PREVIOUS_SECRET], clock=lambda: T).announce(envelope)
    request = receiver.requests[0]
    # THEN webhook-signature carries one v1 entry per secret, space-separated, in that order
    assert request.headers["webhook-signature"].split(" ") == [
        f"v1,{independent_standard_signature(SECRET, envelope.event_id, T, request.body)}",
        f"v1,{independent_standard_signature(PREVIOUS_SECRET, envelope.event_id, T, request.body)}",
    ]
    # AND a receiver holding either secret accepts it
    for held in (SECRET, PREVIOUS_SECRET, [PREVIOUS_SECRET]):
        assert verify_standard_webhook(held, request.body, request.headers, now=T) == envelope.event_id
    # AND the legacy headers are signed by the first (current) secret only
    assert verify_signature(SECRET, request.body, request.headers["x-agent-wait-signature"])
    assert not verify_signature(PREVIOUS_SECRET, request.body, request.headers["x-agent-wait-signature"])
    timestamped = request.headers["x-agent-wait-timestamp-signature"]
    assert verify_timestamped_signature(SECRET, request.body, timestamped, now=T) == T


def test_a_whsec_secret_that_is_not_base64_still_signs_and_warns_without_the_secret(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
):
    # GIVEN a secret written before Standard Webhooks: whsec_ but not base64
    caplog.set_level(logging.INFO, logger="agent_wait")
    legacy_style = "whsec_test_2f6c"
    # WHEN an announcer is built with it and delivers
    announcer = WebhookAnnounce(receiver.url, secret=legacy_style, clock=lambda: T)
    delivery = announcer.announce(make_envelope())
    # THEN it delivers, one warning says how to fix the secret without showing it
    assert delivery.status == "delivered"
    (line,) = warnings(caplog)
    assert "is not base64" in line.getMessage()
    assert "test_2f6c" not in caplog.text
    # AND both signatures are keyed by its text, which our verifiers agree on
    request = receiver.requests[0]
    assert verify_signature(legacy_style, request.body, request.headers["x-agent-wait-signature"])
    assert verify_standard_webhook(legacy_style, request.body, request.headers, now=T)


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        ("", "WebhookAnnounce secret #1 is empty"),
        (b"", "WebhookAnnounce secret #1 is empty"),
        ("whsec_", "WebhookAnnounce secret #1 is empty"),
        ([], "WebhookAnnounce secret must be a str, bytes, or a non-empty list of them; got an empty list"),
        ([SECRET, ""], "WebhookAnnounce secret #2 is empty"),
        ([SECRET, 7], "WebhookAnnounce secret #2 must be a str or bytes; got int"),
        ({SECRET}, "WebhookAnnounce secret must be a str, bytes, or a list of them, newest first; got set"),
        (7, "WebhookAnnounce secret must be a str, bytes, or a list of them, newest first; got int"),
    ],
    ids=["empty-str", "empty-bytes", "empty-whsec", "empty-list", "empty-in-list", "int-in-list", "set", "int"],
)
def test_an_empty_or_unusable_secret_is_refused_at_construction_without_echoing_it(secret: Any, message: str):
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        WebhookAnnounce("https://example.com/hook", secret=secret)
    assert SECRET not in str(raised.value)


def test_extra_headers_are_sent_but_cannot_override_the_contract_headers(receiver: Receiver):
    # GIVEN an API key and an attempt to override the event header
    extra = {
        "Authorization": "Bearer abc",
        "x-agent-wait-event": "spoofed",
        "X-Agent-Wait-Dedupe-Key": "spoofed",
        "webhook-id": "spoofed",
        "Webhook-Signature": "v1,spoofed",
        "WEBHOOK-TIMESTAMP": "1",
    }
    envelope = make_envelope()
    WebhookAnnounce(receiver.url, headers=extra, secret=SECRET, clock=lambda: T).announce(envelope)
    headers = receiver.requests[0].headers
    # THEN the API key arrives, and the contract headers are the envelope's
    assert headers["authorization"] == "Bearer abc"
    assert headers["x-agent-wait-event"] == "wait.created"
    assert headers["x-agent-wait-dedupe-key"] == envelope.dedupe_key
    assert (headers["webhook-id"], headers["webhook-timestamp"]) == (envelope.event_id, str(T))
    assert verify_standard_webhook(SECRET, receiver.requests[0].body, headers, now=T)


def test_build_request_is_exactly_what_is_sent(receiver: Receiver):
    announcer = WebhookAnnounce(receiver.url, secret=SECRET, clock=lambda: T)
    envelope = make_envelope()
    built = announcer.build_request(envelope)
    announcer.announce(envelope)
    sent = receiver.requests[0]
    assert built.data == sent.body
    assert built.get_method() == "POST"
    for name, value in built.header_items():
        assert sent.headers[name.lower()] == value


@pytest.mark.parametrize("status", [200, 201, 202, 204])
def test_any_2xx_is_delivered(receiver: Receiver, status: int):
    receiver.status = status
    announcer = WebhookAnnounce(receiver.url)
    delivery = announcer.announce(make_envelope())
    assert delivery.status == "delivered"
    assert announcer.stats.delivered == 1


def test_undeclared_transitions_are_not_posted(receiver: Receiver):
    announcer = WebhookAnnounce(receiver.url, delivers={"created"})
    delivery = announcer.announce(make_envelope().for_transition("resumed"))
    assert delivery.status == "skipped"
    assert receiver.requests == []


# --- failures are log lines, never exceptions ---------------------------------------------------


@pytest.mark.parametrize("status", [500, 404, 401, 503])
def test_a_non_2xx_answer_is_a_failed_delivery_and_one_log_line(
    receiver: Receiver, status: int, caplog: pytest.LogCaptureFixture
):
    # GIVEN a receiver that answers with an error status
    caplog.set_level(logging.INFO, logger="agent_wait")
    receiver.status = status
    announcer = WebhookAnnounce(receiver.url)
    envelope = make_envelope()
    # WHEN published
    report = publish(envelope, announcer)
    # THEN it is a failure with the status, counted, logged once with ids and without the question
    assert [(d.status, d.error) for d in report.deliveries] == [
        ("failed", f"WebhookDeliveryError: {origin(receiver.url)} answered HTTP {status}")
    ]
    assert announcer.stats.failed == 1
    (line,) = warnings(caplog)
    assert envelope.question_id in line.getMessage()
    assert envelope.thread_id in line.getMessage()
    assert f"answered HTTP {status}" in line.getMessage()
    assert PERSONAL not in caplog.text


def test_connection_refused_is_a_failed_delivery(closed_port_url: str, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="agent_wait")
    report = publish(make_envelope(), WebhookAnnounce(closed_port_url))
    (failure,) = report.failed
    assert failure.error is not None
    assert failure.error.startswith(f"WebhookDeliveryError: {origin(closed_port_url)} unreachable: ")
    assert "refused" in failure.error.lower()
    assert len(warnings(caplog)) == 1


def test_a_receiver_slower_than_the_timeout_is_a_failed_delivery(receiver: Receiver, caplog: pytest.LogCaptureFixture):
    # GIVEN a receiver that holds the request far longer than the 0.2 s timeout
    caplog.set_level(logging.INFO, logger="agent_wait")
    receiver.hold = True
    # WHEN published
    report = publish(make_envelope(), WebhookAnnounce(receiver.url, timeout=0.2))
    # THEN the announcer gave up: a failure naming the timeout, one log line, no exception
    (failure,) = report.failed
    assert failure.error == f"WebhookDeliveryError: {origin(receiver.url)} unreachable: timed out"
    assert len(warnings(caplog)) == 1
    assert len(receiver.requests) == 1


def test_a_stopped_receiver_is_a_failed_delivery_and_the_next_announcer_still_delivers(receiver: Receiver):
    from agent_wait import InMemoryAnnounce

    receiver.stop()
    memory = InMemoryAnnounce()
    report = publish(make_envelope(), [WebhookAnnounce(receiver.url), memory])
    assert [d.status for d in report.deliveries] == ["failed", "delivered"]
    assert len(memory.events) == 1


# --- construction -------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["ftp://example.com/hook", "example.com/hook", "", "http://", "https:///path", "//x"])
def test_an_invalid_url_is_refused_at_construction(url: str):
    with pytest.raises(ValueError, match=re.escape("WebhookAnnounce url must start with http:// or https:// and")):
        WebhookAnnounce(url)


@pytest.mark.parametrize("timeout", [0, -1, 0.0, float("nan"), float("inf"), True, "5"])
def test_an_invalid_timeout_is_refused_at_construction(timeout: Any):
    with pytest.raises(
        ValueError, match=re.escape(f"WebhookAnnounce timeout must be more than 0 seconds; got {timeout!r}")
    ):
        WebhookAnnounce("https://example.com/hook", timeout=timeout)


def test_defaults_are_visible():
    announcer = WebhookAnnounce("https://example.com/hook")
    assert (announcer.timeout, announcer.secret, announcer.headers, announcer.name) == (5.0, None, {}, "webhook")


def test_the_body_is_compact_utf8_json(receiver: Receiver):
    WebhookAnnounce(receiver.url).announce(make_envelope())
    body = receiver.requests[0].body
    assert PERSONAL.encode("utf-8") in body
    assert json.loads(body)["question"]["args"]["amount"] == 410.25


# --- the URL is never shown: its path and query may carry a token -------------------------------


def test_failures_name_the_origin_only_never_the_path_or_query(
    receiver: Receiver, closed_port_url: str, caplog: pytest.LogCaptureFixture
):
    # GIVEN webhook URLs with a token in the path and in the query, at a receiver that answers 500,
    # one that is slower than the timeout, and a port where nothing listens
    caplog.set_level(logging.DEBUG)
    receiver.status = 500
    answering = f"{origin(receiver.url)}/hooks/{CANARY}?token={CANARY}"
    refused = f"{closed_port_url}/{CANARY}?token={CANARY}"
    # WHEN each is published to
    report = publish(make_envelope(), [WebhookAnnounce(answering), WebhookAnnounce(refused)])
    # THEN each failure names scheme://host:port and nothing else, in the Delivery and the log
    errors = [delivery.error or "" for delivery in report.deliveries]
    assert errors[0] == f"WebhookDeliveryError: {origin(receiver.url)} answered HTTP 500"
    assert errors[1].startswith(f"WebhookDeliveryError: {origin(closed_port_url)} unreachable: ")
    assert len(warnings(caplog)) == 2
    assert CANARY not in caplog.text
    assert all(CANARY not in error for error in errors)


def test_a_timeout_names_the_origin_only(receiver: Receiver, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    receiver.hold = True
    report = publish(make_envelope(), WebhookAnnounce(f"{receiver.url}?token={CANARY}", timeout=0.2))
    (failure,) = report.failed
    assert failure.error == f"WebhookDeliveryError: {origin(receiver.url)} unreachable: timed out"
    assert CANARY not in caplog.text


def test_a_url_http_client_refuses_is_a_failure_that_does_not_quote_it(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
):
    # GIVEN a URL whose query holds a space: http.client refuses it and quotes the path in its message
    caplog.set_level(logging.DEBUG)
    report = publish(make_envelope(), WebhookAnnounce(f"{receiver.url}?token={CANARY} x"))
    # THEN the failure names the origin and the error type, not the URL
    (failure,) = report.failed
    assert failure.error == f"WebhookDeliveryError: {origin(receiver.url)} could not be sent: InvalidURL"
    assert CANARY not in caplog.text
    assert receiver.requests == []


def test_repr_and_origin_show_scheme_host_and_port_only():
    announcer = WebhookAnnounce(f"https://user:pw@Hooks.Example.com:8443/{CANARY}?token={CANARY}#{CANARY}")
    assert announcer.origin == "https://hooks.example.com:8443"
    assert repr(announcer) == "WebhookAnnounce(name='webhook', origin='https://hooks.example.com:8443')"
    assert WebhookAnnounce("https://hooks.example.com:443/x").origin == "https://hooks.example.com"
    assert WebhookAnnounce("http://[::1]:9000/x").origin == "http://[::1]:9000"


@pytest.mark.parametrize("url", [f"ftp://example.com/{CANARY}?token={CANARY}", f"https:///{CANARY}?token={CANARY}"])
def test_an_invalid_url_is_refused_without_echoing_its_path_or_query(url: str):
    with pytest.raises(ValueError, match=re.escape("the rest of the URL is not shown")) as raised:
        WebhookAnnounce(url)
    assert CANARY not in str(raised.value)


def test_a_url_with_a_non_numeric_port_is_refused_at_construction():
    with pytest.raises(ValueError, match=re.escape("WebhookAnnounce url has a port that is not a number")) as raised:
        WebhookAnnounce(f"https://example.com:{CANARY}/hook")
    assert CANARY not in str(raised.value)
