"""WebhookAnnounce against a real HTTP receiver on 127.0.0.1: body, headers, signatures, failures."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
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

from .conftest import Receiver

SECRET = "whsec_test_2f6c"
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


def test_extra_headers_are_sent_but_cannot_override_the_contract_headers(receiver: Receiver):
    # GIVEN an API key and an attempt to override the event header
    extra = {"Authorization": "Bearer abc", "x-agent-wait-event": "spoofed", "X-Agent-Wait-Dedupe-Key": "spoofed"}
    envelope = make_envelope()
    WebhookAnnounce(receiver.url, headers=extra).announce(envelope)
    headers = receiver.requests[0].headers
    # THEN the API key arrives, and the contract headers are the envelope's
    assert headers["authorization"] == "Bearer abc"
    assert headers["x-agent-wait-event"] == "wait.created"
    assert headers["x-agent-wait-dedupe-key"] == envelope.dedupe_key


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
        ("failed", f"WebhookDeliveryError: {receiver.url} answered HTTP {status}")
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
    assert failure.error.startswith(f"WebhookDeliveryError: {closed_port_url} unreachable: ")
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
    assert failure.error == f"WebhookDeliveryError: {receiver.url} unreachable: timed out"
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
