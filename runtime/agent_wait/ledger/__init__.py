"""The question ledger's interface and its in-memory reference backend. Standard library only.

`Ledger` states the rules every backend keeps (one row per question, each decided exactly once, one
thread at a time); `InMemoryLedger` is the executable spec, and `agent_wait.testing.ledger_contract`
checks any backend against it. The DynamoDB backend lives with the AWS pieces
(`agent_wait.aws.DynamoDbLedger`).

Example:
    >>> from agent_wait.ledger import InMemoryLedger
    >>> InMemoryLedger().oldest_open() is None
    True
"""

from agent_wait.ledger.base import (
    DECIDED,
    AdvanceResult,
    DecideResult,
    Decision,
    FailureKind,
    Ledger,
    Notice,
    OpenResult,
    Progress,
    QuestionPage,
    QuestionRecord,
    StartRecord,
    StartState,
    ThreadFailure,
    ThreadLease,
    Vote,
)
from agent_wait.ledger.memory import InMemoryLedger

__all__ = (
    "DECIDED",
    "AdvanceResult",
    "DecideResult",
    "Decision",
    "FailureKind",
    "InMemoryLedger",
    "Ledger",
    "Notice",
    "OpenResult",
    "Progress",
    "QuestionPage",
    "QuestionRecord",
    "StartRecord",
    "StartState",
    "ThreadFailure",
    "ThreadLease",
    "Vote",
)
