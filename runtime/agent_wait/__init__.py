"""agent-wait: let an AI agent wait for an outside answer, and get that answer back in.

The core (this package) is standard library only: the policy, the envelope contract, ids, `publish`
and the stdlib announcers. Framework bindings (`agent_wait.langgraph`, `agent_wait.pydantic_ai`,
`agent_wait.strands`), AWS announcers (`agent_wait.aws`) and the Lambda host (`agent_wait.host`) each
need their extra.
"""

from agent_wait.channels.announce import (
    BaseAnnounce,
    Delivery,
    InMemoryAnnounce,
    LogAnnounce,
    WebhookAnnounce,
    verify_signature,
    verify_timestamped_signature,
)
from agent_wait.common.ids import new_ulid, question_id_for
from agent_wait.contract.envelope import MAX_QUESTION_BYTES, Question, Transition, WaitEnvelope, check_question_size
from agent_wait.contract.publish import PublishReport, apublish, publish
from agent_wait.errors import (
    ConfigurationError,
    EnvelopeError,
    MissingExtraError,
    PolicyError,
    QuestionTooLargeError,
    SignatureError,
    WaitError,
)
from agent_wait.policy.followup import Escalation, Quorum, Reminder
from agent_wait.policy.wait_policy import WaitPolicy

__version__ = "0.1.0"

__all__ = (
    "MAX_QUESTION_BYTES",
    "BaseAnnounce",
    "ConfigurationError",
    "Delivery",
    "EnvelopeError",
    "Escalation",
    "InMemoryAnnounce",
    "LogAnnounce",
    "MissingExtraError",
    "PolicyError",
    "PublishReport",
    "Question",
    "QuestionTooLargeError",
    "Quorum",
    "Reminder",
    "SignatureError",
    "Transition",
    "WaitEnvelope",
    "WaitError",
    "WaitPolicy",
    "WebhookAnnounce",
    "apublish",
    "check_question_size",
    "new_ulid",
    "publish",
    "question_id_for",
    "verify_signature",
    "verify_timestamped_signature",
)
