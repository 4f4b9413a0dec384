"""Shaped webhooks against a local HTTP receiver: each transition's template shapes the JSON that is POSTed, every
expression is written as JSON (a question cannot break out of a string), and a template that cannot work is
refused by name when the announcer is built, not at the first question."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.announce.conftest import Receiver

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.announce import verify_signature
from agent_wait.channels.shaped import ShapedWebhookAnnounce, check_templates
from agent_wait.contract.announcer import DeliveryStatus
from agent_wait.contract.envelope import Transition
from agent_wait.errors import WebhookTemplateError

SLACK_STYLE = {
    "created": '{"text": {{ "Waiting for an answer: " ~ envelope.question.args.note }}, "links": {{ links }}}',
    "default": '{"text": {{ event ~ " " ~ question_id }}}',
}


def _envelope(note: str = "refund please", transition: Transition = Transition.CREATED) -> WaitEnvelope:
    policy = WaitPolicy(timeout="P1D", default={"action": "reject"}, allowed_actions=["approve", "reject"])
    question = Question("t-1", "q-1", {"function": "issue_refund", "args": {"note": note}}, policy=policy)
    return WaitEnvelope.create(question, transition=transition)


def test_each_transition_is_posted_as_its_template_shapes_it(receiver: Receiver) -> None:
    announcer = ShapedWebhookAnnounce(receiver.url, templates=SLACK_STYLE, secret="s3cret")
    assert announcer.announce(_envelope()).status is DeliveryStatus.DELIVERED
    assert announcer.announce(_envelope(transition=Transition.EXPIRED)).status is DeliveryStatus.DELIVERED
    created, expired = (json.loads(body) for body in receiver.bodies())
    assert created == {"text": "Waiting for an answer: refund please", "links": {}}
    assert expired == {"text": "wait.expired q-1"}
    # signed as any webhook, over the shaped body
    request = receiver.requests[0]
    assert verify_signature("s3cret", request.body, request.headers["x-agent-wait-signature"])
    assert request.headers["x-agent-wait-event"] == "wait.created"


def test_a_question_cannot_break_out_of_a_string_or_add_a_field(receiver: Receiver) -> None:
    note = '", "channel": "#general", "x": "</script>\n'
    announcer = ShapedWebhookAnnounce(receiver.url, templates=SLACK_STYLE)
    announcer.announce(_envelope(note))
    body = json.loads(receiver.bodies()[0])
    assert set(body) == {"text", "links"}
    assert body["text"] == f"Waiting for an answer: {note}"


def test_a_transition_without_a_template_is_skipped(receiver: Receiver) -> None:
    announcer = ShapedWebhookAnnounce(receiver.url, templates={"wait.created": SLACK_STYLE["created"]})
    assert announcer.announce(_envelope(transition=Transition.EXPIRED)).status is DeliveryStatus.SKIPPED
    assert receiver.requests == []


def test_the_links_and_the_inbox_reach_the_template(receiver: Receiver) -> None:
    from dataclasses import replace

    links = {"approve": "https://api.example.com/questions/q-1/confirm#t"}
    envelope = replace(_envelope(), reply_to={"links": links})
    template = '{"approve": {{ links.approve }}, "inbox": {{ inbox_url }}}'
    ShapedWebhookAnnounce(receiver.url, templates={"created": template}, inbox_url="https://api/inbox").announce(
        envelope
    )
    assert json.loads(receiver.bodies()[0]) == {
        "approve": links["approve"],
        "inbox": "https://api/inbox#/questions/q-1",
    }


@pytest.mark.parametrize(
    ("templates", "message"),
    [
        ({}, "a shaped webhook needs at least one template"),
        ({"created!": "{}"}, "shaped webhook templates are keyed by transition (wait.created, "),
        ({"created": "  "}, "the wait.created template must be non-empty text"),
        ({"created": '{"a": {{ x }'}, "the wait.created template does not parse: line 1: "),
        ({"created": '{"text": "{{ question_id }}"}'}, "the wait.created template does not render JSON (Expecting ','"),
        ({"default": '{"a": {{ nope }}}'}, "the default template failed on wait.created of question sample-question: "),
        (
            {"created": '{"a": {{ envelope.__class__.__mro__ }}}'},
            "the wait.created template failed on wait.created of question sample-question: SecurityError",
        ),
        ({"created": '{"a": {{ links.pop("approve") }}}'}, "SecurityError"),
    ],
    ids=["none", "unknown-key", "empty", "syntax", "quoted-expression", "undefined", "dunder", "mutation"],
)
def test_a_template_that_cannot_work_is_refused_when_built(templates: dict[str, Any], message: str) -> None:
    with pytest.raises(WebhookTemplateError, match=re.escape(message)):
        check_templates(templates)


def test_a_template_that_breaks_on_one_question_is_a_counted_failure(receiver: Receiver) -> None:
    # GIVEN a template that reads an argument the sample question has, and a question without it
    announcer = ShapedWebhookAnnounce(receiver.url, templates={"created": '{"t": {{ envelope.question.args.note }}}'})
    envelope = WaitEnvelope.create(
        Question("t-1", "q-2", {"function": "f", "args": {}}, policy=WaitPolicy(allowed_actions=["approve"]))
    )
    delivery = announcer.announce(envelope)
    assert delivery.status is DeliveryStatus.FAILED
    assert "WebhookTemplateError: the wait.created template failed on wait.created of question q-2" in (
        delivery.error or ""
    )
    assert receiver.requests == []
