"""The host side: the question ledger, the Lambda router and the expiry sweep. Needs the `host` extra.

Lambda entry points: `agent_wait.host.router.handler` and `agent_wait.host.sweep.handler`. The logic
lives in `Router` and `Sweep`, which any host can drive with one message or one run at a time.
"""

from agent_wait.errors import LedgerUnavailableError, require_extra

# First, so a missing extra is named before anything else fails. The host needs no agent framework: LangGraph
# and its checkpoint saver (extra `langgraph-host`) are imported only when the deployed agent is a graph.
for _package in ("boto3", "aws_lambda_powertools"):
    require_extra("agent_wait.host", _package, "host")

from agent_wait.host._router import Router  # noqa: E402
from agent_wait.host._sweep import DEADLINE_ANSWERED_BY, Sweep, SweepReport  # noqa: E402
from agent_wait.host.dead_letter import DeadLetter, InMemoryDeadLetter, SqsDeadLetter  # noqa: E402
from agent_wait.host.entry_queue import EntryQueue, InMemoryEntryQueue, SqsEntryQueue  # noqa: E402
from agent_wait.host.ledger.dynamodb import DynamoDbLedger  # noqa: E402
from agent_wait.host.observe import HostMetrics, RecordingMetrics  # noqa: E402
from agent_wait.host.operations import failed_threads, request_retry, retry_thread  # noqa: E402
from agent_wait.host.outcomes import DeadLetterReason, Outcome, OutcomeKind, RefusalReason  # noqa: E402
from agent_wait.host.settings import HostSettings  # noqa: E402
from agent_wait.ledger import Decision, FailureKind, InMemoryLedger, Ledger, QuestionRecord, ThreadFailure  # noqa: E402

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
