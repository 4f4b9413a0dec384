"""The policy a question is asked under: `WaitPolicy` (`wait_policy`) and its parts, checked field by field
(`fields`): reminders, escalation steps and quorum (`followup`), and who may move the deadline (`extension`)."""

from agent_wait.policy.extension import Extended, Extension
from agent_wait.policy.followup import Escalation, FollowUps, Quorum, Reminder
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
    "Quorum",
    "Reminder",
    "WaitPolicy",
    "schema_actions",
)
