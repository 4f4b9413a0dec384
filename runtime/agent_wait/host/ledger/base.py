"""The ledger interface, kept importable from its old home; it lives in the core, `agent_wait.ledger`."""

from agent_wait.errors import LedgerUnavailableError
from agent_wait.ledger.base import (
    DECIDED,
    AdvanceResult,
    DecideResult,
    Decision,
    FailureKind,
    Ledger,
    OpenResult,
    Progress,
    QuestionPage,
    QuestionRecord,
    StartRecord,
    ThreadFailure,
    ThreadLease,
    Vote,
)

__all__ = (
    "DECIDED",
    "AdvanceResult",
    "DecideResult",
    "Decision",
    "FailureKind",
    "Ledger",
    "LedgerUnavailableError",
    "OpenResult",
    "Progress",
    "QuestionPage",
    "QuestionRecord",
    "StartRecord",
    "ThreadFailure",
    "ThreadLease",
    "Vote",
)
