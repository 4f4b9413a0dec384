"""The fake Slack (tests/support/fake_slack.py) against the official slack_sdk client and verifier."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web import SlackResponse
from tests.support.fake_slack import FakeSlack, slack_json, slack_signature

SECRET = "test-signing-secret"

QUESTION_BLOCKS: list[dict[str, Any]] = [
    {"type": "header", "text": {"type": "plain_text", "text": "Refund 120 EUR?"}},
    {"type": "section", "text": {"type": "mrkdwn", "text": "Order *A-17*"}},
    {
        "type": "actions",
        "block_id": "decide",
        "elements": [
            {
                "type": "button",
                "action_id": "approve",
                "text": {"type": "plain_text", "text": "Approve"},
                "style": "primary",
                "value": "yes",
            },
            {"type": "button", "action_id": "reject", "text": {"type": "plain_text", "text": "Reject"}, "value": "no"},
        ],
    },
]

MODAL: dict[str, Any] = {
    "type": "modal",
    "callback_id": "answer",
    "private_metadata": '{"question_id": "q-1"}',
    "title": {"type": "plain_text", "text": "Answer"},
    "submit": {"type": "plain_text", "text": "Send"},
    "close": {"type": "plain_text", "text": "Cancel"},
    "blocks": [
        {
            "type": "input",
            "block_id": "reason",
            "label": {"type": "plain_text", "text": "Reason"},
            "element": {"type": "plain_text_input", "action_id": "text", "multiline": True},
        },
        {
            "type": "input",
            "block_id": "amount",
            "label": {"type": "plain_text", "text": "Amount"},
            "element": {"type": "number_input", "action_id": "n", "is_decimal_allowed": True},
        },
        {
            "type": "input",
            "block_id": "choice",
            "label": {"type": "plain_text", "text": "Decision"},
            "element": {
                "type": "static_select",
                "action_id": "pick",
                "options": [
                    {"text": {"type": "plain_text", "text": "Approve"}, "value": "approve"},
                    {"text": {"type": "plain_text", "text": "Reject"}, "value": "reject"},
                ],
            },
        },
        {
            "type": "input",
            "block_id": "flags",
            "optional": True,
            "label": {"type": "plain_text", "text": "Flags"},
            "element": {
                "type": "checkboxes",
                "action_id": "checks",
                "options": [
                    {"text": {"type": "plain_text", "text": "Notify"}, "value": "notify"},
                    {"text": {"type": "plain_text", "text": "Escalate"}, "value": "escalate"},
                ],
            },
        },
        {
            "type": "input",
            "block_id": "note",
            "optional": True,
            "label": {"type": "plain_text", "text": "Note"},
            "element": {"type": "plain_text_input", "action_id": "note"},
        },
    ],
}


def data(response: SlackResponse) -> dict[str, Any]:
    """A response's JSON body, typed."""
    assert isinstance(response.data, dict)
    return response.data


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as running:
        yield running


@pytest.fixture
def client(fake: FakeSlack) -> WebClient:
    return WebClient(token=fake.token, base_url=fake.url + "/api/")


# -- a stand-in for the app's interactivity endpoint -------------------------------------------------------------


class App:
    """Verifies each request with slack_sdk's SignatureVerifier; on a block_actions payload it posts to the
    response_url (replace_original); on a view_submission it answers `response_action: clear`."""

    def __init__(self) -> None:
        self.verifier = SignatureVerifier(SECRET)
        self.received: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        app = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                app.bodies.append(body)
                headers = dict(self.headers.items())
                if not app.verifier.is_valid_request(body, headers):
                    self._answer(401, b"")
                    return
                form = urllib.parse.parse_qs(body.decode())
                payload = json.loads(form["payload"][0])
                app.received.append(payload)
                if payload["type"] == "block_actions":
                    action = payload["actions"][0]
                    answered = {"replace_original": True, "text": f"Answered: {action['value']}", "blocks": []}
                    request = urllib.request.Request(
                        payload["response_url"],
                        data=json.dumps(answered).encode(),
                        headers={"Content-Type": "application/json"},
                    )
                    urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=5).close()
                    self._answer(200, b"")
                else:
                    self._answer(200, json.dumps({"response_action": "clear"}).encode())

            def _answer(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        host, port = self.server.server_address[:2]
        self.url = f"http://{host}:{port}/slack/interactions"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def app() -> Iterator[App]:
    running = App()
    try:
        yield running
    finally:
        running.stop()


# -- signatures ---------------------------------------------------------------------------------------------------

SLACK_DOC_BODY = (
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
    "&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
    "&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
    "&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)


def test_signature_reproduces_slacks_documented_example() -> None:
    # "Verifying requests from Slack" (api.slack.com/authentication/verifying-requests-from-slack)
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert slack_signature("8f742231b10e8888abcd99yyyzzz85a5", 1531420618, SLACK_DOC_BODY) == expected
    assert slack_signature("8f742231b10e8888abcd99yyyzzz85a5", "1531420618", SLACK_DOC_BODY.encode()) == expected


def test_signature_verifies_with_slack_sdk() -> None:
    verifier = SignatureVerifier(SECRET)
    now = int(time.time())
    body = "payload=" + urllib.parse.quote(slack_json({"type": "block_actions"}))
    signature = slack_signature(SECRET, now, body)
    assert verifier.is_valid(body, str(now), signature)
    assert not verifier.is_valid(body + "x", str(now), signature)
    assert not SignatureVerifier("other").is_valid(body, str(now), signature)


def test_slack_json_escapes_slashes_as_slack_does() -> None:
    text = slack_json({"response_url": "https://hooks.slack.com/actions/T1/2/x"})
    assert text == '{"response_url":"https:\\/\\/hooks.slack.com\\/actions\\/T1\\/2\\/x"}'
    assert json.loads(text) == {"response_url": "https://hooks.slack.com/actions/T1/2/x"}


# -- the Web API through slack_sdk ---------------------------------------------------------------------------------


def test_auth_test(fake: FakeSlack, client: WebClient) -> None:
    answer = data(client.auth_test())
    assert answer["ok"] is True
    assert answer["team_id"] == fake.team_id
    assert answer["user_id"] == fake.bot_user_id
    assert answer["bot_id"] == fake.bot_id


def test_client_sends_a_bearer_token_and_json_or_form(fake: FakeSlack, client: WebClient) -> None:
    client.chat_postMessage(channel="C1", text="hi", blocks=QUESTION_BLOCKS)
    client.auth_test()
    posted, auth = fake.requests[0], fake.requests[1]
    assert posted.headers["authorization"] == f"Bearer {fake.token}"
    assert posted.headers["content-type"].startswith("application/json")  # chat.* send JSON bodies
    assert json.loads(posted.body)["blocks"][0]["type"] == "header"
    assert auth.headers["content-type"] == "application/x-www-form-urlencoded"  # params-only methods: a form
    assert auth.path == "/api/auth.test"


def test_form_encoded_blocks_and_token_field_are_understood(fake: FakeSlack) -> None:
    # Another client could send blocks as a JSON string in a form, with the token as a field.
    body = urllib.parse.urlencode(
        {"token": fake.token, "channel": "C9", "text": "fallback", "blocks": json.dumps(QUESTION_BLOCKS)}
    ).encode()
    request = urllib.request.Request(f"{fake.url}/api/chat.postMessage", data=body)
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=5) as response:
        answer = json.load(response)
    assert answer["ok"] is True
    (message,) = fake.messages("C9")
    assert message.blocks[0]["text"]["text"] == "Refund 120 EUR?"


def test_post_message_returns_increasing_ts_and_records_state(fake: FakeSlack, client: WebClient) -> None:
    first = data(
        client.chat_postMessage(
            channel="C1",
            text="Refund?",
            blocks=QUESTION_BLOCKS,
            metadata={"event_type": "agent_wait_question", "event_payload": {"question_id": "q-1"}},
        )
    )
    second = data(client.chat_postMessage(channel="C1", text="another"))
    assert first["channel"] == "C1"
    assert first["ts"] == "1733300000.000100"
    assert second["ts"] == "1733300000.000200"
    assert float(second["ts"]) > float(first["ts"])
    assert first["message"]["text"] == "Refund?"
    assert first["message"]["bot_id"] == fake.bot_id
    first_message, second_message = fake.messages("C1")
    assert first_message.ts == first["ts"]
    assert first_message.metadata == {"event_type": "agent_wait_question", "event_payload": {"question_id": "q-1"}}
    assert first_message.updated == 0
    assert all(block["block_id"] for block in first_message.blocks)  # Slack fills in missing block ids
    assert first_message.blocks[2]["block_id"] == "decide"  # and keeps given ones
    assert second_message.text == "another"
    assert fake.calls[0].method == "chat.postMessage"
    assert fake.calls_to("chat.postMessage")[1]["text"] == "another"


def test_thread_replies(fake: FakeSlack, client: WebClient) -> None:
    parent = data(client.chat_postMessage(channel="C1", text="question"))
    client.chat_postMessage(channel="C1", text="reminder", thread_ts=parent["ts"])
    client.chat_postMessage(channel="C1", text="answered", thread_ts=parent["ts"])
    (message,) = fake.messages("C1")
    assert [reply.text for reply in message.replies] == ["reminder", "answered"]
    assert all(reply.thread_ts == parent["ts"] for reply in message.replies)
    with pytest.raises(SlackApiError) as error:
        client.chat_postMessage(channel="C1", text="x", thread_ts="1.000000")
    assert error.value.response["error"] == "thread_not_found"


def test_update(fake: FakeSlack, client: WebClient) -> None:
    posted = data(client.chat_postMessage(channel="C1", text="question", blocks=QUESTION_BLOCKS))
    answer = data(client.chat_update(channel="C1", ts=posted["ts"], text="answered", blocks=[]))
    assert answer["ts"] == posted["ts"]
    assert answer["message"]["edited"]["user"] == fake.bot_user_id
    (message,) = fake.messages()
    assert (message.text, message.blocks, message.updated) == ("answered", [], 1)
    with pytest.raises(SlackApiError) as error:
        client.chat_update(channel="C1", ts="1733300000.999900", text="x")
    assert error.value.response["error"] == "message_not_found"
    with pytest.raises(SlackApiError) as error:
        client.chat_update(channel="C2", ts=posted["ts"], text="x")
    assert error.value.response["error"] == "message_not_found"


def test_post_ephemeral(fake: FakeSlack, client: WebClient) -> None:
    answer = data(client.chat_postEphemeral(channel="C1", user="U7", text="only you"))
    assert answer["message_ts"]
    (ephemeral,) = fake.ephemeral
    assert (ephemeral.channel, ephemeral.user, ephemeral.text) == ("C1", "U7", "only you")
    assert fake.messages() == []


def test_views_open_and_update(fake: FakeSlack, client: WebClient) -> None:
    with pytest.raises(SlackApiError) as error:
        client.views_open(trigger_id="made-up", view=MODAL)
    assert error.value.response["error"] == "invalid_trigger_id"
    trigger_id = fake.issue_trigger_id()
    opened = data(client.views_open(trigger_id=trigger_id, view=MODAL))
    view = opened["view"]
    assert view["id"].startswith("V")
    assert view["callback_id"] == "answer"
    assert view["private_metadata"] == '{"question_id": "q-1"}'
    assert view["state"] == {"values": {}}
    assert fake.views[view["id"]]["title"]["text"] == "Answer"
    with pytest.raises(SlackApiError) as error:
        client.views_open(trigger_id=trigger_id, view=MODAL)
    assert error.value.response["error"] == "exchanged_trigger_id"

    changed = {**MODAL, "title": {"type": "plain_text", "text": "Answered"}}
    updated = data(client.views_update(view_id=view["id"], view=changed, hash=view["hash"]))
    assert updated["view"]["title"]["text"] == "Answered"
    assert fake.views[view["id"]]["title"]["text"] == "Answered"
    with pytest.raises(SlackApiError) as error:
        client.views_update(view_id=view["id"], view=changed, hash=view["hash"])  # the old hash
    assert error.value.response["error"] == "hash_conflict"
    with pytest.raises(SlackApiError) as error:
        client.views_update(view_id="V404", view=changed)
    assert error.value.response["error"] == "not_found"


def test_users_info_and_usergroups(fake: FakeSlack, client: WebClient) -> None:
    fake.add_user("U1", email="ana@example.com", team_id="T9")
    fake.add_group("S1", "refund-approvers", ["U1", "U2"])
    user = data(client.users_info(user="U1"))["user"]
    assert user["id"] == "U1"
    assert user["team_id"] == "T9"
    assert user["profile"]["email"] == "ana@example.com"
    assert client.usergroups_users_list(usergroup="S1")["users"] == ["U1", "U2"]
    with pytest.raises(SlackApiError) as error:
        client.users_info(user="U404")
    assert error.value.response["error"] == "user_not_found"
    with pytest.raises(SlackApiError) as error:
        client.usergroups_users_list(usergroup="S404")
    assert error.value.response["error"] == "no_such_subteam"
    # GET-style methods go out as POST with a form body from slack_sdk.
    request = fake.requests[0]
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert urllib.parse.parse_qs(request.body.decode()) == {"user": ["U1"]}


def test_conversations_history(client: WebClient) -> None:
    first = data(client.chat_postMessage(channel="C1", text="one"))
    client.chat_postMessage(channel="C1", text="reply", thread_ts=first["ts"])
    client.chat_postMessage(channel="C1", text="two")
    client.chat_postMessage(channel="C2", text="elsewhere")
    history = data(client.conversations_history(channel="C1"))
    assert [message["text"] for message in history["messages"]] == ["two", "one"]
    assert history["messages"][1]["reply_count"] == 1


def test_auth_errors_and_unknown_method(fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as error:
        WebClient(token="xoxb-wrong", base_url=fake.url + "/api/").auth_test()
    assert error.value.response["error"] == "invalid_auth"
    with pytest.raises(SlackApiError) as error:
        WebClient(base_url=fake.url + "/api/").auth_test()
    assert error.value.response["error"] == "not_authed"  # Slack's code for no token at all
    with pytest.raises(SlackApiError) as error:
        WebClient(token=fake.token, base_url=fake.url + "/api/").api_call("chat.frobnicate")
    assert error.value.response["error"] == "unknown_method"
    assert error.value.response.status_code == 404


def test_channels_once_registered(fake: FakeSlack, client: WebClient) -> None:
    fake.add_channel("C1", "approvals")
    fake.add_channel("C2", "private", member=False)
    client.chat_postMessage(channel="C1", text="ok")
    for channel, code in (("C404", "channel_not_found"), ("C2", "not_in_channel")):
        with pytest.raises(SlackApiError) as error:
            client.chat_postMessage(channel=channel, text="x")
        assert error.value.response["error"] == code


def test_injected_errors(fake: FakeSlack, client: WebClient) -> None:
    fake.fail_next("chat.postMessage", "channel_not_found")
    with pytest.raises(SlackApiError) as error:
        client.chat_postMessage(channel="C1", text="x")
    assert error.value.response.status_code == 200
    assert error.value.response["error"] == "channel_not_found"
    client.chat_postMessage(channel="C1", text="x")  # only the next call fails
    assert len(fake.calls_to("chat.postMessage")) == 2
    assert len(fake.messages()) == 1


def test_rate_limit_is_not_retried_by_default(fake: FakeSlack, client: WebClient) -> None:
    # WebClient's default retry handlers retry only connection errors: a 429 surfaces as SlackApiError.
    fake.fail_next("chat.postMessage", retry_after=0)
    with pytest.raises(SlackApiError) as error:
        client.chat_postMessage(channel="C1", text="x")
    assert error.value.response.status_code == 429
    assert error.value.response["error"] == "ratelimited"
    assert error.value.response.headers["Retry-After"] == "0"
    assert len(fake.calls_to("chat.postMessage")) == 1
    assert fake.messages() == []


def test_rate_limit_retried_by_rate_limit_handler(fake: FakeSlack) -> None:
    # With RateLimitErrorRetryHandler the client sleeps Retry-After (+ up to 1 s of jitter) and tries again.
    client = WebClient(token=fake.token, base_url=fake.url + "/api/")
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=1))
    fake.fail_next("chat.postMessage", retry_after=0)
    answer = data(client.chat_postMessage(channel="C1", text="x"))
    assert answer["ok"] is True
    assert len(fake.calls_to("chat.postMessage")) == 2
    assert len(fake.messages()) == 1


# -- interactions: Slack calling the app ---------------------------------------------------------------------


def test_click_sends_a_signed_block_actions_payload(fake: FakeSlack, client: WebClient, app: App) -> None:
    fake.add_user("U5", email="ana@example.com")
    posted = data(client.chat_postMessage(channel="C1", text="Refund?", blocks=QUESTION_BLOCKS))
    (message,) = fake.messages("C1")
    delivery = fake.click(app.url, message, "approve", user_id="U5", signing_secret=SECRET)
    assert delivery.status == 200
    (payload,) = app.received
    assert payload["type"] == "block_actions"
    assert payload["user"] == {"id": "U5", "username": "ana", "name": "ana", "team_id": fake.team_id}
    assert payload["team"] == {"id": fake.team_id, "domain": fake.team_domain}
    assert payload["api_app_id"] == fake.app_id
    assert payload["container"] == {
        "type": "message",
        "message_ts": posted["ts"],
        "channel_id": "C1",
        "is_ephemeral": False,
    }
    assert payload["channel"]["id"] == "C1"
    assert payload["message"]["ts"] == posted["ts"]
    assert payload["message"]["blocks"][2]["elements"][0]["action_id"] == "approve"
    (action,) = payload["actions"]
    assert action["action_id"] == "approve"
    assert action["block_id"] == "decide"
    assert action["value"] == "yes"
    assert action["type"] == "button"
    assert action["text"]["text"] == "Approve"
    assert payload["trigger_id"]
    assert payload["response_url"].startswith(f"{fake.url}/response/")
    body = app.bodies[0].decode()
    assert body.startswith("payload=")
    assert "%5C%2F" in body  # Slack's JSON escapes "/" as "\/"
    # The app's response_url answer replaced the message, as Slack does with replace_original.
    (response,) = fake.responses
    assert response.body["replace_original"] is True
    (message,) = fake.messages("C1")
    assert (message.text, message.blocks, message.updated) == ("Answered: yes", [], 1)


def test_click_value_override_and_trigger_opens_a_view(fake: FakeSlack, client: WebClient, app: App) -> None:
    client.chat_postMessage(channel="C1", text="Refund?", blocks=QUESTION_BLOCKS)
    (message,) = fake.messages()
    fake.click(app.url, message, "reject", value="custom", signing_secret=SECRET)
    payload = app.received[0]
    assert payload["actions"][0]["value"] == "custom"
    assert client.views_open(trigger_id=payload["trigger_id"], view=MODAL)["ok"] is True
    with pytest.raises(KeyError):
        fake.click(app.url, message, "no-such-button", signing_secret=SECRET)


def test_bad_signatures_are_refused(fake: FakeSlack, client: WebClient, app: App) -> None:
    client.chat_postMessage(channel="C1", text="Refund?", blocks=QUESTION_BLOCKS)
    (message,) = fake.messages()
    assert fake.click(app.url, message, "approve", signing_secret="wrong").status == 401
    assert fake.click(app.url, message, "approve", signing_secret=SECRET, tamper=True).status == 401
    stale = int(time.time()) - 600  # SignatureVerifier refuses timestamps older than five minutes
    assert fake.click(app.url, message, "approve", signing_secret=SECRET, timestamp=stale).status == 401
    assert app.received == []


def test_post_signed_raw(app: App, fake: FakeSlack) -> None:
    body = "payload=" + urllib.parse.quote(json.dumps({"type": "view_closed"}))
    assert fake.post_signed(app.url, body, SECRET).status == 200
    assert fake.post_signed(app.url, body, SECRET, signature="v0=deadbeef").status == 401
    assert fake.post_signed(app.url, body, SECRET, headers={"X-Slack-Signature": ""}).status == 401


def test_submit_view(fake: FakeSlack, client: WebClient, app: App) -> None:
    view = data(client.views_open(trigger_id=fake.issue_trigger_id(), view=MODAL))["view"]
    delivery = fake.submit_view(
        app.url,
        view,
        {
            "reason": {"text": "customer is right"},
            "amount": {"n": 12.5},
            "choice": {"pick": "approve"},
            "flags": {"checks": ["notify"]},
        },
        user_id="U5",
        signing_secret=SECRET,
    )
    assert delivery.status == 200
    assert delivery.json() == {"response_action": "clear"}
    (payload,) = app.received
    assert payload["type"] == "view_submission"
    assert payload["user"]["id"] == "U5"
    sent = payload["view"]
    assert sent["id"] == view["id"]
    assert sent["callback_id"] == "answer"
    assert sent["private_metadata"] == '{"question_id": "q-1"}'
    values = sent["state"]["values"]
    assert values["reason"]["text"] == {"type": "plain_text_input", "value": "customer is right"}
    assert values["amount"]["n"] == {"type": "number_input", "value": "12.5"}
    assert values["choice"]["pick"]["selected_option"]["value"] == "approve"
    assert values["choice"]["pick"]["selected_option"]["text"]["text"] == "Approve"
    assert [option["value"] for option in values["flags"]["checks"]["selected_options"]] == ["notify"]
    assert values["note"]["note"] == {"type": "plain_text_input", "value": None}  # left empty
    with pytest.raises(KeyError):
        fake.submit_view(app.url, view, {"reason": {"nope": "x"}}, signing_secret=SECRET)


def test_response_url_in_channel_and_ephemeral(fake: FakeSlack, client: WebClient, app: App) -> None:
    client.chat_postMessage(channel="C1", text="Refund?", blocks=QUESTION_BLOCKS)
    (message,) = fake.messages()
    fake.click(app.url, message, "approve", signing_secret=SECRET)
    response_url = app.received[0]["response_url"]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for body in ({"response_type": "in_channel", "text": "posted"}, {"text": "just you"}):
        request = urllib.request.Request(
            response_url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        opener.open(request, timeout=5).close()
    assert [posted.text for posted in fake.messages("C1")] == ["Answered: yes", "posted"]
    assert [(ephemeral.user, ephemeral.text) for ephemeral in fake.ephemeral] == [("U123", "just you")]
    assert len(fake.responses) == 3
