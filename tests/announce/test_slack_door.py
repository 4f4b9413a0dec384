"""The Slack door over real HTTP: FakeSlack (`tests/support/fake_slack.py`) plays Slack's Web API for `slack_sdk` and
sends signed clicks and form submissions to the answer API's `POST /slack/interactions`, served by `LocalApi` as API
Gateway would, which decides through `AnswerService` on an in-memory ledger. `SlackAnnounce` posts each question, so
every click is on the message people see.

Slack user group S0FIN stands for the answerer group `finance` (alice, and nomail, whose address the app cannot read);
S0MGR for `finance-managers` (maria).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk import WebClient
from tests.support.api_events import call
from tests.support.fake_slack import Delivery, FakeSlack, PostedMessage

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackInteractions, SlackRouting
from agent_wait.contract.envelope import Transition
from agent_wait.contract.messages import load_answer_text, parse_answer
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.errors import MessageError
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import Decision, InMemoryLedger
from agent_wait.local.api_server import LocalApi
from agent_wait.policy.followup import Escalation

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
SIGNING_SECRET = "slack-door-signing-secret"
APPROVE, OPEN_FORM = "agent_wait:answer:approve", "agent_wait:modal"
ALICE, NOMAIL, MARIA = "U0ALICE", "U0NOMAIL", "U0MARIA"
NOMAIL_KEY = "slack:T123:U0NOMAIL"
UNNAMED = "Not recorded: Slack did not say who you are just now; try again in a few seconds."
CAROL_CLAIMS = {
    "iss": "https://issuer.example.com",
    "sub": "u-carol",
    "email": "carol@example.com",
    "email_verified": "true",
    "cognito:groups": ["finance"],
}
REFUND_ARGS_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "amount": {"type": "integer"},
        "reason": {"type": "string"},
        "lines": {"type": "array", "items": {"type": "integer"}},
    },
    "additionalProperties": False,
}
REFUND = {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900, "reason": "damaged", "lines": [1, 2]}}
GROUPS = {"finance": "S0FIN", "finance-managers": "S0MGR"}
FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, answerer_groups=["finance"], allow_edits=True)


class Door:
    """One answer API with Slack on, one ledger and entry queue, and the announcer that posts to the fake Slack."""

    def __init__(self, slack: FakeSlack, build: Callable[[Door], SlackInteractions] | None = None) -> None:
        """`build` makes the door's `SlackInteractions` (by default, straight from its parts)."""
        self.slack = slack
        self.now = T0
        self.ledger = InMemoryLedger()
        self.queue = InMemoryEntryQueue()
        client = WebClient(token=slack.token, base_url=f"{slack.url}/api/")
        routing = SlackRouting(channels={"*": "C0ALL"}, mentions=GROUPS)
        self.service = AnswerService(self.ledger, self.queue, clock=self.clock)
        self.interactions = (
            build(self)
            if build is not None
            else SlackInteractions(
                signing_secret=SIGNING_SECRET,
                service=self.service,
                find=self.ledger.find,
                client=client,
                routing=routing,
                clock=self.clock,
            )
        )
        self.announcer = SlackAnnounce(
            client, routing, InMemorySlackMessages(), records=self.ledger.find, clock=self.clock
        )
        context = ApiContext(ledger=self.ledger, service=self.service, clock=self.clock, slack=self.interactions)
        self.app = create_app(lambda: context)
        self.api = LocalApi(lambda event: self.app.resolve(event, {}))

    def clock(self) -> datetime:
        return self.now

    @property
    def endpoint(self) -> str:
        return f"{self.api.url}/slack/interactions"

    def ask(
        self, question_id: str, policy: WaitPolicy = FINANCE, asked: Any = REFUND, *, schema: Any = REFUND_ARGS_SCHEMA
    ) -> WaitEnvelope:
        """Open a question on its own thread and post it to Slack, as the router does."""
        source = {"function": "issue_refund", "args_schema": schema} if schema is not None else None
        question = Question(f"t-{question_id}", question_id, asked, policy=policy, source=source, asked_at=T0)
        envelope = WaitEnvelope.create(question, now=T0)
        self.ledger.open(envelope, now=T0)
        self.announcer.announce(envelope)
        return envelope

    def message(self, question_id: str) -> PostedMessage:
        [found] = [
            m
            for m in self.slack.messages()
            if (m.metadata or {}).get("event_payload", {}).get("question_id") == question_id
        ]
        return found

    def click(self, question_id: str, action_id: str, user: str) -> Delivery:
        return self.slack.click(
            self.endpoint,
            self.message(question_id),
            action_id,
            user_id=user,
            signing_secret=SIGNING_SECRET,
            timestamp=int(self.now.timestamp()),
        )

    def open_form(self, question_id: str, user: str) -> dict[str, Any]:
        assert self.click(question_id, OPEN_FORM, user).status == 200
        return [v for v in self.slack.views.values() if v.get("private_metadata") == question_id][-1]

    def submit(self, question_id: str, values: dict[str, str], user: str = ALICE) -> Delivery:
        """Fill the question's form (`{block_id: text}`; the action defaults to approve) and send it."""
        view = self.open_form(question_id, user)
        state = {block: {"value": text} for block, text in {"action": "approve", **values}.items()}
        return self.slack.submit_view(
            self.endpoint, view, state, user_id=user, signing_secret=SIGNING_SECRET, timestamp=int(self.now.timestamp())
        )

    def told(self, user: str) -> list[str]:
        """What the response URLs privately told `user`, oldest first."""
        return [str(r.body.get("text", "")) for r in self.slack.responses if r.user == user]

    def row(self, question_id: str) -> Any:
        record = self.ledger.find(question_id)
        assert record is not None
        return record

    def api_refusal(self, question_id: str, answer: Any) -> str:
        """What the answer API says, in its problem's `detail`, when someone sends `answer` for `question_id`."""
        reply = call(self.app, "POST", f"/questions/{question_id}/answer", {"answer": answer}, claims=CAROL_CLAIMS)
        assert reply.status >= 400, reply.body[:300]
        return str(reply.json()["detail"])

    def announce(self, question_id: str, transition: Transition) -> str:
        """Announce a lifecycle step of the question; the notification text its message was updated with."""
        self.announcer.announce(self.row(question_id).envelope.for_transition(transition))
        return str(self.slack.calls_to("chat.update")[-1]["text"])


def _workspace(slack: FakeSlack) -> FakeSlack:
    slack.add_user(ALICE, email="alice@example.com")
    slack.add_user(NOMAIL)  # the app cannot read their address: users.info has no email
    slack.add_user(MARIA, email="maria@example.com")
    slack.add_group("S0FIN", "finance", [ALICE, NOMAIL])
    slack.add_group("S0MGR", "finance-managers", [MARIA])
    return slack


@pytest.fixture
def door() -> Iterator[Door]:
    with FakeSlack() as slack:
        door = Door(_workspace(slack))
        with door.api:
            yield door


@pytest.fixture
def hosted_door() -> Iterator[Door]:
    """The door with the Slack client the answer API's Lambda builds (`ApiContext.from_settings`: its settings, its
    secrets from Secrets Manager on moto), deciding on the in-memory ledger."""
    import boto3
    from moto import mock_aws

    from agent_wait.host.settings import HostSettings

    with mock_aws(), FakeSlack() as slack:
        session = boto3.Session(region_name="us-east-1")
        secrets = session.client("secretsmanager")
        token = secrets.create_secret(Name="slack-bot", SecretString=slack.token)["ARN"]
        signing = secrets.create_secret(Name="slack-signing", SecretString=SIGNING_SECRET)["ARN"]
        environment = {
            "AGENT_WAIT_TABLE": "questions",
            "AGENT_WAIT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
            "AGENT_WAIT_SLACK_BOT_TOKEN_ARN": token,
            "AGENT_WAIT_SLACK_SIGNING_SECRET_ARN": signing,
            "AGENT_WAIT_SLACK_GROUPS": json.dumps(GROUPS),
            "AGENT_WAIT_SLACK_API_URL": f"{slack.url}/api/",
        }
        deployed = ApiContext.from_settings(HostSettings.from_env("api", environment), session=session).slack
        assert isinstance(deployed, SlackInteractions)

        def build(door: Door) -> SlackInteractions:
            return SlackInteractions(
                signing_secret=SIGNING_SECRET,
                service=door.service,
                find=door.ledger.find,
                client=deployed.client,
                routing=deployed.routing,
                clock=door.clock,
            )

        door = Door(_workspace(slack), build)
        with door.api:
            yield door


def _form_error(reply: Delivery) -> dict[str, str]:
    assert reply.status == 200, reply.body[:300]
    body = reply.json()
    assert body["response_action"] == "errors", body
    return dict(body["errors"])


def _shows(shown: str, wording: str) -> bool:
    """Whether a form error shows `wording`, clipped to Slack's 150 characters per block."""
    return len(shown) <= 150 and (shown == wording or (shown.endswith("…") and wording.startswith(shown[:-1])))


def _typed_refusal(text: str, where: str) -> str:
    """The refusal `agent_wait.contract.messages` gives for JSON a person typed into the field at `where`."""
    with pytest.raises(MessageError) as refused:
        parse_answer({"action": "approve", "args": {"lines": load_answer_text(text, where=where)}})
    assert refused.value.reason == "bad_answer"
    return refused.value.message


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# -- 1. one parse for the Slack form -------------------------------------------------------------------------------


def test_a_twenty_digit_integer_typed_into_the_form_reaches_the_answer_exactly(door: Door) -> None:
    # GIVEN an editable refund in Slack
    door.ask("q-exact")
    # WHEN alice types a 20-digit amount (it fits the 64 bits an agent's checkpoint stores) and sends the form
    reply = door.submit("q-exact", {"arg:amount": "12345678901234567891"})
    # THEN the form closes and the answer holds the number she typed, digit for digit (never through a float)
    assert (reply.status, reply.json()) == (200, {"response_action": "clear"})
    assert door.row("q-exact").answer == {"action": "approve", "args": {"amount": 12345678901234567891}}


def test_a_whole_number_written_with_a_decimal_point_is_read_exactly_in_a_whole_number_field(door: Door) -> None:
    # GIVEN an editable refund whose amount takes whole numbers only
    door.ask("q-point")
    # WHEN the form's amount says 12345678901234567891.0 (what a float would round to ...7168)
    door.submit("q-point", {"arg:amount": "12345678901234567891.0"})
    # THEN the answer holds the whole number, exactly
    assert door.row("q-point").answer == {"action": "approve", "args": {"amount": 12345678901234567891}}


def test_a_fraction_never_reaches_a_whole_number_argument_that_no_schema_checks(door: Door) -> None:
    # GIVEN an editable call published without an args schema: its amount is whole because it was asked as 900
    door.ask("q-unchecked", schema=None)
    # WHEN the form's amount says 12.5 (Slack's own client would not let a person type it)
    errors = _form_error(door.submit("q-unchecked", {"arg:amount": "12.5"}))
    # THEN the form refuses it on the amount, and nothing is decided
    assert errors == {"arg:amount": "answer.args.amount must be a whole number"}
    assert door.row("q-unchecked").status is QuestionStatus.OPEN


def test_a_decimal_is_read_where_the_field_takes_one(door: Door) -> None:
    door.ask("q-rate", asked={"function": "set_rate", "args": {"rate": 0.5}}, schema=None)
    door.submit("q-rate", {"arg:rate": "0.25"})
    assert door.row("q-rate").answer == {"action": "approve", "args": {"rate": 0.25}}


NUMBER_FIELD = [
    ("23-digit", "12345678901234567890123", 12345678901234567890123),
    ("NaN", "NaN", float("nan")),
    ("Infinity", "Infinity", float("inf")),
    ("-Infinity", "-Infinity", float("-inf")),
    ("float-for-int", "12.5", 12.5),
]


@pytest.mark.parametrize(("typed", "sent"), [case[1:] for case in NUMBER_FIELD], ids=[c[0] for c in NUMBER_FIELD])
def test_a_number_the_api_refuses_is_refused_on_the_forms_field_in_the_apis_words(
    door: Door, typed: str, sent: Any
) -> None:
    # GIVEN an editable refund, and the answer API's refusal of the same number sent as JSON for a twin question
    door.ask("q-number")
    door.ask("q-number-twin")
    wording = door.api_refusal("q-number-twin", {"action": "approve", "args": {"amount": sent}})
    # WHEN alice types it into the form's amount and sends it
    errors = _form_error(door.submit("q-number", {"arg:amount": typed}))
    # THEN the form shows the API's refusal on the amount, and nothing is decided
    assert list(errors) == ["arg:amount"]
    assert _shows(errors["arg:amount"], wording), (errors, wording)
    assert door.row("q-number").status is QuestionStatus.OPEN
    assert door.queue.messages == []


TEXT_FIELD = [
    ("ESC-in-text", "arg:reason", "arg:reason", "\x1b[31mdamaged", {"args": {"reason": "\x1b[31mdamaged"}}),
    ("NUL-in-note", "note", "note", "fine\x00", {"note": "fine\x00"}),
    ("300KB-text", "arg:reason", "note", "x" * 300_000, {"args": {"reason": "x" * 300_000}}),
    (
        "23-digit-in-JSON",
        "arg:lines",
        "arg:lines",
        "[12345678901234567890123]",
        {"args": {"lines": [12345678901234567890123]}},
    ),
]


@pytest.mark.parametrize(
    ("field", "shown_on", "typed", "sent"), [case[1:] for case in TEXT_FIELD], ids=[case[0] for case in TEXT_FIELD]
)
def test_text_the_api_refuses_is_refused_on_the_form_in_the_apis_words(
    door: Door, field: str, shown_on: str, typed: str, sent: dict[str, Any]
) -> None:
    # GIVEN an editable refund, and the answer API's refusal of the same answer for a twin question
    door.ask("q-text")
    door.ask("q-text-twin")
    wording = door.api_refusal("q-text-twin", {"action": "approve", **sent})
    # WHEN alice types it into the field (an answer too large has no field of its own: it shows on the note)
    errors = _form_error(door.submit("q-text", {field: typed}))
    # THEN the form shows the API's refusal there, and nothing is decided
    assert list(errors) == [shown_on]
    assert _shows(errors[shown_on], wording), (errors, wording)
    assert door.row("q-text").status is QuestionStatus.OPEN
    assert door.queue.messages == []


JSON_FIELD = [("NaN-in-JSON", "[NaN]"), ("Infinity-in-JSON", "[1, Infinity]"), ("2000-deep", _nested(2000))]


@pytest.mark.parametrize("typed", [case[1] for case in JSON_FIELD], ids=[case[0] for case in JSON_FIELD])
def test_json_a_person_types_is_read_as_every_door_reads_it_and_refused_on_its_field(door: Door, typed: str) -> None:
    # GIVEN an editable refund whose `lines` the form takes as JSON
    door.ask("q-json")
    # WHEN alice types JSON no store can hold into it
    errors = _form_error(door.submit("q-json", {"arg:lines": typed}))
    # THEN Slack gets the form back (never a 500) with the refusal on that field, and nothing is decided
    assert list(errors) == ["arg:lines"]
    assert _shows(errors["arg:lines"], _typed_refusal(typed, "answer.args.lines")), errors
    assert door.row("q-json").status is QuestionStatus.OPEN
    assert door.queue.messages == []


def test_a_refused_form_can_be_corrected_and_sent_again(door: Door) -> None:
    # GIVEN alice's form refused for an amount past 64 bits
    door.ask("q-again")
    assert "arg:amount" in _form_error(door.submit("q-again", {"arg:amount": "12345678901234567890123"}))
    # WHEN she sends it again with an amount that fits
    reply = door.submit("q-again", {"arg:amount": "650"})
    # THEN it decides, with her amount
    assert reply.json() == {"response_action": "clear"}
    assert door.row("q-again").answer == {"action": "approve", "args": {"amount": 650}}


# -- 2. a click on a busy thread is answered within Slack's 3 s ----------------------------------------------------


BUSY = "Not recorded: the agent is working on this thread right now; try again in a few seconds."


@pytest.fixture
def lease_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """How long each answer was let wait for a run on its thread to finish (`AnswerService._decide`'s `wait`)."""
    from agent_wait.engine import AnswerService

    waits: list[float] = []
    decide = AnswerService._decide

    def measured(self: AnswerService, attempt: Any, view: Any, wait: float) -> Any:
        waits.append(wait)
        return decide(self, attempt, view, wait)

    monkeypatch.setattr(AnswerService, "_decide", measured)
    return waits


def test_a_click_on_a_busy_thread_is_answered_at_once_and_the_person_is_told_to_try_again(
    door: Door, lease_waits: list[float]
) -> None:
    # GIVEN a question whose thread a router run holds
    envelope = door.ask("q-busy")
    assert door.ledger.acquire_lease(envelope.thread_id, "a-router-run", now=door.now, seconds=60) is not None
    # WHEN alice clicks approve
    reply = door.click("q-busy", APPROVE, ALICE)
    # THEN Slack has its 200 after a wait short enough to leave Slack's 3 s for the rest of the request (Slack
    # gives up at 3 s, and the door also reads Slack's directory and answers through the response URL)
    assert reply.status == 200
    assert lease_waits, "the door never asked for the thread"
    assert max(lease_waits) <= 1.0, lease_waits
    # AND alice is told privately, through the response URL, that nothing was recorded and to try again
    assert door.told(ALICE) == [BUSY]
    assert door.row("q-busy").status is QuestionStatus.OPEN
    # WHEN the run lets go and she clicks again
    door.ledger.release_lease(envelope.thread_id, "a-router-run")
    door.click("q-busy", APPROVE, ALICE)
    # THEN her approval is recorded, and she is told so
    assert door.told(ALICE)[-1] == "Done: “approve” is recorded, and the agent carries on."
    assert door.row("q-busy").answered_by == "alice@example.com"


def test_a_form_sent_on_a_busy_thread_is_answered_at_once_with_the_refusal_on_the_form(
    door: Door, lease_waits: list[float]
) -> None:
    # GIVEN a question whose thread a router run holds
    envelope = door.ask("q-busy-form")
    door.ledger.acquire_lease(envelope.thread_id, "a-router-run", now=door.now, seconds=60)
    # WHEN alice sends its form
    errors = _form_error(door.submit("q-busy-form", {"arg:amount": "650"}))
    # THEN the form says to try again, after as short a wait as a click's
    assert lease_waits, "the door never asked for the thread"
    assert max(lease_waits) <= 1.0, lease_waits
    assert errors == {"note": BUSY}
    assert door.row("q-busy-form").status is QuestionStatus.OPEN


def test_a_person_slack_cannot_name_right_now_is_told_to_try_again_and_nothing_is_decided(door: Door) -> None:
    # GIVEN a question, and Slack failing to say who alice is (an outage, not a missing scope)
    door.ask("q-who")
    door.slack.fail_next("users.info", "internal_error")
    # WHEN alice clicks approve
    assert door.click("q-who", APPROVE, ALICE).status == 200
    # THEN she is not recorded under another name (her Slack id would be a second person beside her address): she is
    # told to try again
    assert door.told(ALICE) == [UNNAMED]
    assert door.row("q-who").status is QuestionStatus.OPEN


def test_a_person_whose_groups_slack_cannot_list_right_now_is_told_to_try_again(door: Door) -> None:
    # GIVEN finance's question, and Slack failing to list finance's members
    door.ask("q-groups")
    door.slack.fail_next("usergroups.users.list", "internal_error")
    # WHEN alice, in finance, clicks approve
    assert door.click("q-groups", APPROVE, ALICE).status == 200
    # THEN she is not told she may not answer (she may): she is told to try again, and nothing is decided
    assert door.told(ALICE) == [UNNAMED]
    assert door.row("q-groups").status is QuestionStatus.OPEN


def test_a_form_slack_cannot_open_right_now_is_told_privately_not_a_server_error(door: Door) -> None:
    door.ask("q-no-form")
    door.slack.fail_next("views.open", "internal_error")
    assert door.click("q-no-form", OPEN_FORM, ALICE).status == 200
    assert door.told(ALICE) == ["The form did not open: Slack did not answer in time; try again in a few seconds."]


def test_the_hosted_door_does_not_sleep_out_a_rate_limit_it_tells_the_person_to_try_again(hosted_door: Door) -> None:
    # GIVEN the door as the API's Lambda builds it, and Slack rate-limiting users.info (Retry-After: 1 s)
    hosted_door.ask("q-limited")
    hosted_door.slack.fail_next("users.info", "ratelimited", retry_after=1)
    # WHEN alice clicks approve
    assert hosted_door.click("q-limited", APPROVE, ALICE).status == 200
    # THEN the door did not wait the rate limit out (Slack gives up at 3 s): users.info was asked once, and alice is
    # told to try again, with nothing decided
    assert len(hosted_door.slack.calls_to("users.info")) == 1
    assert hosted_door.told(ALICE) == [UNNAMED]
    assert hosted_door.row("q-limited").status is QuestionStatus.OPEN
    # AND her next click goes through
    hosted_door.click("q-limited", APPROVE, ALICE)
    assert hosted_door.row("q-limited").answered_by == "alice@example.com"


# -- 3. the notification text follows the decision -----------------------------------------------------------------


def test_the_notification_text_says_who_answered_then_that_the_agent_carried_on(door: Door) -> None:
    # GIVEN a question posted to Slack: its notification text says it waits
    door.ask("q-text-answered")
    assert door.message("q-text-answered").text.startswith("Waiting for an answer: issue_refund(")
    # WHEN alice approves in Slack and the decision is announced, then the agent carries on
    door.click("q-text-answered", APPROVE, ALICE)
    answered = door.announce("q-text-answered", Transition.ANSWERED)
    door.ledger.mark_resumed("t-q-text-answered", "q-text-answered", now=door.now)
    resumed = door.announce("q-text-answered", Transition.RESUMED)
    # THEN the text (what notifications and screen readers show) says the outcome, not that it waits
    assert answered.startswith("alice@example.com answered “approve” in Slack: issue_refund("), answered
    assert resumed.startswith("alice@example.com answered “approve” in Slack; the agent carried on: issue_refund(")
    assert door.message("q-text-answered").text == resumed


def test_the_notification_text_says_the_default_applied_when_nobody_answered(door: Door) -> None:
    door.ask("q-text-expired")
    expired = Decision(QuestionStatus.EXPIRED, {"action": "reject"}, "agent-wait:deadline:q-text-expired")
    door.ledger.decide("t-q-text-expired", "q-text-expired", expired, now=T0 + timedelta(days=3))
    text = door.announce("q-text-expired", Transition.EXPIRED)
    assert text.startswith("Nobody answered in time; the default applied, “reject”: issue_refund("), text


def test_the_notification_text_says_who_cancelled_it_or_that_it_was_withdrawn(door: Door) -> None:
    door.ask("q-text-cancelled")
    door.ask("q-text-withdrawn")
    cancelled = Decision(QuestionStatus.CANCELLED, None, "c-1", answered_by="carol@example.com", reason="duplicate")
    door.ledger.decide("t-q-text-cancelled", "q-text-cancelled", cancelled, now=T0)
    withdrawn = Decision(QuestionStatus.CANCELLED, None, "agent-wait:cancelled:q-text-withdrawn")
    door.ledger.decide("t-q-text-withdrawn", "q-text-withdrawn", withdrawn, now=T0)
    by_carol = door.announce("q-text-cancelled", Transition.CANCELLED)
    by_agent = door.announce("q-text-withdrawn", Transition.CANCELLED)
    assert by_carol.startswith("carol@example.com cancelled it: issue_refund("), by_carol
    assert by_agent.startswith("Withdrawn: the agent moved on without an answer: issue_refund("), by_agent


def test_the_notification_text_says_the_agent_failed_carrying_on(door: Door) -> None:
    door.ask("q-text-failed")
    door.click("q-text-failed", APPROVE, ALICE)
    text = door.announce("q-text-failed", Transition.FAILED)
    assert text.startswith("alice@example.com answered “approve” in Slack, but the agent failed carrying on:"), text


# -- 4. the audience in effect now -----------------------------------------------------------------------------------


def _escalating(replace: bool) -> WaitPolicy:
    step = Escalation(after="PT1H", answerer_groups=["finance-managers"], replace_answerers=replace)
    return WaitPolicy(timeout="P3D", default={"action": "reject"}, answerer_groups=["finance"], escalation=[step])


def test_an_escalated_groups_member_may_answer_in_slack_once_the_step_is_in_effect(door: Door) -> None:
    # GIVEN finance's question that escalates to finance-managers after an hour
    door.ask("q-escalated", _escalating(replace=False))
    # WHEN maria, a manager, approves before the step: refused
    door.now = T0 + timedelta(minutes=30)
    door.click("q-escalated", APPROVE, MARIA)
    assert door.told(MARIA)[-1] == "Not recorded: you are not one of the people who may answer this question."
    assert door.row("q-escalated").status is QuestionStatus.OPEN
    # WHEN she approves after it
    door.now = T0 + timedelta(hours=2)
    door.click("q-escalated", APPROVE, MARIA)
    # THEN she decides it, as the answer API would let her
    assert door.told(MARIA)[-1] == "Done: “approve” is recorded, and the agent carries on."
    assert door.row("q-escalated").answered_by == "maria@example.com"


def test_the_earlier_audience_still_answers_after_a_step_that_widens_it(door: Door) -> None:
    door.ask("q-widened", _escalating(replace=False))
    door.now = T0 + timedelta(hours=2)
    door.click("q-widened", APPROVE, ALICE)
    assert door.row("q-widened").answered_by == "alice@example.com"


def test_the_earlier_audience_is_refused_after_a_step_that_replaces_it(door: Door) -> None:
    # GIVEN finance's question whose step hands it over to finance-managers
    door.ask("q-replaced", _escalating(replace=True))
    # WHEN alice, in finance, approves after the step
    door.now = T0 + timedelta(hours=2)
    door.click("q-replaced", APPROVE, ALICE)
    # THEN she is refused, and maria may answer
    assert door.told(ALICE)[-1] == "Not recorded: you are not one of the people who may answer this question."
    door.click("q-replaced", APPROVE, MARIA)
    assert door.row("q-replaced").answered_by == "maria@example.com"


# -- 5. who a Slack user is ------------------------------------------------------------------------------------------


def test_a_slack_user_whose_address_the_policy_names_answers_as_that_address(door: Door) -> None:
    # GIVEN a question open only to Alice, named by her address in another case and with the email: prefix
    named = WaitPolicy(timeout="P3D", answerer_principals=["email:Alice@Example.com"])
    door.ask("q-named", named)
    # WHEN alice, whose Slack profile gives alice@example.com, approves in Slack
    door.click("q-named", APPROVE, ALICE)
    # THEN she decides it as her address, beside her Slack subject
    record = door.row("q-named")
    assert (record.status, record.answered_by, record.sender) == (
        QuestionStatus.ANSWERED,
        "alice@example.com",
        "slack:T123:U0ALICE",
    )


@pytest.mark.parametrize("scope", ["no email in the profile", "missing_scope"])
def test_a_slack_user_without_an_address_answers_as_their_slack_id_where_a_group_lets_them(
    door: Door, scope: str
) -> None:
    # GIVEN nomail, whose address the app cannot read, in finance's Slack group
    door.ask("q-only-named", WaitPolicy(timeout="P3D", answerer_principals=["email:alice@example.com"]))
    door.ask("q-finance")
    # WHEN they approve a question open only to a named address, and one open to finance
    for question_id in ("q-only-named", "q-finance"):
        if scope == "missing_scope":  # the app may not read profiles at all (no users:read)
            door.slack.fail_next("users.info", "missing_scope")
        door.click(question_id, APPROVE, NOMAIL)
    # THEN the first refuses them (their Slack id is not the address), the second takes them as their Slack id
    assert door.told(NOMAIL)[0] == "Not recorded: you are not one of the people who may answer this question."
    assert door.row("q-only-named").status is QuestionStatus.OPEN
    assert door.row("q-finance").answered_by == NOMAIL_KEY


def test_a_slack_user_named_by_their_slack_id_answers_without_an_address(door: Door) -> None:
    door.ask("q-slack-named", WaitPolicy(timeout="P3D", answerer_principals=["slack:U0NOMAIL"]))
    door.click("q-slack-named", APPROVE, NOMAIL)
    assert door.row("q-slack-named").answered_by == NOMAIL_KEY


def test_a_slack_user_without_an_address_is_shown_as_a_mention_wherever_the_outcome_is_told(door: Door) -> None:
    # GIVEN a two-person quorum of finance, and nomail's vote, then alice's deciding one
    quorum = WaitPolicy(timeout="P3D", answerer_groups=["finance"], quorum=2)
    door.ask("q-mention", quorum)
    door.click("q-mention", APPROVE, NOMAIL)
    door.click("q-mention", APPROVE, ALICE)
    # WHEN the decision is announced
    text = door.announce("q-mention", Transition.ANSWERED)
    shown = json.dumps(door.message("q-mention").blocks)
    # THEN the message's votes and its notification name nomail as a mention Slack shows by name, never as a key
    assert "<@U0NOMAIL> (approve)" in shown
    assert NOMAIL_KEY not in shown
    assert NOMAIL_KEY not in text
    assert text.startswith("alice@example.com answered “approve” in Slack:")


def test_an_answer_by_a_slack_user_without_an_address_is_told_as_a_mention(door: Door) -> None:
    # GIVEN nomail decided finance's question
    door.ask("q-told")
    door.click("q-told", APPROVE, NOMAIL)
    # WHEN alice clicks after, and the decision is announced
    door.click("q-told", APPROVE, ALICE)
    text = door.announce("q-told", Transition.ANSWERED)
    # THEN alice is told who won as a mention; the message and its notification say the same
    assert door.told(ALICE)[-1].startswith("Not recorded: <@U0NOMAIL> answered “approve” in Slack at ")
    assert text.startswith("<@U0NOMAIL> answered “approve” in Slack:"), text
    assert "<@U0NOMAIL> answered *approve* in Slack" in json.dumps(door.message("q-told").blocks)
