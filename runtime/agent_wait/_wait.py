"""What `@wait` means, independent of any framework: which arguments are published, how an answer applies.

Bindings (`agent_wait.langgraph`, `agent_wait.pydantic_ai`, `agent_wait.strands`) decide how to park
and where the answer comes from; this module decides everything else, so the rules are the same on
every framework:

- the question is `{"function": name, "args": {...}}` with only the function's own visible
  parameters; values the framework injects (config, runtime, store, tool-call ids, ...) and the
  decision parameter are never published and never hashed;
- `{"action": "approve"}` runs the body; `{"action": "approve", "args": {...}}` runs it with edited
  arguments, but only visible parameters may be edited, anything else is an error value returned in
  place of the body; any other answer is returned in place of the body;
- a function with a decision parameter always runs and receives the answer verbatim.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait._json import to_jsonable
from agent_wait.envelope import check_question_size

__all__ = ("APPROVE", "AnswerPlan", "WaitSignature", "edit_refused", "plain")

logger = logging.getLogger("agent_wait.wait")

APPROVE = "approve"
"""The action that runs a `@wait` function's body."""

MODES = ("interrupt", "async")


def plain(value: Any) -> Any:
    """Turn framework objects into JSON-ready values: pydantic models and dataclasses become dicts."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return plain(dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


@dataclass(frozen=True)
class AnswerPlan:
    """What to do with an answer: run the body with `arguments`, or return `value` in its place."""

    run: bool
    arguments: inspect.BoundArguments | None = None
    value: Any = None


def edit_refused(function: str, refused: list[str], editable: list[str], reason: str) -> dict[str, Any]:
    """The error value returned in place of the body when an answer edits what it may not."""
    return {
        "status": "error",
        "error": "edit_refused",
        "function": function,
        "refused": refused,
        "editable": editable,
        "message": f"{reason}; the answer may edit only {editable} of {function}(). Nothing was run.",
    }


class WaitSignature:
    """A `@wait` function's signature split into what is published and what is injected.

    Args:
        fn: the decorated function.
        decision: the name of the parameter that receives the answer verbatim, if the function has one.
        is_injected: the binding's rule for parameters the framework fills in.
    """

    def __init__(
        self, fn: Callable[..., Any], *, decision: str, is_injected: Callable[[inspect.Parameter], bool]
    ) -> None:
        self.function = fn.__name__
        self.signature = inspect.signature(fn)
        params = self.signature.parameters
        self.decision: str | None = decision if decision in params else None
        self.injected = frozenset(name for name, p in params.items() if name != self.decision and is_injected(p))
        self.visible: tuple[str, ...] = tuple(
            name for name in params if name not in self.injected and name != self.decision
        )
        self.editable: tuple[str, ...] = tuple(
            name
            for name in self.visible
            if params[name].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        )

    @property
    def outward(self) -> inspect.Signature:
        """The signature a framework should see: the decision parameter removed.

        A tool's schema is built from the signature, so without this a model would be offered the
        decision parameter and could fill it in itself (it reaches the body when `when=` skips).
        """
        params = [p for name, p in self.signature.parameters.items() if name != self.decision]
        return self.signature.replace(parameters=params)

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> inspect.BoundArguments:
        if self.decision is not None and self.decision not in kwargs:
            # The framework never passes the decision; bind a placeholder so binding does not fail.
            kwargs = {**kwargs, self.decision: None}
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound

    def question(self, bound: inspect.BoundArguments) -> dict[str, Any]:
        """`{"function", "args"}` with visible arguments only, checked for JSON and size.

        Raises:
            EnvelopeError: an argument is not JSON.
            QuestionTooLargeError: the question is over `MAX_QUESTION_BYTES`.
        """
        args = {name: plain(bound.arguments[name]) for name in self.visible if name in bound.arguments}
        question = {"function": self.function, "args": to_jsonable(args, where="args")}
        check_question_size(question)
        return question

    def plan(self, bound: inspect.BoundArguments, answer: Any) -> AnswerPlan:
        """Apply the `@wait` answer rules (module docstring) to `answer`."""
        if self.decision is not None:
            bound.arguments[self.decision] = answer
            return AnswerPlan(run=True, arguments=bound)
        if not isinstance(answer, Mapping) or answer.get("action") != APPROVE:
            return AnswerPlan(run=False, value=answer)
        edits = answer.get("args")
        if edits is None:
            return AnswerPlan(run=True, arguments=bound)
        if not isinstance(edits, Mapping):
            return AnswerPlan(
                run=False,
                value=edit_refused(
                    self.function, [], list(self.editable), f"'args' must be an object, got {type(edits).__name__}"
                ),
            )
        refused = sorted(name for name in edits if name not in self.editable)
        if refused:
            injected = [name for name in refused if name in self.injected or name == self.decision]
            reason = (
                f"the answer tried to edit injected value(s) {injected}"
                if injected
                else f"the answer edits unknown parameter(s) {refused}"
            )
            logger.warning("edit refused: function=%s refused=%s", self.function, refused)
            return AnswerPlan(run=False, value=edit_refused(self.function, refused, list(self.editable), reason))
        for name, value in edits.items():
            bound.arguments[name] = value
        return AnswerPlan(run=True, arguments=bound)


def should_ask(
    when: Callable[..., Any] | None, function: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> bool:
    """Run the `when=` predicate with the call's arguments; a failing predicate asks anyway (safe side)."""
    if when is None:
        return True
    try:
        return bool(when(*args, **kwargs))
    except Exception as exc:
        logger.warning("when= predicate failed for %s (%s: %s); asking anyway", function, type(exc).__name__, exc)
        return True


def check_mode(mode: str, announce_given: bool, needs_announce_modes: Collection[str] = ("async",)) -> None:
    """Refuse a mode that does not exist, and an async mode with nowhere to publish."""
    from agent_wait.errors import ConfigurationError

    if mode not in MODES:
        raise ConfigurationError([f"@wait mode must be one of {list(MODES)}; got {mode!r}"])
    if mode in needs_announce_modes and not announce_given:
        raise ConfigurationError(
            [
                "@wait(mode='async') publishes from inside the call, so it needs announce=[...]; "
                "without it nothing would see the question"
            ]
        )
    if mode == "interrupt" and announce_given:
        raise ConfigurationError(
            [
                "@wait(mode='interrupt') does not publish from inside the run (code before an interrupt re-runs on "
                "resume); drop announce= and publish after the run with publish_interrupts(), or use the router"
            ]
        )
