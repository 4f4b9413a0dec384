"""`ask` and `@wait`: park a LangGraph run on a question whose policy rides through the checkpoint."""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolArg
from langgraph.config import get_config
from langgraph.store.base import BaseStore
from langgraph.types import interrupt

from agent_wait.asking.flow import WaitBinding, wait_decorator
from agent_wait.asking.wait import MARKER, pack_question, plain
from agent_wait.common.canonical_json import to_jsonable
from agent_wait.contract.envelope import check_question_size
from agent_wait.errors import EnvelopeError
from agent_wait.langgraph._versions import node_of_checkpoint_ns
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("MARKER", "ask", "wait")

# Parameters LangGraph fills in by name on nodes, and that tools receive outside the model's schema.
_INJECTED_NAMES = frozenset({"config", "runtime", "store", "writer", "callbacks", "run_manager"})


def _injected_rule(fn: Callable[..., Any]) -> Callable[[inspect.Parameter], bool]:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to names and raw annotations
        hints = {}

    def is_injected(parameter: inspect.Parameter) -> bool:
        if parameter.name in _INJECTED_NAMES:
            return True
        annotation = hints.get(parameter.name, parameter.annotation)
        return _is_injected_annotation(annotation)

    return is_injected


def _is_injected_annotation(annotation: Any) -> bool:
    if typing.get_origin(annotation) is typing.Annotated:
        for meta in typing.get_args(annotation)[1:]:
            if isinstance(meta, InjectedToolArg) or (isinstance(meta, type) and issubclass(meta, InjectedToolArg)):
                return True
        return _is_injected_annotation(typing.get_args(annotation)[0])
    origin = typing.get_origin(annotation) or annotation
    if origin is RunnableConfig:
        return True
    if isinstance(origin, type):
        from langgraph.runtime import Runtime

        # A ToolRuntime annotation means langgraph.prebuilt is imported already; importing it here for a graph
        # that has none would add about 0.25 s (29 modules) to the router's cold start.
        tool_runtime = getattr(sys.modules.get("langgraph.prebuilt"), "ToolRuntime", None)
        return issubclass(origin, (BaseStore, Runtime) if tool_runtime is None else (BaseStore, Runtime, tool_runtime))
    return False


def ask(question: Any, policy: WaitPolicy | None = None) -> Any:
    """Park the run on `question` and return the answer when it arrives (a thin wrapper over `interrupt()`).

    The policy rides through the checkpoint and comes back out in the envelope. The question must be
    JSON and at most `MAX_QUESTION_BYTES`; this is checked before the run parks. A policy's
    `response_schema` is also given to LangGraph (`interrupt(..., response_schema=...)`), so a client
    reading the thread's interrupts sees it too; LangGraph does not check answers against a JSON Schema,
    the host does.

    Raises:
        EnvelopeError: the question is not JSON.
        QuestionTooLargeError: the question is too large; ask with a reference instead.
    """
    if policy is not None and not isinstance(policy, WaitPolicy):
        raise EnvelopeError(f"ask(policy=...) takes a WaitPolicy; got a {type(policy).__name__}")
    value = to_jsonable(plain(question), where="question")
    check_question_size(value)
    policy = policy or WaitPolicy()
    schema = dict(policy.response_schema) if policy.response_schema is not None else None
    return interrupt(_in_node(pack_question(value, policy, None)), response_schema=schema)


def _in_node(packed: dict[str, Any]) -> dict[str, Any]:
    """Record the node the question is asked in beside its policy, for its version stamp (docs/versions.md)."""
    try:
        namespace = get_config().get("configurable", {}).get("checkpoint_ns")
    except RuntimeError:  # not inside a run: interrupt() will say so itself
        return packed
    node = node_of_checkpoint_ns(namespace)
    if node is not None:
        packed[MARKER]["node"] = node
    return packed


class _LangGraphBinding(WaitBinding[None]):
    """`@wait` on LangGraph: park with `interrupt()`; the thread id is in the run's config."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._is_injected = _injected_rule(fn)

    def is_injected(self, parameter: inspect.Parameter) -> bool:
        return self._is_injected(parameter)

    def thread_id(self, context: None) -> str:
        try:
            thread_id = get_config().get("configurable", {}).get("thread_id")
        except RuntimeError:
            thread_id = None
        if not isinstance(thread_id, str) or not thread_id:
            raise EnvelopeError(
                "@wait(mode='async') needs the run's thread id: call it inside a graph invoked with "
                "{'configurable': {'thread_id': ...}}"
            )
        return thread_id

    def park(self, context: None, question: dict[str, Any]) -> Any:
        return interrupt(_in_node(question))


wait = wait_decorator(
    lambda fn, _decision: _LangGraphBinding(fn),
    module=__name__,
    doc="""Make a node or tool wait for an outside answer before its body runs.

The call parks on `{"function": name, "args": {...}}` (visible arguments only: values LangGraph
injects — config, runtime, store, injected state or tool-call id — are never published).
`{"action": "approve"}` runs the body; `{"action": "approve", "args": {...}}` runs it with edited
arguments; any other answer is returned in place of the body. A function with a `decision`
parameter always runs and receives the answer there, verbatim.
""",
    mode_doc="""`"interrupt"` parks the run (publish afterwards with `publish_interrupts` or the router);
        `"async"` publishes from the call and returns `{"status": "pending_approval", ...}` at once.""",
)
