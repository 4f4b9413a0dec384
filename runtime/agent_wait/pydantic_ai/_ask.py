"""`@wait` for Pydantic AI tools: park the run as a deferred approval whose metadata carries the question."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_ai.exceptions import ApprovalRequired

from agent_wait.asking.flow import WaitBinding, wait_decorator
from agent_wait.asking.wait import APPROVE, MARKER
from agent_wait.asking.wait import type_hints as _type_hints
from agent_wait.errors import ConfigurationError, EnvelopeError
from pydantic_ai import RunContext

__all__ = ("MARKER", "thread_id_from_deps", "wait")

_CTX_NAMES = ("ctx", "agent_wait_ctx")


def _is_run_context(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, RunContext)


def thread_id_from_deps(deps: Any) -> str:
    """The thread id of a run, read from its dependencies: `deps.thread_id`, else `deps["thread_id"]`.

    This is where `@wait(mode="async")` finds the thread it publishes under.

    Raises:
        EnvelopeError: the dependencies carry no non-empty string thread id.
    """
    thread_id = getattr(deps, "thread_id", None)
    if thread_id is None and isinstance(deps, Mapping):
        thread_id = deps.get("thread_id")
    if not isinstance(thread_id, str) or not thread_id:
        raise EnvelopeError(
            "@wait(mode='async') needs the run's thread id: run the agent with deps that have a "
            f"'thread_id' attribute or key (a dataclass field or a dict entry); got deps of type {type(deps).__name__}"
        )
    return thread_id


def _answer(ctx: RunContext[Any]) -> Any:
    # The host puts the answer in DeferredToolResults.metadata[tool_call_id]. An approval given without
    # metadata (approvals={id: True}) is an approval all the same.
    metadata = ctx.tool_call_metadata
    return {"action": APPROVE} if metadata is None else metadata


class _Shape:
    """Where the RunContext is in a tool function, and the signature Pydantic AI should see for its wrapper."""

    def __init__(self, fn: Callable[..., Any], decision: str) -> None:
        hints = _type_hints(fn)
        params = list(inspect.signature(fn).parameters.values())
        first = params[0] if params else None
        self.own_ctx: str | None = first.name if first is not None and _is_run_context(hints.get(first.name)) else None
        shown = [p for p in params if p.name != decision]
        annotations = {name: value for name, value in getattr(fn, "__annotations__", {}).items() if name != decision}
        self.added_ctx: str | None = None
        if self.own_ctx is None:
            taken = {p.name for p in params}
            self.added_ctx = next(name for name in _CTX_NAMES if name not in taken)
            ctx_param = inspect.Parameter(self.added_ctx, inspect.Parameter.POSITIONAL_ONLY, annotation=RunContext[Any])
            shown = [ctx_param, *shown]
            annotations = {self.added_ctx: RunContext[Any], **annotations}
        self.signature = inspect.signature(fn).replace(parameters=shown)
        self.annotations = annotations
        self.hints = hints

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[RunContext[Any], tuple[Any, ...]]:
        """The run context and the positional arguments the function itself takes."""
        if self.added_ctx is not None:
            if not args or not isinstance(args[0], RunContext):
                raise ConfigurationError(
                    [
                        "@wait on a Pydantic AI tool needs the RunContext: register it with agent.tool "
                        "(or Tool(...), FunctionToolset), not agent.tool_plain"
                    ]
                )
            return args[0], args[1:]
        ctx = args[0] if args else kwargs.get(self.own_ctx or "")
        if not isinstance(ctx, RunContext):
            raise ConfigurationError([f"@wait expected a RunContext as the first argument; got a {type(ctx).__name__}"])
        return ctx, args


class _PydanticAiBinding(WaitBinding[RunContext[Any]]):
    """`@wait` on Pydantic AI: park by raising `ApprovalRequired`; the answer is the approval's metadata."""

    def __init__(self, fn: Callable[..., Any], decision: str) -> None:
        self.shape = _Shape(fn, decision)
        # Pydantic AI builds the tool schema from the signature and type hints: show it the function's own parameters
        # minus the decision (never filled by the model) plus the RunContext the wrapper needs.
        self.shown, self.shown_annotations = self.shape.signature, self.shape.annotations

    def is_injected(self, parameter: inspect.Parameter) -> bool:
        return _is_run_context(self.shape.hints.get(parameter.name, parameter.annotation))

    def split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[RunContext[Any], tuple[Any, ...], dict[str, Any]]:
        ctx, own_args = self.shape.split(args, kwargs)
        return ctx, own_args, kwargs

    def thread_id(self, context: RunContext[Any]) -> str:
        return thread_id_from_deps(context.deps)

    def park(self, context: RunContext[Any], question: dict[str, Any]) -> Any:
        if not context.tool_call_approved:
            raise ApprovalRequired(metadata=question)
        return _answer(context)


wait = wait_decorator(
    _PydanticAiBinding,
    module=__name__,
    doc="""Make a Pydantic AI tool wait for an outside answer before its body runs.

Decorate the function, then register it with `agent.tool` (the wrapper takes the `RunContext` it
needs even when the function does not; `agent.tool_plain` refuses it). The call parks on
`{"function": name, "args": {...}}`: the function's own parameters, never the `RunContext` and
never the decision parameter. In interrupt mode the tool raises `ApprovalRequired` carrying the
question and its policy, the run ends with `DeferredToolRequests` output (give the agent
`output_type=[str, DeferredToolRequests]`), and the question id is the `tool_call_id`. The host
resumes with `deferred_tool_results({tool_call_id: answer})`: an approval carries the answer in
`DeferredToolResults.metadata`, so `{"action": "approve"}` runs the body,
`{"action": "approve", "args": {...}}` runs it with edited arguments, and a `decision` parameter
receives the answer verbatim. Any other answer is a `ToolDenied`: the body never runs and the
model receives the answer as the denial message (so a decision function sees approvals only).

Example:
    >>> from pydantic_ai import Agent, DeferredToolRequests
    >>> agent = Agent("test", output_type=[str, DeferredToolRequests])
    >>> @agent.tool
    ... @wait(WaitPolicy(timeout="P3D", default={"action": "reject"}))
    ... def issue_refund(order_id: str, amount: int) -> str:
    ...     return f"refunded {amount} on {order_id}"
""",
    mode_doc="""`"interrupt"` defers the call (publish afterwards with `publish_interrupts`);
        `"async"` publishes from the call and returns `{"status": "pending_approval", ...}` to the
        model at once, under the thread id `thread_id_from_deps(ctx.deps)`.""",
)
