"""WaitEnvelope: exactly the contract's fields, stable dedupe, fresh event ids, a deadline that never drifts."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

import pytest

from agent_wait import (
    MAX_QUESTION_BYTES,
    EnvelopeError,
    Question,
    QuestionTooLargeError,
    Transition,
    WaitEnvelope,
    WaitPolicy,
    check_question_size,
)
from agent_wait.contract.envelope import ENVELOPE_FIELDS

ULID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
ASKED_AT = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)

# The example envelope of the contract, verbatim from seeds/message-formats.txt ("1. The envelope").
CONTRACT_EXAMPLE: dict[str, Any] = {
    "type": "wait.created",
    "event_id": "01JAV3K2R8Q9WZ7M4X1YB6N0PD",
    "thread_id": "order-4471",
    "question_id": "a1b2c3d4e5f60718",
    "question": {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}},
    "allowed_actions": ["approve", "reject"],
    "expires_at": "2026-09-14T09:00:00Z",
    "default": {"action": "reject", "reason": "no response within P3D"},
    "answer_ttl": "PT15M",
    "source": {"function": "issue_refund"},
    "reply_to": None,
    "reply_with": {"thread_id": "order-4471", "question_id": "a1b2c3d4e5f60718", "answer": None},
    "correlation": None,
    "tags": {"approver_group": "finance"},
}


def contract_question(**overrides: Any) -> Question:
    """The question behind the contract's example envelope."""
    fields: dict[str, Any] = {
        "thread_id": "order-4471",
        "question_id": "a1b2c3d4e5f60718",
        "value": {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}},
        "policy": WaitPolicy(
            timeout="P3D",
            default={"action": "reject", "reason": "no response within P3D"},
            answer_ttl="PT15M",
            tags={"approver_group": "finance"},
        ),
        "source": {"function": "issue_refund"},
        "asked_at": ASKED_AT,
    }
    fields.update(overrides)
    return Question(**fields)


# --- the fields ---------------------------------------------------------------------------------


EXTENSIONS = ("rules",)
"""Fields agent-wait adds after the seed contract's own, in order."""


def test_envelope_fields_are_exactly_the_contract_in_order_then_the_extensions():
    # GIVEN the contract's example / WHEN compared with ENVELOPE_FIELDS and to_dict()
    envelope = WaitEnvelope.create(contract_question())
    # THEN the contract's keys in its order, then agent-wait's extensions
    assert list(envelope.to_dict()) == list(ENVELOPE_FIELDS) == [*CONTRACT_EXAMPLE, *EXTENSIONS]


def test_rules_say_who_may_answer_and_whether_edits_are_allowed():
    # GIVEN a policy restricted to finance, with edits off / WHEN its envelope is built
    policy = WaitPolicy(answerer_groups=["finance"], allow_edits=False)
    rules = WaitEnvelope.create(contract_question(policy=policy)).to_dict()["rules"]
    # THEN the rules travel with the question; an unrestricted policy says so too, and edits are opt-in
    assert rules == {"answerers": {"groups": ["finance"], "principals": []}, "edits": False}
    assert WaitEnvelope.create(contract_question()).rules == {"answerers": None, "edits": False}
    editable = WaitEnvelope.create(contract_question(policy=WaitPolicy(allow_edits=True))).rules
    assert editable == {"answerers": None, "edits": True}


def test_an_envelope_written_before_rules_existed_reads_back_with_open_rules():
    old = {**CONTRACT_EXAMPLE}
    assert WaitEnvelope.from_dict(old).rules == {"answerers": None, "edits": True}


def test_envelope_built_from_the_contract_inputs_is_the_contract_example():
    # GIVEN the question and policy the contract's example describes, asked at 2026-09-11T09:00Z
    # WHEN the envelope is built
    data = WaitEnvelope.create(contract_question()).to_dict()
    # THEN every field but the fresh event_id is the example's value
    assert ULID.match(data["event_id"])
    assert {**data, "event_id": CONTRACT_EXAMPLE["event_id"]} == {
        **CONTRACT_EXAMPLE,
        "rules": {"answerers": None, "edits": False},
    }


def test_to_dict_holds_only_plain_json_types():
    envelope = WaitEnvelope.create(
        contract_question(policy=WaitPolicy(correlation={"provider": "stripe", "id": "re_1"})),
        reply_to={"queue_url": "https://sqs.example/q.fifo"},
    )
    data = envelope.to_dict()
    for name in ("source", "reply_with", "correlation", "tags", "reply_to"):
        assert type(data[name]) is dict, name
    assert type(data["allowed_actions"]) is list
    assert json.loads(json.dumps(data)) == data


def test_to_json_is_compact_json_of_to_dict_with_unicode_kept():
    envelope = WaitEnvelope.create(contract_question(value={"note": "Zoë ✓"}))
    text = envelope.to_json()
    assert json.loads(text) == envelope.to_dict()
    assert "Zoë ✓" in text
    assert ", " not in text
    assert ": " not in text


def test_reply_with_is_a_filled_in_reply_with_a_null_answer():
    envelope = WaitEnvelope.create(contract_question())
    assert dict(envelope.reply_with) == {"thread_id": "order-4471", "question_id": "a1b2c3d4e5f60718", "answer": None}


def test_bare_interrupt_question_has_null_source_and_carries_value_as_is():
    # GIVEN a bare interrupt value (no @wait): a plain string
    envelope = WaitEnvelope.create(Question("t-1", "q-1", "Approve the deploy?"))
    # THEN question is the value itself, source is null, and with no timeout there is no deadline
    data = envelope.to_dict()
    assert data["question"] == "Approve the deploy?"
    assert data["source"] is None
    assert data["expires_at"] is None
    assert data["answer_ttl"] is None
    assert data["tags"] == {}


# --- round trip ---------------------------------------------------------------------------------


def test_to_dict_from_dict_round_trip():
    envelope = WaitEnvelope.create(
        contract_question(policy=WaitPolicy(timeout="PT4H", correlation={"provider": "p", "id": "i"})),
        reply_to={"queue_url": "https://sqs.example/q.fifo"},
    )
    back = WaitEnvelope.from_dict(envelope.to_dict())
    assert back == envelope
    assert back.to_dict() == envelope.to_dict()


def test_to_json_from_json_round_trip_including_bytes():
    envelope = WaitEnvelope.create(contract_question(value={"amount": 410.25, "zero": 0, "no": False, "none": None}))
    assert WaitEnvelope.from_json(envelope.to_json()) == envelope
    assert WaitEnvelope.from_json(envelope.to_json().encode("utf-8")) == envelope


def test_from_dict_missing_fields_raises_envelope_error_listing_every_missing_one():
    # GIVEN an envelope dict without three fields
    data = WaitEnvelope.create(contract_question()).to_dict()
    for name in ("event_id", "tags", "reply_to"):
        del data[name]
    # WHEN it is read back / THEN all three are named, in contract order
    with pytest.raises(
        EnvelopeError,
        match=re.escape("envelope is missing field(s) ['event_id', 'reply_to', 'tags']; every field of the contract"),
    ):
        WaitEnvelope.from_dict(data)


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("question_id", "", "envelope field question_id must be a non-empty string; got ''"),
        ("thread_id", 7, "envelope field thread_id must be a non-empty string; got 7"),
        ("allowed_actions", "approve", "envelope field allowed_actions must be a list of strings"),
        ("tags", ["a"], "envelope fields reply_with, tags and rules must be objects"),
        ("type", "wait.deleted", "unknown transition 'wait.deleted'; expected one of: created, answered"),
        ("question", {1, 2}, "envelope.question is a set, which is not JSON"),
    ],
)
def test_from_dict_refuses_wrong_types(field: str, value: Any, fragment: str):
    data = WaitEnvelope.create(contract_question()).to_dict()
    data[field] = value
    with pytest.raises(EnvelopeError, match=re.escape(fragment)):
        WaitEnvelope.from_dict(data)


def test_from_dict_refuses_a_non_object():
    with pytest.raises(EnvelopeError, match=re.escape("an envelope must be a JSON object; got a list")):
        WaitEnvelope.from_dict([1, 2])  # type: ignore[arg-type]


def test_from_json_refuses_text_that_is_not_json():
    with pytest.raises(EnvelopeError, match=re.escape("envelope is not JSON: Expecting property name")):
        WaitEnvelope.from_json("{nope")


# --- dedupe_key and event_id --------------------------------------------------------------------


def test_dedupe_key_is_type_colon_question_id():
    envelope = WaitEnvelope.create(contract_question())
    assert envelope.dedupe_key == "wait.created:a1b2c3d4e5f60718"
    assert envelope.for_transition("answered").dedupe_key == "wait.answered:a1b2c3d4e5f60718"


def test_event_id_is_a_fresh_ulid_on_every_create():
    question = contract_question()
    ids = {WaitEnvelope.create(question).event_id for _ in range(50)}
    assert len(ids) == 50
    assert all(ULID.match(event_id) for event_id in ids)


def test_republished_gets_a_fresh_event_id_and_keeps_the_dedupe_key_and_every_other_field():
    # GIVEN a published envelope
    envelope = WaitEnvelope.create(contract_question())
    # WHEN it is republished
    again = envelope.republished()
    # THEN only event_id changes
    assert again.event_id != envelope.event_id
    assert ULID.match(again.event_id)
    assert again.dedupe_key == envelope.dedupe_key
    assert {**again.to_dict(), "event_id": None} == {**envelope.to_dict(), "event_id": None}


def test_for_transition_gets_a_fresh_event_id_and_its_own_type():
    envelope = WaitEnvelope.create(contract_question())
    answered = envelope.for_transition(Transition.ANSWERED)
    assert answered.event_id != envelope.event_id
    assert answered.type == "wait.answered"
    assert answered.transition is Transition.ANSWERED
    assert answered.expires_at == envelope.expires_at
    assert answered.question_id == envelope.question_id


# --- expires_at ---------------------------------------------------------------------------------


def test_expires_at_counts_from_asked_at_in_rfc3339_utc():
    envelope = WaitEnvelope.create(contract_question(policy=WaitPolicy(timeout="PT4H")))
    assert envelope.expires_at == "2026-09-11T13:00:00Z"


def test_expires_at_from_an_offset_asked_at_is_given_in_utc():
    # GIVEN asked at 11:00 in UTC+02:00 (09:00 UTC)
    asked = datetime(2026, 9, 11, 11, 0, tzinfo=timezone(timedelta(hours=2)))
    envelope = WaitEnvelope.create(contract_question(asked_at=asked, policy=WaitPolicy(timeout="PT1H")))
    # THEN the deadline is written in UTC with a Z
    assert envelope.expires_at == "2026-09-11T10:00:00Z"


def test_expires_at_rounds_a_fractional_second_up_never_earlier():
    # GIVEN asked at 09:00:00.000001 with a 1.5 s timeout -> 09:00:01.500001
    asked = ASKED_AT + timedelta(microseconds=1)
    envelope = WaitEnvelope.create(contract_question(asked_at=asked, policy=WaitPolicy(timeout="PT1.5S")))
    # THEN the whole-second deadline is the next second, never before the real deadline
    assert envelope.expires_at == "2026-09-11T09:00:02Z"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", envelope.expires_at or "")


def test_expires_at_on_a_whole_second_is_not_rounded():
    envelope = WaitEnvelope.create(contract_question(policy=WaitPolicy(timeout=2)))
    assert envelope.expires_at == "2026-09-11T09:00:02Z"


def test_expires_at_counts_from_now_when_asked_at_is_not_given():
    # GIVEN no asked_at, and now= passed in
    now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
    envelope = WaitEnvelope.create(contract_question(asked_at=None, policy=WaitPolicy(timeout="P1D")), now=now)
    # THEN the deadline counts from now
    assert envelope.expires_at == "2030-01-02T12:00:00Z"


def test_asked_at_wins_over_now():
    later = datetime(2030, 1, 1, tzinfo=UTC)
    envelope = WaitEnvelope.create(contract_question(), now=later)
    assert envelope.expires_at == "2026-09-14T09:00:00Z"


def test_expires_at_counts_from_the_wall_clock_by_default():
    before = datetime.now(UTC)
    envelope = WaitEnvelope.create(contract_question(asked_at=None, policy=WaitPolicy(timeout="PT1H")))
    after = datetime.now(UTC)
    expires = datetime.fromisoformat((envelope.expires_at or "").replace("Z", "+00:00"))
    assert before + timedelta(hours=1) <= expires <= after + timedelta(hours=1, seconds=1)


def test_republished_does_not_move_expires_at():
    # GIVEN an envelope first published with a deadline from its asked_at
    envelope = WaitEnvelope.create(contract_question(asked_at=None), now=ASKED_AT)
    # WHEN it is republished (even repeatedly, later)
    again = envelope.republished().republished()
    # THEN the deadline is the one fixed at the first publish
    assert again.expires_at == envelope.expires_at == "2026-09-14T09:00:00Z"


def test_naive_asked_at_is_refused():
    with pytest.raises(EnvelopeError, match=re.escape("asked_at must be timezone-aware (e.g. datetime.now(UTC))")):
        contract_question(asked_at=datetime(2026, 9, 11, 9, 0))


def test_naive_now_is_refused_with_an_envelope_error():
    with pytest.raises(EnvelopeError, match=re.escape("now must be timezone-aware (e.g. datetime.now(UTC))")):
        WaitEnvelope.create(contract_question(asked_at=None), now=datetime(2026, 9, 11, 9, 0))


def test_a_deadline_past_year_9999_is_a_typed_error():
    # The policy caps a timeout at P3650D; a question asked late enough still lands past the year 9999.
    question = contract_question(policy=WaitPolicy(timeout="P3650D"), asked_at=datetime(9995, 1, 1, tzinfo=UTC))
    with pytest.raises(EnvelopeError, match=re.escape("expires_at would fall after the year 9999 (timeout P3650D)")):
        WaitEnvelope.create(question)


# --- lifecycle ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "event_type"),
    [
        ("created", "wait.created"),
        ("answered", "wait.answered"),
        ("expired", "wait.expired"),
        ("cancelled", "wait.cancelled"),
        ("resumed", "wait.resumed"),
        ("wait.answered", "wait.answered"),
        (Transition.RESUMED, "wait.resumed"),
    ],
)
def test_lifecycle_types(given: str | Transition, event_type: str):
    envelope = WaitEnvelope.create(contract_question(), transition=given)
    assert envelope.type == event_type
    assert WaitEnvelope.create(contract_question()).for_transition(given).type == event_type


def test_the_lifecycle_is_exactly_ten_transitions():
    assert [t.event_type for t in Transition] == [
        "wait.created",
        "wait.answered",
        "wait.expired",
        "wait.cancelled",
        "wait.resumed",
        "wait.failed",
        "wait.reminder",
        "wait.escalated",
        "wait.voted",
        "wait.extended",
    ]
    assert [t.value for t in Transition if t.repeats] == ["reminder", "escalated", "voted", "extended"]


def test_progress_travels_only_on_the_steps_that_carry_it_and_the_contract_fields_stay_as_they_are():
    created = WaitEnvelope.create(contract_question())
    assert "progress" not in created.to_dict()
    assert list(created.to_dict()) == list(ENVELOPE_FIELDS)

    reminder = created.for_transition("reminder", progress={"reminder": 2, "of": 3})
    assert list(reminder.to_dict())[:-1] == list(ENVELOPE_FIELDS)
    assert reminder.to_dict()["progress"] == {"reminder": 2, "of": 3}
    assert WaitEnvelope.from_json(reminder.to_json()) == reminder
    assert reminder.for_transition("resumed").progress is None


@pytest.mark.parametrize(
    ("transition", "progress", "key"),
    [
        ("reminder", {"reminder": 2, "of": 2}, "wait.reminder:{q}:2"),
        ("escalated", {"escalation": 1, "of": 1, "after": "P2D"}, "wait.escalated:{q}:1"),
        ("voted", {"votes": [{"action": "approve"}, {"action": "approve"}], "approvals": 2}, "wait.voted:{q}:2"),
        ("answered", None, "wait.answered:{q}"),
    ],
)
def test_a_repeating_step_carries_its_count_in_the_dedupe_key(transition: str, progress: Any, key: str):
    # A subscriber deduplicating on the key must not take the second reminder for a copy of the first.
    envelope = WaitEnvelope.create(contract_question()).for_transition(transition, progress=progress)
    assert envelope.dedupe_key == key.format(q=envelope.question_id)


def test_a_repeating_step_without_its_progress_is_refused():
    with pytest.raises(EnvelopeError, match="needs its progress"):
        WaitEnvelope.create(contract_question()).for_transition("voted")


def test_progress_that_is_not_an_object_is_refused_when_read_back():
    data = WaitEnvelope.create(contract_question()).to_dict() | {"type": "wait.reminder", "progress": [1]}
    with pytest.raises(EnvelopeError, match="progress must be an object"):
        WaitEnvelope.from_dict(data)


def test_unknown_transition_is_refused():
    envelope = WaitEnvelope.create(contract_question())
    expected = "unknown transition 'deleted'; expected one of: created, answered, expired, cancelled, resumed"
    with pytest.raises(EnvelopeError, match=re.escape(expected)):
        envelope.for_transition("deleted")
    with pytest.raises(EnvelopeError, match=re.escape(expected)):
        WaitEnvelope.create(contract_question(), transition="deleted")


# --- Question -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["thread_id", "question_id"])
@pytest.mark.parametrize("bad", ["", None, 5])
def test_question_needs_non_empty_string_ids(name: str, bad: Any):
    with pytest.raises(EnvelopeError, match=re.escape(f"{name} must be a non-empty string; got {bad!r}")):
        contract_question(**{name: bad})


def test_question_policy_must_be_a_wait_policy():
    with pytest.raises(EnvelopeError, match=re.escape("policy must be a WaitPolicy; got a dict")):
        contract_question(policy={"timeout": "PT1H"})


def test_question_value_must_be_json_and_the_error_names_the_path():
    with pytest.raises(EnvelopeError, match=re.escape("question.args.when is a datetime, which is not JSON")):
        contract_question(value={"function": "f", "args": {"when": ASKED_AT}})


def test_question_value_is_normalised_to_plain_json():
    question = contract_question(value={"items": ("a", "b")})
    assert question.value == {"items": ["a", "b"]}


# --- size guard ---------------------------------------------------------------------------------


def question_of_size(size: int, filler: str = "x") -> dict[str, str]:
    """A question whose canonical JSON is exactly `size` UTF-8 bytes: {"blob":"..."} is 11 bytes plus the blob."""
    width = len(filler.encode("utf-8"))
    count, rest = divmod(size - len('{"blob":""}'), width)
    assert rest == 0
    return {"blob": filler * count}


def test_question_exactly_at_the_limit_is_accepted():
    # GIVEN a question whose canonical JSON is exactly MAX_QUESTION_BYTES
    question = question_of_size(MAX_QUESTION_BYTES)
    # WHEN measured and asked / THEN it is accepted
    assert check_question_size(question) == MAX_QUESTION_BYTES
    assert WaitEnvelope.create(Question("t", "q", question)).question == question


def test_question_one_byte_over_the_limit_is_refused():
    with pytest.raises(QuestionTooLargeError) as err:
        Question("t", "q", question_of_size(MAX_QUESTION_BYTES + 1))
    assert err.value.size == MAX_QUESTION_BYTES + 1
    assert err.value.limit == MAX_QUESTION_BYTES


def test_a_large_question_is_refused_with_a_message_to_publish_a_reference():
    # GIVEN a 200 KiB question
    question = {"function": "review", "args": {"document": "x" * (200 * 1024)}}
    # WHEN asked
    with pytest.raises(QuestionTooLargeError, match=re.escape("Publish a reference instead")) as err:
        Question("t", "q", question)
    # THEN the error carries its size and limit, says which limit, and is an EnvelopeError
    assert err.value.size > 200 * 1024
    assert err.value.limit == MAX_QUESTION_BYTES
    assert f"the limit is {MAX_QUESTION_BYTES:,} bytes (MAX_QUESTION_BYTES)" in err.value.message
    assert isinstance(err.value, EnvelopeError)
    assert "x" * 100 not in err.value.message


def test_size_is_measured_in_utf8_bytes_of_canonical_json():
    # GIVEN a question of two-byte characters: exactly at the limit in bytes, far under it in characters
    pairs, odd = divmod(MAX_QUESTION_BYTES - len('{"blob":""}'), 2)
    question = {"blob": "é" * pairs + "x" * odd}
    assert len(json.dumps(question, ensure_ascii=False)) < MAX_QUESTION_BYTES
    # WHEN measured / THEN the size is the UTF-8 byte count, accepted at the limit, refused one character more
    assert check_question_size(question) == MAX_QUESTION_BYTES
    with pytest.raises(QuestionTooLargeError) as err:
        check_question_size({"blob": question["blob"] + "é"})
    assert err.value.size == MAX_QUESTION_BYTES + 2


def test_size_ignores_key_order_and_whitespace():
    a = {"b": 1, "a": [1, 2]}
    b = {"a": [1, 2], "b": 1}
    assert check_question_size(a) == check_question_size(b) == len('{"a":[1,2],"b":1}')


def test_check_question_size_takes_an_explicit_limit():
    with pytest.raises(QuestionTooLargeError, match=re.escape("question is 17 bytes as JSON; the limit is 10 bytes")):
        check_question_size({"a": [1, 2], "b": 1}, limit=10)


# --- repr ---------------------------------------------------------------------------------------


def test_repr_holds_ids_only_never_question_content():
    # GIVEN a question holding personal data
    question = contract_question(value={"function": "refund", "args": {"customer": "Zoë Secretname"}})
    envelope = WaitEnvelope.create(question)
    # THEN neither repr carries it
    assert repr(envelope) == "WaitEnvelope(type='wait.created', thread_id='order-4471', question_id='a1b2c3d4e5f60718')"
    assert "Secretname" not in repr(question)
    assert "a1b2c3d4e5f60718" in repr(question)


def test_envelope_is_immutable():
    envelope = WaitEnvelope.create(contract_question())
    with pytest.raises(AttributeError):
        envelope.expires_at = None  # type: ignore[misc]
    assert isinstance(envelope.tags, MappingProxyType)
    with pytest.raises(TypeError):
        envelope.tags["x"] = "y"  # type: ignore[index]


def test_a_lone_surrogate_in_a_question_is_an_envelope_error_not_a_unicode_crash():
    # GIVEN text with an unpaired surrogate (valid in a Python str, never valid UTF-8)
    question = {"note": "broken \ud800 text"}
    # WHEN it is asked / THEN a typed EnvelopeError names where, instead of UnicodeEncodeError
    with pytest.raises(EnvelopeError, match=re.escape("question.note holds a lone surrogate")):
        Question("t-1", "q-1", question)
