"""The `@wait` call flow and the publishing of parked questions, written once for every framework.

`agent_wait.asking.wait` says what an answer means; this module says in what order a `@wait` call does
things, the same on every framework:

1. find the framework's context among the call's arguments (`WaitBinding.split`);
2. run the `when=` predicate; when it says no, run the body as called;
3. build the question from the visible arguments;
4. in async mode, publish the envelope and return `{"status": "pending_approval", ...}`;
5. otherwise park on the packed question (`WaitBinding.park`) and apply the answer that comes back:
   run the body, run it with edited arguments, or return the answer in its place. A host resumes with the
   answer bound to the call it asked (`agent_wait.asking.wait.bind_answer`): when the body would run, a re-run whose
   arguments differ from that call raises `ArgumentsChangedError` and runs nothing.

A binding supplies only what its framework does differently, as one `WaitBinding` per decorated
function: which parameters the framework injects, where the context is, where the thread id is,
how to park, and what signature the framework should see. A new framework is one `WaitBinding` and
its tests (tests/core/toy_framework.py is a whole one).
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from agent_wait.asking.wait import WaitSignature, check_same_call, pack_question, unbind_answer
from agent_wait.common.ids import question_id_for
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.publish import Announcers, PublishReport, apublish, as_announcers, publish
from agent_wait.errors import ConfigurationError, EnvelopeError
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = (
    "Step",
    "WaitBinding",
    "WaitDecorator",
    "WaitFlow",
    "publish_questions",
    "require_thread_id",
    "wait_decorator",
)

C = TypeVar("C")
"""The framework's per-call context (a RunContext, a ToolContext; None where the framework keeps it elsewhere)."""

F = TypeVar("F", bound=Callable[..., Any])

logger = logging.getLogger("agent_wait.wait")

MODES = ("interrupt", "async")


class WaitBinding(ABC, Generic[C]):
    """What one framework does differently in a `@wait` call; one instance per decorated function.

    Only `thread_id` and `park` are required: a framework that injects nothing, passes no context and
    reads its schema from the plain signature needs nothing else.
    """

    def is_injected(self, parameter: inspect.Parameter) -> bool:
        """True for a parameter the framework fills in: never published, never editable."""
        return False

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[C, tuple[Any, ...], dict[str, Any]]:
        """The call's context, and the arguments the function itself is bound to and `when=` is called with.

        By default there is no context (None): the framework keeps the run's identity elsewhere.

        Raises:
            ConfigurationError: the framework did not pass the context the binding needs.
        """
        return typing.cast(C, None), args, kwargs

    @abstractmethod
    def thread_id(self, context: C) -> str:
        """The run's thread id, under which async mode publishes.

        Raises:
            EnvelopeError: the run has none.
        """

    @abstractmethod
    def park(self, context: C, question: dict[str, Any]) -> Any:
        """Park on `question` (what `pack_question` made) and return the answer, or raise the framework's pause."""

    shown: inspect.Signature | None = None
    """The signature the framework should see; None for the function's own without the decision parameter."""
    shown_annotations: dict[str, Any] | None = None
    """The annotations the framework should see; None to keep the function's."""

    def present(self, wrapper: Callable[..., Any], signature: WaitSignature) -> None:
        """Show the framework the wrapper's signature (`shown`, else the function's without the decision parameter).

        A framework that builds a tool's schema from the signature must never be shown the decision
        parameter: a model could fill it in itself.
        """
        wrapper.__signature__ = self.shown if self.shown is not None else signature.outward  # type: ignore[attr-defined]
        if self.shown_annotations is not None:
            wrapper.__annotations__ = self.shown_annotations


@dataclass(frozen=True)
class Step:
    """What a `@wait` call does next: publish `envelope` first, if any; then run the body or return `value`."""

    arguments: inspect.BoundArguments | None
    """The arguments to run the body with; None to return `value` in its place."""
    value: Any = None
    """What the call returns when the body does not run (an answer, an edit refusal, a pending result)."""
    envelope: WaitEnvelope | None = None
    """The envelope async mode publishes before returning."""


class WaitFlow(Generic[C]):
    """One decorated function's `@wait` flow (module docstring); `call` and `acall` run it sync or async.

    Args:
        fn: the decorated function.
        binding: its framework's hooks.
        policy: the question's policy.
        mode: `"interrupt"` or `"async"` (checked by the `wait` that `wait_decorator` makes).
        announcers: where async mode publishes.
        decision: the name of the parameter that receives the answer verbatim.
        when: the `when=` predicate, if any.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        binding: WaitBinding[C],
        *,
        policy: WaitPolicy,
        mode: str,
        announcers: Announcers,
        decision: str,
        when: Callable[..., Any] | None,
    ) -> None:
        self.fn = fn
        self.binding = binding
        self.signature = WaitSignature(fn, decision=decision, is_injected=binding.is_injected)
        self.source = self.signature.source_for(policy)
        self.policy, self.mode, self.announcers, self.when = policy, mode, announcers, when

    def decide(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Step:
        """Steps 1-5 up to running the body (module docstring)."""
        context, own_args, own_kwargs = self.binding.split(args, kwargs)
        bound = self.signature.bind(own_args, own_kwargs)
        if not should_ask(self.when, self.signature.function, own_args, own_kwargs):
            return Step(bound)
        question = self.signature.question(bound)
        if self.mode == "async":
            envelope, pending = pending_call(question, self.policy, self.binding.thread_id(context), self.source)
            return Step(None, pending, envelope)
        answer, asked = unbind_answer(self.binding.park(context, pack_question(question, self.policy, self.source)))
        plan = self.signature.plan(bound, answer, allow_edits=self.policy.allow_edits)
        if plan.run and asked is not None:
            # A host's resume carries the call that was asked: a re-run that computed other arguments runs nothing.
            check_same_call(asked, question)
        return Step(plan.arguments if plan.run else None, plan.value)

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the flow for a sync function."""
        step = self.decide(args, kwargs)
        if step.envelope is not None:
            publish(step.envelope, self.announcers)
        return step.value if step.arguments is None else self.fn(*step.arguments.args, **step.arguments.kwargs)

    async def acall(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the flow for an async function."""
        step = self.decide(args, kwargs)
        if step.envelope is not None:
            await apublish(step.envelope, self.announcers)
        return step.value if step.arguments is None else await self.fn(*step.arguments.args, **step.arguments.kwargs)


class WaitDecorator(Protocol):
    """The signature of every binding's public `wait`."""

    def __call__(
        self,
        policy: WaitPolicy | None = None,
        *,
        mode: str = "interrupt",
        announce: Announcers = None,
        decision: str = "decision",
        when: Callable[..., Any] | None = None,
    ) -> Callable[[F], F]: ...


_WAIT_ARGS = """
Args:
    policy: deadline, default, allowed actions and tags; `WaitPolicy()` by default.
    mode: {mode}
    announce: where `mode="async"` publishes; refused in interrupt mode.
    decision: the name of the parameter that receives the answer verbatim.
    when: a predicate called with the arguments the function itself takes; ask only when it is
        true. A predicate that raises asks anyway.

Raises:
    ConfigurationError: an unknown mode, async mode without announcers, or announcers in interrupt mode.
    EnvelopeError: `policy` is not a `WaitPolicy`.
"""


def wait_decorator(
    binding_for: Callable[[Callable[..., Any], str], WaitBinding[Any]], *, module: str, doc: str, mode_doc: str
) -> WaitDecorator:
    """A binding's public `wait`, whose hooks for a decorated function are `binding_for(fn, decision)`.

    Args:
        binding_for: makes the `WaitBinding` of one decorated function and its decision parameter's name.
        module: the binding module the `wait` is public in (its `__module__`).
        doc: what the `wait` does on that framework, with an example; the arguments' docs are added.
        mode_doc: how the `mode` argument works on that framework.
    """

    def wait(
        policy: WaitPolicy | None = None,
        *,
        mode: str = "interrupt",
        announce: Announcers = None,
        decision: str = "decision",
        when: Callable[..., Any] | None = None,
    ) -> Callable[[F], F]:
        policy = policy if policy is not None else WaitPolicy()
        if not isinstance(policy, WaitPolicy):
            raise EnvelopeError(f"@wait takes a WaitPolicy as its first argument; got a {type(policy).__name__}")
        announcers = as_announcers(announce)
        check_mode(mode, bool(announcers))

        def decorate(fn: F) -> F:
            binding = binding_for(fn, decision)
            flow = WaitFlow(fn, binding, policy=policy, mode=mode, announcers=announcers, decision=decision, when=when)
            if inspect.iscoroutinefunction(fn):

                async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                    return await flow.acall(args, kwargs)

                wrapper: Callable[..., Any] = functools.wraps(fn)(async_wrapper)
            else:

                def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                    return flow.call(args, kwargs)

                wrapper = functools.wraps(fn)(sync_wrapper)
            binding.present(wrapper, flow.signature)
            return typing.cast(F, wrapper)

        return decorate

    wait.__module__, wait.__qualname__ = module, "wait"
    wait.__doc__ = doc.rstrip() + "\n" + _WAIT_ARGS.format(mode=mode_doc)
    return wait


def pending_call(
    question: dict[str, Any], policy: WaitPolicy, thread_id: str, source: Mapping[str, Any] | None = None
) -> tuple[WaitEnvelope, dict[str, Any]]:
    """An async-mode `@wait` call: the envelope to publish and what the call returns in place of its body.

    The question id is `question_id_for(thread_id, function, args)`, so a repeated call publishes the
    same id. The call returns `{"status": "pending_approval", "question_id": ..., "function": ...}`.
    """
    question_id = question_id_for(thread_id, question["function"], question["args"])
    source = dict(source) if source is not None else {"function": question["function"]}
    envelope = WaitEnvelope.create(Question(thread_id, question_id, question, policy, source))
    result = {"status": "pending_approval", "question_id": question_id, "function": question["function"]}
    return envelope, result


def should_ask(
    when: Callable[..., Any] | None, function: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> bool:
    """Run the `when=` predicate with the call's arguments; a failing predicate asks anyway (safe side)."""
    if when is None:
        return True
    try:
        return bool(when(*args, **kwargs))
    except Exception as exc:
        # The error's text may quote the call's arguments (personal data): its type only above DEBUG.
        logger.warning("when= predicate failed for %s (%s); asking anyway", function, type(exc).__name__)
        logger.debug("when= predicate failure detail for %s: %s", function, exc)
        return True


def check_mode(mode: str, announce_given: bool, needs_announce_modes: Collection[str] = ("async",)) -> None:
    """Refuse a mode that does not exist, and an async mode with nowhere to publish."""
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


def require_thread_id(thread_id: Any) -> str:
    """`thread_id` when it is a non-empty string.

    Raises:
        EnvelopeError: it is not.
    """
    if not isinstance(thread_id, str) or not thread_id:
        raise EnvelopeError(f"thread_id must be a non-empty string; got {thread_id!r}")
    return thread_id


def publish_questions(
    questions: Iterable[Question], announce: Announcers, *, reply_to: Any = None, now: datetime | None = None
) -> list[PublishReport]:
    """Publish one `wait.created` envelope per question, in order; what every binding's `publish_interrupts` does.

    Announcer failures are in the reports, never raised.
    """
    return [publish(WaitEnvelope.create(q, reply_to=reply_to, now=now), announce) for q in questions]
