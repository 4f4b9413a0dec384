"""How every channel shows an MCP elicitation round (`agent_wait.channels.reading`): the server's messages and links
only; a form's fields as a `response_schema` form's are shown (Teams names them, the email and Teams send the person to
the inbox to fill them in, Slack's modal asks them); decline and cancel by one press, an accept of a required form
through the form. The loop through the emulator is tests/local/test_mcp_elicitation_loop.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from agent_wait.asking.wait import unpack_question
from agent_wait.channels.email.render import question_email
from agent_wait.channels.reading import Kind, read
from agent_wait.channels.slack._blocks import modal_view
from agent_wait.channels.teams.cards import question_card
from agent_wait.contract.envelope import WaitEnvelope

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)
CONTACT = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Your name"}, "seats": {"type": "integer"}},
    "required": ["name"],
}
FORM = {"key": "contact", "message": "Who is booking?", "mode": "form", "requested_schema": CONTACT}
LINK = {"key": "pay", "message": "Pay the deposit", "mode": "url", "url": "https://pay.example.com/s/abc"}
INBOX = "https://inbox.example.com/inbox#/questions/q-1"


def _envelope(*requests: dict[str, Any]) -> WaitEnvelope:
    value = {"type": "mcp_elicitation", "tool_name": "book_table", "requests": list(requests)}
    return WaitEnvelope.create(unpack_question(value, "t-1", "q-1"), now=T0)


def _links(envelope: WaitEnvelope) -> dict[str, str]:
    return {action: f"https://links.example.com/{action}" for action in read(envelope).one_click}


def test_a_form_round_reads_as_its_message_and_its_form() -> None:
    reading = read(_envelope(FORM))
    assert (reading.kind, reading.headline, reading.text, reading.facts) == (Kind.SCHEMA, "Who is booking?", "", ())
    fields = [(f.name, f.title, f.required) for f in reading.form]
    assert fields == [("name", "Your name", True), ("seats", "seats", False)]
    assert reading.one_click == ("decline", "cancel")
    assert reading.elsewhere == "To accept, fill in its form: answer it in the inbox."


def test_a_form_with_nothing_required_is_accepted_with_one_press_too() -> None:
    optional = {**FORM, "requested_schema": {**CONTACT, "required": []}}
    assert read(_envelope(optional)).one_click == ("accept", "decline", "cancel")


def test_teams_names_the_forms_fields_and_sends_the_accept_to_the_inbox() -> None:
    envelope = _envelope(FORM)
    card = json.dumps(question_card(envelope, _links(envelope), inbox_url=INBOX))
    assert "The answer gives: Your name (required), seats" in card
    assert "To accept, fill in its form: answer it in the inbox." in card
    assert "https://links.example.com/decline" in card
    assert "https://links.example.com/accept" not in card
    assert "requested_schema" not in card


def test_the_email_sends_the_accept_to_the_inbox() -> None:
    envelope = _envelope(FORM)
    email = question_email(envelope, links=_links(envelope), recipient="ana@example.com", now=T0, inbox_url=INBOX)
    assert email.subject == "Your answer is needed: Who is booking?"
    assert "To accept, fill in its form: answer it in the inbox." in email.text
    assert "requested_schema" not in email.text


def test_slacks_modal_asks_the_forms_fields_with_the_action_as_its_choice() -> None:
    view = modal_view(_envelope(FORM))
    inputs = [b for b in view["blocks"] if b["type"] == "input"]
    assert [(b["block_id"], b["label"]["text"], b.get("optional", False)) for b in inputs] == [
        ("action", "Answer", False),
        ("arg:name", "Your name", True),  # required to accept only: a decline needs nothing filled in
        ("arg:seats", "seats", True),
        ("note", "Note", True),
    ]


def test_a_url_round_says_the_message_and_the_link_and_nothing_else_in_every_channel() -> None:
    envelope = _envelope(LINK)
    reading = read(envelope)
    assert (reading.kind, reading.headline, reading.facts, reading.form) == (Kind.PROMPT, "Pay the deposit", (), ())
    assert reading.text == f"[{LINK['url']}]({LINK['url']})"  # the link written out: the person sees where it leads
    card = question_card(envelope, _links(envelope), inbox_url=INBOX)
    texts = [item.get("text") for item in card["body"] if item.get("type") == "TextBlock"]
    assert "Pay the deposit" in texts
    assert any(LINK["url"] in str(text) for text in texts)
    email = question_email(envelope, links=_links(envelope), recipient="ana@example.com", now=T0)
    assert f"Pay the deposit\n\n{LINK['url']} ({LINK['url']})" in email.text
    for shown in (json.dumps(card), email.text, email.html):
        assert "requested_schema" not in shown
        assert '"key"' not in shown


def test_a_round_of_several_requests_reads_as_the_tools_asks() -> None:
    reading = read(_envelope(FORM, LINK))
    assert reading.headline == "book_table asks 2 things"
    assert reading.text == f"Who is booking?\n\nPay the deposit\n\n[{LINK['url']}]({LINK['url']})"
    assert [f.name for f in reading.form] == ["name", "seats"]


def test_an_address_that_is_not_a_web_address_is_shown_as_text_never_as_a_link() -> None:
    envelope = _envelope({**LINK, "url": "javascript:alert(1)"})
    assert read(envelope).text == "`javascript:alert(1)`"
    card = json.dumps(question_card(envelope, _links(envelope), inbox_url=INBOX))
    assert "](javascript" not in card
