"""The host side: the question ledger, the Lambda router and the expiry sweep. Needs the `host` extra.

Lambda entry points: `agent_wait.host.router.handler` and `agent_wait.host.sweep.handler`. The logic
lives in `Router` and `Sweep`, which any host can drive with one message or one run at a time.
"""

import agent_wait.host._extra  # noqa: F401  (first: names the missing extra before anything else fails)
from agent_wait.host._router import Router
from agent_wait.host._sweep import DEADLINE_ANSWERED_BY, Sweep, SweepReport
from agent_wait.host.dead_letter import DeadLetter, InMemoryDeadLetter, SqsDeadLetter
from agent_wait.host.entry_queue import EntryQueue, InMemoryEntryQueue, SqsEntryQueue
from agent_wait.host.ledger.base import (
    Decision,
    FailureKind,
    Ledger,
    LedgerUnavailableError,
    QuestionRecord,
    ThreadFailure,
)
from agent_wait.host.ledger.dynamodb import DynamoDbLedger
from agent_wait.host.ledger.memory import InMemoryLedger
from agent_wait.host.observe import HostMetrics, RecordingMetrics
from agent_wait.host.operations import failed_threads, request_retry, retry_thread
from agent_wait.host.outcomes import DeadLetterReason, Outcome, OutcomeKind, RefusalReason
from agent_wait.host.settings import HostSettings

__all__ = (
    "DEADLINE_ANSWERED_BY",
    "DeadLetter",
    "DeadLetterReason",
    "Decision",
    "DynamoDbLedger",
    "EntryQueue",
    "FailureKind",
    "HostMetrics",
    "HostSettings",
    "InMemoryDeadLetter",
    "InMemoryEntryQueue",
    "InMemoryLedger",
    "Ledger",
    "LedgerUnavailableError",
    "Outcome",
    "OutcomeKind",
    "QuestionRecord",
    "RecordingMetrics",
    "RefusalReason",
    "Router",
    "SqsDeadLetter",
    "SqsEntryQueue",
    "Sweep",
    "SweepReport",
    "ThreadFailure",
    "failed_threads",
    "request_retry",
    "retry_thread",
)
