"""`@wait` for Pydantic AI tools: park the run as a deferred approval whose metadata carries the question."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic_ai.exceptions import ApprovalRequired

from agent_wait._wait import APPROVE, MARKER, WaitSignature, check_mode, pack_question, pending_call, should_ask
from agent_wait._wait import type_hints as _type_hints
from agent_wait.errors import ConfigurationError, EnvelopeError
from agent_wait.policy import WaitPolicy
from agent_wait.publish import Announcers, apublish, as_announcers, publish
from pydantic_ai import RunContext

__all__ = ("MARKER", "thread_id_from_deps", "wait")

F = TypeVar("F", bound=Callable[..., Any])

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


def _finish(wrapper: Callable[..., Any], shape: _Shape) -> None:
    # Pydantic AI builds the tool schema from the signature and type hints: show it the function's own
    # parameters minus the decision (never filled by the model) plus the RunContext the wrapper needs.
    wrapper.__signature__ = shape.signature  # type: ignore[attr-defined]
    wrapper.__annotations__ = shape.annotations


def wait(
    policy: WaitPolicy | None = None,
    *,
    mode: str = "interrupt",
    announce: Announcers = None,
    decision: str = "decision",
    when: Callable[..., Any] | None = None,
) -> Callable[[F], F]:
    """Make a Pydantic AI tool wait for an outside answer before its body runs.

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

    Args:
        policy: deadline, default, allowed actions and tags; `WaitPolicy()` by default.
        mode: `"interrupt"` defers the call (publish afterwards with `publish_interrupts`);
            `"async"` publishes from the call and returns `{"status": "pending_approval", ...}` to the
            model at once, under the thread id `thread_id_from_deps(ctx.deps)`.
        announce: where `mode="async"` publishes; refused in interrupt mode.
        decision: the name of the parameter that receives the answer verbatim.
        when: a predicate called with the arguments the function itself takes; ask only when it is
            true. A predicate that raises asks anyway.

    Raises:
        ConfigurationError: an unknown mode, async mode without announcers, or announcers in interrupt mode.
        EnvelopeError: `policy` is not a `WaitPolicy`.
    """
    policy = policy if policy is not None else WaitPolicy()
    if not isinstance(policy, WaitPolicy):
        raise EnvelopeError(f"@wait takes a WaitPolicy as its first argument; got a {type(policy).__name__}")
    announcers = as_announcers(announce)
    check_mode(mode, bool(announcers))

    def decorate(fn: F) -> F:
        shape = _Shape(fn, decision)
        sig = WaitSignature(
            fn, decision=decision, is_injected=lambda p: _is_run_context(shape.hints.get(p.name, p.annotation))
        )
        source = sig.source

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                ctx, own_args = shape.split(args, kwargs)
                bound = sig.bind(own_args, kwargs)
                if not should_ask(when, sig.function, own_args, kwargs):
                    return await fn(*bound.args, **bound.kwargs)
                question = sig.question(bound)
                if mode == "async":
                    envelope, pending = pending_call(question, policy, thread_id_from_deps(ctx.deps))
                    await apublish(envelope, announcers)
                    return pending
                if not ctx.tool_call_approved:
                    raise ApprovalRequired(metadata=pack_question(question, policy, source))
                plan = sig.plan(bound, _answer(ctx))
                if not plan.run or plan.arguments is None:
                    return plan.value
                return await fn(*plan.arguments.args, **plan.arguments.kwargs)

            _finish(async_wrapper, shape)
            return typing.cast(F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ctx, own_args = shape.split(args, kwargs)
            bound = sig.bind(own_args, kwargs)
            if not should_ask(when, sig.function, own_args, kwargs):
                return fn(*bound.args, **bound.kwargs)
            question = sig.question(bound)
            if mode == "async":
                envelope, pending = pending_call(question, policy, thread_id_from_deps(ctx.deps))
                publish(envelope, announcers)
                return pending
            if not ctx.tool_call_approved:
                raise ApprovalRequired(metadata=pack_question(question, policy, source))
            plan = sig.plan(bound, _answer(ctx))
            if not plan.run or plan.arguments is None:
                return plan.value
            return fn(*plan.arguments.args, **plan.arguments.kwargs)

        _finish(wrapper, shape)
        return typing.cast(F, wrapper)

    return decorate
