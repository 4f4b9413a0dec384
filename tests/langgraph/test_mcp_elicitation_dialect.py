"""Pin the MCP elicitation shapes `agent_wait.dialects.mcp_elicitation` reads, and its mapping both ways.

The shapes are LangChain's (`langchain.mcp.elicitation`, langchain 1.5): the interrupt value `MCPAdapter` raises
for one round of an MCP server's `InputRequiredResult`, and the resume value it turns into `inputResponses`. The
core recognises them structurally, so these tests fail if a release changes a key. Every answer goes through the
engine's own checks (`content_refusal`), as every door's does.
"""

from __future__ import annotations

import typing
import warnings
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_wait.asking.wait import unpack_question
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.dialects import cancellation, dialect_of, mcp_elicitation, resume_value, schema_checks
from agent_wait.engine.cancelling import undeliverable_problem
from agent_wait.engine.checks import content_refusal
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.ledger import InMemoryLedger, QuestionRecord

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # langchain.mcp warns that it is in beta
    from langchain.mcp import elicitation as lc

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)
CONTACT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "seats": {"type": "integer", "minimum": 1},
        "newsletter": {"type": "boolean"},
    },
    "required": ["name", "seats"],
}
FORM = {"key": "contact", "message": "Who is booking?", "mode": "form", "requested_schema": CONTACT}
LINK = {"key": "pay", "message": "Pay the deposit", "mode": "url", "url": "https://pay.example.com/s/abc"}


def _round(*requests: dict[str, Any]) -> dict[str, Any]:
    return {"type": "mcp_elicitation", "tool_name": "book_table", "requests": list(requests)}


def _envelope(value: Any) -> WaitEnvelope:
    return WaitEnvelope.create(unpack_question(value, "t-1", "q-1"), now=T0)


def _record(value: Any) -> QuestionRecord:
    ledger = InMemoryLedger()
    envelope = _envelope(value)
    ledger.open(envelope, now=T0)
    record = ledger.get("t-1", "q-1")
    assert record is not None
    return record


# -- the shapes, as langchain 1.5 defines them -------------------------------------------------------------------


def test_langchains_interrupt_and_resume_have_these_keys() -> None:
    assert lc.ELICITATION_INTERRUPT_TYPE == mcp_elicitation.NAME
    assert set(typing.get_type_hints(lc.MCPElicitationInterrupt)) == {"type", "tool_name", "requests"}
    assert set(typing.get_type_hints(lc.MCPElicitationFormRequest)) == {"key", "message", "mode", "requested_schema"}
    assert set(typing.get_type_hints(lc.MCPElicitationUrlRequest)) == {"key", "message", "mode", "url"}
    assert set(typing.get_type_hints(lc.MCPElicitationResume)) == {"responses"}
    assert lc._ACTIONS == mcp_elicitation.ACTIONS


# -- the question ------------------------------------------------------------------------------------------------


def test_a_form_round_is_one_question_whose_answer_form_is_the_requested_schema() -> None:
    envelope = _envelope(_round(FORM))
    assert dialect_of(envelope) == "mcp_elicitation"
    assert envelope.source == {"dialect": "mcp_elicitation", "tool": "book_table", "modes": ["form"]}
    assert envelope.allowed_actions == ("accept", "decline", "cancel")
    assert envelope.question == _round(FORM)  # unchanged: the resume is made from it
    form = envelope.rules["response_schema"]
    assert list(form["properties"]) == ["action", "name", "seats", "newsletter", "note"]
    # The server's field, with a hint: the forms show it as optional, since a decline needs nothing filled in
    assert form["properties"]["name"] == {**CONTACT["properties"]["name"], "description": "Required to accept."}
    assert form["properties"]["newsletter"] == CONTACT["properties"]["newsletter"]
    # A field the server requires is required for an accept only: a decline needs nothing filled in.
    assert form["required"] == ["action"]
    assert form["if"] == {"properties": {"action": {"const": "accept"}}}
    assert form["then"] == {"required": ["name", "seats"]}


def test_a_url_round_has_no_form() -> None:
    envelope = _envelope(_round(LINK))
    assert envelope.source == {"dialect": "mcp_elicitation", "tool": "book_table", "modes": ["url"]}
    assert "response_schema" not in envelope.rules


def test_several_requests_share_one_form_whose_fields_name_their_request() -> None:
    other = {"key": "diet", "message": "Any allergies?", "mode": "form", "requested_schema": {
        "type": "object", "properties": {"name": {"type": "string"}, "action": {"type": "string"}}}}  # fmt: skip
    form = _envelope(_round(FORM, other, LINK)).rules["response_schema"]
    fields = ["contact.name", "contact.seats", "contact.newsletter", "diet.name", "diet.action"]
    assert list(form["properties"]) == ["action", *fields, "note"]
    assert form["properties"]["contact.name"]["title"] == "Your name (contact)"
    assert form["properties"]["diet.action"]["title"] == "action (diet)"
    assert form["then"] == {"required": ["contact.name", "contact.seats"]}


@pytest.mark.parametrize(
    "value",
    [
        {**_round(FORM), "extra": 1},
        _round(),
        _round(FORM, FORM),  # a key twice
        _round({**FORM, "mode": "sampling"}),
        _round({**LINK, "url": 7}),
        _round({k: v for k, v in FORM.items() if k != "requested_schema"}),
        {**_round(FORM), "type": "tool_approval"},
    ],
    ids=["extra-key", "no-requests", "duplicate-key", "unknown-mode", "url-not-text", "no-schema", "other-type"],
)
def test_anything_else_is_not_an_elicitation(value: Any) -> None:
    assert mcp_elicitation.recognize(value) is None


# -- the answer --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "resumed"),
    [
        (
            {"action": "accept", "name": "Ana", "seats": 2},
            {"responses": {"contact": {"action": "accept", "content": {"name": "Ana", "seats": 2}}}},
        ),
        (
            {"action": "accept", "name": "Ana", "seats": 2, "note": "a regular"},  # the note stays in our record
            {"responses": {"contact": {"action": "accept", "content": {"name": "Ana", "seats": 2}}}},
        ),
        ({"action": "decline"}, {"responses": {"contact": {"action": "decline"}}}),
        ({"action": "decline", "name": "typed, then declined"}, {"responses": {"contact": {"action": "decline"}}}),
        ({"action": "cancel"}, {"responses": {"contact": {"action": "cancel"}}}),
        (cancellation("no longer needed", "ana@example.com"), {"responses": {"contact": {"action": "cancel"}}}),
        (
            {"responses": {"contact": {"action": "accept", "content": {"name": "Bo", "seats": 1}}}},
            {"responses": {"contact": {"action": "accept", "content": {"name": "Bo", "seats": 1}}}},
        ),
    ],
    ids=["accept", "accept-with-a-note", "decline", "decline-drops-fields", "cancel", "a-persons-cancel", "native"],
)
def test_each_answer_resumes_with_the_payloads_own_shape(answer: Any, resumed: Any) -> None:
    record = _record(_round(FORM))
    if answer.get("action") != "cancelled":
        assert content_refusal(record, answer) is None
    else:
        assert undeliverable_problem(record.envelope, answer) is None
    assert resume_value(record.envelope, answer) == resumed


def test_one_action_answers_every_request_of_a_round() -> None:
    envelope = _envelope(_round(FORM, LINK))
    assert resume_value(envelope, {"action": "accept", "name": "Ana", "seats": 2}) == {
        "responses": {
            "contact": {"action": "accept", "content": {"name": "Ana", "seats": 2}},
            "pay": {"action": "accept"},  # a link is answered at the link: its accept carries no content
        }
    }
    assert resume_value(envelope, {"action": "cancel"}) == {
        "responses": {"contact": {"action": "cancel"}, "pay": {"action": "cancel"}}
    }


def test_a_value_no_person_gave_reaches_the_server_as_a_cancel() -> None:
    envelope = _envelope(_round(FORM))
    expired = {"action": "expired", "answer": None}  # a deadline without a default, as a host may deliver it
    assert resume_value(envelope, expired) == {"responses": {"contact": {"action": "cancel"}}}


def test_each_accepted_form_is_checked_against_its_own_requested_schema() -> None:
    envelope = _envelope(_round(FORM, LINK))
    checks = schema_checks(envelope, {"action": "accept", "name": "Ana", "seats": 2})
    fits = "the content for 'contact' does not fit its requested_schema"
    assert checks == [(CONTACT, {"name": "Ana", "seats": 2}, fits)]
    assert schema_checks(envelope, {"action": "decline"}) == []


@pytest.mark.parametrize(
    ("answer", "reason", "detail"),
    [
        (
            {"action": "accept", "name": "Ana", "seats": "two-secret"},
            RefusalReason.INVALID_ANSWER,
            "the content for 'contact' does not fit its requested_schema: at $.seats, expected type integer",
        ),
        (
            {"action": "accept", "name": "Ana"},
            RefusalReason.INVALID_ANSWER,
            "the content for 'contact' does not fit its requested_schema: at $, a required property is missing "
            '(required: ["name", "seats"])',
        ),
        (
            {"action": "approve"},
            RefusalReason.ACTION_NOT_ALLOWED,
            "answer must be an object whose action is one of ['accept', 'decline', 'cancel']",
        ),
        (
            {"action": "accept", "name": "Ana", "seats": 2, "card": "4111-secret"},
            RefusalReason.INVALID_ANSWER,
            "the answer form's fields are ['name', 'newsletter', 'seats']; unknown: ['card']",
        ),
        (
            {"action": "accept", "name": {"first": "Ana"}, "seats": 2},
            RefusalReason.INVALID_ANSWER,
            "'name' must be a string, a number, a boolean, null or a list of strings",
        ),
        (
            {"responses": {}},
            RefusalReason.INVALID_ANSWER,
            "answer must be {'responses': {key: {'action', 'content'?}}} answering each of the keys ['contact']; "
            "missing: ['contact'], unknown: []",
        ),
        (
            {"responses": {"contact": {"action": "maybe"}}},
            RefusalReason.INVALID_ANSWER,
            "the response to 'contact': must be an object whose action is one of ['accept', 'decline', 'cancel']",
        ),
        (
            {"responses": {"contact": {"action": "decline", "content": {"name": "Ana"}}}},
            RefusalReason.INVALID_ANSWER,
            "the response to 'contact': a decline carries no content",
        ),
        (
            {"responses": {"contact": {"action": "accept", "content": {"name": "Ana", "seats": 0}}}},
            RefusalReason.INVALID_ANSWER,
            "the content for 'contact' does not fit its requested_schema: at $.seats, fails the schema's 'minimum' "
            "rule (1)",
        ),
        (
            {"decisions": [{"type": "approve"}]},
            RefusalReason.INVALID_ANSWER,
            "answer must be {'responses': {key: {'action', 'content'?}}} answering each of the keys ['contact'], "
            "or {'action': ...}",
        ),
    ],
    ids=[
        "content-misfits",
        "required-missing",
        "not-our-word",
        "unknown-field",
        "not-a-primitive",
        "missing-key",
        "unknown-action",
        "decline-with-content",
        "native-misfits",
        "another-dialects-answer",
    ],
)
def test_a_bad_answer_is_refused_with_a_reason_that_shows_no_value(
    answer: Any, reason: RefusalReason, detail: str
) -> None:
    refusal = content_refusal(_record(_round(FORM)), answer)
    assert refusal == (reason, detail)
    assert "secret" not in detail


def test_a_url_request_never_carries_content() -> None:
    record = _record(_round(LINK))
    noted = {"action": "accept", "note": "paid by card"}  # the inbox's note: kept in the record, not sent
    assert content_refusal(record, noted) is None
    assert resume_value(record.envelope, noted) == {"responses": {"pay": {"action": "accept"}}}
    assert content_refusal(record, {"action": "accept", "note": 7}) == (
        RefusalReason.INVALID_ANSWER,
        "note must be a string",
    )
    assert content_refusal(record, {"action": "accept", "password": "hunter2"}) == (
        RefusalReason.INVALID_ANSWER,
        "the answer form's fields are none: this round asks no form; unknown: ['password']",
    )
    native = {"responses": {"pay": {"action": "accept", "content": {"password": "hunter2"}}}}
    assert content_refusal(record, native) == (
        RefusalReason.INVALID_ANSWER,
        "the response to 'pay': a URL request is answered at its link: its accept carries no content",
    )


def test_langchain_builds_the_servers_responses_from_the_resume_value() -> None:
    # What MCPAdapter does with our resume value: the same `_build_responses` it runs before the retried call.
    from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult

    envelope = _envelope(_round(FORM))
    request = ElicitRequest(params=ElicitRequestFormParams(message="Who is booking?", requested_schema=CONTACT))
    resumed = resume_value(envelope, {"action": "accept", "name": "Ana", "seats": 2})
    responses = lc._build_responses({"contact": request}, resumed["responses"], "book_table")
    assert responses["contact"] == ElicitResult(action="accept", content={"name": "Ana", "seats": 2})
