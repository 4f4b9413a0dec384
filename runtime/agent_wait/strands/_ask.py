"""`@wait` for Strands tools: park the tool on `tool_context.interrupt` with the question and policy as its reason."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from strands.types.tools import ToolContext

from agent_wait.asking.flow import WaitBinding, wait_decorator
from agent_wait.asking.wait import MARKER
from agent_wait.asking.wait import type_hints as _type_hints
from agent_wait.errors import ConfigurationError, EnvelopeError

__all__ = ("INTERRUPT_NAME", "MARKER", "thread_id_from_context", "wait")

INTERRUPT_NAME = "agent_wait"
"""The name `@wait` gives its interrupt; Strands derives the interrupt id from the tool-use id and this name."""

CONTEXT_PARAM = "tool_context"
"""The parameter `@wait` adds when the function does not take the `ToolContext` itself (`@tool(context=True)`)."""

# Parameters Strands fills in by name (besides the ToolContext parameter, found by its annotation).
_INJECTED_NAMES = frozenset({"agent", "self", "cls"})


def _is_tool_context(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, ToolContext)


def thread_id_from_context(tool_context: ToolContext) -> str:
    """The thread id of a run, as `@wait(mode="async")` finds it.

    `invocation_state["thread_id"]` when the agent was invoked with one
    (`agent(prompt, invocation_state={"thread_id": ...})`), else the session id of the agent's
    session manager.

    Raises:
        EnvelopeError: neither is there.
    """
    thread_id = tool_context.invocation_state.get("thread_id")
    agent = tool_context.agent
    if thread_id is None and getattr(agent, "_session_manager", None) is not None:
        thread_id = getattr(agent, "session_id", None)
    if not isinstance(thread_id, str) or not thread_id:
        raise EnvelopeError(
            "@wait(mode='async') needs the run's thread id: invoke the agent with "
            "invocation_state={'thread_id': ...}, or give it a session manager"
        )
    return thread_id


class _Shape:
    """Where the ToolContext is in a tool function, and the signature Strands should see for its wrapper."""

    def __init__(self, fn: Callable[..., Any], decision: str) -> None:
        self.hints = _type_hints(fn)
        params = list(inspect.signature(fn).parameters.values())
        self.own_context: str | None = next(
            (p.name for p in params if _is_tool_context(self.hints.get(p.name, p.annotation))), None
        )
        shown = [p for p in params if p.name != decision]
        annotations = {name: value for name, value in getattr(fn, "__annotations__", {}).items() if name != decision}
        self.added_context: str | None = None
        if self.own_context is None:
            if any(p.name == CONTEXT_PARAM for p in params):
                raise ConfigurationError(
                    [
                        f"@wait adds a '{CONTEXT_PARAM}: ToolContext' parameter, but {fn.__name__}() already has a "
                        f"'{CONTEXT_PARAM}' parameter that is not a ToolContext; rename it"
                    ]
                )
            self.added_context = CONTEXT_PARAM
            context_param = inspect.Parameter(CONTEXT_PARAM, inspect.Parameter.KEYWORD_ONLY, annotation=ToolContext)
            at = next((i for i, p in enumerate(shown) if p.kind is inspect.Parameter.VAR_KEYWORD), len(shown))
            shown = [*shown[:at], context_param, *shown[at:]]
            annotations = {**annotations, CONTEXT_PARAM: ToolContext}
        self.signature = inspect.signature(fn).replace(parameters=shown)
        self.annotations = annotations

    def is_injected(self, parameter: inspect.Parameter) -> bool:
        return parameter.name in _INJECTED_NAMES or _is_tool_context(
            self.hints.get(parameter.name, parameter.annotation)
        )

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[ToolContext, dict[str, Any]]:
        """The tool context and the keyword arguments the function itself takes."""
        if self.added_context is not None:
            own = dict(kwargs)
            context = own.pop(self.added_context, None)
        else:
            own = kwargs
            context = kwargs.get(self.own_context or "")
            if context is None:
                context = next((arg for arg in args if isinstance(arg, ToolContext)), None)
        if not isinstance(context, ToolContext):
            raise ConfigurationError(
                [
                    "@wait on a Strands tool needs the ToolContext: decorate it with @tool(context=True) "
                    f"(the context parameter must be named '{self.own_context or CONTEXT_PARAM}')"
                ]
            )
        return context, own


class _StrandsBinding(WaitBinding[ToolContext]):
    """`@wait` on Strands: park on `tool_context.interrupt`; the answer comes back verbatim."""

    def __init__(self, fn: Callable[..., Any], decision: str) -> None:
        self.shape = _Shape(fn, decision)
        # Strands builds the tool spec from the signature and type hints: show it the function's own parameters
        # minus the decision (never filled by the model) plus the ToolContext the wrapper needs.
        self.shown, self.shown_annotations = self.shape.signature, self.shape.annotations

    def is_injected(self, parameter: inspect.Parameter) -> bool:
        return self.shape.is_injected(parameter)

    def split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[ToolContext, tuple[Any, ...], dict[str, Any]]:
        context, own = self.shape.split(args, kwargs)
        return context, args, own

    def thread_id(self, context: ToolContext) -> str:
        return thread_id_from_context(context)

    def park(self, context: ToolContext, question: dict[str, Any]) -> Any:
        return context.interrupt(INTERRUPT_NAME, reason=question)


wait = wait_decorator(
    _StrandsBinding,
    module=__name__,
    doc="""Make a Strands tool wait for an outside answer before its body runs.

Put it under `@tool(context=True)`: the wrapper takes the `ToolContext` as `tool_context` when
the function does not take it itself. The call parks on `{"function": name, "args": {...}}`: the
function's own parameters, never the `ToolContext`, an injected `agent`, or the decision
parameter. In interrupt mode the tool calls `tool_context.interrupt("agent_wait", reason=...)`
with the question and its policy, the run stops with `stop_reason == "interrupt"`, and the
question id is the interrupt's id. The host resumes with `interrupt_responses({id: answer})`; the
answer arrives verbatim, so `{"action": "approve"}` runs the body,
`{"action": "approve", "args": {...}}` runs it with edited arguments, any other answer is returned
in its place, and a `decision` parameter receives the answer whatever it is.

Example:
    >>> from strands import tool
    >>> @tool(context=True)
    ... @wait(WaitPolicy(timeout="P3D", default={"action": "reject"}))
    ... def issue_refund(order_id: str, amount: int) -> str:
    ...     return f"refunded {amount} on {order_id}"
""",
    mode_doc="""`"interrupt"` parks the run (publish afterwards with `publish_interrupts`);
        `"async"` publishes from the call and returns `{"status": "pending_approval", ...}` to the
        model at once, under the thread id `thread_id_from_context(tool_context)`.""",
)
