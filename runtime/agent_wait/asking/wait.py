"""What `@wait` means, independent of any framework: which arguments are published, how an answer applies.

Bindings (`agent_wait.langgraph`, `agent_wait.pydantic_ai`, `agent_wait.strands`) decide how to park
and where the answer comes from; `agent_wait.asking.flow` runs a call in the same order on every framework;
this module decides what is asked and what an answer does, so the rules are the same everywhere:

- the question is `{"function": name, "args": {...}}` with only the function's own visible
  parameters; values the framework injects (config, runtime, store, tool-call ids, ...) and the
  decision parameter are never published and never hashed;
- `{"action": "approve"}` runs the body; `{"action": "approve", "args": {...}}` runs it with edited
  arguments when the policy allows edits (`allow_edits=True`, off by default), but only visible
  parameters may be edited, each with a value that fits its annotation (`agent_wait.asking.edits`); anything
  else is an error value returned in place of the body; any other answer is returned in place of the body;
- a function with a decision parameter always runs and receives the answer verbatim;
- an answer a host resumes with is bound to the call it asked (`bind_answer`): the body runs only with the
  approved arguments (as asked, or as edited), never with others a re-run computed (`ArgumentsChangedError`).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.asking.edits import EditValidator, editable_args_schema
from agent_wait.common.canonical_json import canonical_json, to_jsonable
from agent_wait.common.times import parse_rfc3339, utc_now
from agent_wait.contract.bound_call import APPROVE, BOUND_CALL, approved_args, bind_answer, unbind_answer
from agent_wait.contract.envelope import Question, check_question_size
from agent_wait.dialects import recognize
from agent_wait.errors import ArgumentsChangedError
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = (
    "APPROVE",
    "BOUND_CALL",
    "EXPIRED_WITHOUT_DEFAULT",
    "MARKER",
    "AnswerPlan",
    "WaitSignature",
    "approved_args",
    "bind_answer",
    "check_same_call",
    "edit_refused",
    "is_packed",
    "pack_question",
    "plain",
    "type_hints",
    "unbind_answer",
    "unpack_question",
)

logger = logging.getLogger("agent_wait.wait")

EXPIRED_WITHOUT_DEFAULT: dict[str, Any] = {"action": "expired", "answer": None}
"""What a hosted Pydantic AI or Strands agent receives in place of a null answer.

A null answer reaches an adapter only when a question whose policy has no default expires (the
router's own check refuses a person's null). Strands takes a null response as "no answer yet" and
parks the tool again under the same id, forever; Pydantic AI would show the model the text `null`.
Both adapters send this instead: not an approval, so a `@wait` body does not run, and it says why.
"""

MARKER = "__agent_wait__"
"""Key under which `ask` and `@wait` carry the policy inside the value a framework parks on.

The same key on every framework: LangGraph's interrupt value, Pydantic AI's `ApprovalRequired.metadata`,
Strands' interrupt reason. The value travels through the framework's own persistence (a checkpoint,
the run's deferred requests, a session) and comes back out in the envelope.
"""


def check_same_call(asked: Mapping[str, Any], question: Mapping[str, Any]) -> None:
    """Check that the re-run's `question` (`{"function", "args"}`) is the call `asked` that was approved.

    Raises:
        ArgumentsChangedError: the re-run computed another function or other arguments.
    """
    function = str(question.get("function"))
    asked_args, rerun_args = asked.get("args"), question.get("args")
    if asked.get("function") != function or not isinstance(asked_args, Mapping) or not isinstance(rerun_args, Mapping):
        raise ArgumentsChangedError(function, [])
    # Compared as canonical JSON: the asked arguments come back from a store (a float 0.1 stays 0.1, 1 stays 1).
    changed = sorted(
        str(name)
        for name in {*asked_args, *rerun_args}
        if name not in asked_args
        or name not in rerun_args
        or canonical_json(asked_args[name]) != canonical_json(rerun_args[name])
    )
    if changed:
        raise ArgumentsChangedError(function, changed)


def pack_question(
    question: Any, policy: WaitPolicy, source: Mapping[str, Any] | None, *, asked_at: datetime | None = None
) -> dict[str, Any]:
    """The value a binding parks on: the question plus its policy, source and asked-at time.

    `{"__agent_wait__": {"v": 1, "policy": {...}, "source": {...} | None, "asked_at": "..."}, "question": ...}`

    Args:
        question: what is asked, already JSON (`{"function", "args"}` from `@wait`).
        policy: the question's policy.
        source: `{"function": name}` for a `@wait` call; None for `ask`.
        asked_at: when it was first asked; now (`utc_now()`, so a host's clock applies) when omitted.
    """
    return {
        MARKER: {
            "v": 1,
            "policy": policy.to_dict(),
            "source": dict(source) if source else None,
            "asked_at": (asked_at or utc_now()).isoformat(),
        },
        "question": question,
    }


def is_packed(value: Any) -> bool:
    """True for a value `pack_question` made (it carries the `MARKER` object)."""
    return isinstance(value, Mapping) and isinstance(value.get(MARKER), Mapping)


def unpack_question(
    value: Any, thread_id: str, question_id: str, *, response_schema: Mapping[str, Any] | None = None
) -> Question:
    """The `Question` a parked value stands for: a packed one carries its policy; any other value is asked as is.

    A value that is not packed (a bare `interrupt(value)`, a bare Strands interrupt reason) becomes
    the question itself, as plain JSON, under the default policy and with no source, unless it is
    written in a dialect (`agent_wait.dialects`): then its allowed actions and source come from it. A
    `response_schema` the framework publishes for the answer (LangGraph's `Interrupt.response_schema`)
    rides in the policy of a value that is not packed; a packed one carries its own policy's.

    Raises:
        EnvelopeError: the question is not JSON, or the ids are empty.
        QuestionTooLargeError: the question is over `MAX_QUESTION_BYTES`.
    """
    if not is_packed(value):
        dialect = recognize(value, response_schema)
        if dialect is None:
            return Question(thread_id, question_id, plain(value), WaitPolicy())
        policy = WaitPolicy(
            allowed_actions=dialect.allowed_actions,
            allow_edits=dialect.allow_edits,
            response_schema=dialect.response_schema,
        )
        return Question(thread_id, question_id, plain(value), policy, source=dialect.source)
    meta = value[MARKER]
    asked_at: datetime | None = parse_rfc3339(meta["asked_at"]) if meta.get("asked_at") else None
    return Question(
        thread_id,
        question_id,
        value.get("question"),
        WaitPolicy.from_dict(meta.get("policy") or {}),
        source=meta.get("source"),
        asked_at=asked_at,
    )


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


def edit_refused(
    function: str, refused: list[str], editable: list[str], reason: str, *, message: str | None = None
) -> dict[str, Any]:
    """The error value returned in place of the body when an answer edits what it may not (`message` in place of
    the one made from `reason` and `editable`)."""
    return {
        "status": "error",
        "error": "edit_refused",
        "function": function,
        "refused": refused,
        "editable": editable,
        "message": message or f"{reason}; the answer may edit only {editable} of {function}(). Nothing was run.",
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
        self._hints = type_hints(fn)
        self._edits = EditValidator(self._hints)

    @property
    def source(self) -> dict[str, Any]:
        """The question's `source`: `{"function": name}`, plus `"editable"` when not every published parameter is.

        The host refuses an edit naming anything else before the decision (`agent_wait.dialects`), so a
        positional-only or variadic parameter, published but not editable, cannot burn the question.
        """
        source: dict[str, Any] = {"function": self.function}
        if self.editable != self.visible:
            source["editable"] = list(self.editable)
        return source

    def source_for(self, policy: WaitPolicy) -> dict[str, Any]:
        """`source`, plus `"args_schema"` when the policy allows edits: the JSON Schema an edit must fit, which
        the host checks before the decision (`agent_wait.asking.edits.editable_args_schema`)."""
        source = self.source
        if policy.allow_edits:
            schema = editable_args_schema(self.function, self._hints, self.editable)
            if schema is not None:
                source["args_schema"] = schema
        return source

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

    def plan(self, bound: inspect.BoundArguments, answer: Any, *, allow_edits: bool = False) -> AnswerPlan:
        """Apply the `@wait` answer rules (module docstring) to `answer`; edits only when `allow_edits`."""
        if self.decision is not None:
            bound.arguments[self.decision] = answer
            return AnswerPlan(run=True, arguments=bound)
        if not isinstance(answer, Mapping) or answer.get("action") != APPROVE:
            return AnswerPlan(run=False, value=answer)
        edits = answer.get("args")
        if edits is None or (isinstance(edits, Mapping) and not edits):
            return AnswerPlan(run=True, arguments=bound)
        if not allow_edits:  # the host refuses these before the decision; an answer resumed in-process too
            logger.warning("edit refused: function=%s allows no edits", self.function)
            message = (
                f"this question's policy does not allow edited arguments of {self.function}() (the function's "
                "author opts in with WaitPolicy(allow_edits=True)). Nothing was run."
            )
            refusal = edit_refused(self.function, sorted(map(str, edits)), [], "", message=message)
            return AnswerPlan(run=False, value=refusal)
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
        validated, misfits = self._edits.validate(edits)
        if misfits:
            logger.warning("edit refused: function=%s does not fit=%s", self.function, misfits)
            reason = f"the edited value(s) of {misfits} do not fit the parameters' annotations"
            return AnswerPlan(run=False, value=edit_refused(self.function, misfits, list(self.editable), reason))
        for name, value in validated.items():
            bound.arguments[name] = value
        return AnswerPlan(run=True, arguments=bound)


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """`fn`'s resolved type hints (with `Annotated` extras); its raw annotations when they cannot be resolved."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        return dict(getattr(fn, "__annotations__", {}))
