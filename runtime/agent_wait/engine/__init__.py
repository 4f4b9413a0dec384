"""The host's rules, for any transport: apply starts and answers, sweep what is due, decide each question once.

`Router` applies one message at a time and `Sweep` one run at a time; `AnswerDesk` is the one decision every
door goes through (the entry queue, the answer API, signed links, AG-UI, the sweep's deadlines), and
`AnswerService` the way in for the doors that cannot run the agent. Nothing here
knows Lambda's event shapes or HTTP: the deployables in `agent_wait.host` adapt those, and the same classes run
locally (`agent_wait.local`) or under any host of your own (`docs/host.md`, "Without Lambda").
"""

from agent_wait.engine.answering import AnswerAttempt, AnswerDesk, ThreadState, Verdict, VerdictKind
from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.dead_letter import DeadLetter, DeadLetterRecord, InMemoryDeadLetter, SqsDeadLetter
from agent_wait.engine.entry_queue import EntryMessage, EntryQueue, InMemoryEntryQueue, SendFailure, SqsEntryQueue
from agent_wait.engine.handover import HANDED_OVER, AnswerResult, AnswerService
from agent_wait.engine.metrics import HostMetrics, Metric, MetricTags, RecordingMetrics
from agent_wait.engine.operations import failed_threads, request_retry, retry_thread
from agent_wait.engine.outcomes import DeadLetterReason, Outcome, OutcomeKind, RefusalReason
from agent_wait.engine.router import Router
from agent_wait.engine.sweep import DEADLINE_ANSWERED_BY, DueWork, Sweep, SweepReport, SweepStep

__all__ = (
    "DEADLINE_ANSWERED_BY",
    "HANDED_OVER",
    "AnswerAttempt",
    "AnswerDesk",
    "AnswerResult",
    "AnswerService",
    "Answerer",
    "DeadLetter",
    "DeadLetterReason",
    "DeadLetterRecord",
    "DueWork",
    "EntryMessage",
    "EntryQueue",
    "HostMetrics",
    "InMemoryDeadLetter",
    "InMemoryEntryQueue",
    "Metric",
    "MetricTags",
    "Outcome",
    "OutcomeKind",
    "RecordingMetrics",
    "RefusalReason",
    "Router",
    "SendFailure",
    "SqsDeadLetter",
    "SqsEntryQueue",
    "Sweep",
    "SweepReport",
    "SweepStep",
    "ThreadState",
    "Verdict",
    "VerdictKind",
    "answerer_for",
    "failed_threads",
    "request_retry",
    "retry_thread",
)
