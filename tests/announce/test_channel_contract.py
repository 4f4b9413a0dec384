"""Every declared channel against the channel contract (`agent_wait.testing.channel_contract`), one opt-in each.

A channel opts in with one harness: its declaration (loaded from `agent_wait.channels.CHANNELS`), its announcer over
the local fake of its service (a webhook receiver, the fake Slack, the fake Teams webhook, an SES stand-in, a log
handler), its record on the emulator's DynamoDB where it declares one, and its door over an in-memory ledger where
it has one. Every rule then runs on every channel; a rule about a part a channel declares absent passes without
asserting, and `declares_every_part` holds each harness to test exactly what its channel declares.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import hmac
import json
import logging
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.support.fake_slack import FakeSlack
from tests.support.fake_teams import FakeTeams

from agent_wait.channels import CHANNELS
from agent_wait.channels.contract import Channel, RecordKind
from agent_wait.channels.records import DynamoDbChannelRecord, InMemoryChannelRecord
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.policy.wait_policy import WaitPolicy
from agent_wait.testing import channel_contract
from agent_wait.testing.announce_contract import AnnounceHarness, sample_envelope
from agent_wait.testing.channel_contract import ChannelFactory, ChannelHarness, DoorHarness

from .conftest import start_receiver

NOW = datetime(2026, 9, 11, 9, 30, tzinfo=UTC)
"""Half an hour after the suite's sample questions are asked; every clock here stands still at it."""
DECLARED = {entry.name: entry for entry in CHANNELS}
Delivers = Iterable[Transition | str] | None


@dataclass
class Parts:
    """What an opt-in builds on: servers stopped after the test, and the emulator's DynamoDB when a record asks."""

    stack: ExitStack
    request: pytest.FixtureRequest

    def record_table(self) -> tuple[str, Any]:
        """A fresh table keyed as every channel record is, on the emulator; its name and a client."""
        from agent_wait.local.tables import question_keyed_table

        dynamodb = self.request.getfixturevalue("aws_client")("dynamodb")
        return question_keyed_table(dynamodb, f"channel-record-{uuid.uuid4().hex[:12]}"), dynamodb

    def dynamodb_record(self, kind: RecordKind[Any]) -> Callable[[], DynamoDbChannelRecord[Any]]:
        def make() -> DynamoDbChannelRecord[Any]:
            table, dynamodb = self.record_table()
            return DynamoDbChannelRecord(kind, table, client=dynamodb)

        return make


def _declared(name: str) -> Any:
    return DECLARED[name].load()


# -- the plain announcers --------------------------------------------------------------------------------------------


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def log_channel(parts: Parts) -> ChannelHarness:
    from agent_wait.channels.announce import LogAnnounce

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        logger, lines = logging.Logger("agent_wait.tests.channel_contract", logging.INFO), _Lines()
        logger.addHandler(lines)

        def read_back() -> list[dict[str, Any]]:
            """One item per line written: the question and the event it is about."""
            written = [json.loads(line) for line in lines.lines]
            return [{"question_id": line["question_id"], "type": line["event"]} for line in written]

        return AnnounceHarness(LogAnnounce(logger, delivers=delivers), read_back=read_back, carries_envelope=False)

    return ChannelHarness(_declared("log"), announcer)


def webhook_channel(parts: Parts) -> ChannelHarness:
    from agent_wait.channels.announce import WebhookAnnounce

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        receiver = start_receiver()
        parts.stack.callback(receiver.stop)
        return AnnounceHarness(
            WebhookAnnounce(receiver.url, secret="whsec_channel_contract", timeout=2.0, delivers=delivers),
            read_back=lambda: [json.loads(body) for body in receiver.bodies()],
            break_backend=receiver.stop,
        )

    return ChannelHarness(_declared("webhook"), announcer)


def memory_channel(parts: Parts) -> ChannelHarness:
    from agent_wait.channels.announce import InMemoryAnnounce

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        memory = InMemoryAnnounce(delivers=delivers)
        return AnnounceHarness(memory, read_back=lambda: [envelope.to_dict() for _, envelope in memory.events])

    return ChannelHarness(_declared("memory"), announcer)


# -- shaped webhooks -------------------------------------------------------------------------------------------------

SHAPED_TEMPLATE = '{"question_id": {{ question_id }}, "type": {{ event }}, "text": {{ "Waiting: " ~ question_id }}}'


def shaped_channel(parts: Parts) -> ChannelHarness:
    from agent_wait.channels.shaped import ShapedWebhookAnnounce

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        receiver = start_receiver()
        parts.stack.callback(receiver.stop)
        steps = [Transition.parse(step).event_type for step in delivers] if delivers is not None else ["default"]
        shaped = ShapedWebhookAnnounce(receiver.url, templates=dict.fromkeys(steps, SHAPED_TEMPLATE), timeout=2.0)
        return AnnounceHarness(
            shaped,
            read_back=lambda: [json.loads(body) for body in receiver.bodies()],
            break_backend=receiver.stop,
            carries_envelope=False,
        )

    return ChannelHarness(_declared("shaped"), announcer)


# -- Slack ---------------------------------------------------------------------------------------------------------

SLACK_SECRET = "channel-contract-slack-signing-secret"


def _question_of(message: Any) -> str | None:
    return ((message.metadata or {}).get("event_payload") or {}).get("question_id")


def slack_channel(parts: Parts) -> ChannelHarness:
    from slack_sdk import WebClient

    from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackRouting

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        slack = parts.stack.enter_context(FakeSlack())
        client = WebClient(token=slack.token, base_url=f"{slack.url}/api/", retry_handlers=[])
        routing = SlackRouting(channels={"*": "C0ALL"})
        announce = SlackAnnounce(client, routing, InMemorySlackMessages(), clock=lambda: NOW, delivers=delivers)

        def read_back() -> list[dict[str, Any]]:
            """One item per post, per redraw of a post, and per reply in its thread."""
            items: list[dict[str, Any]] = []
            for message in slack.messages(include_deleted=True):
                items += [{"question_id": _question_of(message)}] * (1 + message.updated)
                items += [{"question_id": _question_of(reply)} for reply in message.replies]
            return items

        return AnnounceHarness(
            announce, read_back, break_backend=slack.stop, keeps_one_per_key=True, carries_envelope=False
        )

    return ChannelHarness(
        _declared("slack"), announcer, record=parts.dynamodb_record(_declared("slack").record), door=slack_door
    )


class _SlackDirectory:
    """What the Slack door asks Slack about a person: their profile's address."""

    def users_info(self, *, user: str) -> dict[str, Any]:
        return {"ok": True, "user": {"id": user, "profile": {"email": f"{user.lower()}@example.com"}}}


def slack_door() -> DoorHarness:
    from agent_wait.channels.slack import SlackInteractions, SlackRouting
    from agent_wait.engine import AnswerService, InMemoryEntryQueue
    from agent_wait.ledger import InMemoryLedger

    ledger = InMemoryLedger()
    service = AnswerService(ledger, InMemoryEntryQueue(), clock=lambda: NOW)

    def make(service: Any) -> SlackInteractions:
        return SlackInteractions(
            signing_secret=SLACK_SECRET,
            service=service,
            find=ledger.find,
            client=_SlackDirectory(),
            routing=SlackRouting(),
            clock=lambda: NOW,
            respond=lambda url, body: None,
        )

    def ask() -> str:
        envelope = sample_envelope(policy=WaitPolicy(timeout="P3D", allowed_actions=["approve", "reject"]))
        ledger.open(envelope, now=NOW)
        return envelope.question_id

    def request(question_id: str, action: str, *, secret: str = SLACK_SECRET) -> tuple[str, dict[str, str]]:
        """A button click as Slack sends it: a form with a JSON `payload`, signed v0 over the timestamp and body."""
        payload = {
            "type": "block_actions",
            "user": {"id": "U0ANA", "team_id": "T0TEAM"},
            "actions": [{"action_id": f"agent_wait:answer:{action}", "value": question_id, "action_ts": "1.000001"}],
            "response_url": "https://hooks.slack.com/actions/T0TEAM/1/x",
        }
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        timestamp = str(int(NOW.timestamp()))
        digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
        return body, {"x-slack-request-timestamp": timestamp, "x-slack-signature": f"v0={digest}"}

    def decided(question_id: str) -> bool:
        record = ledger.find(question_id)
        return record is not None and record.status is not QuestionStatus.OPEN

    return DoorHarness(
        make,
        service,
        ask,
        request,
        signature_headers=("x-slack-request-timestamp", "x-slack-signature"),
        decided=decided,
    )


# -- Teams ---------------------------------------------------------------------------------------------------------


def _links(envelope: WaitEnvelope, *_: Any) -> dict[str, str]:
    """Links as the host signs them: one per allowed action (the token here is a stand-in)."""
    return {action: f"https://api.example.com/questions/{envelope.question_id}/confirm#{action}" for action in
            envelope.allowed_actions}  # fmt: skip


def teams_channel(parts: Parts) -> ChannelHarness:
    from agent_wait.channels.recipients import Recipient
    from agent_wait.channels.sends import InMemorySends
    from agent_wait.channels.teams import TeamsAnnounce

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        teams = parts.stack.enter_context(FakeTeams())
        announce = TeamsAnnounce(
            teams.url,
            mode="people",
            recipients=lambda envelope: [Recipient.of("ana@example.com", ["finance"])],
            links=_links,
            sends=InMemorySends(),
            attempts=1,
            timeout=2.0,
            delivers=delivers,
        )

        def read_back() -> list[dict[str, Any]]:
            return [{"question_id": b["agent_wait"]["question_id"], "type": b["agent_wait"]["event"]} for b in
                    teams.accepted()]  # fmt: skip

        return AnnounceHarness(
            announce, read_back, break_backend=teams.stop, keeps_one_per_key=True, carries_envelope=False
        )

    return ChannelHarness(_declared("teams"), announcer, record=parts.dynamodb_record(_declared("teams").record))


# -- email ---------------------------------------------------------------------------------------------------------


class _Ses:
    """SES v2's `SendEmail` for raw content: keeps each message, or refuses every one once `broken`."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.broken = False

    def send_email(self, **request: Any) -> dict[str, str]:
        if self.broken:
            raise ConnectionError("SES is unreachable")
        self.sent.append(request["Content"]["Raw"]["Data"])
        return {"MessageId": f"ses-{len(self.sent)}"}

    def read_back(self) -> list[dict[str, Any]]:
        parsed = (email.message_from_bytes(raw, policy=email.policy.default) for raw in self.sent)
        return [{"question_id": str(message["X-Agent-Wait-Question"])} for message in parsed]

    def fail(self) -> None:
        self.broken = True


def email_channel(parts: Parts) -> ChannelHarness:
    from agent_wait.channels.email import EmailAnnounce, InMemoryEmailSends
    from agent_wait.channels.recipients import RecipientRouting

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        ses = _Ses()
        announce = EmailAnnounce(
            ses,
            RecipientRouting(tags={"*": ["ana@example.com"]}),
            InMemoryEmailSends(),
            sender="agent-wait@example.com",
            links=_links,
            clock=lambda: NOW,
            delivers=delivers,
        )
        return AnnounceHarness(
            announce, ses.read_back, break_backend=ses.fail, keeps_one_per_key=True, carries_envelope=False
        )

    return ChannelHarness(_declared("email"), announcer, record=parts.dynamodb_record(_declared("email").record))


# -- web push ------------------------------------------------------------------------------------------------------


def push_channel(parts: Parts) -> ChannelHarness:
    from tests.support.push_device import Device

    from agent_wait.channels.push import (
        InMemoryPushSends,
        InMemoryPushSubscriptions,
        PushAnnounce,
        Subscription,
        VapidKeys,
        WebPushSender,
    )
    from agent_wait.local.push_service import LocalPushService

    def announcer(delivers: Delivers = None) -> AnnounceHarness:
        service = parts.stack.enter_context(LocalPushService())
        keys = VapidKeys.generate()
        device = Device(service.subscribe(keys.public_key))
        subscriptions = InMemoryPushSubscriptions()
        subscriptions.put(
            Subscription("ana@example.com", device.endpoint, device.p256dh, device.subscription()["keys"]["auth"])
        )
        announce = PushAnnounce(
            subscriptions,
            InMemoryPushSends(),
            WebPushSender(keys, "mailto:ops@example.com", timeout=2.0),
            inbox_url="https://api.example.com/inbox",
            clock=lambda: NOW,
            delivers=delivers,
        )

        def read_back() -> list[dict[str, Any]]:
            pushed = (device.decrypt(push.body) for push in service.pushes_to(device.endpoint))
            return [{"question_id": payload["question_id"], "type": payload["step"]} for payload in pushed]

        return AnnounceHarness(
            announce, read_back, break_backend=service.stop, keeps_one_per_key=True, carries_envelope=False
        )

    return ChannelHarness(_declared("push"), announcer, record=parts.dynamodb_record(_declared("push").record))


# -- the table -------------------------------------------------------------------------------------------------------

OPT_INS: dict[str, Callable[[Parts], ChannelHarness]] = {
    "log": log_channel,
    "webhook": webhook_channel,
    "slack": slack_channel,
    "teams": teams_channel,
    "shaped": shaped_channel,
    "email": email_channel,
    "push": push_channel,
    "memory": memory_channel,
}
"""One opt-in per declared channel."""


@pytest.fixture
def parts(request: pytest.FixtureRequest) -> Iterator[Parts]:
    with ExitStack() as stack:
        yield Parts(stack, request)


def test_every_declared_channel_opts_in() -> None:
    # GIVEN the channels the package declares / THEN each has its opt-in here, and nothing else does
    assert set(OPT_INS) == set(DECLARED)


@pytest.mark.parametrize("name", list(DECLARED))
def test_each_entry_declares_its_channel(name: str) -> None:
    # GIVEN a registry entry / WHEN it is loaded / THEN it is that channel's declaration
    channel = DECLARED[name].load()
    assert isinstance(channel, Channel)
    assert channel.name == name


@pytest.mark.parametrize("rule", channel_contract.RULES, ids=lambda rule: rule.__name__)
@pytest.mark.parametrize("name", list(OPT_INS))
def test_each_channel_conforms(
    name: str, rule: Callable[[channel_contract.ChannelFactory], None], parts: Parts
) -> None:
    # GIVEN a declared channel's harness / WHEN a rule of the contract runs on it / THEN it holds
    rule(lambda: OPT_INS[name](parts))


@pytest.mark.parametrize("rule", channel_contract.RECORD_RULES, ids=lambda rule: rule.__name__)
@pytest.mark.parametrize("name", [name for name in DECLARED if isinstance(DECLARED[name].load().record, RecordKind)])
def test_each_record_holds_in_memory_too(name: str, rule: Callable[[ChannelFactory], None]) -> None:
    # GIVEN a channel's record kept in memory (tests, the local previews) / THEN the record rules hold there too
    channel = DECLARED[name].load()

    def unused(delivers: Delivers = None) -> AnnounceHarness:
        raise AssertionError("the record rules make no announcer")

    rule(lambda: ChannelHarness(channel, unused, record=lambda: InMemoryChannelRecord(channel.record)))
