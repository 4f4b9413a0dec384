"""The host's JSON Schema check of an answer: what it says when one does not fit, and when the schema is broken."""

from __future__ import annotations

from typing import Any

import pytest

from agent_wait.engine._answer_schema import schema_problem

LIMIT = {
    "type": "object",
    "properties": {"limit": {"type": "integer", "minimum": 0}, "channel": {"enum": ["email", "phone"]}},
    "required": ["limit"],
    "additionalProperties": False,
}


def test_an_answer_that_fits_has_no_problem() -> None:
    assert schema_problem(LIMIT, {"limit": 5, "channel": "phone"}) is None


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"limit": "secret-value"}, "at $.limit, expected type integer"),
        ({}, 'at $, a required property is missing (required: ["limit"])'),
        ({"limit": -7}, "at $.limit, fails the schema's 'minimum' rule (0)"),
        ({"limit": 1, "channel": "pigeon-secret"}, 'at $.channel, expected one of ["email", "phone"]'),
        ({"limit": 1, "secret-key": 1}, "at $, a property the schema does not list is not allowed"),
        ("secret-text", "at $, expected type object"),
    ],
    ids=["type", "required", "minimum", "enum", "additional", "not-an-object"],
)
def test_a_refusal_names_the_rule_and_the_path_and_never_the_answers_values(answer: Any, expected: str) -> None:
    problem = schema_problem(LIMIT, answer)
    assert problem == f"answer does not fit the question's response_schema: {expected}"
    assert "secret" not in problem


def test_a_broken_schema_says_so_instead_of_blaming_the_answer() -> None:
    problem = schema_problem({"type": "no-such-type"}, {"limit": 1})
    assert problem is not None
    assert problem.startswith("the question's response_schema is not a valid JSON Schema")
    assert "cancel the question, or fix the agent's schema" in problem


def test_a_schema_with_its_own_draft_is_checked_by_that_draft() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
        "maximum": 3,
        "exclusiveMaximum": True,
    }
    assert schema_problem(draft4, 2) is None
    assert schema_problem(draft4, 3) is not None
