"""The question ledger's interface and its in-memory reference backend. Standard library only.

`Ledger` states the rules every backend keeps (one row per question, each decided exactly once); what a
backend can do besides (follow-ups, starts, failures, leases, notes, hand-overs) it declares by the capability
classes it derives from (`agent_wait.ledger.base`). `InMemoryLedger` is the executable spec, and
`agent_wait.testing.ledger_contract` checks any backend against it. The DynamoDB backend lives with the AWS pieces
(`agent_wait.aws.DynamoDbLedger`).

Example:
    >>> from agent_wait.ledger import InMemoryLedger
    >>> InMemoryLedger().oldest_open() is None
    True
"""

from agent_wait.ledger.base import (
    Capability,
    FailureLedger,
    FollowUpLedger,
    FullLedger,
    LeaseLedger,
    Ledger,
    NoteLedger,
    RefusalLedger,
    StartLedger,
    capabilities_of,
    marks_unannounced,
    require_capabilities,
)
from agent_wait.ledger.grants import Grant, GrantLedger, grant_id_for, new_grant
from agent_wait.ledger.hand_overs import AnswerView, HandOverLedger, HandOverResult
from agent_wait.ledger.memory import InMemoryLedger
from agent_wait.ledger.records import (
    CREATED_NOTICE,
    DECIDED,
    AdvanceResult,
    DecideResult,
    Decision,
    FailureKind,
    Notice,
    OpenCount,
    OpenResult,
    Progress,
    QuestionPage,
    QuestionRecord,
    Refusal,
    StartRecord,
    StartState,
    ThreadFailure,
    ThreadLease,
    Vote,
)

__all__ = (
    "CREATED_NOTICE",
    "DECIDED",
    "AdvanceResult",
    "AnswerView",
    "Capability",
    "DecideResult",
    "Decision",
    "FailureKind",
    "FailureLedger",
    "FollowUpLedger",
    "FullLedger",
    "Grant",
    "GrantLedger",
    "HandOverLedger",
    "HandOverResult",
    "InMemoryLedger",
    "LeaseLedger",
    "Ledger",
    "NoteLedger",
    "Notice",
    "OpenCount",
    "OpenResult",
    "Progress",
    "QuestionPage",
    "QuestionRecord",
    "Refusal",
    "RefusalLedger",
    "StartLedger",
    "StartRecord",
    "StartState",
    "ThreadFailure",
    "ThreadLease",
    "Vote",
    "capabilities_of",
    "grant_id_for",
    "marks_unannounced",
    "new_grant",
    "require_capabilities",
)
