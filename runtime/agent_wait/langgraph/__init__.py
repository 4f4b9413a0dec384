"""The LangGraph binding: ask questions from nodes and tools, publish what a run is waiting on.

Needs the `langgraph` extra. In a graph:

    from agent_wait import WaitPolicy
    from agent_wait.langgraph import ask, wait

    FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"})

    @wait(FINANCE)
    def issue_refund(order_id: str, amount: int) -> str: ...

After a run (or let the bundled router do it):

    result = graph.invoke(value, {"configurable": {"thread_id": thread_id}})
    publish_interrupts(result, thread_id, announce=[...])

Facts about LangGraph 1.2 this binding relies on (pinned by tests in tests/langgraph): a resume
re-runs the interrupted node from its top, so code before `interrupt()` must be free of side effects
and publishing happens after `invoke` returns, never from inside a node.
"""

from agent_wait.errors import MissingExtraError

try:
    import langgraph.types  # noqa: F401
except ImportError as exc:
    raise MissingExtraError("agent_wait.langgraph", "langgraph", "langgraph") from exc

from agent_wait.asking.adapter import WaitPublisher
from agent_wait.langgraph._adapter import LangGraphAdapter
from agent_wait.langgraph._ask import MARKER, ask, wait
from agent_wait.langgraph._interrupts import (
    is_answer,
    publish_interrupts,
    question_from_interrupt,
    question_id_of,
    questions_from_result,
    resume_command,
)
from agent_wait.langgraph._versions import VersionedGraph, versioned

__all__ = (
    "MARKER",
    "LangGraphAdapter",
    "VersionedGraph",
    "WaitPublisher",
    "ask",
    "is_answer",
    "publish_interrupts",
    "question_from_interrupt",
    "question_id_of",
    "questions_from_result",
    "resume_command",
    "versioned",
    "wait",
)
