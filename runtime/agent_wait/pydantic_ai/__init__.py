"""The Pydantic AI binding: `@wait` on tools, publish what a run deferred, answer it. Needs the `pydantic-ai` extra.

On an agent whose output may be deferred calls:

    from pydantic_ai import Agent, DeferredToolRequests
    from agent_wait import WaitPolicy
    from agent_wait.pydantic_ai import wait

    agent = Agent(model, output_type=[str, DeferredToolRequests])

    @agent.tool
    @wait(WaitPolicy(timeout="P3D", default={"action": "reject"}))
    def issue_refund(order_id: str, amount: int) -> str: ...

A host (the framework has no checkpointer: the host keeps the message history under the thread id):

    result = agent.run_sync(prompt, message_history=load(thread_id))
    store(thread_id, result.all_messages())            # before acknowledging the message
    publish_interrupts(result, thread_id, announce=[...])
    ...
    result = agent.run_sync(
        None,
        message_history=load(thread_id),
        deferred_tool_results=deferred_tool_results({question_id: answer}),
    )

Or let the bundled router host it (`AGENT_WAIT_GRAPH` names the agent, or `hosted(agent, deps=...)`):
`PydanticAiAdapter` keeps each thread in a `HistoryStore` (`DynamoDbHistoryStore` in the checkpoint
table) and collects one answer per deferred call before it resumes.

Where Pydantic AI differs from LangGraph (pinned by tests in tests/pydantic_ai, described in
docs/frameworks.md): a denied call never runs, so a `decision` function sees approvals only; a
duplicate answer re-runs the tool unless the stored history already holds its return; a resume must
answer every deferred call of the run at once.
"""

from agent_wait.errors import MissingExtraError

try:
    import pydantic_ai  # noqa: F401
except ImportError as exc:
    raise MissingExtraError("agent_wait.pydantic_ai", "pydantic-ai-slim", "pydantic-ai") from exc

from agent_wait.asking.adapter import WaitPublisher
from agent_wait.pydantic_ai._adapter import MOVED_ON, HostedAgent, PydanticAiAdapter, hosted
from agent_wait.pydantic_ai._ask import MARKER, thread_id_from_deps, wait
from agent_wait.pydantic_ai._deferred import (
    deferred_requests_of,
    deferred_tool_results,
    denial_message,
    is_approval,
    publish_interrupts,
    question_from_call,
    questions_from_result,
)
from agent_wait.pydantic_ai._history import DynamoDbHistoryStore, HistoryStore, InMemoryHistoryStore, StoredHistory

__all__ = (
    "MARKER",
    "MOVED_ON",
    "DynamoDbHistoryStore",
    "HistoryStore",
    "HostedAgent",
    "InMemoryHistoryStore",
    "PydanticAiAdapter",
    "StoredHistory",
    "WaitPublisher",
    "deferred_requests_of",
    "deferred_tool_results",
    "denial_message",
    "hosted",
    "is_approval",
    "publish_interrupts",
    "question_from_call",
    "questions_from_result",
    "thread_id_from_deps",
    "wait",
)
