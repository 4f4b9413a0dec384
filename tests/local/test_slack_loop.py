"""Slack as an answer channel, end to end over real HTTP: the refund agent with Slack on the emulator, its answer API on
127.0.0.1, and a fake Slack (`tests/support/fake_slack.py`) that plays the Web API the real `slack_sdk` client
talks to and sends signed interaction payloads to the API's `POST /slack/interactions`, as Slack does.

Finance's questions go to channel C0FIN; alice and bob are in the Slack user group S0FIN, which stands for the
answerer group `finance`; mallory is in no group.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from tests.support.fake_slack import FakeSlack, PostedMessage
from tests.support.refund_world import RefundWorld, refund_stack

pytestmark = pytest.mark.timeout(180)

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNELS = {"approver_group:finance": "C0FIN", "*": "C0ALL"}
APPROVE, REJECT = "agent_wait:answer:approve", "agent_wait:answer:reject"


@dataclass
class SlackWorld(RefundWorld):
    slack: FakeSlack

    @property
    def endpoint(self) -> str:
        return f"{self.local.api_url}/slack/interactions"

    def message_for(self, question: str) -> PostedMessage:
        found = [
            m
            for m in self.slack.messages()
            if (m.metadata or {}).get("event_payload", {}).get("question_id") == question
        ]
        assert len(found) == 1, [m.metadata for m in self.slack.messages()]
        return found[0]

    def click(self, message: PostedMessage, action_id: str, user: str = "U0ALICE", **options: Any) -> Any:
        options.setdefault("signing_secret", SIGNING_SECRET)
        options.setdefault("timestamp", int(self.clock().timestamp()))
        return self.slack.click(self.endpoint, message, action_id, user_id=user, **options)

    def told(self, user: str) -> list[str]:
        """What the response URLs privately told `user`, oldest first."""
        return [r.body.get("text", "") for r in self.slack.responses if r.user == user]


@pytest.fixture(scope="module")
def slack_template() -> dict[str, Any]:
    """The refund example's parts with Slack as a channel, as `AgentWait(slack=...)` deploys it: the bot token and
    the signing secret are the stack's own secrets (their values put in below), the messages table is the
    construct's, and each function holds only the grants the construct gives it."""
    from aws_cdk import App, RemovalPolicy, Stack
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_secretsmanager as secretsmanager
    from examples.refund_agent.settings import REFUND_TABLE_VARIABLE
    from examples.refund_agent.stack import GRAPH_SOURCE, REFUND_GRAPH

    from agent_wait_cdk import AgentWait, AnswerApiProps, SlackProps

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, "SlackLocal")
    agent = AgentWait(
        stack,
        "AgentWait",
        graph=REFUND_GRAPH,
        graph_source=GRAPH_SOURCE,
        removal_policy=RemovalPolicy.DESTROY,
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer="https://login.example.com", jwt_audience=["approvals"]),
        slack=SlackProps(
            bot_token=secretsmanager.Secret(stack, "SlackBotToken"),
            signing_secret=secretsmanager.Secret(stack, "SlackSigningSecret"),
            channels=CHANNELS,
            groups={"finance": "S0FIN"},
        ),
    )
    refunds = dynamodb.Table(
        stack,
        "Refunds",
        partition_key=dynamodb.Attribute(name="order_id", type=dynamodb.AttributeType.STRING),
        sort_key=dynamodb.Attribute(name="refund_id", type=dynamodb.AttributeType.STRING),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        removal_policy=RemovalPolicy.DESTROY,
    )
    agent.router_function.add_environment(REFUND_TABLE_VARIABLE, refunds.table_name)
    refunds.grant(agent.router_function, "dynamodb:PutItem")
    return app.synth().get_stack_by_name("SlackLocal").template


@pytest.fixture(scope="module")
def world(slack_template: dict[str, Any]) -> Iterator[SlackWorld]:
    with FakeSlack() as slack:
        slack.add_user("U0ALICE", email="alice@example.com")
        slack.add_user("U0BOB", email="bob@example.com")
        slack.add_user("U0MALLORY", email="mallory@example.com")
        slack.add_group("S0FIN", "finance", ["U0ALICE", "U0BOB"])
        with refund_stack(slack_template, "slack") as stack:
            local = stack.local
            # What someone puts in the stack's secrets after deploying: the app's bot token and signing secret.
            secrets = local.client("secretsmanager")
            secrets.put_secret_value(
                SecretId=local.environment["AGENT_WAIT_SLACK_BOT_TOKEN_ARN"], SecretString=slack.token
            )
            secrets.put_secret_value(
                SecretId=local.environment["AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"], SecretString=SIGNING_SECRET
            )
            settings = {"AGENT_WAIT_SLACK_API_URL": f"{slack.url}/api/"}  # the fake Slack stands in for slack.com
            local.environment.update(settings)
            local._set_env(settings)
            local.cold_start()
            yield SlackWorld(local, stack.clock, slack)


def test_a_question_posts_one_message_and_approve_in_slack_resumes_the_agent_once(world: SlackWorld) -> None:
    # GIVEN a refund for finance: the router posts it once, to finance's channel, with its buttons
    thread, question = world.ask()
    message = world.message_for(question)
    assert message.channel == "C0FIN"
    buttons = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [(e["action_id"], e.get("style")) for e in buttons][:2] == [(APPROVE, "primary"), (REJECT, "danger")]
    # WHEN alice approves in Slack
    reply = world.click(message, APPROVE)
    # THEN Slack gets its 200 at once, alice is told privately, and the agent resumes once
    assert reply.status == 200
    assert world.told("U0ALICE")[-1] == "Done: “approve” is recorded, and the agent carries on."
    assert [o.kind.value for o in world.local.pump().outcomes] == ["applied"]
    assert world.refunds(thread) == [900]
    record = world.row(question)
    assert (record.status.value, record.answered_by, record.via) == ("resumed", "alice@example.com", "slack")
    # AND the message now says who answered what, how, with no buttons left
    updated = world.message_for(question)
    assert updated.updated >= 1
    assert not [b for b in updated.blocks if b["type"] == "actions"]
    assert "alice@example.com answered *approve* in Slack" in json.dumps(updated.blocks)


def test_a_second_click_a_replay_a_bad_signature_an_old_timestamp_and_an_outsider_decide_nothing(
    world: SlackWorld,
) -> None:
    thread, question = world.ask(kind="escalating")  # answerable by the finance group only
    message = world.message_for(question)
    assert "Who may answer: <!subteam^S0FIN|@finance>" in json.dumps(message.blocks)
    # GIVEN mallory, in no finance group, clicks approve: refused privately, nothing decided
    assert world.click(message, APPROVE, user="U0MALLORY").status == 200
    assert world.told("U0MALLORY")[-1] == ("Not recorded: you are not one of the people who may answer this question.")
    assert world.row(question).status.value == "open"
    # AND a request with a bad signature, or one more than five minutes old, is refused 401 and decides nothing
    tampered = world.click(message, APPROVE, tamper=True)
    old = world.click(message, APPROVE, timestamp=int(world.clock().timestamp()) - 301)
    assert (tampered.status, old.status) == (401, 401)
    assert "bad signature" in tampered.json()["error"]
    assert "stale" in old.json()["error"]
    assert world.row(question).status.value == "open"
    # WHEN bob rejects, then alice approves, then bob's payload is sent again as it was (a replay)
    rejected = world.click(message, REJECT, user="U0BOB")
    world.click(message, APPROVE, user="U0ALICE")
    last = world.slack.interactions[-2]
    replay = world.slack.post_signed(
        world.endpoint,
        "payload=" + __import__("urllib.parse").parse.quote(json.dumps(last)),
        SIGNING_SECRET,
        int(world.clock().timestamp()),
    )
    # THEN bob's reject decided it once; alice is told who won; the replay repeats and changes nothing
    assert rejected.status == 200
    assert replay.status == 200
    assert world.told("U0BOB")[0] == "Done: “reject” is recorded, and the agent carries on."
    assert world.told("U0ALICE")[-1].startswith("Not recorded: bob@example.com answered “reject” in Slack at ")
    assert world.told("U0BOB")[-1] == "“reject” was already recorded; nothing changed."
    assert [o.kind.value for o in world.local.pump().outcomes] == ["applied"]
    assert world.refunds(thread) == []
    assert world.row(question).answer == {"action": "reject"}


def test_an_edit_through_the_modal_reaches_the_call(world: SlackWorld) -> None:
    # GIVEN an editable refund: its message has an Edit… button that opens a modal of the arguments
    thread, question = world.ask(1250, kind="editable")
    message = world.message_for(question)
    assert world.click(message, "agent_wait:modal").status == 200
    [view] = [v for v in world.slack.views.values() if v.get("private_metadata") == question]
    labels = [b["label"]["text"] for b in view["blocks"] if b["type"] == "input"]
    assert labels == ["Answer", "order_id", "amount", "Note"]
    # WHEN alice lowers the amount and sends it with a note
    values = {"action": {"value": "approve"}, "arg:amount": {"value": "650"}, "note": {"value": "one item used"}}
    reply = world.slack.submit_view(
        world.endpoint,
        view,
        values,
        user_id="U0ALICE",
        signing_secret=SIGNING_SECRET,
        timestamp=int(world.clock().timestamp()),
    )
    # THEN the modal closes, and the call runs once with the edited amount
    assert (reply.status, reply.json()) == (200, {"response_action": "clear"})
    assert world.row(question).answer == {"action": "approve", "args": {"amount": 650}, "note": "one item used"}
    assert [o.kind.value for o in world.local.pump().outcomes] == ["applied"]
    assert world.refunds(thread) == [650]


def test_a_decision_in_the_inbox_and_the_deadline_each_update_the_message(world: SlackWorld) -> None:
    import urllib.request

    # GIVEN two questions posted to Slack
    _, answered = world.ask()
    _, expiring = world.ask()
    # WHEN carol approves one over the answer API (as the inbox page does), and the other's deadline passes
    token = world.local.issuer.token("carol@example.com", ["finance"])
    request = urllib.request.Request(
        f"{world.local.api_url}/questions/{answered}/answer",
        data=json.dumps({"answer": {"action": "approve"}}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["result"] == "won"
    world.local.pump()
    world.clock.offset += timedelta(days=3, minutes=1)
    try:
        world.local.sweep()
        world.local.pump()
    finally:
        world.clock.offset = timedelta()
    # THEN each message lost its buttons and says what decided it
    inbox = json.dumps(world.message_for(answered).blocks)
    deadline = json.dumps(world.message_for(expiring).blocks)
    assert "carol@example.com answered *approve* in the inbox or the API" in inbox
    assert "Nobody answered by the deadline" in deadline
    assert "the default applied, *reject*" in deadline
    for question in (answered, expiring):
        assert not [b for b in world.message_for(question).blocks if b["type"] == "actions"]


def test_a_two_person_quorum_shows_its_votes_in_the_message(world: SlackWorld) -> None:
    # GIVEN a refund two different people must approve
    thread, question = world.ask(1250, kind="quorum")
    message = world.message_for(question)
    # WHEN alice approves: a vote, and the message shows it
    world.click(message, APPROVE, user="U0ALICE")
    world.local.pump()
    assert world.told("U0ALICE")[-1] == "Your vote “approve” is recorded; 1 more approval(s) needed."
    shown = json.dumps(world.message_for(question).blocks)
    assert "*1 of 2 approvals*: 1 more needed" in shown
    assert "alice@example.com (approve)" in shown
    # AND bob's approval decides it: the message says so, with both votes
    world.click(world.message_for(question), APPROVE, user="U0BOB")
    world.local.pump()
    final = json.dumps(world.message_for(question).blocks)
    assert "*2 of 2 approvals*" in final
    assert "bob@example.com (approve)" in final
    assert world.refunds(thread) == [1250]


def test_agent_wait_dev_previews_each_questions_slack_message_without_a_workspace(world: SlackWorld) -> None:
    import urllib.request

    # GIVEN an open question and a decided one on the running stack
    world.ask(1250)
    _, decided = world.ask(900)
    world.click(world.message_for(decided), APPROVE)
    world.local.pump()

    # WHEN the dev server's Slack preview is opened
    with urllib.request.urlopen(f"{world.local.api_url}/dev/slack", timeout=10) as response:
        page = response.read().decode("utf-8")
        policy = response.headers["Content-Security-Policy"]

    # THEN it draws both messages from the same blocks the announcer posts: buttons on the open one only
    assert "amount=1250" in page
    assert page.count(">Approve<") >= 1
    assert "alice@example.com answered" in page
    assert "<script" not in page
    assert "default-src 'none'" in policy


def test_the_slack_previews_buttons_answer_through_the_signed_links_as_the_teams_previews_do(world: SlackWorld) -> None:
    import html
    import re
    import urllib.request

    from tests.local._http import call

    # GIVEN an open question on the running stack
    thread, question = world.ask(1250)
    # WHEN the dev server's Slack preview is opened
    with urllib.request.urlopen(f"{world.local.api_url}/dev/slack", timeout=10) as response:
        page = response.read().decode("utf-8")
    # THEN each of its buttons is a link: Approve and Reject to this API's signed answer links
    buttons = {
        label: html.unescape(href)
        for href, label in re.findall(r'<a class="button [a-z]+" href="([^"]+)"[^>]*>([^<]+)<', page)
    }
    confirm = f"{world.local.api_url}/questions/{question}/confirm#"
    assert buttons["Approve"].startswith(confirm), buttons
    assert buttons["Reject"].startswith(confirm), buttons
    # AND following Approve as the link page does answers the question, and the agent resumes once
    token = buttons["Approve"].partition("#")[2]
    reply = call(f"{world.local.api_url}/questions/{question}/link/answer", method="POST", body={"token": token})
    assert (reply.status, reply.body["result"], reply.body["outcome"]["via"]) == (200, "won", "link"), reply
    assert [o.kind.value for o in world.local.pump().outcomes] == ["applied"]
    assert world.refunds(thread) == [1250]
