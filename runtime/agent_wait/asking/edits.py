"""What an approver may put in place of a `@wait` function's arguments, read from the function's annotations.

An edit (`{"action": "approve", "args": {...}}`) changes what the call does, so it is checked twice:

- before the decision, by the host, against `source["args_schema"]`: a JSON Schema of the editable
  parameters that the envelope carries (`editable_args_schema`). An edit that does not fit is refused
  `invalid_answer` and the question stays open; nothing is decided for an answer the body cannot take.
- in the agent, when the answer arrives, by validating each edited value against its annotation
  (`EditValidator`): the body runs with the validated value, or not at all.

Both read the annotations with pydantic, which every supported framework already depends on. The core
package does not: without pydantic, no schema is published and edits are checked by name only.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ("MAX_ARGS_SCHEMA_BYTES", "EditValidator", "editable_args_schema")

logger = logging.getLogger("agent_wait.wait")

MAX_ARGS_SCHEMA_BYTES = 16 * 1024
"""A larger schema is not published (it rides in every envelope); edits are then checked by name before the
decision and by annotation in the agent."""


def editable_args_schema(function: str, hints: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any] | None:
    """A JSON Schema for an edit of `names`: an object of those parameters only, each fitting its annotation.

    A parameter without an annotation, or with one pydantic cannot describe, accepts any JSON value. None when
    pydantic is not installed or the schema would be over `MAX_ARGS_SCHEMA_BYTES`.
    """
    try:
        import pydantic  # noqa: F401
    except ImportError:  # pragma: no cover - every framework binding brings pydantic
        return None
    properties: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for name in names:
        adapter = _type_adapter(hints.get(name, inspect.Parameter.empty))
        if adapter is None:
            properties[name] = {}
            continue
        try:
            schema = adapter.json_schema(mode="validation")
        except Exception as exc:  # an arbitrary class: checked in the agent only
            logger.debug("no JSON Schema for %s(%s): %s", function, name, type(exc).__name__)
            properties[name] = {}
            continue
        definitions.update(schema.pop("$defs", {}))
        properties[name] = schema
    args_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if definitions:
        args_schema["$defs"] = definitions
    size = len(json.dumps(args_schema, separators=(",", ":")).encode("utf-8"))
    if size > MAX_ARGS_SCHEMA_BYTES:
        logger.warning(
            "the schema of %s()'s editable parameters is %d bytes (over %d): edits are checked by name before "
            "the decision and by annotation in the agent",
            function,
            size,
            MAX_ARGS_SCHEMA_BYTES,
        )
        return None
    return args_schema


class EditValidator:
    """Validates edited values against a function's annotations, in the agent, before the body runs.

    Args:
        hints: the function's resolved type hints.
    """

    def __init__(self, hints: Mapping[str, Any]) -> None:
        self._hints = hints
        self._adapters: dict[str, Callable[[Any], Any] | None] = {}

    def validate(self, edits: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """`(validated values, names whose value does not fit)`; values of unannotated parameters pass as given."""
        validated: dict[str, Any] = {}
        refused: list[str] = []
        for name, value in edits.items():
            check = self._adapter(name)
            if check is None:
                validated[name] = value
                continue
            try:
                validated[name] = check(value)
            except ValueError:  # pydantic's ValidationError is a ValueError
                refused.append(name)
        return validated, sorted(refused)

    def _adapter(self, name: str) -> Callable[[Any], Any] | None:
        if name not in self._adapters:
            adapter = _type_adapter(self._hints.get(name, inspect.Parameter.empty))
            self._adapters[name] = adapter.validate_python if adapter is not None else None
        return self._adapters[name]


def _type_adapter(annotation: Any) -> Any:
    """pydantic's `TypeAdapter` for `annotation`; None for no annotation, `Any`, no pydantic, or a type it cannot
    handle (such a parameter takes any value)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return None
    try:
        from pydantic import TypeAdapter

        return TypeAdapter(annotation)
    except Exception as exc:  # an arbitrary class: edits of it are checked by name only
        logger.debug("no pydantic adapter for an annotation: %s", type(exc).__name__)
        return None
