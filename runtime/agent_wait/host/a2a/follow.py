"""The router's side of A2A tasks: keep a finished run's result on its task, and tell the task's push configs what
each message changed.

Two steps, both only for a thread an A2A message started (`a2a-<task id>`):

- `TaskFollower.watch` is one of the router's run watchers (`AskedQuestions.watchers`): when a run ends with nothing
  asked, the task is `completed` with the run's result, written before the thread is let go (a failed write retries
  the message, whose redelivery converges and writes it);
- `TaskFollower.after` runs after each message is applied and the thread let go (`agent_wait.host.router`), so a
  push receiver that answers at once finds the question open and the thread free: for a decision the message carried
  to the agent it tells `working`, then the state the thread is in now (input-required, completed or failed).
  Telling never fails the message: a receiver that is down, or a store that fails here, is a log line.
"""

from __future__ import annotations

import logging
from typing import Any

from a2a.types.a2a_pb2 import TaskState

from agent_wait.asking.adapter import RunOutcome
from agent_wait.engine.outcomes import Outcome, OutcomeKind
from agent_wait.host.a2a.push import TaskNotifier
from agent_wait.host.a2a.states import TaskView, task_view
from agent_wait.host.a2a.tasks import DynamoDbTaskStore, TaskItem, task_for
from agent_wait.ledger import FailureLedger, Ledger

__all__ = ("TaskFollower", "read_view")

logger = logging.getLogger("agent_wait.host")


def read_view(ledger: Ledger, item: TaskItem) -> TaskView:
    """The task's state now: its thread's questions and failure, read from `ledger`, with what its item says."""
    failure = ledger.thread_failure(item.thread_id) if isinstance(ledger, FailureLedger) else None
    return task_view(item, ledger.questions(item.thread_id), failure)


class TaskFollower:
    """Follows the A2A tasks' threads for the router.

    Args:
        store: the tasks.
        ledger: the router's ledger (the threads' questions and failures).
        notifier: tells the tasks' push configs.
        log: a stdlib-compatible logger.
    """

    def __init__(self, store: DynamoDbTaskStore, ledger: Ledger, notifier: TaskNotifier, *, log: Any = None) -> None:
        self.store = store
        self.ledger = ledger
        self.notifier = notifier
        self.log = log or logger

    def watch(self, thread_id: str, run: RunOutcome) -> None:
        """A run on `thread_id` ended: when nothing is asked, its task (if it has one) completed with the result."""
        task_id = task_for(thread_id)
        if task_id is None or run.questions:
            return
        # Conditional: a task already ended (cancelled, whose cancellation this run carried) stays as it ended.
        self.store.end(task_id, "completed", result=run.result)

    def after(self, outcome: Outcome) -> None:
        """Tell the task of `outcome`'s thread (if it has one) what the message changed; never raises."""
        task_id = task_for(outcome.thread_id or "")
        if task_id is None:
            return
        try:
            self._tell(task_id, outcome)
        except Exception as exc:  # telling is best-effort: the message is applied, and GetTask says where it stands
            self.log.warning(
                "A2A task change not told: %s",
                type(exc).__name__,
                extra={"thread_id": outcome.thread_id, "task_id": task_id},
            )

    def _tell(self, task_id: str, outcome: Outcome) -> None:
        item = self.store.get(task_id)
        if item is None or not item.push:
            return
        view = read_view(self.ledger, item)
        carried = outcome.kind is OutcomeKind.APPLIED and outcome.question_id
        if carried and item.ended != "canceled" and view.change != f"working:{outcome.question_id}":
            # The agent received a decision (from any door): the task worked on before it stood where it stands now.
            # (Not after CancelTask: that cancel was the decision, and the task ended with it.)
            self.notifier.tell(item, TaskView(TaskState.TASK_STATE_WORKING, f"working:{outcome.question_id}"))
        self.notifier.tell(item, view)
