"""The Strands binding: `@wait` on tools, publish what a run is parked on, answer it. Needs the `strands` extra.

On a tool that takes the ToolContext:

    from strands import Agent, tool
    from agent_wait import WaitPolicy
    from agent_wait.strands import wait

    @tool(context=True)
    @wait(WaitPolicy(timeout="P3D", default={"action": "reject"}))
    def issue_refund(order_id: str, amount: int) -> str: ...

A host (the session manager is the persistence):

    agent = Agent(model, tools=[issue_refund], session_manager=FileSessionManager(session_id=thread_id))
    result = agent(prompt)
    publish_interrupts(result, thread_id, announce=[...])
    ...
    result = agent(interrupt_responses({question_id: answer}))

Or let the bundled router host it: `AGENT_WAIT_GRAPH` names `hosted(build_agent)`, a factory that
takes a session manager; `StrandsAdapter` builds a fresh agent per message over the thread's session
(`DynamoDbSessionRepository` in the checkpoint table).

Where Strands differs from LangGraph (pinned by tests in tests/strands, described in
docs/frameworks.md): a duplicate answer raises ValueError, an unknown id raises KeyError, a plain
prompt to a parked agent raises TypeError (nothing runs in any of them), and a null response parks
the tool again.
"""

from agent_wait.errors import MissingExtraError

try:
    import strands  # noqa: F401
except ImportError as exc:
    raise MissingExtraError("agent_wait.strands", "strands-agents", "strands") from exc

from agent_wait.asking.adapter import WaitPublisher
from agent_wait.strands._adapter import HostedAgentFactory, StrandsAdapter, hosted
from agent_wait.strands._ask import INTERRUPT_NAME, MARKER, thread_id_from_context, wait
from agent_wait.strands._interrupts import (
    interrupt_responses,
    interrupts_of,
    publish_interrupts,
    question_from_interrupt,
    questions_from_result,
)
from agent_wait.strands._sessions import DynamoDbSessionRepository, InMemorySessionRepository, ItemSessionRepository

__all__ = (
    "INTERRUPT_NAME",
    "MARKER",
    "DynamoDbSessionRepository",
    "HostedAgentFactory",
    "InMemorySessionRepository",
    "ItemSessionRepository",
    "StrandsAdapter",
    "WaitPublisher",
    "hosted",
    "interrupt_responses",
    "interrupts_of",
    "publish_interrupts",
    "question_from_interrupt",
    "questions_from_result",
    "thread_id_from_context",
    "wait",
)
