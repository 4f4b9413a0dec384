"""Standard Webhooks signatures (https://www.standardwebhooks.com): the specification's own test vector,
secret forms, rotation, and every reason `verify_standard_webhook` refuses a request."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import Any

import pytest

from agent_wait import SignatureError
from agent_wait.channels.announce import sign_standard_webhook, verify_standard_webhook

# The Standard Webhooks project's own test vector, from its reference libraries' test suites:
# standard-webhooks/standard-webhooks @ b2fa7b8719fb75d326b591077f5d1b385cfcdfae,
# libraries/python/tests/test_webhooks.py::test_sign_function (the same five values appear in
# libraries/go/webhook_test.go, libraries/javascript/src/webhook.test.ts and libraries/php/tests/WebhookTest.php).
# spec/standard-webhooks.md shows example headers but publishes no secret for them, so this is the
# one published vector a signer can be checked against.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
# The asymmetric entry from the specification's "Example headers" (spec/standard-webhooks.md): a v1a signature
# a symmetric verifier must skip, not choke on.
SPEC_V1A_ENTRY = "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg=="

SECRET = "whsec_ylEhkp/tHLafArlgCb7iYwUEVFBwzfRieHFneZAsb9Q="
PREVIOUS = "whsec_BZZkfvJjJfjX/6rKCOGtuejvK8Mu83oC5boWkz4we1M="
BODY = b'{"type":"wait.created","question_id":"q-1"}'
ID = "01J9ZQ4W5N3D6Y0V8K2R7T1M4C"
T = 1_800_000_000


def headers_for(
    secrets: Any = SECRET, *, webhook_id: str = ID, timestamp: int = T, body: bytes = BODY
) -> dict[str, str]:
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign_standard_webhook(secrets, webhook_id, timestamp, body),
    }


# --- the specification's vector -------------------------------------------------------------------


def test_the_specifications_own_test_vector_signs_exactly():
    # GIVEN the id, timestamp, body and whsec_ secret of the Standard Webhooks test vector
    # WHEN signed / THEN the signature is the one the specification's libraries expect
    assert sign_standard_webhook(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY) == SPEC_SIGNATURE


def test_the_specifications_own_test_vector_verifies():
    headers = {"webhook-id": SPEC_ID, "webhook-timestamp": str(SPEC_TIMESTAMP), "webhook-signature": SPEC_SIGNATURE}
    assert verify_standard_webhook(SPEC_SECRET, SPEC_BODY, headers, now=SPEC_TIMESTAMP) == SPEC_ID


def test_a_v1a_entry_beside_ours_is_skipped():
    headers = {
        "webhook-id": SPEC_ID,
        "webhook-timestamp": str(SPEC_TIMESTAMP),
        "webhook-signature": f"{SPEC_V1A_ENTRY} {SPEC_SIGNATURE}",
    }
    assert verify_standard_webhook(SPEC_SECRET, SPEC_BODY, headers, now=SPEC_TIMESTAMP) == SPEC_ID


# --- secret forms ---------------------------------------------------------------------------------


def test_a_whsec_secret_is_keyed_by_its_base64_decoded_part():
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    digest = hmac.new(key, f"{ID}.{T}.".encode() + BODY, hashlib.sha256).digest()
    assert sign_standard_webhook(SECRET, ID, T, BODY) == f"v1,{base64.b64encode(digest).decode()}"


def test_bytes_are_the_key_as_given_and_other_text_its_utf8_bytes():
    raw = base64.b64decode(SECRET.removeprefix("whsec_"))
    assert sign_standard_webhook(raw, ID, T, BODY) == sign_standard_webhook(SECRET, ID, T, BODY)
    digest = hmac.new(b"plain-secret", f"{ID}.{T}.".encode() + BODY, hashlib.sha256).digest()
    assert sign_standard_webhook("plain-secret", ID, T, BODY) == f"v1,{base64.b64encode(digest).decode()}"


@pytest.mark.parametrize("secret", ["", b"", "whsec_", [], ["", SECRET]], ids=["str", "bytes", "whsec", "list", "one"])
def test_an_empty_secret_is_a_receiver_mistake_not_a_refused_request(secret: Any):
    with pytest.raises(ValueError) as raised:
        verify_standard_webhook(secret, BODY, headers_for(), now=T)
    assert not isinstance(raised.value, SignatureError)


@pytest.mark.parametrize("webhook_id", ["", "evt.1"])
def test_signing_refuses_an_empty_or_dotted_id(webhook_id: str):
    with pytest.raises(ValueError, match=re.escape("webhook-id must be non-empty and contain no '.'")):
        sign_standard_webhook(SECRET, webhook_id, T, BODY)


# --- rotation -------------------------------------------------------------------------------------


def test_rotation_signs_with_every_secret_and_any_one_verifies():
    # GIVEN a request signed during a rotation with the new and the previous secret
    headers = headers_for([SECRET, PREVIOUS])
    assert len(headers["webhook-signature"].split(" ")) == 2
    # WHEN verified by receivers holding either, or both / THEN each accepts it
    for held in (SECRET, PREVIOUS, [PREVIOUS, SECRET], ("whsec_AAAA", PREVIOUS)):
        assert verify_standard_webhook(held, BODY, headers, now=T) == ID


def test_a_receiver_holding_two_secrets_accepts_a_request_signed_by_either():
    assert verify_standard_webhook([SECRET, PREVIOUS], BODY, headers_for(PREVIOUS), now=T) == ID


# --- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("absent", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_refused_and_named(absent: str):
    headers = headers_for()
    headers[absent] = "  "
    with pytest.raises(SignatureError, match=re.escape(f"no {absent} header; refuse the request")) as err:
        verify_standard_webhook(SECRET, BODY, headers, now=T)
    assert err.value.reason == "missing"
    del headers[absent]
    with pytest.raises(SignatureError) as err:
        verify_standard_webhook(SECRET, BODY, headers, now=T)
    assert err.value.reason == "missing"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("webhook-timestamp", "soon", "webhook-timestamp must be whole unix seconds (digits only)"),
        ("webhook-timestamp", "-5", "webhook-timestamp must be whole unix seconds (digits only)"),
        ("webhook-timestamp", "1_800_000_000", "webhook-timestamp must be whole unix seconds (digits only)"),
        ("webhook-timestamp", "1.8e9", "webhook-timestamp must be whole unix seconds (digits only)"),
        ("webhook-id", "evt.1", "webhook-id must not contain '.'"),
        ("webhook-signature", "sha256=abc", "webhook-signature must hold space-separated 'v1,<base64>' entries"),
        ("webhook-signature", SPEC_V1A_ENTRY, "webhook-signature must hold space-separated 'v1,<base64>' entries"),
    ],
    ids=["word", "negative", "underscores", "float", "dotted-id", "other-scheme", "only-v1a"],
)
def test_a_malformed_header_is_refused(name: str, value: str, message: str):
    headers = headers_for()
    headers[name] = value
    with pytest.raises(SignatureError, match=re.escape(message)) as err:
        verify_standard_webhook(SECRET, BODY, headers, now=T)
    assert err.value.reason == "malformed"


@pytest.mark.parametrize(
    "headers",
    [
        headers_for(body=BODY.replace(b"q-1", b"q-2")),
        headers_for("whsec_AAAA"),
        {**headers_for(), "webhook-timestamp": str(T + 1)},
        {**headers_for(), "webhook-id": ID + "X"},
        {**headers_for(), "webhook-signature": "v1," + "A" * 44},
        {**headers_for(), "webhook-signature": "v1,Zoë"},
    ],
    ids=["tampered-body", "wrong-secret", "moved-timestamp", "moved-id", "zeros", "non-ascii"],
)
def test_a_tampered_body_id_timestamp_or_signature_is_a_mismatch(headers: dict[str, str]):
    with pytest.raises(SignatureError, match=re.escape("signature does not match the body")) as err:
        verify_standard_webhook(SECRET, BODY, headers, now=T)
    assert err.value.reason == "mismatch"


def test_a_reserialised_body_is_a_mismatch():
    with pytest.raises(SignatureError) as err:
        verify_standard_webhook(SECRET, b'{"question_id":"q-1","type":"wait.created"}', headers_for(), now=T)
    assert err.value.reason == "mismatch"


def test_a_mismatch_is_reported_before_the_age_so_a_forger_learns_nothing_about_the_clock():
    with pytest.raises(SignatureError) as err:
        verify_standard_webhook(SECRET, BODY, headers_for("whsec_AAAA"), now=T + 10_000)
    assert err.value.reason == "mismatch"


def test_a_replay_older_than_the_tolerance_is_refused_as_expired():
    assert verify_standard_webhook(SECRET, BODY, headers_for(), now=T + 300) == ID
    with pytest.raises(SignatureError, match=re.escape("signed 301s ago, beyond the 300s tolerance: a replay?")) as err:
        verify_standard_webhook(SECRET, BODY, headers_for(), now=T + 301)
    assert err.value.reason == "expired"


def test_a_timestamp_too_far_in_the_future_is_refused():
    assert verify_standard_webhook(SECRET, BODY, headers_for(), now=T - 300) == ID
    with pytest.raises(SignatureError, match=re.escape("signed 301s in the future, beyond the 300s tolerance")) as err:
        verify_standard_webhook(SECRET, BODY, headers_for(), now=T - 301)
    assert err.value.reason == "future"


def test_the_tolerance_is_configurable_and_the_wall_clock_is_the_default():
    with pytest.raises(SignatureError, match=re.escape("beyond the 10s tolerance")) as err:
        verify_standard_webhook(SECRET, BODY, headers_for(), now=T + 11, tolerance_seconds=10)
    assert err.value.reason == "expired"
    with pytest.raises(SignatureError) as err:
        verify_standard_webhook(SECRET, BODY, headers_for(timestamp=1_000))
    assert err.value.reason == "expired"


# --- how a receiver calls it ----------------------------------------------------------------------


def test_header_names_match_case_insensitively_and_a_str_body_is_utf8():
    headers = {name.title(): value for name, value in headers_for().items()}
    assert "Webhook-Signature" in headers
    assert verify_standard_webhook(SECRET, BODY.decode(), headers, now=T) == ID


def test_signatures_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch):
    # GIVEN hmac.compare_digest wrapped in a spy
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    # WHEN a wrong signature is checked against two secrets
    headers = {**headers_for(), "webhook-signature": "v1," + "A" * 44}
    with pytest.raises(SignatureError):
        verify_standard_webhook([SECRET, PREVIOUS], BODY, headers, now=T)
    # THEN every comparison went through compare_digest, never ==
    assert len(calls) == 2
    assert all(claimed == b"A" * 44 for claimed, _ in calls)
