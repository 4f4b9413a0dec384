"""Ids: ULIDs for events, and sha256 question ids derived from thread, function and canonical JSON args."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from agent_wait import EnvelopeError, new_ulid, question_id_for

ULID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def decode_ulid_millis(ulid: str) -> int:
    value = 0
    for char in ulid[:10]:
        value = value * 32 + CROCKFORD.index(char)
    return value


# --- ULID ---------------------------------------------------------------------------------------


def test_new_ulid_is_26_crockford_base32_characters():
    assert ULID.match(new_ulid())


def test_new_ulid_is_fresh_every_call():
    assert len({new_ulid() for _ in range(1000)}) == 1000


def test_new_ulid_encodes_the_millisecond_timestamp_first_so_ids_sort_by_time():
    # GIVEN two moments one millisecond apart
    early, late = new_ulid(now_ms=1_800_000_000_000), new_ulid(now_ms=1_800_000_000_001)
    # THEN the first 10 characters hold the milliseconds, and string order is time order
    assert decode_ulid_millis(early) == 1_800_000_000_000
    assert decode_ulid_millis(late) == 1_800_000_000_001
    assert early < late


def test_new_ulid_uses_the_wall_clock_by_default():
    before = int(datetime.now(UTC).timestamp() * 1000)
    millis = decode_ulid_millis(new_ulid())
    after = int(datetime.now(UTC).timestamp() * 1000)
    assert before - 1 <= millis <= after + 1


# --- question_id_for ----------------------------------------------------------------------------


def test_question_id_is_sha256_hex_over_thread_function_and_canonical_args():
    # GIVEN a call / WHEN its id is derived
    qid = question_id_for("order-4471", "issue_refund", {"order_id": "order-4471", "amount": 41000})
    # THEN it is sha256("<thread>|<function>|<sorted, compact JSON args>")
    material = 'order-4471|issue_refund|{"amount":41000,"order_id":"order-4471"}'
    assert qid == hashlib.sha256(material.encode("utf-8")).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", qid)


def test_question_id_ignores_key_order_at_every_depth():
    a = {"amount": 1, "meta": {"x": 1, "y": [{"b": 2, "a": 1}]}}
    b = {"meta": {"y": [{"a": 1, "b": 2}], "x": 1}, "amount": 1}
    assert question_id_for("t", "f", a) == question_id_for("t", "f", b)


def test_question_id_keeps_non_ascii_text_as_utf8():
    qid = question_id_for("t", "f", {"name": "Zoë"})
    assert qid == hashlib.sha256('t|f|{"name":"Zoë"}'.encode()).hexdigest()


@pytest.mark.parametrize(
    ("thread_id", "function", "args"),
    [
        ("order-4472", "issue_refund", {"amount": 41000}),
        ("order-4471", "cancel_order", {"amount": 41000}),
        ("order-4471", "issue_refund", {"amount": 41001}),
        ("order-4471", "issue_refund", {"amount": "41000"}),
        ("order-4471", "issue_refund", {"amount": 41000, "note": None}),
        ("order-4471", "issue_refund", {}),
    ],
    ids=["other-thread", "other-function", "other-value", "string-not-number", "extra-key", "no-args"],
)
def test_a_different_thread_function_or_args_gives_a_different_id(thread_id: str, function: str, args: Any):
    base = question_id_for("order-4471", "issue_refund", {"amount": 41000})
    assert question_id_for(thread_id, function, args) != base


def test_tuples_and_lists_give_the_same_id():
    assert question_id_for("t", "f", {"ids": (1, 2)}) == question_id_for("t", "f", {"ids": [1, 2]})


def test_decimal_args_are_accepted_as_the_number_they_hold():
    # GIVEN a Decimal (what DynamoDB hands back) / THEN the same id as the plain number
    assert question_id_for("t", "f", {"amount": Decimal("41000")}) == question_id_for("t", "f", {"amount": 41000})
    assert question_id_for("t", "f", {"amount": Decimal("410.25")}) == question_id_for("t", "f", {"amount": 410.25})


class Customer:
    pass


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"when": datetime(2026, 9, 11, tzinfo=UTC)}, "args.when is a datetime, which is not JSON"),
        ({"ids": {1, 2}}, "args.ids is a set, which is not JSON"),
        ({"customer": Customer()}, "args.customer is a Customer, which is not JSON"),
        ({"ratio": float("nan")}, "args.ratio is nan, which JSON cannot carry; use a finite number or a string"),
        ({"ratio": float("inf")}, "args.ratio is inf, which JSON cannot carry"),
        ({"amount": Decimal("NaN")}, "args.amount is Decimal('NaN'), which JSON cannot carry"),
        ({"items": [1, {"deep": b"raw"}]}, "args.items[1].deep is a bytes, which is not JSON"),
        ({"map": {1: "one"}}, "args.map has a key 1 of type int; JSON keys are strings"),
    ],
    ids=["datetime", "set", "object", "nan", "inf", "decimal-nan", "nested-bytes", "int-key"],
)
def test_non_json_args_are_refused_naming_the_path(args: dict[str, Any], fragment: str):
    with pytest.raises(EnvelopeError, match=re.escape(fragment)):
        question_id_for("t", "f", args)


def test_non_json_error_says_how_to_fix_it():
    with pytest.raises(EnvelopeError, match=re.escape("convert dates to ISO strings and objects to dicts")):
        question_id_for("t", "f", {"when": datetime(2026, 9, 11, tzinfo=UTC)})


def test_the_id_is_the_same_across_processes_because_it_depends_only_on_the_text():
    # GIVEN the args as they arrive after a JSON round trip (a queue, a checkpoint)
    args = {"amount": 410.25, "order": {"id": "o-1", "lines": [1, 2]}}
    # THEN the id is unchanged
    assert question_id_for("t", "f", json.loads(json.dumps(args))) == question_id_for("t", "f", args)
