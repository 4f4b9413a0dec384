"""The narrow interface a host needs from an agent framework, and `WaitPublisher`, a host built on it.

A framework adapter runs the agent on a thread and says which questions it is parked on afterwards.
The bundled router (`agent_wait.host`) and `WaitPublisher` (for long-running servers and queue workers
that are not the router) are both written against `AgentAdapter` only, so LangGraph, Pydantic AI and
Strands agents are hosted the same way. Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from agent_wait.asking.wait import bind_answer
from agent_wait.contract.envelope import Question, Transition, WaitEnvelope
from agent_wait.contract.messages import answer_parts
from agent_wait.contract.publish import Announcers, PublishReport, as_announcers, publish
from agent_wait.dialects import translate

__all__ = ("AgentAdapter", "RunOutcome", "WaitPublisher", "resume_value_for")


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What one run of the agent returned, and the questions it is parked on afterwards."""

    result: Any
    """The framework's own result (a LangGraph state dict, a Pydantic AI run result, ...)."""
    questions: tuple[Question, ...] = field(default_factory=tuple)
    """Every question the thread is waiting on after the run; empty when it finished."""


@runtime_checkable
class AgentAdapter(Protocol):
    """How a host drives one agent framework. Implementations: `agent_wait.langgraph.LangGraphAdapter`, ..."""

    framework: str
    """A short name for logs and metrics (`langgraph`, `pydantic_ai`, `strands`)."""

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        """Run a new turn on `thread_id` with `value` as its input."""
        ...

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        """Resume the thread with `answer` for `question_id` (the framework's own resume)."""
        ...

    def pending(self, thread_id: str) -> list[Question]:
        """The questions the thread is really parked on now (from the framework's persisted state)."""
        ...

    def progress(self, thread_id: str) -> str | None:
        """An opaque marker that changes whenever the thread's persisted state advances; None for no state."""
        ...

    def unfinished(self, thread_id: str) -> bool:
        """True when a run stopped between steps (a crash) and `continue_run` would finish it."""
        ...

    def continue_run(self, thread_id: str) -> RunOutcome:
        """Finish a run that stopped between steps, without re-running the steps that completed."""
        ...


def resume_value_for(adapter: AgentAdapter, question: Any, source: Any, value: Any) -> Any:
    """The value to resume `adapter`'s thread with: `value` bound to the `@wait` call asked (`bind_answer`) when
    the framework runs the waiting code again on resume (an adapter's `reruns_on_resume = True`: LangGraph re-runs
    the interrupted node); unchanged for frameworks that replay the stored call (Pydantic AI, Strands)."""
    return bind_answer(question, source, value) if getattr(adapter, "reruns_on_resume", False) else value


class WaitPublisher:
    """A host for servers and workers that are not the bundled router: run, then publish what changed.

    After every run it announces `wait.created` for each question the thread newly waits on and
    `wait.resumed` for each question the thread has moved past. It keeps no state of its own: the
    framework's checkpoint is the only state, so a redelivered start should be checked with
    `pending()` and answered with `republish()` rather than run again.

    Example:
        >>> from agent_wait import InMemoryAnnounce
        >>> from agent_wait.langgraph import LangGraphAdapter, WaitPublisher  # doctest: +SKIP
        >>> agent = WaitPublisher(LangGraphAdapter(graph), announce=[InMemoryAnnounce()])  # doctest: +SKIP
        >>> agent.invoke({"order_id": "o-1", "amount": 900}, "order-o-1")  # doctest: +SKIP

    Args:
        adapter: the framework adapter.
        announce: where envelopes go.
        reply_to: published on every envelope as the place answers go (e.g. the entry queue URL).
    """

    def __init__(self, adapter: AgentAdapter, *, announce: Announcers, reply_to: Any = None) -> None:
        self.adapter = adapter
        self.announcers = as_announcers(announce)
        self.reply_to = reply_to

    def invoke(self, value: Any, thread_id: str, *, now: datetime | None = None) -> Any:
        """Run the agent with `value` (an input, or an answer message with `question_id`) and publish.

        Our `{"action": ...}` answer to a question in a dialect (LangChain's `HumanInTheLoopMiddleware`)
        is translated into the dialect's own shape, as the router does; unlike the router, this host
        does not check answers first.

        Returns:
            The framework's own result.
        """
        before = {q.question_id: q for q in self.adapter.pending(thread_id)}
        parts = answer_parts(value)
        if parts is not None:
            question_id, answer = parts
            asked = before.get(question_id)
            if asked is not None:  # a question in a dialect receives its own shape (agent_wait.dialects)
                answer = translate(asked.source, asked.value, answer, asked.policy.response_schema)
                answer = resume_value_for(self.adapter, asked.value, asked.source, answer)
            outcome = self.adapter.resume(thread_id, question_id, answer)
        else:
            outcome = self.adapter.start(thread_id, value)
        self._announce_changes(before, outcome.questions, now=now)
        return outcome.result

    def pending(self, thread_id: str) -> list[Question]:
        """Questions the thread is really parked on (not ones it has moved past)."""
        return self.adapter.pending(thread_id)

    def republish(self, thread_id: str, *, now: datetime | None = None) -> list[PublishReport]:
        """Announce every pending question again (fresh `event_id`, same `dedupe_key` and `expires_at`)."""
        return [self._publish(q, Transition.CREATED, now=now) for q in self.pending(thread_id)]

    def _announce_changes(
        self, before: dict[str, Question], after: Sequence[Question], *, now: datetime | None
    ) -> list[PublishReport]:
        after_ids = {q.question_id for q in after}
        reports = [self._publish(q, Transition.CREATED, now=now) for q in after if q.question_id not in before]
        reports += [self._publish(q, Transition.RESUMED, now=now) for qid, q in before.items() if qid not in after_ids]
        return reports

    def _publish(self, question: Question, transition: Transition, *, now: datetime | None) -> PublishReport:
        envelope = WaitEnvelope.create(question, transition=transition, reply_to=self.reply_to, now=now)
        return publish(envelope, self.announcers)
