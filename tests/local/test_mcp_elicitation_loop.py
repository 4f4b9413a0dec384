"""MCP elicitation answered durably, end to end: a LangGraph agent books through an MCP server with LangChain's
`MCPAdapter`, hosted behind the router on the emulator with the answer API and Slack (the fake Slack of
`tests/support/fake_slack.py`, which the real `slack_sdk` talks to). The server (`tests/support/elicit_server.py`, the
`mcp` SDK's own server, protocol 2026-07-28) answers the first call with an `InputRequiredResult`; `MCPAdapter` parks
the agent on `interrupt({"type": "mcp_elicitation", ...})`; the router asks a person; the person answers in the
inbox (its API route) or in Slack's modal; the agent retries the call with the answer, and the server receives the
content exactly once, however many times the answer is delivered.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from tests.agents.mcp_elicit_graphs import URL_VARIABLE
from tests.local._http import Reply, call
from tests.support.elicit_server import CONTACT, PAY_URL, ElicitServer, elicit_server
from tests.support.fake_slack import FakeSlack, PostedMessage

pytestmark = pytest.mark.timeout(300)

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
GRAPH = "tests.agents.mcp_elicit_graphs:build_graph"


@dataclass
class World:
    local: Any
    clock: Any
    slack: FakeSlack
    server: ElicitServer

    @property
    def api(self) -> str:
        return self.local.api_url

    def token(self, user: str = "alice@example.com") -> str:
        return self.local.issuer.token(user, ())

    def book(self, day: str, mode: str = "form") -> tuple[str, str]:
        """Start a booking on a new thread; (thread, the question the server's round became)."""
        thread = f"booking-{uuid.uuid4().hex[:6]}"
        self.local.send(
            {"thread_id": thread, "input": {"day": day, "mode": mode}, "start_id": thread},
            deduplication_id=uuid.uuid4().hex,
        )
        asked = [q for outcome in self.local.pump().outcomes for q in outcome.asked]
        assert len(asked) == 1, asked
        return thread, asked[0]

    def view(self, question: str) -> dict[str, Any]:
        reply = call(f"{self.api}/questions/{question}", token=self.token())
        assert reply.status == 200, reply
        return reply.body

    def answer(self, question: str, answer: Any, key: str | None = None) -> Reply:
        return call(
            f"{self.api}/questions/{question}/answer",
            method="POST",
            token=self.token(),
            body={"answer": answer},
            headers={"Idempotency-Key": key} if key else None,
        )

    def received(self, day: str) -> list[dict[str, Any]]:
        return [call for call in self.server.received if call["day"] == day]

    def message_for(self, question: str) -> PostedMessage:
        found = [
            m
            for m in self.slack.messages()
            if (m.metadata or {}).get("event_payload", {}).get("question_id") == question
        ]
        assert len(found) == 1, [m.metadata for m in self.slack.messages()]
        return found[0]

    @property
    def endpoint(self) -> str:
        return f"{self.api}/slack/interactions"

    def click(self, message: PostedMessage, action_id: str) -> Any:
        return self.slack.click(self.endpoint, message, action_id, user_id="U0ALICE", **self.signed())

    def signed(self) -> dict[str, Any]:
        return {"signing_secret": SIGNING_SECRET, "timestamp": int(self.clock().timestamp())}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    """The agent with the answer API and Slack, as `AgentWait(answer_api=True, slack=...)` deploys it."""
    from aws_cdk import App, RemovalPolicy, Stack
    from aws_cdk import aws_secretsmanager as secretsmanager
    from examples.refund_agent.stack import GRAPH_SOURCE, REFUND_GRAPH

    from agent_wait_cdk import AgentWait, AnswerApiProps, SlackProps

    app = App(context={"aws:cdk:bundling-stacks": []}, builtin_cloud_formation_validation=False)
    stack = Stack(app, "ElicitLocal")
    AgentWait(
        stack,
        "AgentWait",
        graph=REFUND_GRAPH,  # the emulator runs GRAPH in its place (AGENT_WAIT_GRAPH below)
        graph_source=GRAPH_SOURCE,
        removal_policy=RemovalPolicy.DESTROY,
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer="https://login.example.com", jwt_audience=["approvals"]),
        slack=SlackProps(
            bot_token=secretsmanager.Secret(stack, "SlackBotToken"),
            signing_secret=secretsmanager.Secret(stack, "SlackSigningSecret"),
            channels={"*": "C0ALL"},
        ),
    )
    return app.synth().get_stack_by_name("ElicitLocal").template


@pytest.fixture(scope="module")
def world(template: dict[str, Any]) -> Iterator[World]:
    from examples.refund_agent.demo import MovableClock

    from agent_wait.local.stack import EmulatedStack

    with elicit_server() as server, FakeSlack() as slack:
        slack.add_user("U0ALICE", email="alice@example.com")
        clock = MovableClock()
        local = EmulatedStack(
            dict(template),
            clock=clock,
            stack_name=f"elicit-{uuid.uuid4().hex[:8]}",
            extra_environment={"AGENT_WAIT_GRAPH": GRAPH, URL_VARIABLE: server.url},
        )
        local.start()
        try:
            secrets = local.client("secretsmanager")
            secrets.put_secret_value(
                SecretId=local.environment["AGENT_WAIT_SLACK_BOT_TOKEN_ARN"], SecretString=slack.token
            )
            secrets.put_secret_value(
                SecretId=local.environment["AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"], SecretString=SIGNING_SECRET
            )
            settings = {"AGENT_WAIT_SLACK_API_URL": f"{slack.url}/api/"}
            local.environment.update(settings)
            local._set_env(settings)
            local.cold_start()
            yield World(local, clock, slack, server)
        finally:
            local.stop()


def test_a_form_round_is_one_question_answered_in_the_inbox_and_the_server_receives_it_once(world: World) -> None:
    # GIVEN the agent books a table: the server asks who books, and the agent parks on that round
    _, question = world.book("fri")
    view = world.view(question)
    assert view["source"]["dialect"] == "mcp_elicitation"
    assert view["policy"]["allowed_actions"] == ["accept", "decline", "cancel"]
    assert view["question"]["requests"] == [
        {"key": "contact", "message": "Who is booking?", "mode": "form", "requested_schema": CONTACT}
    ]
    form = view["response_schema"]  # what the inbox draws its form from
    assert list(form["properties"]) == ["action", "name", "seats", "note"]
    assert world.received("fri") == []
    # WHEN bad answers arrive: content that does not fit, an action MCP has no word for, a response missing its key
    misfit = world.answer(question, {"action": "accept", "name": "Ana", "seats": "two"})
    unknown = world.answer(question, {"action": "maybe"})
    missing = world.answer(question, {"responses": {}})
    # THEN each is refused with its reason, and the question stays open
    assert (misfit.status, misfit.body["reason"]) == (422, "invalid_answer")
    assert misfit.body["detail"] == (
        "the content for 'contact' does not fit its requested_schema: at $.seats, expected type integer"
    )
    assert (unknown.status, unknown.body["reason"]) == (422, "action_not_allowed")
    assert "['accept', 'decline', 'cancel']" in unknown.body["detail"]
    assert (missing.status, missing.body["reason"]) == (422, "invalid_answer")
    assert "missing: ['contact']" in missing.body["detail"]
    assert world.view(question)["status"] == "open"
    # WHEN the inbox sends the form (as the inbox page does), and the same answer is delivered again
    answer = {"action": "accept", "name": "Ana", "seats": 2}
    first = world.answer(question, answer, key="k-1")
    again = world.answer(question, answer, key="k-1")
    other = world.answer(question, answer, key="k-2")
    world.local.pump()
    world.local.pump()
    # THEN it decides once, the agent finishes, and the server received the content exactly once
    assert first.status == 200, first
    assert (again.status, again.body["result"]) == (200, "repeated")
    assert (other.status, other.body["reason"]) == (409, "already_decided"), other  # a second send decides nothing
    assert world.received("fri") == [
        {
            "day": "fri",
            "state": "day=fri",
            "responses": {"contact": {"action": "accept", "content": {"name": "Ana", "seats": 2}}},
        }
    ]
    assert world.view(question)["status"] == "resumed"


def test_a_form_round_is_answered_in_slacks_modal_and_the_server_receives_it_once(world: World) -> None:
    # GIVEN a booking parked on the server's form: its Slack message says what is asked, and offers the modal
    _, question = world.book("sat")
    message = world.message_for(question)
    buttons = [e["action_id"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert "agent_wait:modal" in buttons
    assert "agent_wait:answer:accept" not in buttons  # an accept needs the form: one press cannot give it
    assert world.click(message, "agent_wait:modal").status == 200
    [view] = [v for v in world.slack.views.values() if v.get("private_metadata") == question]
    labels = [b["label"]["text"] for b in view["blocks"] if b["type"] == "input"]
    assert labels == ["Answer", "Your name", "Seats", "Note"]
    # WHEN alice fills it in and sends it, and Slack delivers the same submission twice
    values = {
        "action": {"value": "accept"},
        "arg:name": {"value": "Bo"},
        "arg:seats": {"value": "3"},
        "note": {"value": "booked by phone"},  # kept in agent-wait's record; the server has no field for it
    }
    reply = world.slack.submit_view(world.endpoint, view, values, user_id="U0ALICE", **world.signed())
    last = world.slack.interactions[-1]
    replay = world.slack.post_signed(
        world.endpoint, "payload=" + urllib.parse.quote(json.dumps(last)), SIGNING_SECRET, world.signed()["timestamp"]
    )
    world.local.pump()
    world.local.pump()
    # THEN the server received the modal's content exactly once, typed as its schema says
    assert (reply.status, replay.status) == (200, 200)
    assert world.received("sat") == [
        {
            "day": "sat",
            "state": "day=sat",
            "responses": {"contact": {"action": "accept", "content": {"name": "Bo", "seats": 3}}},
        }
    ]
    record = world.view(question)
    assert (record["status"], record["outcome"]["via"]) == ("resumed", "slack")


def test_a_url_round_shows_the_servers_message_and_link_and_nothing_else(world: World) -> None:
    from agent_wait.aws.ledger import DynamoDbLedger
    from agent_wait.channels.email.render import question_email

    # GIVEN the server asks the person to pay a deposit at a link
    _, question = world.book("sun", mode="url")
    view = world.view(question)
    # THEN the inbox view has no form: the server's message and its link are all it shows
    assert view["response_schema"] is None
    assert view["question"]["requests"] == [
        {"key": "deposit", "message": "Pay the deposit", "mode": "url", "url": PAY_URL}
    ]
    # AND Slack's message says the message and the link, and asks for nothing to be typed
    message = world.message_for(question)
    said = [(b["type"], b["text"]["text"]) for b in message.blocks if b["type"] in ("header", "section")]
    assert said == [("header", "Pay the deposit"), ("section", f"<{PAY_URL}|{PAY_URL}>")]
    buttons = [e["action_id"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert buttons[:3] == ["agent_wait:answer:accept", "agent_wait:answer:decline", "agent_wait:answer:cancel"]
    assert "requested_schema" not in json.dumps(message.blocks)
    # AND the email says the same
    record = DynamoDbLedger(world.local.table, client=world.local.client("dynamodb")).find(question)
    assert record is not None
    email = question_email(record.envelope, links={}, recipient="alice@example.com", now=world.clock())
    assert email.text.startswith(f"An agent waits for your answer: Pay the deposit\n\n{PAY_URL} ({PAY_URL})\n\n")
    assert "requested_schema" not in email.text
    # AND its modal asks for nothing but an optional note
    assert world.click(message, "agent_wait:modal").status == 200
    [modal] = [v for v in world.slack.views.values() if v.get("private_metadata") == question]
    assert [b["label"]["text"] for b in modal["blocks"] if b["type"] == "input"] == ["Answer", "Note"]
    # WHEN the person says they have paid (one press), the server hears an accept carrying no content
    accepted = world.click(message, "agent_wait:answer:accept")
    world.local.pump()
    assert accepted.status == 200
    assert world.received("sun") == [
        {"day": "sun", "state": "day=sun", "responses": {"deposit": {"action": "accept", "content": None}}}
    ]
