"""What one delivery holds while it applies a message, in the one place the engine and a checkpointer share it.

A delivery is the router applying one message to a thread while it holds the thread's lease. For that time
no other delivery can change the thread, so two parties keep state on it:

- the engine, what the lease's release records (the thread's open question ids, the questions it saw
  decided) and what it learnt when it took the lease (a new thread asks nothing yet);
- a checkpointer (agent-wait's LangGraph saver), reads it may remember, the note it leaves for the next
  delivery at the release (`Delivery.leave_note`), and how long it keeps the state the thread waits on
  (`Delivery.keep_state`, which the engine calls once the agent ran).

The engine opens a delivery with `delivering`; a checkpointer finds it with `current_delivery(thread_id)`.
A checkpointer that batches one run's writes says so by its type (`RunBatcher`), so a binding opens the batch
around each run without guessing at attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from agent_wait.ledger import QuestionRecord, ThreadLease

__all__ = ("UNTIL_MOVED_ON", "Delivery", "RunBatcher", "current_delivery", "delivering")

UNTIL_MOVED_ON = datetime.max.replace(tzinfo=UTC)
"""For `Delivery.keep_state`: keep the thread's state until the agent moves past it, however long that is (a question
without a deadline; a failed thread waiting for its retry)."""


@dataclass(slots=True)
class Delivery:
    """The lease one delivery holds, what its release records, and what may be remembered until then."""

    lease: ThreadLease
    open_questions: tuple[str, ...] | None = None
    """The thread's open question ids once the agent ran (the engine sets them after each run), recorded by the
    release; None when the agent did not run, which leaves the recorded ids as they are."""
    new_thread: bool = False
    """Set when the thread has no state and its lease recorded nothing: it has asked nothing yet, so its open
    questions need no query of the ledger."""
    handed_over: tuple[str, ...] | None = None
    """The decisions that still wait for the agent as the release records them (`ThreadLease.handed_over`); None
    leaves what was recorded as it is."""
    finished_start: str | None = None
    """The start this delivery finished, recorded by the release (`ThreadLease.finished_start`); None: none."""
    decided: set[str] = field(default_factory=set)
    """Question ids this delivery saw decided: a decided question never opens again, so none is read again."""
    granted: list[QuestionRecord] = field(default_factory=list)
    """The rows of questions a standing grant decided as they were asked (`agent_wait.engine.grants`), in order: the
    router resumes the agent with them before it lets the thread go."""
    leave_note: Callable[[], str | None] | None = None
    """Called at the release: what it returns is left for the next delivery (`ThreadLease.note`). A checkpointer
    sets it when it reads the thread; a delivery that never did leaves no note."""
    keep_state: Callable[[datetime | None], None] | None = None
    """Set by a checkpointer whose state expires (agent-wait's LangGraph saver) when it reads the thread; the engine
    calls it once the agent ran (or failed), with the latest moment the thread may still be resumed from the state it
    is in now (its open questions' latest possible deadline plus a grace, or `UNTIL_MOVED_ON`), or None when nothing
    waits on it. The checkpointer keeps that state at least until then, and lets go of what it kept for a thread that
    has moved past it. Raising fails the delivery (the message is retried)."""
    memo: dict[str, Any] = field(default_factory=dict)
    """What may be remembered while the lease is held, and no longer: no other delivery can change the thread
    meanwhile (the checkpoint saver keeps its latest read here)."""


_CURRENT: ContextVar[Delivery | None] = ContextVar("agent_wait_delivery", default=None)


def current_delivery(thread_id: str) -> Delivery | None:
    """The delivery applying a message to `thread_id` in this context (inside `delivering`), or None."""
    delivery = _CURRENT.get()
    return delivery if delivery is not None and delivery.lease.thread_id == thread_id else None


@contextmanager
def delivering(delivery: Delivery) -> Iterator[Delivery]:
    """Make `delivery` the current one for the block (and for what the block runs in copied contexts)."""
    token = _CURRENT.set(delivery)
    try:
        yield delivery
    finally:
        _CURRENT.reset(token)


@runtime_checkable
class RunBatcher(Protocol):
    """A checkpointer that batches the writes of one run (agent-wait's DynamoDB saver).

    A host opens `batched_run` around each run on a thread and passes the callback handler it yields (None: no
    batching) in the run's callbacks, so the checkpointer sees the run's tasks start and end.
    """

    def batched_run(self, thread_id: str, *, compact: bool = True) -> AbstractContextManager[Any]: ...
