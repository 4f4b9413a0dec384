"""The ledger interface, kept importable from its old home; it lives in the core, `agent_wait.ledger`."""

from agent_wait.errors import LedgerUnavailableError
from agent_wait.ledger.base import (
    DECIDED,
    DecideResult,
    Decision,
    FailureKind,
    Ledger,
    OpenResult,
    QuestionPage,
    QuestionRecord,
    StartRecord,
    ThreadFailure,
    ThreadLease,
)

__all__ = (
    "DECIDED",
    "DecideResult",
    "Decision",
    "FailureKind",
    "Ledger",
    "LedgerUnavailableError",
    "OpenResult",
    "QuestionPage",
    "QuestionRecord",
    "StartRecord",
    "ThreadFailure",
    "ThreadLease",
)
