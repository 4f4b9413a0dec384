"""The email announcer's bad paths and redeliveries, with a recording SES client and in-memory sends; and the
`AGENT_WAIT_EMAIL_*` settings' checks."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.email import EmailAnnounce, InMemoryEmailSends
from agent_wait.channels.recipients import RecipientRouting
from agent_wait.contract.envelope import Transition
from agent_wait.errors import ConfigurationError, EmailDeliveryError
from agent_wait.host import HostSettings

NOW = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ROUTING = RecipientRouting(groups={"finance": ["ana@example.com", "dana@example.com"]})


class Ses:
    """Records each SendEmail; refuses the addresses in `refuse` with an AWS-shaped error."""

    def __init__(self, refuse: tuple[str, ...] = ()) -> None:
        self.sent: list[dict[str, Any]] = []
        self.refuse = refuse

    def send_email(self, **request: Any) -> dict[str, str]:
        to = request["Destination"]["ToAddresses"][0]
        if to in self.refuse:
            error = Exception("refused")
            error.response = {"Error": {"Code": "MessageRejected"}}  # type: ignore[attr-defined]
            raise error
        self.sent.append(request)
        return {"MessageId": f"m-{len(self.sent)}"}


def envelope(**policy: Any) -> WaitEnvelope:
    question = Question("order-1", "q-1", {"function": "refund", "args": {"amount": 5}}, policy=WaitPolicy(**policy))
    return WaitEnvelope.create(question, now=NOW)


def announcer(ses: Ses, sends: InMemoryEmailSends | None = None) -> EmailAnnounce:
    return EmailAnnounce(
        ses,
        ROUTING,
        sends or InMemoryEmailSends(),
        sender="approvals@example.com",
        configuration_set="cs",
        clock=lambda: NOW,
    )


def test_a_redelivered_event_emails_nobody_twice():
    ses, sends = Ses(), InMemoryEmailSends()
    asked = envelope(answerer_groups=["finance"])
    announcer(ses, sends).deliver(asked, Transition.CREATED)
    announcer(ses, sends).deliver(asked, Transition.CREATED)

    assert [r["Destination"]["ToAddresses"] for r in ses.sent] == [["ana@example.com"], ["dana@example.com"]]
    assert {r["ConfigurationSetName"] for r in ses.sent} == {"cs"}


def test_one_refused_recipient_keeps_no_one_else_from_their_email_and_is_retried_alone():
    sends = InMemoryEmailSends()
    asked = envelope(answerer_groups=["finance"])
    with pytest.raises(EmailDeliveryError, match=re.escape("ana@example.com: MessageRejected")) as caught:
        announcer(Ses(refuse=("ana@example.com",)), sends).deliver(asked, Transition.CREATED)
    assert "refund" not in caught.value.message, "no question content in the error"

    retry = Ses()
    announcer(retry, sends).deliver(asked, Transition.CREATED)
    assert [r["Destination"]["ToAddresses"] for r in retry.sent] == [["ana@example.com"]]


def test_a_question_that_reaches_no_address_is_a_counted_failure_that_says_what_to_set():
    with pytest.raises(EmailDeliveryError, match=re.escape("no email recipient for question q-1")):
        announcer(Ses()).deliver(envelope(tags={"team": "ops"}), Transition.CREATED)


def test_a_bad_email_principal_is_named_and_the_others_are_still_emailed():
    ses = Ses()
    bad = envelope(answerer_principals=["email:nope", "email:cfo@example.com"])
    with pytest.raises(EmailDeliveryError, match=re.escape("['email:nope'] are not email addresses")):
        announcer(ses).deliver(bad, Transition.CREATED)
    assert [r["Destination"]["ToAddresses"] for r in ses.sent] == [["cfo@example.com"]]


def test_the_outcome_goes_to_whoever_was_emailed_and_resumed_sends_nothing():
    ses, sends = Ses(), InMemoryEmailSends()
    asked = envelope(answerer_groups=["finance"])
    announcer(ses, sends).deliver(asked, Transition.CREATED)
    announcer(ses, sends).deliver(asked.for_transition(Transition.ANSWERED), Transition.ANSWERED)
    announcer(ses, sends).deliver(asked.for_transition(Transition.RESUMED), Transition.RESUMED)

    outcomes = [r for r in ses.sent if b"Subject: Answered: refund" in r["Content"]["Raw"]["Data"]]
    assert len(ses.sent) == 4
    assert len(outcomes) == 2


@pytest.mark.parametrize(
    ("environment", "wanted"),
    [
        ({"AGENT_WAIT_EMAIL_RECIPIENTS": "{}"}, "AGENT_WAIT_EMAIL_FROM is not set"),
        ({"AGENT_WAIT_EMAIL_FROM": "not an address"}, "AGENT_WAIT_EMAIL_FROM must be an address, or 'Name <address>'"),
        ({"AGENT_WAIT_EMAIL_FROM": "a@example.com"}, "AGENT_WAIT_EMAIL_SENDS_TABLE is not set"),
        ({"AGENT_WAIT_EMAIL_RECIPIENTS": '{"groups": {"x": ["bob"]}}'}, "groups['x'] holds 'bob'"),
        ({"AGENT_WAIT_EMAIL_REPLY_TO": "desk@example.com, nope"}, "'nope' is not one"),
        ({"AGENT_WAIT_EMAIL_CONFIGURATION_SET": "bad set!"}, "must be an SES configuration set name"),
    ],
)
def test_each_bad_email_setting_is_named(environment: dict[str, str], wanted: str):
    base = {
        "AGENT_WAIT_TABLE": "t",
        "AGENT_WAIT_QUEUE_URL": "https://sqs.example.com/q",
    }
    with pytest.raises(ConfigurationError, match=re.escape(wanted)):
        HostSettings.from_env("sweep", {**base, **environment})


def test_good_email_settings_are_read():
    settings = HostSettings.from_env(
        "sweep",
        {
            "AGENT_WAIT_TABLE": "t",
            "AGENT_WAIT_QUEUE_URL": "https://sqs.example.com/q",
            "AGENT_WAIT_EMAIL_FROM": "Approvals <approvals@example.com>",
            "AGENT_WAIT_EMAIL_SENDS_TABLE": "sends",
            "AGENT_WAIT_EMAIL_REPLY_TO": "desk@example.com",
            "AGENT_WAIT_EMAIL_RECIPIENTS": '{"tags": {"*": ["desk@example.com"]}}',
        },
    )
    assert settings.email is not None
    assert (settings.email.sender, settings.email.reply_to) == (
        "Approvals <approvals@example.com>",
        ("desk@example.com",),
    )
    assert settings.email.routing.tags == {"*": ("desk@example.com",)}
