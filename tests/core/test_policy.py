"""WaitPolicy: durations, actions, tags, correlation and default are checked at construction."""

from __future__ import annotations

import re
from datetime import timedelta
from types import MappingProxyType
from typing import Any

import pytest

from agent_wait import PolicyError, WaitPolicy

ACCEPTED = "an ISO 8601 duration such as 'PT4H', 'P3D', 'P1W' or 'PT1.5S'"


# --- durations -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P2W", timedelta(weeks=2)),
        ("P3D", timedelta(days=3)),
        ("PT4H", timedelta(hours=4)),
        ("PT15M", timedelta(minutes=15)),
        ("PT45S", timedelta(seconds=45)),
        ("P1DT2H3M4S", timedelta(days=1, hours=2, minutes=3, seconds=4)),
        ("PT1.5S", timedelta(seconds=1.5)),
        ("PT0,5S", timedelta(seconds=0.5)),
        ("PT0.25H", timedelta(minutes=15)),
        ("pt4h", timedelta(hours=4)),
        ("  PT4H  ", timedelta(hours=4)),
    ],
)
def test_timeout_accepts_iso8601_weeks_days_hours_minutes_seconds_and_fractions(text: str, expected: timedelta):
    # GIVEN an ISO 8601 duration with a fixed length
    # WHEN a policy is built with it
    policy = WaitPolicy(timeout=text)
    # THEN the timeout is that many seconds, and the ISO text is kept (normalised) for the envelope
    assert policy.timeout == expected
    assert policy.timeout_iso == text.strip().upper()


@pytest.mark.parametrize(
    ("seconds", "expected_iso"),
    [(90, "PT1M30S"), (1.5, "PT1.5S"), (86400 * 1.5, "P1DT12H"), (3600, "PT1H"), (59.123456, "PT59.123456S")],
)
def test_timeout_accepts_seconds_as_int_or_float_and_publishes_exact_iso(seconds: float, expected_iso: str):
    # GIVEN a number of seconds
    # WHEN a policy is built with it
    policy = WaitPolicy(timeout=seconds)
    # THEN the timeout is exact and the published ISO spelling says exactly the same length
    assert policy.timeout == timedelta(seconds=seconds)
    assert policy.timeout_iso == expected_iso


def test_answer_ttl_accepts_the_same_forms_as_timeout():
    # GIVEN/WHEN an answer_ttl as ISO text and as seconds
    as_text = WaitPolicy(answer_ttl="PT15M")
    as_seconds = WaitPolicy(answer_ttl=900)
    # THEN both mean fifteen minutes
    assert as_text.answer_ttl == as_seconds.answer_ttl == timedelta(minutes=15)
    assert as_text.answer_ttl_iso == "PT15M"
    assert as_seconds.answer_ttl_iso == "PT15M"


def test_no_timeout_means_wait_forever():
    # GIVEN/WHEN a policy with no timeout and no answer_ttl
    policy = WaitPolicy()
    # THEN both are None, and the actions default to approve/reject
    assert policy.timeout is None
    assert policy.timeout_iso is None
    assert policy.answer_ttl is None
    assert policy.allowed_actions == ("approve", "reject")


@pytest.mark.parametrize("field", ["timeout", "answer_ttl"])
@pytest.mark.parametrize("text", ["P1M", "P1Y", "P1Y2M", "P2MT1H", "P0.5M"])
def test_years_and_months_are_refused_because_they_have_no_fixed_length(field: str, text: str):
    # GIVEN a calendar duration (years or months)
    # WHEN a policy is built with it
    kwargs: dict[str, Any] = {field: text}
    with pytest.raises(PolicyError, match=re.escape(f"got {text!r} (years and months have no fixed length)")) as err:
        WaitPolicy(**kwargs)
    # THEN the error names the field and the accepted forms
    assert err.value.field == field
    assert err.value.value == text
    assert err.value.message.startswith(f"{field} must be {ACCEPTED}")


def test_minutes_after_t_are_not_mistaken_for_months():
    # GIVEN/WHEN 'PT1M' (one minute, not one month)
    # THEN it is accepted as sixty seconds
    assert WaitPolicy(timeout="PT1M").timeout == timedelta(minutes=1)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "got an empty string"),
        ("   ", "got an empty string"),
        (0, "got 0 (must be more than zero seconds)"),
        (0.0, "got 0.0 (must be more than zero seconds)"),
        (-5, "got -5 (must be more than zero seconds)"),
        (-0.5, "got -0.5 (must be more than zero seconds)"),
        (float("inf"), "got inf (must be more than zero seconds)"),
        (float("nan"), "got nan (must be more than zero seconds)"),
        ("PT0S", "got 'PT0S' (must be more than zero seconds)"),
        ("P0D", "got 'P0D' (must be more than zero seconds)"),
        ("PT0.0000001S", "got 'PT0.0000001S' (must be more than zero seconds)"),
        (1e-7, "got 1e-07 (must be more than zero seconds)"),
        (True, "got True (a bool is not a duration)"),
        (False, "got False (a bool is not a duration)"),
        ("P", "got 'P'"),
        ("PT", "got 'PT'"),
        ("P1DT", "got 'P1DT'"),
        ("-PT1H", "got '-PT1H'"),
        ("soon", "got 'soon'"),
        ("4h", "got '4h'"),
        ("PT1.S", "got 'PT1.S'"),
        ("PT4H3D", "got 'PT4H3D'"),
        ("P99999999999W", "got 'P99999999999W' (too long to represent)"),
        (1e300, "got 1e+300 (too long to represent)"),
        ([60], "got a list"),
        (timedelta(hours=1), "got a timedelta"),
    ],
)
def test_bad_timeout_is_refused_at_construction_naming_field_and_accepted_forms(value: Any, reason: str):
    # GIVEN a value that is not a positive fixed-length duration
    # WHEN a policy is built with it
    with pytest.raises(PolicyError) as err:
        WaitPolicy(timeout=value)
    # THEN a PolicyError names the field, the accepted forms and why the value was refused
    assert err.value.field == "timeout"
    assert err.value.message == f"timeout must be {ACCEPTED} (weeks, days, hours, minutes, seconds), " + (
        f"or a positive number of seconds; {reason}"
    )


def test_bad_answer_ttl_names_answer_ttl():
    # GIVEN/WHEN a zero answer_ttl
    with pytest.raises(PolicyError, match=re.escape("answer_ttl must be an ISO 8601 duration such as 'PT4H'")) as err:
        WaitPolicy(answer_ttl="PT0S")
    # THEN the field is answer_ttl, not timeout
    assert err.value.field == "answer_ttl"


def test_policy_error_is_a_value_error():
    # GIVEN/WHEN a bad policy
    # THEN it can be caught as a plain ValueError too
    with pytest.raises(ValueError, match=re.escape("timeout must be")):
        WaitPolicy(timeout="never")


# --- allowed_actions ----------------------------------------------------------------------------


def test_allowed_actions_are_kept_in_order_as_a_tuple():
    # GIVEN/WHEN a list of actions
    policy = WaitPolicy(allowed_actions=["approve", "reject", "escalate"])
    # THEN they are kept, in order, immutable
    assert policy.allowed_actions == ("approve", "reject", "escalate")


def test_allowed_actions_must_not_be_empty():
    with pytest.raises(PolicyError, match=re.escape("allowed_actions must name at least one action")) as err:
        WaitPolicy(allowed_actions=[])
    assert err.value.field == "allowed_actions"


def test_allowed_actions_must_not_list_an_action_twice():
    with pytest.raises(PolicyError, match=re.escape("allowed_actions lists an action twice: ['approve', 'approve']")):
        WaitPolicy(allowed_actions=["approve", "approve"])


def test_allowed_actions_as_a_bare_string_is_refused_rather_than_split_into_letters():
    # GIVEN a single string (which would otherwise iterate as letters)
    with pytest.raises(PolicyError, match=re.escape("got the single string 'approve'")) as err:
        WaitPolicy(allowed_actions="approve")
    # THEN the message shows the list form to use
    assert "['approve', 'reject']" in err.value.message
    assert err.value.field == "allowed_actions"


@pytest.mark.parametrize("bad", ["", "   ", 3, None])
def test_allowed_actions_must_hold_non_empty_strings(bad: Any):
    with pytest.raises(PolicyError, match=re.escape(f"allowed_actions must hold non-empty strings; got {bad!r}")):
        WaitPolicy(allowed_actions=["approve", bad])


# --- tags ---------------------------------------------------------------------------------------


def test_tags_map_str_to_str_and_are_read_only():
    # GIVEN/WHEN tags given as a dict
    source = {"approver_group": "finance"}
    policy = WaitPolicy(tags=source)
    source["approver_group"] = "changed later"
    # THEN the policy keeps its own read-only copy
    assert dict(policy.tags) == {"approver_group": "finance"}
    assert isinstance(policy.tags, MappingProxyType)


@pytest.mark.parametrize(
    ("tags", "fragment"),
    [
        ({"team": 5}, "tags must map non-empty str keys to str values; got 'team': 5"),
        ({1: "x"}, "tags must map non-empty str keys to str values; got 1: 'x'"),
        ({"": "x"}, "tags must map non-empty str keys to str values; got '': 'x'"),
        ("finance", "tags must be a dict of str to str; got a str"),
        ([("a", "b")], "tags must be a dict of str to str; got a list"),
    ],
)
def test_tags_that_are_not_str_to_str_are_refused(tags: Any, fragment: str):
    with pytest.raises(PolicyError, match=re.escape(fragment)) as err:
        WaitPolicy(tags=tags)
    assert err.value.field == "tags"


# --- correlation --------------------------------------------------------------------------------


def test_correlation_with_provider_and_id_is_kept():
    policy = WaitPolicy(correlation={"provider": "stripe", "id": "re_123"})
    assert dict(policy.correlation or {}) == {"provider": "stripe", "id": "re_123"}


@pytest.mark.parametrize(
    "correlation",
    [{"provider": "stripe"}, {"id": "re_123"}, {"provider": "stripe", "id": 123}, "stripe:re_123", {}],
)
def test_correlation_needs_provider_and_id_as_strings(correlation: Any):
    expected = "correlation must be a dict of strings with 'provider' and 'id', e.g. {'provider': 'stripe', 'id': "
    with pytest.raises(PolicyError, match=re.escape(expected)) as err:
        WaitPolicy(correlation=correlation)
    assert err.value.field == "correlation"


# --- default ------------------------------------------------------------------------------------


def test_default_may_be_any_json_including_falsy_values():
    for default in ({"action": "reject"}, False, 0, "", [], None):
        assert WaitPolicy(default=default).default == default


def test_default_tuple_becomes_a_json_list():
    assert WaitPolicy(default=("a", 1)).default == ["a", 1]


@pytest.mark.parametrize(
    ("default", "fragment"),
    [
        ({1, 2}, "default must be JSON; default is a set, which is not JSON"),
        ({"when": timedelta(1)}, "default must be JSON; default.when is a timedelta, which is not JSON"),
        (float("nan"), "default must be JSON; default is nan, which JSON cannot carry"),
        (object(), "default must be JSON; default is a object, which is not JSON"),
    ],
)
def test_default_must_be_json(default: Any, fragment: str):
    with pytest.raises(PolicyError, match=re.escape(fragment)) as err:
        WaitPolicy(default=default)
    assert err.value.field == "default"


# --- to_dict / from_dict ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy",
    [
        WaitPolicy(),
        WaitPolicy(
            timeout="P3D",
            default={"action": "reject", "reason": "no response within P3D"},
            allowed_actions=["approve", "reject", "escalate"],
            tags={"approver_group": "finance"},
            correlation={"provider": "stripe", "id": "re_123"},
            answer_ttl="PT15M",
        ),
        WaitPolicy(timeout=59.123456, answer_ttl="PT0,5S", default=False),
        WaitPolicy(timeout="P1W", answer_ttl=1.5),
    ],
    ids=["defaults", "everything", "fractions", "weeks"],
)
def test_to_dict_and_from_dict_round_trip(policy: WaitPolicy):
    # GIVEN a policy
    # WHEN it goes out as a dict (JSON types only) and back
    data = policy.to_dict()
    back = WaitPolicy.from_dict(data)
    # THEN it is the same policy
    assert back == policy
    assert back.to_dict() == data


def test_to_dict_holds_plain_json_types():
    data = WaitPolicy(timeout="PT4H", tags={"a": "b"}, correlation={"provider": "p", "id": "i"}).to_dict()
    assert data == {
        "timeout": "PT4H",
        "default": None,
        "allowed_actions": ["approve", "reject"],
        "tags": {"a": "b"},
        "correlation": {"provider": "p", "id": "i"},
        "answer_ttl": None,
        "answerer_groups": [],
        "answerer_principals": [],
        "allow_edits": False,
    }
    assert type(data["tags"]) is dict
    assert type(data["correlation"]) is dict


def test_from_dict_refuses_unknown_keys_so_a_typo_is_not_lost():
    # GIVEN a policy dict with a misspelt key
    data = {"timout": "PT1H", "timeout": "PT2H"}
    # WHEN it is read back
    expected = "unknown policy field(s) ['timout']; known: ['allow_edits', 'allowed_actions'"
    with pytest.raises(PolicyError, match=re.escape(expected)):
        WaitPolicy.from_dict(data)


def test_from_dict_names_the_first_unknown_field():
    with pytest.raises(PolicyError) as err:
        WaitPolicy.from_dict({"zeta": 1, "alpha": 2})
    assert err.value.field == "alpha"
    assert "['alpha', 'zeta']" in err.value.message


def test_from_dict_applies_the_same_checks_as_construction():
    with pytest.raises(PolicyError, match=re.escape("got 'P1M' (years and months have no fixed length)")):
        WaitPolicy.from_dict({"timeout": "P1M"})


def test_policy_is_immutable():
    policy = WaitPolicy(timeout="PT1H")
    with pytest.raises(AttributeError):
        policy.timeout = timedelta(0)  # type: ignore[misc]


def test_repr_shows_the_shape_not_the_default_answer():
    # GIVEN a default that could carry personal data
    policy = WaitPolicy(timeout="PT1H", default={"note": "Zoë's refund"}, tags={"g": "finance"})
    # THEN the repr shows timeout, actions and tags, not the default
    assert repr(policy) == (
        "WaitPolicy(timeout='PT1H', allowed_actions=('approve', 'reject'), tags={'g': 'finance'}, answer_ttl=None, "
        "answerer_groups=(), allow_edits=False)"
    )


@pytest.mark.parametrize("field", ["timeout", "answer_ttl"])
def test_a_duration_whose_deadline_no_store_can_hold_is_refused(field: str) -> None:
    # GIVEN a timeout of about 8,200 years (its deadline would fall past the year 9999)
    # WHEN the policy is built / THEN it is refused where it is written, saying the limit and the way out
    with pytest.raises(PolicyError, match=re.escape(f"{field} must be at most P3650D")) as caught:
        WaitPolicy(**{field: "P3000000D"})
    assert caught.value.field == field
    assert f"leave {field} unset" in caught.value.message


def test_a_default_too_large_to_travel_with_every_envelope_is_refused() -> None:
    # GIVEN a default answer of 300 KB (the question's own 64 KiB limit does not cover it)
    default = {"action": "reject", "reason": "x" * 300_000}
    # WHEN the policy is built / THEN it is refused with its size and the limit, not its content
    with pytest.raises(PolicyError, match=re.escape("default is 300,")) as caught:
        WaitPolicy(default=default)
    assert "the limit is 65,536 (MAX_DEFAULT_BYTES)" in caught.value.message
    assert "xxxx" not in caught.value.message


@pytest.mark.parametrize(
    "number", [1e300, 1e-300, 10**40 + 1], ids=["beyond-range", "below-range", "41-significant-digits"]
)
def test_a_default_holding_a_number_dynamodb_cannot_store_is_refused(number: float) -> None:
    with pytest.raises(PolicyError, match=re.escape("send it as a string")):
        WaitPolicy(default={"action": "reject", "amount": number})


def test_answerers_and_edits_round_trip_and_are_checked() -> None:
    # GIVEN a policy restricted to finance's group and one queue principal, with edits off
    policy = WaitPolicy(answerer_groups=["finance"], answerer_principals=["AROAEXAMPLE"], allow_edits=False)
    # WHEN it travels through a checkpoint / THEN it comes back the same
    again = WaitPolicy.from_dict(policy.to_dict())
    assert (again.answerer_groups, again.answerer_principals, again.allow_edits) == (
        ("finance",),
        ("AROAEXAMPLE",),
        False,
    )
    assert again.restricts_answerers
    # AND a single string or a non-bool is refused where it is written
    with pytest.raises(PolicyError, match=re.escape("answerer_groups must be a list of strings")):
        WaitPolicy(answerer_groups="finance")
    with pytest.raises(PolicyError, match=re.escape("allow_edits must be True or False")):
        WaitPolicy(allow_edits="no")  # type: ignore[arg-type]


SCHEMA = {"type": "object", "properties": {"limit": {"type": "integer"}}, "required": ["limit"]}


def test_a_response_schema_rides_in_the_rules_and_round_trips() -> None:
    policy = WaitPolicy(response_schema=SCHEMA)
    assert policy.rules() == {"answerers": None, "edits": False, "response_schema": SCHEMA}
    assert WaitPolicy.from_dict(policy.to_dict()) == policy
    assert "response_schema" not in WaitPolicy().to_dict(), "a policy without one reads as before"
    assert "response_schema" not in WaitPolicy().rules()


def test_a_response_schema_decides_the_default_actions() -> None:
    choice = {"type": "object", "properties": {"action": {"enum": ["ship", "hold"]}}}
    assert WaitPolicy(response_schema=choice).allowed_actions == ("ship", "hold")
    assert WaitPolicy(response_schema=SCHEMA).allowed_actions == ("submit",)
    assert WaitPolicy(response_schema=SCHEMA, allowed_actions=["approve"]).allowed_actions == ("approve",)
    assert WaitPolicy().allowed_actions == ("approve", "reject")


def test_a_response_schema_is_copied_so_a_later_change_to_the_callers_dict_does_not_reach_it() -> None:
    schema = {"type": "object", "properties": {}}
    policy = WaitPolicy(response_schema=schema)
    schema["properties"] = {"x": {"type": "string"}}
    assert policy.response_schema == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ("{}", "must be a JSON Schema object (a dict)"),
        ([{"type": "object"}], "must be a JSON Schema object (a dict)"),
        ({"type": "object", "default": float("nan")}, "response_schema must be JSON"),
        ({"description": "x" * 40_000}, "the limit is 32,768 (MAX_RESPONSE_SCHEMA_BYTES)"),
    ],
    ids=["text", "list", "not-json", "too-large"],
)
def test_a_response_schema_that_cannot_travel_is_refused_at_construction(schema: Any, fragment: str) -> None:
    with pytest.raises(PolicyError, match=re.escape(fragment)) as caught:
        WaitPolicy(response_schema=schema)
    assert caught.value.field == "response_schema"


def test_tags_are_bounded_like_the_default_so_every_announcer_can_carry_the_question() -> None:
    # 300 KB of tags made a question no announcer could carry (issue 25)
    big = {f"k{n}": "v" * 100 for n in range(3_000)}
    with pytest.raises(PolicyError, match=re.escape("the most is 4096 (MAX_TAGS_BYTES)")) as refused:
        WaitPolicy(tags=big)
    assert refused.value.field == "tags"
    assert "v" * 100 not in str(refused.value), "a refusal names the size, not the values"
    assert WaitPolicy(tags={"approver_group": "finance"}).tags == {"approver_group": "finance"}


@pytest.mark.parametrize("groups", [["Finance Managers"], ["finance", "on call"], ["tab\tgroup"]])
def test_a_group_name_with_a_space_is_refused_since_api_gateway_would_read_it_as_two(groups: list[str]) -> None:
    from agent_wait import Escalation

    with pytest.raises(PolicyError, match="must hold group names without spaces"):
        WaitPolicy(answerer_groups=groups)
    with pytest.raises(PolicyError, match="must hold group names without spaces"):
        Escalation(after="P1D", answerer_groups=groups)
