"""Signed answer links: the token rules, the key secret, rotation, and that no token reaches a log line."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import urllib.parse
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.errors import ConfigurationError, WaitError
from agent_wait.host.links import (
    MAX_LINK_LIFETIME,
    MAX_TOKEN_CHARS,
    LinkClaims,
    LinkError,
    LinkKeyring,
    LinkKeys,
    LinkReason,
    answer_links,
    link_url,
    mint_token,
    verify_token,
)
from agent_wait.policy import WaitPolicy

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(hours=4)
K1 = "k1-secret-" + "a" * 40
K2 = "k2-secret-" + "b" * 40


def secret(active: str = "k1", **keys: str) -> str:
    return json.dumps({"active": active, **(keys or {"k1": K1})})


KEYS = LinkKeys.parse(secret())


def token_for(
    keys: LinkKeys = KEYS,
    *,
    question_id: str = "q-1",
    action: str = "approve",
    expires_at: datetime = DEADLINE,
    approver: str | None = "alice@example.com",
    now: datetime = T0,
) -> str:
    return mint_token(
        keys,
        question_id=question_id,
        thread_id="order-1",
        action=action,
        expires_at=expires_at,
        approver=approver,
        now=now,
    )


def refusal(keys: LinkKeys, token: str, *, question_id: str = "q-1", now: datetime = T0) -> LinkError:
    with pytest.raises(LinkError) as caught:
        verify_token(keys, token, question_id=question_id, now=now)
    if len(token) > 8:  # a short fragment such as "v1" may happen to appear in any sentence
        assert token not in caught.value.message, "a LinkError message must never hold the token"
    return caught.value


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# -- a good link ---------------------------------------------------------------------------------------------


def test_a_minted_link_verifies_with_its_claims():
    # GIVEN a link minted for alice to approve q-1
    token = token_for()

    # WHEN it is verified on q-1 before its deadline
    claims = verify_token(KEYS, token, question_id="q-1", now=T0 + timedelta(minutes=5))

    # THEN every claim comes back as minted
    assert claims == LinkClaims(
        question_id="q-1",
        thread_id="order-1",
        action="approve",
        expires_at=DEADLINE,
        approver="alice@example.com",
        kid="k1",
    )


def test_the_token_is_version_kid_payload_and_signature():
    version, kid, payload, signature = token_for().split(".")

    assert (version, kid) == ("v1", "k1")
    assert json.loads(unb64(payload)) == {
        "q": "q-1",
        "t": "order-1",
        "a": "approve",
        "exp": int(DEADLINE.timestamp()),
        "sub": "alice@example.com",
    }
    assert len(unb64(signature)) == 32, "HMAC-SHA256 is 32 bytes"
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", token_for()), "a token is URL-safe as it stands"


def test_a_link_without_an_approver_has_no_sub():
    token = token_for(approver=None)

    assert "sub" not in json.loads(unb64(token.split(".")[2]))
    assert verify_token(KEYS, token, question_id="q-1", now=T0).approver is None


# -- tampering with each part ---------------------------------------------------------------------------------


def test_another_version_is_malformed():
    token = token_for()

    assert refusal(KEYS, "v2" + token[2:]).reason is LinkReason.MALFORMED


def test_a_changed_payload_is_tampered():
    # GIVEN a link to approve, whose payload is rewritten to reject (re-encoded correctly)
    version, kid, payload, signature = token_for().split(".")
    claims = json.loads(unb64(payload))
    claims["a"] = "reject"
    forged = ".".join([version, kid, b64(json.dumps(claims).encode()), signature])

    # THEN the signature no longer matches
    assert refusal(KEYS, forged).reason is LinkReason.TAMPERED


def test_a_later_expiry_in_the_payload_is_tampered():
    version, kid, payload, signature = token_for().split(".")
    claims = json.loads(unb64(payload))
    claims["exp"] += 86_400
    forged = ".".join([version, kid, b64(json.dumps(claims).encode()), signature])

    assert refusal(KEYS, forged).reason is LinkReason.TAMPERED


def test_a_changed_signature_is_tampered():
    version, kid, payload, signature = token_for().split(".")
    flipped = ("B" if signature[0] == "A" else "A") + signature[1:]

    assert refusal(KEYS, f"{version}.{kid}.{payload}.{flipped}").reason is LinkReason.TAMPERED


def test_a_signature_differing_only_in_unused_base64_bits_is_tampered():
    # The last base64 character of a 32-byte MAC carries 2 bits that decoding ignores: comparing decoded bytes
    # would accept both spellings. The encoded text is compared, so a token has exactly one valid form.
    version, kid, payload, signature = token_for().split(".")
    last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(signature[-1])
    twin = signature[:-1] + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last ^ 1]
    assert unb64(twin) == unb64(signature)

    assert refusal(KEYS, f"{version}.{kid}.{payload}.{twin}").reason is LinkReason.TAMPERED


def test_a_kid_changed_to_another_listed_key_is_tampered():
    # GIVEN keys k1 and k2, and a link signed with k1 whose kid is rewritten to k2
    keys = LinkKeys.parse(secret("k1", k1=K1, k2=K2))
    version, _kid, payload, signature = token_for(keys).split(".")

    assert refusal(keys, f"{version}.k2.{payload}.{signature}").reason is LinkReason.TAMPERED


def test_a_kid_changed_to_an_unlisted_key_is_unknown_key():
    version, _kid, payload, signature = token_for().split(".")

    assert refusal(KEYS, f"{version}.k9.{payload}.{signature}").reason is LinkReason.UNKNOWN_KEY


def test_a_link_signed_with_another_secret_under_the_same_kid_is_tampered():
    other = LinkKeys.parse(secret(k1="another-secret-" + "c" * 40))

    assert refusal(KEYS, token_for(other)).reason is LinkReason.TAMPERED


@pytest.mark.parametrize(
    "shape",
    [
        "",
        "v1",
        "v1.k1.payload",
        "{token}.extra",
        "{token}=",
        "v1..{payload}.{signature}",
        "v1.k 1.{payload}.{signature}",
        "v1.k1.{payload}.",
        "v1.k1.{payload}.{signature}\u00e9",
        "v1.k1.{payload}+.{signature}",
    ],
)
def test_tokens_of_the_wrong_shape_are_malformed(shape):
    token = token_for()
    _version, _kid, payload, signature = token.split(".")

    bad = shape.format(token=token, payload=payload, signature=signature)

    assert refusal(KEYS, bad).reason is LinkReason.MALFORMED


def test_a_token_that_is_not_text_is_malformed():
    with pytest.raises(LinkError) as caught:
        verify_token(KEYS, None, question_id="q-1", now=T0)  # type: ignore[arg-type]

    assert caught.value.reason is LinkReason.MALFORMED


def test_an_overlong_token_is_malformed_before_any_work():
    assert refusal(KEYS, "v1.k1." + "A" * MAX_TOKEN_CHARS + ".sig").reason is LinkReason.MALFORMED


def test_an_authentic_payload_without_the_fields_of_a_link_is_malformed():
    # GIVEN a payload signed with the real key but missing the action (as a key holder's bug would make it)
    payload = b64(json.dumps({"q": "q-1", "t": "order-1", "exp": int(DEADLINE.timestamp())}).encode())
    signed = f"v1.k1.{payload}"
    token = f"{signed}.{b64(hmac.new(K1.encode(), signed.encode(), hashlib.sha256).digest())}"

    assert refusal(KEYS, token).reason is LinkReason.MALFORMED


# -- expiry and the question ----------------------------------------------------------------------------------


def test_a_link_works_until_its_questions_deadline_and_not_at_it():
    token = token_for(expires_at=DEADLINE)

    assert verify_token(KEYS, token, question_id="q-1", now=DEADLINE - timedelta(microseconds=1)).action == "approve"
    error = refusal(KEYS, token, now=DEADLINE)
    assert error.reason is LinkReason.EXPIRED
    assert "expired at 2030-01-01T13:00:00+00:00" in error.message


def test_a_deadline_with_a_fraction_of_a_second_is_rounded_down_never_later():
    token = token_for(expires_at=DEADLINE + timedelta(milliseconds=900))

    assert verify_token(KEYS, token, question_id="q-1", now=T0).expires_at == DEADLINE


def test_a_link_lives_at_most_the_maximum_lifetime_even_for_a_later_deadline():
    token = token_for(expires_at=T0 + timedelta(days=30))

    claims = verify_token(KEYS, token, question_id="q-1", now=T0)

    assert claims.expires_at == T0 + MAX_LINK_LIFETIME == T0 + timedelta(days=7)
    assert refusal(KEYS, token, now=T0 + MAX_LINK_LIFETIME).reason is LinkReason.EXPIRED


def test_a_link_for_another_question_is_wrong_question():
    token = token_for(question_id="q-2")

    error = refusal(KEYS, token, question_id="q-1")

    assert error.reason is LinkReason.WRONG_QUESTION
    assert error.question_id == "q-1"


def test_link_error_is_a_wait_error_and_a_value_error_with_a_reason_string():
    error = refusal(KEYS, "nonsense")

    assert isinstance(error, WaitError)
    assert isinstance(error, ValueError)
    assert error.reason == "malformed"
    assert {r.value for r in LinkReason} == {"malformed", "unknown_key", "tampered", "expired", "wrong_question"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"expires_at": T0}, "the link would be expired already"),
        ({"expires_at": T0 - timedelta(hours=1)}, "the link would be expired already"),
        ({"action": ""}, "action must be a non-empty string"),
        ({"question_id": ""}, "question_id must be a non-empty string"),
        ({"approver": ""}, "approver must be a non-empty string or None"),
        ({"now": datetime(2030, 1, 1)}, "now must be timezone-aware"),
    ],
)
def test_minting_refuses_what_cannot_make_a_usable_link(change: dict[str, Any], message: str):
    with pytest.raises(ValueError, match=re.escape(message)):
        token_for(**change)


# -- rotation ---------------------------------------------------------------------------------------------------


def test_rotation_keeps_a_link_in_flight_valid_and_new_links_use_the_new_key():
    # GIVEN a link signed while k1 was active
    old_keys = LinkKeys.parse(secret("k1", k1=K1))
    in_flight = token_for(old_keys)

    # WHEN the operator adds k2 and makes it active
    rotated = LinkKeys.parse(secret("k2", k1=K1, k2=K2))

    # THEN the old link still verifies, under k1, and new links are signed with k2
    assert verify_token(rotated, in_flight, question_id="q-1", now=T0).kid == "k1"
    fresh = token_for(rotated)
    assert fresh.split(".")[1] == "k2"
    assert verify_token(rotated, fresh, question_id="q-1", now=T0).kid == "k2"


def test_a_link_signed_with_a_rotated_out_key_is_unknown_key():
    # GIVEN a link signed with k1, and k1 later removed from the secret
    in_flight = token_for(LinkKeys.parse(secret("k1", k1=K1, k2=K2)))
    after = LinkKeys.parse(secret("k2", k2=K2))

    error = refusal(after, in_flight)

    assert error.reason is LinkReason.UNKNOWN_KEY
    assert "ask for a new link" in error.message


# -- the key secret ---------------------------------------------------------------------------------------------


def test_the_secret_names_the_active_key_and_lists_every_verifying_key():
    keys = LinkKeys.parse(secret("k2", k1=K1, k2=K2))

    assert keys.active == "k2"
    assert keys.kids == ("k1", "k2")
    assert keys.keys["k1"] == K1.encode("utf-8")


def test_a_key_of_exactly_32_characters_is_accepted_and_31_refused():
    assert LinkKeys.parse(secret(k1="x" * 32)).active == "k1"

    with pytest.raises(ConfigurationError) as caught:
        LinkKeys.parse(secret(k1="x" * 31))

    assert caught.value.message == (
        "AGENT_WAIT_LINK_KEYS_ARN: key 'k1' is shorter than 32 characters; make one with: openssl rand -base64 48"
    )
    assert caught.value.variables == ("AGENT_WAIT_LINK_KEYS_ARN",)


def test_key_length_counts_characters_not_bytes():
    with pytest.raises(ConfigurationError, match="shorter than 32 characters"):
        LinkKeys.parse(secret(k1="\u00e9" * 31))  # 62 UTF-8 bytes, but only 31 characters


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "the link-keys secret must be a JSON object such as"),
        ('["k1"]', "the link-keys secret must be a JSON object such as"),
        ("", "the link-keys secret must be a JSON object such as"),
        (json.dumps({"k1": K1}), '"active" must name the key that signs new links'),
        (json.dumps({"active": 1, "k1": K1}), '"active" must name the key that signs new links'),
        (
            json.dumps({"active": "k2", "k1": K1}),
            '"active" names key \'k2\', which the secret does not hold; add that key, or set "active" to one',
        ),
        (json.dumps({"active": "k1", "k1": 12345}), "key 'k1' must be a string (the secret text), not int"),
        (json.dumps({"active": "k1", "k1": K1, "bad.id": K2}), "member 3's name is not a key id"),
    ],
)
def test_secret_parsing_errors_say_what_is_wrong(text: str, problem: str):
    with pytest.raises(ConfigurationError) as caught:
        LinkKeys.parse(text)

    assert problem in caught.value.message
    assert caught.value.message.startswith("AGENT_WAIT_LINK_KEYS_ARN: ")


def test_every_problem_with_the_secret_is_reported_at_once_and_no_key_is_quoted():
    pasted = "p" * 40 + "+/8="  # a secret pasted where a key id belongs
    text = json.dumps({"active": "k3", "k1": "short-secret", pasted: K2, "k2": ["not", "text"]})

    with pytest.raises(ConfigurationError) as caught:
        LinkKeys.parse(text)

    assert len(caught.value.problems) == 4, caught.value.problems
    for value in ("short-secret", pasted, K2):
        assert value not in caught.value.message


def test_keys_never_show_in_a_repr():
    keys = LinkKeys.parse(secret("k2", k1=K1, k2=K2))

    assert K1 not in repr(keys)
    assert K2 not in repr(keys)
    assert "k2" in repr(keys)


def test_keys_built_directly_are_checked_too():
    with pytest.raises(ConfigurationError, match=re.escape("the active key 'k9' is not one of the keys given")):
        LinkKeys(active="k9", keys={"k1": K1.encode()})
    with pytest.raises(ConfigurationError, match=re.escape("key 'k1' must be at least 32 bytes")):
        LinkKeys(active="k1", keys={"k1": b"short"})


# -- URLs and one link per action -------------------------------------------------------------------------------


def test_the_token_rides_in_the_fragment_which_no_server_sees():
    token = token_for()

    url = link_url("https://api.example.com/prod/", "q-1", token)

    assert url == f"https://api.example.com/prod/questions/q-1/confirm#{token}"
    parts = urllib.parse.urlsplit(url)
    assert token not in parts.path + parts.query, "what a browser sends (path and query) holds no token"
    assert parts.fragment == token


def test_a_question_id_is_percent_encoded_into_the_path():
    assert link_url("https://api.example.com", "q/1 x", "t").startswith("https://api.example.com/questions/q%2F1%20x/")


def question_envelope(
    *, timeout: str | None = "PT4H", actions: tuple[str, ...] = ("approve", "reject")
) -> WaitEnvelope:
    question = Question(
        "order-1",
        "q-1",
        {"function": "refund", "args": {"amount": 5}},
        policy=WaitPolicy(timeout=timeout, allowed_actions=("approve", "reject")),
        asked_at=T0,
    )
    return WaitEnvelope.create(question)


def test_answer_links_gives_one_verifying_link_per_allowed_action():
    links = answer_links(KEYS, "https://api.example.com", question_envelope(), now=T0, approver="alice@example.com")

    assert sorted(links) == ["approve", "reject"]
    for action, url in links.items():
        claims = verify_token(KEYS, urllib.parse.urlsplit(url).fragment, question_id="q-1", now=T0)
        assert (claims.action, claims.approver, claims.expires_at) == (action, "alice@example.com", DEADLINE)


def test_answer_links_for_a_question_without_deadline_last_the_maximum_lifetime():
    links = answer_links(KEYS, "https://api.example.com", question_envelope(timeout=None), now=T0)

    claims = verify_token(KEYS, urllib.parse.urlsplit(links["approve"]).fragment, question_id="q-1", now=T0)
    assert claims.expires_at == T0 + MAX_LINK_LIFETIME
    assert claims.approver is None


def test_a_question_only_some_may_answer_gets_no_links():
    # GIVEN a question only finance may answer (a link proves no group)
    envelope = WaitEnvelope.create(
        Question(
            "order-1",
            "q-1",
            {"function": "refund"},
            policy=WaitPolicy(timeout="PT4H", allowed_actions=("approve", "reject"), answerer_groups=("finance",)),
            asked_at=T0,
        )
    )

    # THEN no link is made for it
    assert answer_links(KEYS, "https://api.example.com", envelope, now=T0) == {}


def test_answer_links_for_an_overdue_question_are_none():
    assert answer_links(KEYS, "https://api.example.com", question_envelope(), now=DEADLINE) == {}


def test_a_quorum_question_gets_links_only_when_they_are_made_for_a_named_approver():
    # Links made for nobody would all vote as one "signed link": a quorum must count people.
    question = Question(
        "order-1",
        "q-1",
        {"function": "refund", "args": {"amount": 5}},
        WaitPolicy(timeout="PT4H", quorum=2),
        asked_at=T0,
    )
    envelope = WaitEnvelope.create(question)
    assert answer_links(KEYS, "https://api.example.com", envelope, now=T0) == {}
    named = answer_links(KEYS, "https://api.example.com", envelope, now=T0, approver="alice@example.com")
    assert set(named) == {"approve", "reject"}


# -- logs ---------------------------------------------------------------------------------------------------------


def test_no_token_reaches_any_log_line(caplog: pytest.LogCaptureFixture):
    # GIVEN every log record at every level captured
    caplog.set_level(logging.DEBUG)
    keys = LinkKeys.parse(secret("k1", k1=K1, k2=K2))
    token = token_for(keys)
    _version, _kid, payload, signature = token.split(".")

    # WHEN links are minted, verified and refused for every reason
    verify_token(keys, token, question_id="q-1", now=T0)
    for bad, question_id, now in [
        (token + "x", "q-1", T0),
        (token, "q-2", T0),
        (token, "q-1", DEADLINE),
        (token.replace(".k1.", ".k9."), "q-1", T0),
        ("garbage", "q-1", T0),
    ]:
        with pytest.raises(LinkError):
            verify_token(keys, bad, question_id=question_id, now=now)
    answer_links(keys, "https://api.example.com", question_envelope(), now=T0)

    # THEN no line holds the token, its payload, its signature or a key
    for record in caplog.records:
        line = f"{record.getMessage()} {record.__dict__}"
        for value in (token, payload, signature, K1, K2):
            assert value not in line


# -- the secret in Secrets Manager (the emulator) -----------------------------------------------------------------


def test_load_reads_the_keys_from_a_real_secret(aws_client: Any, unique: str):
    client = aws_client("secretsmanager")
    arn = client.create_secret(Name=f"link-keys-{unique}", SecretString=secret("k2", k1=K1, k2=K2))["ARN"]

    keys = LinkKeys.load(arn, client=client)

    assert (keys.active, keys.kids) == ("k2", ("k1", "k2"))


def test_load_reports_a_missing_secret_with_the_variable_and_aws_error_code(aws_client: Any, unique: str):
    arn = f"arn:aws:secretsmanager:us-east-1:123456789012:secret:missing-{unique}-AbCdEf"

    with pytest.raises(ConfigurationError) as caught:
        LinkKeys.load(arn, client=aws_client("secretsmanager"))

    message = caught.value.message
    assert message.startswith(
        f"AGENT_WAIT_LINK_KEYS_ARN={arn!r}: cannot read the link keys (ResourceNotFoundException)"
    )
    assert "secretsmanager:GetSecretValue" in message
    assert caught.value.variables == ("AGENT_WAIT_LINK_KEYS_ARN",)


def test_load_names_the_secret_when_its_content_is_wrong_without_quoting_it(aws_client: Any, unique: str):
    client = aws_client("secretsmanager")
    arn = client.create_secret(Name=f"bad-link-keys-{unique}", SecretString=secret(k1="too-short-secret"))["ARN"]

    with pytest.raises(ConfigurationError) as caught:
        LinkKeys.load(arn, client=client)

    assert caught.value.message.startswith(f"AGENT_WAIT_LINK_KEYS_ARN={arn!r}: key 'k1' is shorter than 32")
    assert "too-short-secret" not in caught.value.message


def test_load_refuses_a_binary_secret(aws_client: Any, unique: str):
    client = aws_client("secretsmanager")
    arn = client.create_secret(Name=f"binary-link-keys-{unique}", SecretBinary=secret().encode())["ARN"]

    with pytest.raises(ConfigurationError, match="the secret is binary; store the link keys as text"):
        LinkKeys.load(arn, client=client)


def test_the_api_context_loads_the_link_keys_when_their_secret_is_set(
    aws_client: Any, unique: str, moto_server: str, monkeypatch: pytest.MonkeyPatch
):
    import boto3

    from agent_wait.host import HostSettings
    from agent_wait.host.api import ApiContext

    # GIVEN the answer API's settings, with and without a link-keys secret on the emulator
    arn = aws_client("secretsmanager").create_secret(Name=f"api-link-keys-{unique}", SecretString=secret())["ARN"]
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    session = boto3.Session(region_name="us-east-1")
    base = {"AGENT_WAIT_TABLE": "questions", "AGENT_WAIT_QUEUE_URL": f"{moto_server}/123456789012/entry.fifo"}

    # WHEN the API's context is built
    with_links = ApiContext.from_settings(
        HostSettings.from_env("api", {**base, "AGENT_WAIT_LINK_KEYS_ARN": arn}), session=session
    )
    without_links = ApiContext.from_settings(HostSettings.from_env("api", base), session=session)

    # THEN it holds the keys only when the secret is named
    assert isinstance(with_links.link_keys, LinkKeyring)
    assert with_links.link_keys.keys().kids == ("k1",)
    assert without_links.link_keys is None


# -- rotation reaches warm functions (LinkKeyring) -----------------------------------------------------------------


class Clock:
    """Monotonic seconds the test moves by hand."""

    def __init__(self) -> None:
        self.seconds = 1000.0

    def __call__(self) -> float:
        return self.seconds


class Secret:
    """A secret whose value the test changes, counting reads; `fail` makes the next reads raise as AWS would."""

    def __init__(self, value: str) -> None:
        self.value, self.reads, self.fail = value, 0, False

    def load(self) -> LinkKeys:
        self.reads += 1
        if self.fail:
            raise ConfigurationError(["AGENT_WAIT_LINK_KEYS_ARN: cannot read the link keys (ThrottlingException)"])
        return LinkKeys.parse(self.value)


def test_a_warm_api_verifies_a_link_signed_under_a_key_added_after_its_cold_start():
    # GIVEN an API that read k1 at cold start, then the secret rotates to k2 and the router signs with k2
    store, clock = Secret(secret("k1", k1=K1)), Clock()
    ring = LinkKeyring(store.load, monotonic=clock)
    store.value = secret("k2", k1=K1, k2=K2)
    rotated = LinkKeys.parse(store.value)
    token = token_for(rotated)

    # WHEN the link is used on the warm API a second later
    clock.seconds += 1
    claims = ring.verify(token, question_id="q-1", now=T0)

    # THEN it read the secret once more and the link works
    assert (claims.action, claims.kid, store.reads) == ("approve", "k2", 2)


def test_links_in_flight_keep_working_through_a_rotation_and_a_removed_key_stops_after_max_age():
    store, clock = Secret(secret("k1", k1=K1)), Clock()
    ring = LinkKeyring(store.load, monotonic=clock, max_age=timedelta(minutes=5))
    old_link = token_for(LinkKeys.parse(store.value))

    # WHEN k2 becomes active with k1 still listed: the link signed under k1 still works, new ones use k2
    store.value = secret("k2", k1=K1, k2=K2)
    clock.seconds += 301
    assert ring.verify(old_link, question_id="q-1", now=T0).kid == "k1"
    assert ring.keys().active == "k2"

    # WHEN k1 is removed: within max_age the warm function still holds it, after max_age the link is refused
    store.value = secret("k2", k2=K2)
    clock.seconds += 10
    assert ring.verify(old_link, question_id="q-1", now=T0).kid == "k1"
    clock.seconds += 300
    with pytest.raises(LinkError) as caught:
        ring.verify(old_link, question_id="q-1", now=T0)
    assert caught.value.reason is LinkReason.UNKNOWN_KEY


def test_the_same_unknown_key_id_reads_the_secret_at_most_once_per_min_refresh():
    store, clock = Secret(secret("k1", k1=K1)), Clock()
    ring = LinkKeyring(store.load, monotonic=clock, min_refresh=timedelta(seconds=30))
    forged = token_for(LinkKeys.parse(secret("k9", k9=K2)))

    # WHEN a flood of links under an unknown key arrives
    for _ in range(20):
        with pytest.raises(LinkError, match="no longer in use"):
            ring.verify(forged, question_id="q-1", now=T0)
        clock.seconds += 1

    # THEN the secret was read at cold start, then once for that key id
    assert store.reads == 1 + 1


def test_a_forged_key_id_does_not_keep_a_genuine_new_key_out():
    # GIVEN a warm API that read k1, a forged link under a made-up key id, then a rotation to k2
    store, clock = Secret(secret("k1", k1=K1)), Clock()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.seconds += seconds

    ring = LinkKeyring(store.load, monotonic=clock, sleep=sleep)
    with pytest.raises(LinkError, match="no longer in use"):
        ring.verify(token_for(LinkKeys.parse(secret("k9", k9=K2))), question_id="q-1", now=T0)
    store.value = secret("k2", k1=K1, k2=K2)

    # WHEN a genuine link under k2 arrives a tenth of a second after the forged one
    clock.seconds += 0.1
    claims = ring.verify(token_for(LinkKeys.parse(store.value)), question_id="q-1", now=T0)

    # THEN it waited out the rest of the interval, read the secret again and works
    assert (claims.kid, store.reads) == ("k2", 3)
    assert sleeps == [pytest.approx(0.9)]


def test_ever_new_forged_key_ids_read_the_secret_at_most_once_per_interval():
    store, clock = Secret(secret("k1", k1=K1)), Clock()

    def sleep(seconds: float) -> None:
        clock.seconds += seconds

    ring = LinkKeyring(store.load, monotonic=clock, sleep=sleep, min_interval=timedelta(seconds=1))
    start = clock.seconds

    # WHEN 50 links under 50 different made-up key ids arrive at once
    for n in range(50):
        with pytest.raises(LinkError, match="no longer in use"):
            ring.verify(token_for(LinkKeys.parse(secret(f"forged{n}", **{f"forged{n}": K2}))), question_id="q", now=T0)

    # THEN the reads they caused were at least a second apart
    assert store.reads - 1 == 50
    assert clock.seconds - start >= 49


def test_a_failed_reread_keeps_the_keys_in_hand_and_says_so_in_the_log(caplog: pytest.LogCaptureFixture):
    store, clock = Secret(secret("k1", k1=K1)), Clock()
    ring = LinkKeyring(store.load, monotonic=clock)
    link = token_for(LinkKeys.parse(store.value))

    # WHEN Secrets Manager fails after max_age
    store.fail = True
    clock.seconds += 301
    with caplog.at_level(logging.WARNING, logger="agent_wait.host"):
        claims = ring.verify(link, question_id="q-1", now=T0)

    # THEN the link still works on the keys read before, and the warning has the AWS error code
    assert claims.kid == "k1"
    assert "ThrottlingException" in caplog.text
    assert K1 not in caplog.text


def test_a_keyring_whose_first_read_fails_raises_at_cold_start():
    store = Secret(secret())
    store.fail = True

    with pytest.raises(ConfigurationError, match="cannot read the link keys"):
        LinkKeyring(store.load)
