"""The push channel: who is pushed to, what a push holds, once per person per step, and gone subscriptions; pushed with
`pywebpush` to the local push service over real HTTP, and decrypted as the device would."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.push_device import Device

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.push import (
    InMemoryPushSends,
    InMemoryPushSubscriptions,
    PushAnnounce,
    Subscription,
    VapidKeys,
    WebPushSender,
    audience,
    parse_subscription,
    push_payload,
)
from agent_wait.contract.envelope import Transition
from agent_wait.errors import ArgumentError, ConfigurationError, PushDeliveryError
from agent_wait.host import HostSettings
from agent_wait.local.push_service import LocalPushService

NOW = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
INBOX = "https://api.example.com/inbox"
KEYS = VapidKeys.generate()


@pytest.fixture(scope="module")
def service() -> Iterator[LocalPushService]:
    with LocalPushService() as running:
        yield running


def envelope(**policy: Any) -> WaitEnvelope:
    asked = {"function": "refund", "args": {"order_id": "A-77", "amount": 900}}
    question = Question("order-1", f"q-{len(policy)}", asked, policy=WaitPolicy(timeout="PT4H", **policy))
    return WaitEnvelope.create(question, now=NOW)


def subscribed(service: LocalPushService, person: str, *, groups: tuple[str, ...] = (), subject: str | None = None):
    device = Device(service.subscribe(KEYS.public_key))
    keys = parse_subscription(device.subscription(), allow_loopback=True)
    return device, Subscription(person, keys.endpoint, keys.p256dh, keys.auth, subject=subject, groups=groups)


def announcer(subscriptions: InMemoryPushSubscriptions, sends: InMemoryPushSends | None = None) -> PushAnnounce:
    return PushAnnounce(
        subscriptions,
        sends or InMemoryPushSends(),
        WebPushSender(KEYS, "mailto:ops@example.com"),
        inbox_url=INBOX,
        clock=lambda: NOW,
    )


# -- who --------------------------------------------------------------------------------------------------------------


def test_a_push_goes_to_the_groups_and_principals_the_policy_names_and_nobody_else() -> None:
    # GIVEN three subscribers: one in finance, one named by principal (by subject), one neither
    people = [
        Subscription("ana@example.com", "https://p.example.com/1", "k", "a", groups=("finance",)),
        Subscription("iss#bob", "https://p.example.com/2", "k", "a", subject="iss#bob"),
        Subscription("eve@example.com", "https://p.example.com/3", "k", "a", groups=("sales",)),
    ]
    # WHEN a question names finance and bob
    asked = envelope(answerer_groups=["finance"], answerer_principals=["iss#bob"])
    # THEN only ana and bob are pushed to
    assert [s.person for s in audience(asked, people)] == ["ana@example.com", "iss#bob"]


def test_a_principal_written_as_an_email_principal_reaches_that_person() -> None:
    people = [Subscription("dana@example.com", "https://p.example.com/1", "k", "a")]
    assert audience(envelope(answerer_principals=["email:Dana@Example.com"]), people) == people


def test_a_question_anyone_may_answer_goes_to_every_subscriber() -> None:
    people = [Subscription(f"p{i}@example.com", f"https://p.example.com/{i}", "k", "a") for i in range(3)]
    assert audience(envelope(), people) == people


# -- what -------------------------------------------------------------------------------------------------------------


def test_a_push_says_what_is_asked_and_the_deadline_but_no_argument_value() -> None:
    payload = push_payload(envelope(), Transition.CREATED, inbox_url=INBOX, now=NOW)
    text = json.dumps(payload)
    assert "A-77" not in text, text
    assert "900" not in text, text
    assert payload["body"].startswith("refund(order_id, amount)")
    assert "Answer by Tue 1 Jan 13:00 UTC (in about 4 h)" in payload["body"]
    assert payload["url"] == f"{INBOX}#/questions/{payload['question_id']}"
    assert payload["title"] == "Your answer is needed"


def test_a_policy_that_allows_it_shows_the_argument_values() -> None:
    payload = push_payload(envelope(push_arguments=True), Transition.CREATED, inbox_url=INBOX, now=NOW)
    assert payload["body"].startswith('refund(order_id="A-77", amount=900)')


def test_a_prompt_is_said_by_its_first_line() -> None:
    question = Question("t", "q-prompt", {"prompt": "Ship the release?\nDetails follow."}, policy=WaitPolicy())
    payload = push_payload(WaitEnvelope.create(question, now=NOW), Transition.CREATED, inbox_url=INBOX, now=NOW)
    assert payload["body"] == "Ship the release?"


# -- sending ----------------------------------------------------------------------------------------------------------


def test_each_subscribed_person_gets_one_encrypted_push_they_can_read(service: LocalPushService) -> None:
    # GIVEN two subscribers in finance
    subscriptions = InMemoryPushSubscriptions()
    devices = []
    for person in ("ana@example.com", "dana@example.com"):
        device, subscription = subscribed(service, person, groups=("finance",))
        subscriptions.put(subscription)
        devices.append(device)
    asked = envelope(answerer_groups=["finance"])
    # WHEN the question is announced
    announcer(subscriptions).deliver(asked, Transition.CREATED)
    # THEN each device got one push, VAPID-signed and aes128gcm-encrypted, that decrypts to the question's link
    for device in devices:
        pushes = service.pushes_to(device.endpoint)
        assert len(pushes) == 1
        assert pushes[0].headers["content-encoding"] == "aes128gcm"
        assert pushes[0].headers["authorization"].startswith("vapid t=")
        assert b"refund" not in pushes[0].body  # encrypted on the wire
        assert device.decrypt(pushes[0].body)["url"] == f"{INBOX}#/questions/{asked.question_id}"


def test_a_redelivered_created_pushes_nothing_twice_and_a_reminder_pushes_again_once(service: LocalPushService) -> None:
    subscriptions, sends = InMemoryPushSubscriptions(), InMemoryPushSends()
    device, subscription = subscribed(service, "ana@example.com")
    subscriptions.put(subscription)
    asked = envelope()
    push = announcer(subscriptions, sends)
    # WHEN wait.created is delivered twice
    push.deliver(asked, Transition.CREATED)
    push.deliver(asked, Transition.CREATED)
    # THEN one push
    assert len(service.pushes_to(device.endpoint)) == 1
    # AND the first reminder, delivered twice, pushes once more
    reminder = WaitEnvelope.from_dict({**asked.to_dict(), "type": "wait.reminder", "progress": {"reminder": 1}})
    push.deliver(reminder, Transition.REMINDER)
    push.deliver(reminder, Transition.REMINDER)
    pushes = service.pushes_to(device.endpoint)
    assert len(pushes) == 2
    assert device.decrypt(pushes[1].body)["title"] == "Reminder: your answer is needed"


def test_an_outcome_pushes_nothing(service: LocalPushService) -> None:
    subscriptions = InMemoryPushSubscriptions()
    device, subscription = subscribed(service, "ana@example.com")
    subscriptions.put(subscription)
    announcer(subscriptions).deliver(envelope(), Transition.ANSWERED)
    assert service.pushes_to(device.endpoint) == []


@pytest.mark.parametrize("status", [410, 404])
def test_a_subscription_the_push_service_reports_gone_is_removed(service: LocalPushService, status: int) -> None:
    # GIVEN two subscribers, one whose push service now says the subscription is gone
    subscriptions = InMemoryPushSubscriptions()
    gone_device, gone = subscribed(service, "gone@example.com")
    kept_device, kept = subscribed(service, "kept@example.com")
    subscriptions.put(gone)
    subscriptions.put(kept)
    service.gone(gone_device.endpoint, status)
    # WHEN a question is announced
    announcer(subscriptions).deliver(envelope(), Transition.CREATED)
    # THEN the gone subscription is removed, without failing the delivery, and the other is pushed to
    assert subscriptions.of("gone@example.com") == []
    assert subscriptions.of("kept@example.com") == [kept]
    assert len(service.pushes_to(kept_device.endpoint)) == 1


def test_a_push_service_refusing_fails_the_delivery_and_the_next_one_retries_only_that_device(
    service: LocalPushService,
) -> None:
    # GIVEN a device subscribed with another application server key: its push service refuses our pushes (403)
    subscriptions, sends = InMemoryPushSubscriptions(), InMemoryPushSends()
    other = VapidKeys.generate()
    refusing = Device(service.subscribe(other.public_key))
    keys = parse_subscription(refusing.subscription(), allow_loopback=True)
    subscriptions.put(Subscription("ana@example.com", keys.endpoint, keys.p256dh, keys.auth))
    good_device, good = subscribed(service, "dana@example.com")
    subscriptions.put(good)
    push = announcer(subscriptions, sends)
    asked = envelope()
    # WHEN it is announced
    with pytest.raises(PushDeliveryError, match=r"1 push\(es\) failed: device [\w-]+: 403"):
        push.deliver(asked, Transition.CREATED)
    # THEN the subscription is kept (it is not gone), and a redelivery pushes the good device nothing more
    assert len(subscriptions.of("ana@example.com")) == 1
    with pytest.raises(PushDeliveryError):
        push.deliver(asked, Transition.CREATED)
    assert len(service.pushes_to(good_device.endpoint)) == 1


# -- input ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"endpoint": "http://push.example.com/x", "keys": {}}, "endpoint"),
        ({"endpoint": "https://10.0.0.1/x", "keys": {}}, "endpoint"),
        ({"endpoint": "https://localhost/x", "keys": {}}, "endpoint"),
        ({"endpoint": "https://push.example.com/x"}, "keys"),
        ({"endpoint": "https://push.example.com/x", "keys": {"p256dh": "AAAA", "auth": "AAAA"}}, "keys.p256dh"),
        ("not an object", "subscription"),
    ],
)
def test_a_subscription_that_is_not_a_push_services_is_refused_naming_what_is_wrong(body: Any, field: str) -> None:
    with pytest.raises(ArgumentError) as raised:
        parse_subscription(body)
    assert raised.value.argument == field


def test_loopback_endpoints_are_taken_only_when_allowed() -> None:
    device = Device("http://127.0.0.1:9/push/x")
    with pytest.raises(ArgumentError, match=re.escape("endpoint must be the push service's https:// URL")):
        parse_subscription(device.subscription())
    assert parse_subscription(device.subscription(), allow_loopback=True).endpoint == device.endpoint


def test_a_secret_that_is_not_a_vapid_key_pair_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigurationError, match=r"AGENT_WAIT_PUSH_KEYS_ARN: the secret must be JSON") as raised:
        VapidKeys.parse('{"public_key": "abc", "private_key": "s3cret"}', variable="AGENT_WAIT_PUSH_KEYS_ARN")
    assert "s3cret" not in str(raised.value)
    assert "private_key=<not shown>" in repr(KEYS)
    assert VapidKeys.parse(KEYS.to_secret(), variable="X") == KEYS


ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:push-AbCdEf"
BASE = {"AGENT_WAIT_TABLE": "t", "AGENT_WAIT_QUEUE_URL": "https://sqs/q"}


def test_push_settings_name_every_missing_part() -> None:
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env(
            "sweep", environ={**BASE, "AGENT_WAIT_PUSH_KEYS_ARN": ARN, "AGENT_WAIT_PUSH_SUBJECT": "x"}
        )
    text = str(raised.value)
    assert "AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE is not set" in text
    assert "AGENT_WAIT_PUSH_SENDS_TABLE is not set" in text
    assert "AGENT_WAIT_PUSH_SUBJECT must be 'mailto:<address>' or an https:// URL" in text


def test_the_api_needs_no_sends_table() -> None:
    environ = {**BASE, "AGENT_WAIT_PUSH_KEYS_ARN": ARN, "AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE": "subs"}
    settings = HostSettings.from_env("api", environ=environ)
    assert settings.push is not None
    assert settings.push.sends_table is None


def test_times_are_said_in_utc() -> None:
    payload = push_payload(envelope(), Transition.CREATED, inbox_url=INBOX, now=NOW + timedelta(hours=5))
    assert "The deadline passed (Tue 1 Jan 13:00 UTC)" in payload["body"]


def test_push_arguments_is_a_policy_field_that_rides_in_rules_and_round_trips() -> None:
    from agent_wait.errors import PolicyError

    policy = WaitPolicy(push_arguments=True)
    assert policy.rules()["push_arguments"] is True
    assert WaitPolicy.from_dict(policy.to_dict()).push_arguments is True
    assert "push_arguments" not in WaitPolicy().rules()  # off by default, and then not in the envelope at all
    with pytest.raises(PolicyError, match=re.escape("push_arguments must be True or False; got 'yes'")):
        WaitPolicy(push_arguments="yes")  # pyright: ignore[reportArgumentType]


def test_the_dynamodb_subscriptions_keep_one_per_person_and_device_and_read_back_every_page(
    aws_client: Any, unique: str
) -> None:
    from agent_wait.channels.push import DynamoDbPushSubscriptions
    from agent_wait.local.push_setup import push_subscriptions_table

    dynamodb = aws_client("dynamodb")
    table = DynamoDbPushSubscriptions(push_subscriptions_table(dynamodb, f"push-subs-{unique}"), client=dynamodb)
    phone = Subscription(
        "ana@example.com", "https://p.example.com/phone", "k", "a", subject="iss#ana", groups=("finance",)
    )
    # WHEN ana subscribes her phone twice (the second with fresh groups) and her laptop once
    table.put(phone)
    table.put(Subscription("ana@example.com", phone.endpoint, "k2", "a2", subject="iss#ana", groups=("finance", "ops")))
    table.put(Subscription("ana@example.com", "https://p.example.com/laptop", "k", "a"))
    # THEN she has two, the phone's replaced, each read back whole
    found = {s.endpoint: s for s in table.of("ana@example.com")}
    assert sorted(found) == ["https://p.example.com/laptop", phone.endpoint]
    assert (found[phone.endpoint].p256dh, found[phone.endpoint].groups) == ("k2", ("finance", "ops"))
    assert found[phone.endpoint].subject == "iss#ana"
    assert sorted(s.endpoint for s in table.every()) == sorted(found)
    # AND removing one says whether there was one
    assert table.remove("ana@example.com", phone.device) is True
    assert table.remove("ana@example.com", phone.device) is False
    assert [s.endpoint for s in table.of("ana@example.com")] == ["https://p.example.com/laptop"]


def test_an_escalation_pushes_once_to_its_widened_audience(service: LocalPushService) -> None:
    # GIVEN a finance question pushed to ana, and max in finance-managers, whom it did not reach
    subscriptions, sends = InMemoryPushSubscriptions(), InMemoryPushSends()
    ana_device, ana = subscribed(service, "ana@example.com", groups=("finance",))
    max_device, manager = subscribed(service, "max@example.com", groups=("finance-managers",))
    subscriptions.put(ana)
    subscriptions.put(manager)
    asked = envelope(answerer_groups=["finance"])
    push = announcer(subscriptions, sends)
    push.deliver(asked, Transition.CREATED)
    assert (len(service.pushes_to(ana_device.endpoint)), len(service.pushes_to(max_device.endpoint))) == (1, 0)
    # WHEN its escalation step widens the audience to finance-managers, and is delivered twice
    widened = {**asked.rules, "answerers": {"groups": ["finance", "finance-managers"], "principals": []}}
    escalated = WaitEnvelope.from_dict(
        {**asked.to_dict(), "type": "wait.escalated", "progress": {"escalation": 1}, "rules": widened}
    )
    push.deliver(escalated, Transition.ESCALATED)
    push.deliver(escalated, Transition.ESCALATED)
    # THEN each of them gets the escalation once
    titles = [max_device.decrypt(p.body)["title"] for p in service.pushes_to(max_device.endpoint)]
    assert titles == ["Escalated: your answer is needed"]
    assert len(service.pushes_to(ana_device.endpoint)) == 2
