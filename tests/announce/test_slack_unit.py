"""The Slack channel's own rules, without a stack: the signature check on Slack's documented example and its
tampered variants, a post that is never sent twice (even after a crash between sending and remembering it), a
message that cannot be updated counted as a failed delivery, and question text that cannot mention or link."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.announce.test_fake_slack import SLACK_DOC_BODY
from tests.support.fake_slack import FakeSlack

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.announce.base import DeliveryStatus
from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackInteractions, SlackRouting
from agent_wait.channels.slack.records import Post
from agent_wait.contract.envelope import Transition

DOC_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
DOC_TIMESTAMP = 1531420618
DOC_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"


def _interactions(now: int = DOC_TIMESTAMP) -> SlackInteractions:
    return SlackInteractions(
        signing_secret=DOC_SECRET,
        service=None,
        find=lambda question_id: None,
        client=None,
        routing=SlackRouting(),
        clock=lambda: datetime.fromtimestamp(now, UTC),
    )


def _headers(timestamp: Any = DOC_TIMESTAMP, signature: str = DOC_SIGNATURE) -> dict[str, str]:
    return {"x-slack-request-timestamp": str(timestamp), "x-slack-signature": signature}


def test_slacks_documented_example_verifies() -> None:
    # The documented body is a slash command, not an interaction: it passes the signature, then is refused as a body
    reply = _interactions().handle(SLACK_DOC_BODY, _headers())
    assert reply.status == 400
    assert "payload" in (reply.body or {})["error"]


@pytest.mark.parametrize(
    ("body", "headers", "why"),
    [
        (SLACK_DOC_BODY.replace("roadrunner", "roadrunnes"), _headers(), "bad signature"),
        (SLACK_DOC_BODY, _headers(DOC_TIMESTAMP + 1), "bad signature"),
        (SLACK_DOC_BODY, _headers(signature=DOC_SIGNATURE.replace("v0=", "v1=")), "bad signature"),
        (SLACK_DOC_BODY, _headers(signature=DOC_SIGNATURE[:-1] + "4"), "bad signature"),
        (SLACK_DOC_BODY, {"x-slack-signature": DOC_SIGNATURE}, "unsigned"),
        (SLACK_DOC_BODY, {"x-slack-request-timestamp": str(DOC_TIMESTAMP)}, "unsigned"),
        (SLACK_DOC_BODY, _headers("1531420618.5"), "bad timestamp"),
    ],
    ids=["body", "timestamp", "version", "digest", "no-signature", "no-timestamp", "fractional-timestamp"],
)
def test_a_tampered_variant_is_refused_401(body: str, headers: dict[str, str], why: str) -> None:
    reply = _interactions().handle(body, headers)
    assert reply.status == 401
    assert (reply.body or {})["error"].startswith(why)


def test_the_documented_request_replayed_six_minutes_later_is_refused_as_stale() -> None:
    reply = _interactions(now=DOC_TIMESTAMP + 301).handle(SLACK_DOC_BODY, _headers())
    assert reply.status == 401
    assert (reply.body or {})["error"].startswith("stale")


# -- the announcer ------------------------------------------------------------------------------------------------

POLICY = WaitPolicy(timeout="P3D", default={"action": "reject"}, allowed_actions=["approve", "reject"])


def _envelope(question: Any = None, transition: Transition = Transition.CREATED, **tags: str) -> WaitEnvelope:
    asked = (
        question if question is not None else {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}}
    )
    policy = WaitPolicy(timeout="P3D", default={"action": "reject"}, allowed_actions=["approve", "reject"], tags=tags)
    return WaitEnvelope.create(Question("t-1", "q-1", asked, policy=policy), transition=transition)


@pytest.fixture
def slack() -> Any:
    with FakeSlack() as fake:
        yield fake


def _announcer(slack: FakeSlack, messages: InMemorySlackMessages | None = None) -> SlackAnnounce:
    from slack_sdk import WebClient

    client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
    return SlackAnnounce(client, SlackRouting(channels={"*": "C0ALL"}), messages or InMemorySlackMessages())


def test_a_redelivered_created_event_posts_once(slack: FakeSlack) -> None:
    announcer = _announcer(slack)
    for _ in range(3):
        assert announcer.announce(_envelope()).status is DeliveryStatus.DELIVERED
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert len(slack.messages("C0ALL")) == 1


def test_a_post_sent_before_a_crash_is_found_by_its_metadata_and_not_sent_again(slack: FakeSlack) -> None:
    # GIVEN a post that reached Slack, whose process died before it remembered the message's ts
    messages = InMemorySlackMessages()
    announcer = _announcer(slack, messages)
    announcer.announce(_envelope())
    [sent] = slack.messages("C0ALL")
    crashed = InMemorySlackMessages()
    crashed.claim("q-1", Post("message:C0ALL", "C0ALL", messages.posts("q-1")["message:C0ALL"].claimed_at))
    # WHEN the event is delivered again to an announcer with that half-written memory
    again = _announcer(slack, crashed)
    assert again.announce(_envelope()).status is DeliveryStatus.DELIVERED
    # THEN it found the post in the channel instead of posting a second one, and updates reach it
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert crashed.posts("q-1")["message:C0ALL"].ts == sent.ts
    again.announce(_envelope(transition=Transition.EXPIRED))
    assert slack.message("C0ALL", sent.ts).updated == 1


def test_a_message_gone_is_a_counted_failure_and_nothing_raises(slack: FakeSlack) -> None:
    announcer = _announcer(slack)
    announcer.announce(_envelope())
    slack.fail_next("chat.update", "message_not_found")
    delivery = announcer.announce(_envelope(transition=Transition.ANSWERED))
    assert delivery.status is DeliveryStatus.FAILED
    assert "message_not_found" in (delivery.error or "")
    assert announcer.stats.failed == 1


def test_no_channel_for_the_tags_is_a_failure_that_says_what_to_map(slack: FakeSlack) -> None:
    from slack_sdk import WebClient

    client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
    announcer = SlackAnnounce(client, SlackRouting(channels={"team:ops": "C0OPS"}), InMemorySlackMessages())
    delivery = announcer.announce(_envelope(team="finance"))
    assert delivery.status is DeliveryStatus.FAILED
    assert "no Slack channel for tags {'team': 'finance'}" in (delivery.error or "")
    assert slack.calls_to("chat.postMessage") == []


def _mrkdwn(value: Any) -> list[str]:
    """Every mrkdwn text in blocks: what Slack parses for mentions and links (plain_text it shows as written)."""
    if isinstance(value, dict):
        own = [value["text"]] if value.get("type") == "mrkdwn" else []
        return own + [text for item in value.values() for text in _mrkdwn(item)]
    if isinstance(value, list):
        return [text for item in value for text in _mrkdwn(item)]
    return []


def test_question_text_cannot_mention_everyone_or_forge_a_link(slack: FakeSlack) -> None:
    announcer = _announcer(slack)
    sneaky = {"function": "notify", "args": {"text": "<!channel> pay now <https://evil.example|your bank>"}}
    announcer.announce(_envelope(sneaky))
    [message] = slack.messages("C0ALL")
    parsed = [message.text, *_mrkdwn(message.blocks)]
    assert not [text for text in parsed if "<!channel>" in text or "<https://evil.example" in text]
    assert any("&lt;!channel&gt; pay now &lt;https://evil.example|your bank&gt;" in text for text in parsed)


def test_a_reminder_replies_in_the_thread_once_and_an_escalation_posts_to_the_new_audience(slack: FakeSlack) -> None:
    from slack_sdk import WebClient

    client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
    routing = SlackRouting(
        channels={"approver_group:finance": "C0FIN", "approver_group:managers": "C0MGR"},
        mentions={"finance-managers": "S0MGR"},
    )
    announcer = SlackAnnounce(client, routing, InMemorySlackMessages())
    announcer.announce(_envelope(approver_group="finance"))
    # GIVEN the first reminder, delivered twice (the sweep announces at least once)
    reminder = dataclasses.replace(
        _envelope(transition=Transition.REMINDER, approver_group="finance"), progress={"reminder": 1, "of": 2}
    )
    announcer.announce(reminder)
    announcer.announce(reminder)
    # THEN one reply in the question's thread
    [message] = slack.messages("C0FIN")
    assert [r.text for r in message.replies] == [message.replies[0].text]
    assert message.replies[0].text.startswith(":bell: Reminder (1 of 2): this still waits for")
    # WHEN an escalation step routes the question to the managers' channel, widening who may answer
    escalated = dataclasses.replace(
        _envelope(transition=Transition.ESCALATED, approver_group="managers"),
        progress={"escalation": 1, "of": 1},
        rules={"answerers": {"groups": ["finance-managers"], "principals": []}, "edits": True},
    )
    announcer.announce(escalated)
    # THEN the thread says so, mentioning the new audience, and the managers' channel gets the question
    [message] = slack.messages("C0FIN")
    assert (
        message.replies[-1].text
        == ":arrow_up: Escalated (step 1 of 1): <!subteam^S0MGR|@finance-managers> may answer now."
    )
    [managers] = slack.messages("C0MGR")
    assert "Who may answer: <!subteam^S0MGR|@finance-managers>" in json.dumps(managers.blocks)


def test_the_answer_api_needs_no_channels_or_messages_table_but_the_router_does() -> None:
    from agent_wait.errors import ConfigurationError
    from agent_wait.host.settings import HostSettings

    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-bot-AbCdEf"
    # (the AgentWait construct gives the API the bot token and the groups, never the routing or the table)
    api = HostSettings.from_env(
        "api", {"AGENT_WAIT_TABLE": "q", "AGENT_WAIT_QUEUE_URL": "https://sqs", "AGENT_WAIT_SLACK_BOT_TOKEN_ARN": arn}
    )
    assert api.slack is not None
    assert api.slack.bot_token_arn == arn
    with pytest.raises(ConfigurationError, match="AGENT_WAIT_SLACK_CHANNELS is not set"):
        HostSettings.from_env(
            "sweep",
            {"AGENT_WAIT_TABLE": "q", "AGENT_WAIT_QUEUE_URL": "https://sqs", "AGENT_WAIT_SLACK_BOT_TOKEN_ARN": arn},
        )


def test_with_no_channel_a_question_goes_by_direct_message_to_the_slack_users_it_names(slack: FakeSlack) -> None:
    from slack_sdk import WebClient

    client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
    announcer = SlackAnnounce(client, SlackRouting(channels={"team:ops": "C0OPS"}), InMemorySlackMessages())
    policy = WaitPolicy(
        timeout="P3D", allowed_actions=["approve"], answerer_principals=["slack:U0ALICE", "AROAEXAMPLE1"]
    )
    asked = {"function": "issue_refund", "args": {"amount": 900}}
    envelope = WaitEnvelope.create(Question("t-9", "q-9", asked, policy=policy))
    assert announcer.announce(envelope).status is DeliveryStatus.DELIVERED
    assert [call["channel"] for call in slack.calls_to("chat.postMessage")] == ["U0ALICE"]


def test_the_route_verifies_the_body_api_gateway_base64_encoded_as_slack_sent_it() -> None:
    # API Gateway's HTTP API passes a form body base64-encoded (`isBase64Encoded`); the signature is over Slack's bytes
    import base64

    from tests.support.api_events import http_event

    from agent_wait.host.api import ApiContext, create_app
    from agent_wait.ledger import InMemoryLedger

    context = ApiContext(ledger=InMemoryLedger(), service=None, slack=_interactions())  # type: ignore[arg-type]
    app = create_app(lambda: context)
    event = http_event(
        "POST",
        "/slack/interactions",
        base64.b64encode(SLACK_DOC_BODY.encode()).decode(),
        headers={"content-type": "application/x-www-form-urlencoded", **_headers()},
    )
    event["isBase64Encoded"] = True
    verified = app.resolve(event, {})  # type: ignore[arg-type]
    event["body"] = base64.b64encode(SLACK_DOC_BODY.replace("roadrunner", "coyote").encode()).decode()
    tampered = app.resolve(event, {})  # type: ignore[arg-type]
    # THEN the documented request passes the signature (then is refused as not an interaction); the changed one is 401
    assert verified["statusCode"] == 400
    assert tampered["statusCode"] == 401


def test_the_route_says_slack_is_off_when_no_signing_secret_is_set() -> None:
    from tests.support.api_events import call

    from agent_wait.host.api import ApiContext, create_app
    from agent_wait.ledger import InMemoryLedger

    app = create_app(lambda: ApiContext(ledger=InMemoryLedger(), service=None))  # type: ignore[arg-type]
    reply = call(app, "POST", "/slack/interactions", "payload=%7B%7D")
    assert reply.status == 404
    assert reply.json()["reason"] == "slack_off"
