"""Dialects: the question and answer shapes of other approval libraries, mapped to ours. Standard library only.

A dialect is recognised from the value a framework parks on and recorded in the envelope's `source`
(`{"dialect": name, ...}`), so the host knows it again from the ledger row alone. Every answer is
checked here before it may decide a question (`answer_problem`, called by the router and the answer
API alike), and turned here into the value the agent receives (`resume_value`). Questions asked by
`@wait` are checked too: an edit may name only the function's published parameters. A person's cancel without the
policy's `on_cancel` reaches the agent as `cancellation(reason, by)`, `{"action": "cancelled", ...}`, which each
dialect turns into its own refusal (`cancellation_problem` says when it has none).

A question may also carry a JSON Schema for its answer (LangGraph's `interrupt(value, response_schema=...)`,
or `WaitPolicy(response_schema=...)`), in the envelope's `rules`. Outside a dialect, such a question is
answered with the value itself, as sent; the host checks it against the schema (the core cannot: it
imports no JSON Schema library).

A dialect may bring its own answer form (MCP elicitation's `requested_schema`): it rides in `rules.response_schema`
like any other, drawn by every channel, while `schema_checks` says what the host checks it (or the dialect's own
schemas) against.

Mapping table: docs/dialects.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_wait.dialects import agent_inbox, langchain_hitl, mcp_elicitation
from agent_wait.dialects._cancellation import CANCELLED, cancellation, is_cancellation
from agent_wait.policy.wait_policy import schema_actions

if TYPE_CHECKING:
    from agent_wait.contract.envelope import WaitEnvelope

__all__ = (
    "CANCELLED",
    "Recognized",
    "answer_problem",
    "cancellation",
    "cancellation_problem",
    "dialect_of",
    "is_cancellation",
    "is_native_answer",
    "recognize",
    "response_schema_of",
    "resume_value",
    "schema_checks",
    "translate",
)

_DIALECTS = {langchain_hitl.NAME: langchain_hitl, agent_inbox.NAME: agent_inbox, mcp_elicitation.NAME: mcp_elicitation}

SchemaCheck = tuple[Mapping[str, Any], Any, str]
"""A check the host runs with `jsonschema`: (the schema, the value that must fit it, what a misfit means)."""


@dataclass(frozen=True, slots=True)
class Recognized:
    """What a dialect's parked value says about its question."""

    allowed_actions: tuple[str, ...]
    """The `action` values our own answers may carry (the dialect's decision types)."""
    allow_edits: bool
    """Whether our edit form (`{"action": "approve", "args": {...}}`) can be translated."""
    source: dict[str, Any] | None
    """The envelope's `source`: `{"dialect": name, ...}`; None for a bare question with a response schema."""
    response_schema: Mapping[str, Any] | None = None
    """The JSON Schema the answer must fit, when the framework gave one."""


def recognize(value: Any, response_schema: Any = None) -> Recognized | None:
    """The dialect a parked value is written in, or None for ours or a bare value without a response schema.

    Args:
        value: the value the framework parked on.
        response_schema: the JSON Schema the framework publishes for the answer (`Interrupt.response_schema`).
    """
    schema = response_schema if isinstance(response_schema, Mapping) else None
    for dialect in _DIALECTS.values():
        found = dialect.recognize(value, schema)
        if found is not None:
            form = mcp_elicitation.form_schema(value) if dialect is mcp_elicitation else None
            return Recognized(*found, response_schema=schema if schema is not None else form)
    if schema is None:
        return None
    return Recognized(schema_actions(schema), False, None, schema)


def dialect_of(envelope: WaitEnvelope) -> str | None:
    """The dialect recorded in an envelope's `source`, or None."""
    return _dialect_in(envelope.source)


def _dialect_in(source: Any) -> str | None:
    name = source.get("dialect") if isinstance(source, Mapping) else None
    return name if name in _DIALECTS else None


def response_schema_of(envelope: WaitEnvelope) -> Mapping[str, Any] | None:
    """The JSON Schema the question's answer must fit (from the envelope's `rules`), or None."""
    schema = envelope.rules.get("response_schema")
    return schema if isinstance(schema, Mapping) else None


def is_native_answer(envelope: WaitEnvelope, answer: Any) -> bool:
    """True when `answer` is in the question's own shape, so no `action` of ours is required.

    That is a dialect's own answer shape, or, outside a dialect, any answer to a question with a response
    schema: the schema alone says what fits.
    """
    name = dialect_of(envelope)
    if name is None:
        return response_schema_of(envelope) is not None
    return _DIALECTS[name].is_native(answer)


def answer_problem(envelope: WaitEnvelope, answer: Any) -> str | None:
    """Why `answer` cannot be applied to the envelope's question (one sentence, no answer content), or None.

    The response schema, if any, is checked by the host on `resume_value(envelope, answer)`.
    """
    name = dialect_of(envelope)
    if name is not None:
        return _DIALECTS[name].answer_problem(envelope.question, answer, response_schema_of(envelope))
    return _wait_call_problem(envelope, answer)


def cancellation_problem(envelope: WaitEnvelope) -> str | None:
    """Why the question cannot take a cancellation (`cancellation`) in its dialect, or None when it can.

    A dialect delivers it as its own refusal (a `reject` or `respond` decision, an `ignore` or `response`); a question
    whose dialect allows none of them could only be approved, so a cancel without `on_cancel` is refused before it
    decides anything. Ours, and a question with only a response schema, take it as it is.
    """
    name = dialect_of(envelope)
    if name is None:
        return None
    return _DIALECTS[name].cancel_problem(envelope.question, response_schema_of(envelope))


def resume_value(envelope: WaitEnvelope, answer: Any) -> Any:
    """The value the agent receives for `answer`: a dialect's own shape; anything else unchanged."""
    return translate(envelope.source, envelope.question, answer, response_schema_of(envelope))


def schema_checks(envelope: WaitEnvelope, answer: Any) -> list[SchemaCheck]:
    """What the host checks with `jsonschema` before `answer` may decide: `(schema, value, what)` each.

    Most questions check the value the agent would receive against `rules.response_schema`. An MCP elicitation
    round checks each accepted form's content against its own `requested_schema` instead (the round's answer form
    is only what people fill in; the server receives the contents).
    """
    if dialect_of(envelope) == mcp_elicitation.NAME:
        return mcp_elicitation.schema_checks(envelope.question, answer)
    schema = response_schema_of(envelope)
    if schema is None:
        return []
    return [(schema, resume_value(envelope, answer), "answer does not fit the question's response_schema")]


def translate(source: Any, question: Any, answer: Any, response_schema: Any = None) -> Any:
    """`resume_value` from a question's `source` and value (for hosts that hold a `Question`, not an envelope)."""
    name = _dialect_in(source)
    return _DIALECTS[name].to_resume(question, answer, response_schema) if name is not None else answer


def _wait_call_problem(envelope: WaitEnvelope, answer: Any) -> str | None:
    """A `@wait` question (`{"function", "args"}`): an approval's edited `args` name only editable parameters.

    Those are the question's `args`, or the source's `editable` list when the function has published
    parameters that cannot be edited (positional-only or variadic).

    Otherwise the body would not run and the question would be decided for nothing (see `WaitSignature.plan`).
    """
    source, question = envelope.source, envelope.question
    if not isinstance(source, Mapping) or not isinstance(question, Mapping):
        return None
    function, published = question.get("function"), question.get("args")
    if source.get("function") != function or not isinstance(published, Mapping):
        return None
    if not isinstance(answer, Mapping) or answer.get("action") != "approve" or answer.get("args") is None:
        return None
    editable = source.get("editable")
    names = sorted(editable) if isinstance(editable, list) else sorted(published)
    edits = answer["args"]
    if not isinstance(edits, Mapping):
        return f"edited 'args' must be an object naming parameters of {function}(): {names}"
    unknown = sorted(str(name) for name in edits if name not in names)
    if unknown:
        return f"edited 'args' may name only parameters of {function}(): {names}; unknown: {unknown}"
    return None
