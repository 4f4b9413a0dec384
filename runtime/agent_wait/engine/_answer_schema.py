"""Check an answer against the JSON Schema its question carries (`rules.response_schema`), with `jsonschema`.

The schema is LangGraph's (`interrupt(value, response_schema=...)` publishes one, Draft 2020-12 as pydantic
writes it) or the policy's own. LangGraph validates a resume only against a Python type, and only inside
the agent, after the question is decided; checking here, before the decision, keeps a wrong answer from
burning the question. `jsonschema` is imported on first use, so questions without a schema never load it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ("checks_problem", "edit_problem", "schema_problem")

_SHOWN = 120
"""Longest piece of the schema quoted in a refusal (schema text only: never the answer's values)."""


def schema_problem(
    schema: Mapping[str, Any], value: Any, *, fits: str = "answer does not fit the question's response_schema"
) -> str | None:
    """Why `value` does not fit `schema` (one sentence of schema rules and paths, no answer values), or None."""
    text = json.dumps(schema, sort_keys=True)
    validator = _validator(text)
    if isinstance(validator, str):
        return validator
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    return f"{fits}: at {_clip(error.json_path)}, {_expected(error)}"


def checks_problem(checks: Iterable[tuple[Mapping[str, Any], Any, str]], *, fits: str | None = None) -> str | None:
    """The first of `checks` (`agent_wait.dialects.schema_checks`: schema, value, what a misfit means) whose value
    does not fit its schema, said as `schema_problem` says it (with `fits` in place of each check's own words)."""
    for schema, value, meaning in checks:
        problem = schema_problem(schema, value, fits=fits or meaning)
        if problem is not None:
            return problem
    return None


def edit_problem(source: Any, answer: Any) -> str | None:
    """Why an approval's edited `args` do not fit the `@wait` function's parameters, or None.

    The schema is `source["args_schema"]`, published by `@wait` from the function's annotations when its policy
    allows edits (`agent_wait.asking.edits`); a question without one is checked by parameter name only.
    """
    if not isinstance(source, Mapping) or not isinstance(answer, Mapping):
        return None
    schema, edits = source.get("args_schema"), answer.get("args")
    if not isinstance(schema, Mapping) or not isinstance(edits, Mapping) or answer.get("action") != "approve":
        return None
    return schema_problem(schema, edits, fits=f"edited args do not fit {source.get('function')}()'s parameters")


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Validator | str:
    """A validator for the schema (by its canonical text), or why the schema itself is broken."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    schema = json.loads(schema_text)
    cls = validator_for(schema)  # the schema's own `$schema`, else the latest draft (2020-12)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return (
            f"the question's response_schema is not a valid JSON Schema ({exc.validator} at "
            f"{_clip(exc.json_path)}), so no answer can be checked: cancel the question, or fix the agent's schema"
        )
    return cls(schema)


def _expected(error: ValidationError) -> str:
    rule, wanted = error.validator, error.validator_value
    if rule == "required":
        return f"a required property is missing (required: {_clip(wanted)})"
    if rule == "type":
        return f"expected type {_clip(wanted)}"
    if rule == "enum":
        return f"expected one of {_clip(wanted)}"
    if rule == "const":
        return f"expected {_clip(wanted)}"
    if rule in ("additionalProperties", "unevaluatedProperties") and wanted is False:
        return "a property the schema does not list is not allowed"
    return f"fails the schema's {rule!r} rule ({_clip(wanted)})"


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
