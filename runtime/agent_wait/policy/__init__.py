"""The policy a question is asked under: `WaitPolicy` (`wait_policy`) and its parts, checked field by field
(`fields`): reminders, escalation steps and quorum (`followup`), who may move the deadline (`extension`), and who may
grant later asks of the same call (`grants`)."""

from agent_wait.errors import GrantError
from agent_wait.policy.extension import Extended, Extension
from agent_wait.policy.followup import Escalation, FollowUps, Quorum, Reminder
from agent_wait.policy.grants import GrantOffer, GrantRequest, Grants, GrantTerms, grant_terms
from agent_wait.policy.pins import Pin
from agent_wait.policy.wait_policy import (
    DEFAULT_ACTIONS,
    MAX_DEFAULT_BYTES,
    MAX_RESPONSE_SCHEMA_BYTES,
    MAX_TAGS_BYTES,
    MAX_TIMEOUT,
    SCHEMA_ACTION,
    WaitPolicy,
    schema_actions,
)

__all__ = (
    "DEFAULT_ACTIONS",
    "MAX_DEFAULT_BYTES",
    "MAX_RESPONSE_SCHEMA_BYTES",
    "MAX_TAGS_BYTES",
    "MAX_TIMEOUT",
    "SCHEMA_ACTION",
    "Escalation",
    "Extended",
    "Extension",
    "FollowUps",
    "GrantError",
    "GrantOffer",
    "GrantRequest",
    "GrantTerms",
    "Grants",
    "Pin",
    "Quorum",
    "Reminder",
    "WaitPolicy",
    "grant_terms",
    "schema_actions",
)
