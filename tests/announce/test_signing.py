"""Webhook signatures: HMAC-SHA256 over the raw body, constant-time checks, and replay refusal."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

import pytest

from agent_wait import SignatureError, verify_signature, verify_timestamped_signature
from agent_wait.channels.announce._signing import sign, sign_timestamped

SECRET = "whsec_test_2f6c"
BODY = b'{"type":"wait.created","question_id":"q-1"}'
T = 1_800_000_000


def independent_hmac(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


# --- plain signature ----------------------------------------------------------------------------


def test_signature_is_sha256_hex_hmac_of_the_raw_body():
    assert sign(SECRET, BODY) == f"sha256={independent_hmac(SECRET, BODY)}"


def test_verify_signature_accepts_the_right_signature_for_str_or_bytes_secret_and_body():
    header = f"sha256={independent_hmac(SECRET, BODY)}"
    assert verify_signature(SECRET, BODY, header)
    assert verify_signature(SECRET.encode(), BODY, header)
    assert verify_signature(SECRET, BODY.decode(), header)


@pytest.mark.parametrize(
    ("body", "secret"),
    [
        (BODY.replace(b"q-1", b"q-2"), SECRET),
        (BODY + b" ", SECRET),
        (b'{"question_id":"q-1","type":"wait.created"}', SECRET),
        (BODY, "another-secret"),
    ],
    ids=["tampered", "trailing-space", "reserialised", "wrong-secret"],
)
def test_verify_signature_refuses_a_tampered_body_or_wrong_secret(body: bytes, secret: str):
    header = sign(SECRET, BODY)
    assert verify_signature(secret, body, header) is False


@pytest.mark.parametrize(
    "header",
    [None, "", "sha256=", "md5=abc", independent_hmac(SECRET, BODY), "sha256=" + "0" * 64, "sha256=Zoë"],
    ids=["missing", "empty", "no-hex", "other-scheme", "no-prefix", "zeros", "non-ascii"],
)
def test_verify_signature_refuses_missing_or_malformed_headers(header: str | None):
    assert verify_signature(SECRET, BODY, header) is False


def test_verify_signature_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch):
    # GIVEN hmac.compare_digest wrapped in a spy
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    header = sign(SECRET, BODY)
    # WHEN a right and a wrong signature are verified
    assert verify_signature(SECRET, BODY, header)
    assert not verify_signature(SECRET, BODY, "sha256=" + "0" * 64)
    # THEN both comparisons went through compare_digest, never ==
    assert calls == [(header.encode(), header.encode()), (("sha256=" + "0" * 64).encode(), header.encode())]


# --- timestamped signature ----------------------------------------------------------------------


def test_timestamped_signature_signs_timestamp_dot_body():
    header = sign_timestamped(SECRET, BODY, T)
    assert header == f"t={T},sha256={independent_hmac(SECRET, str(T).encode() + b'.' + BODY)}"


def test_timestamped_signature_within_tolerance_verifies_and_returns_the_timestamp():
    header = sign_timestamped(SECRET, BODY, T)
    assert verify_timestamped_signature(SECRET, BODY, header, now=T) == T
    assert verify_timestamped_signature(SECRET, BODY, header, now=T + 300) == T
    assert verify_timestamped_signature(SECRET, BODY, header, now=T - 300) == T


def test_a_replay_older_than_the_tolerance_is_refused_as_expired():
    # GIVEN a request signed 301 s ago, with the default 300 s tolerance
    header = sign_timestamped(SECRET, BODY, T)
    # WHEN verified now / THEN refused as expired
    with pytest.raises(SignatureError, match=re.escape("signed 301s ago, beyond the 300s tolerance: a replay?")) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T + 301)
    assert err.value.reason == "expired"


def test_the_tolerance_is_configurable():
    header = sign_timestamped(SECRET, BODY, T)
    with pytest.raises(SignatureError, match=re.escape("beyond the 10s tolerance")) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T + 11, tolerance_seconds=10)
    assert err.value.reason == "expired"


def test_a_timestamp_too_far_in_the_future_is_refused():
    header = sign_timestamped(SECRET, BODY, T)
    with pytest.raises(SignatureError, match=re.escape("signed 301s in the future, beyond the 300s tolerance")) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T - 301)
    assert err.value.reason == "future"


def test_the_wall_clock_is_used_by_default():
    with pytest.raises(SignatureError) as err:
        verify_timestamped_signature(SECRET, BODY, sign_timestamped(SECRET, BODY, 1_000))
    assert err.value.reason == "expired"


@pytest.mark.parametrize(
    "header",
    [
        sign_timestamped(SECRET, BODY.replace(b"q-1", b"q-2"), T),
        sign_timestamped("another-secret", BODY, T),
        f"t={T + 1},sha256={independent_hmac(SECRET, str(T).encode() + b'.' + BODY)}",
    ],
    ids=["tampered-body", "wrong-secret", "moved-timestamp"],
)
def test_a_tampered_body_secret_or_timestamp_is_a_mismatch(header: str):
    with pytest.raises(SignatureError, match=re.escape("signature does not match the body")) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T)
    assert err.value.reason == "mismatch"


def test_a_mismatch_is_reported_before_the_age_so_a_forger_learns_nothing_about_the_clock():
    header = sign_timestamped("another-secret", BODY, T)
    with pytest.raises(SignatureError) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T + 10_000)
    assert err.value.reason == "mismatch"


@pytest.mark.parametrize("header", [None, ""])
def test_a_missing_timestamp_header_is_refused(header: str | None):
    with pytest.raises(SignatureError, match=re.escape("no X-Agent-Wait-Timestamp-Signature header")) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T)
    assert err.value.reason == "missing"


@pytest.mark.parametrize("header", ["garbage", f"t={T}", "sha256=abc", "t=soon,sha256=abc", f"t={T};sha256=abc"])
def test_a_malformed_timestamp_header_is_refused(header: str):
    expected = "X-Agent-Wait-Timestamp-Signature must look like 't=<unix seconds>,sha256=<hex>'"
    with pytest.raises(SignatureError, match=re.escape(expected)) as err:
        verify_timestamped_signature(SECRET, BODY, header, now=T)
    assert err.value.reason == "malformed"


def test_timestamped_verification_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch):
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: calls.append((a, b)) or real(a, b))
    verify_timestamped_signature(SECRET, BODY, sign_timestamped(SECRET, BODY, T), now=T)
    assert len(calls) == 1
