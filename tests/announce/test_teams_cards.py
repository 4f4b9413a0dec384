"""The Teams cards: every card the announcer makes validates against Microsoft's Adaptive Cards 1.5 schema, says
what is asked (the call and its facts, the deadline, who may answer) with one button per signed link, and carries
no Markdown link a question could disguise."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.channels.teams import CARD_CONTENT_TYPE, Decided, outcome_card, question_card, webhook_body
from agent_wait.channels.teams.cards import escalation_notice, reminder_notice, safe
from agent_wait.contract.envelope import Transition

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "support" / "adaptive_cards" / "adaptive-card-1.5.json"
SCHEMA_SHA256 = "6f4f958f6c0937c04926e4c4928fdeee4a9955a879e3ed248ae4df7bea9abc35"
LINKS = {
    "approve": "https://api.example.com/questions/q-1/confirm#v1.k1.approve",
    "reject": "https://api.example.com/questions/q-1/confirm#v1.k1.reject",
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft6Validator:
    data = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256, "the vendored schema changed; see its README.md"
    schema = json.loads(data)
    jsonschema.Draft6Validator.check_schema(schema)
    return jsonschema.Draft6Validator(schema)


def _problems(validator: jsonschema.Draft6Validator, card: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(card)]


def _envelope(question: Any = None, *, transition: Transition = Transition.CREATED, **policy: Any) -> WaitEnvelope:
    asked = (
        question
        if question is not None
        else {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900, "note": "[x](https://evil)"}}
    )
    settings: dict[str, Any] = {
        "timeout": "P3D",
        "default": {"action": "reject"},
        "allowed_actions": ["approve", "reject"],
    }
    settings.update(policy)
    return WaitEnvelope.create(Question("t-1", "q-1", asked, policy=WaitPolicy(**settings)), transition=transition)


def _texts(card: Any) -> str:
    return json.dumps(card, ensure_ascii=False)


def test_the_schema_refuses_what_teams_would_not_render(validator: jsonschema.Draft6Validator) -> None:
    # GIVEN a valid card, then the same card with a misspelt element, a stray property and a bad button style
    card = question_card(_envelope(), LINKS)
    assert _problems(validator, card) == []
    broken = json.loads(json.dumps(card))
    broken["body"][0]["type"] = "TextBlok"
    assert _problems(validator, broken)
    stray = {**card, "msteams": {"width": "Full"}}
    assert _problems(validator, stray)
    styled = json.loads(json.dumps(card))
    styled["actions"][0]["style"] = "primary"
    assert _problems(validator, styled)


@pytest.mark.parametrize(
    "question",
    [
        None,
        "Ship release 2.4 to production?",
        {"prompt": "Pick a carrier", "options": ["ups", "dhl"]},
        [{"action_request": {"action": "send_email", "args": {"to": "a@example.com"}}, "description": "**Check**"}],
        {"function": "f", "args": {f"arg{i}": "x" * 900 for i in range(40)}},
    ],
    ids=["call", "text", "prompt", "agent-inbox", "huge"],
)
def test_every_card_validates_against_the_adaptive_cards_1_5_schema(
    validator: jsonschema.Draft6Validator, question: Any
) -> None:
    envelope = _envelope(question)
    reminded = envelope.for_transition(Transition.REMINDER, progress={"reminder": 1, "of": 2})
    escalated = envelope.for_transition(Transition.ESCALATED, progress={"escalation": 1, "of": 1})
    made = [
        question_card(envelope, LINKS, inbox_url="https://api.example.com/inbox#/questions/q-1"),
        question_card(envelope, {}),
        question_card(reminded, LINKS, notice=reminder_notice(reminded)),
        question_card(escalated, LINKS, notice=escalation_notice(escalated)),
        question_card(envelope, LINKS, progress={"votes": [{"by": "a", "action": "approve"}], "approvals": 1}),
        outcome_card(
            envelope, Decided("answered", {"action": "approve", "note": "ok"}, "alice", "link", "2030-01-01T00:00:00Z")
        ),
        outcome_card(envelope, Decided("expired", {"action": "reject"}), inbox_url="https://api.example.com/inbox"),
        outcome_card(envelope, Decided("cancelled")),
        outcome_card(envelope, Decided("failed")),
    ]
    for card in made:
        assert _problems(validator, card) == [], card
        assert card["version"] == "1.5"
        assert len(json.dumps(webhook_body(card, about={})).encode()) < 28_000


def test_the_question_card_says_what_is_asked_with_a_button_per_link() -> None:
    card = question_card(_envelope(), LINKS, inbox_url="https://api.example.com/inbox#/questions/q-1")
    texts = _texts(card)
    assert card["body"][1]["text"].startswith("issue_refund(")
    # the call's arguments, in the call's own container
    [call] = [block for block in card["body"] if block.get("id") == "call-0"]
    [facts] = [item for item in call["items"] if item["type"] == "FactSet"]
    assert [fact["title"] for fact in facts["facts"]] == ["order_id", "amount", "note"]
    assert facts["facts"][1]["value"] == "900"
    assert "Answer by {{DATE(" in texts
    assert "{{TIME(" in texts
    assert "Who may answer: anyone who has the links" in texts
    assert [(a["title"], a["url"], a.get("style")) for a in card["actions"]] == [
        ("Approve", LINKS["approve"], "positive"),
        ("Reject", LINKS["reject"], "destructive"),
        ("Open in the inbox", "https://api.example.com/inbox#/questions/q-1", None),
    ]


def test_a_card_without_links_says_where_to_answer_and_has_no_answer_buttons() -> None:
    envelope = _envelope(answerer_groups=["finance"])
    card = question_card(envelope, {}, inbox_url="https://api.example.com/inbox")
    assert [a["title"] for a in card["actions"]] == ["Open in the inbox"]
    assert "Who may answer: finance" in _texts(card)
    bare = question_card(envelope, {})
    assert "actions" not in bare
    assert "Answer it in the agent-wait inbox." in _texts(bare)


def test_a_deadline_is_written_for_each_readers_time_zone_without_fractions() -> None:
    envelope = _envelope()
    card = question_card(envelope, {})
    moment = envelope.expires_at[:19] + "Z"
    assert f"{{{{DATE({moment}, SHORT)}}}} at {{{{TIME({moment})}}}}" in _texts(card)
    never = question_card(_envelope(timeout=None, default=None), {})
    assert "Answer by no deadline" in _texts(never)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("[Approve](https://evil.example)", "[Approve]\u200b(https://evil.example)"),
        ("[Approve] (https://evil.example)", "[Approve]\u200b (https://evil.example)"),
        ("[Approve][1]", "[Approve]\u200b[1]"),
        ("[1]: https://evil.example", "[1]\u200b: https://evil.example"),
        ("plain [brackets] stay", "plain [brackets] stay"),
    ],
)
def test_question_text_cannot_make_a_disguised_link(text: str, shown: str) -> None:
    assert safe(text) == shown
    card = question_card(_envelope({"function": "f", "args": {"a": text}, "description": text}), {})
    assert "](" not in _texts(card).replace("]\u200b(", "")


def test_the_outcome_card_says_who_answered_what_how_and_when_and_has_no_answer_buttons() -> None:
    decided = Decided(
        "answered", {"action": "approve", "note": "fine"}, "alice@example.com", "link", "2030-01-01T10:00:00Z"
    )
    card = outcome_card(_envelope(), decided)
    line = card["body"][-1]["text"]
    assert line.startswith(
        "alice@example.com answered **approve** (note: fine) with a signed link at {{DATE(2030-01-01T10:00:00Z"
    )
    assert "actions" not in card
    expired = outcome_card(_envelope(), Decided("expired", {"action": "reject"}))
    assert "Nobody answered by the deadline" in _texts(expired)
    assert "**reject**" in _texts(expired)
    assert card["body"][0]["text"] == "Answered"
    assert expired["body"][0]["text"] == "Expired"


def test_the_webhook_body_is_a_message_with_the_card_as_its_attachment() -> None:
    card = question_card(_envelope(), LINKS)
    body = webhook_body(card, about={"recipient": "alice@example.com"})
    assert body["type"] == "message"
    assert body["attachments"] == [{"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": card}]
    assert body["agent_wait"] == {"recipient": "alice@example.com"}


def test_an_escalation_says_who_may_answer_now_or_that_it_still_waits() -> None:
    named = _envelope(answerer_groups=["finance"]).for_transition(
        Transition.ESCALATED, progress={"escalation": 1, "of": 2}
    )
    assert escalation_notice(named).title == "Escalated (step 1 of 2): finance may answer now"
    anyone = _envelope().for_transition(Transition.ESCALATED, progress={"escalation": 2, "of": 2})
    assert escalation_notice(anyone).title == "Escalated (step 2 of 2): this still waits for an answer"
