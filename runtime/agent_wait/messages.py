"""Deprecated: `agent_wait.messages` moved to `agent_wait.contract.messages`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.contract.messages import (
    DEADLINE_ORIGIN,
    MAX_ANSWER_BYTES,
    MAX_ID_LENGTH,
    RESERVED_ID_PREFIX,
    VIAS,
    AnswerMessage,
    RetryMessage,
    StartMessage,
    answer_parts,
    deadline_answer_id,
    fifo_id,
    group_id_for,
    internal_id,
    is_answer,
    load_answer_text,
    parse_answer,
    parse_message,
    question_id_of,
)

__all__ = (
    "DEADLINE_ORIGIN",
    "MAX_ANSWER_BYTES",
    "MAX_ID_LENGTH",
    "RESERVED_ID_PREFIX",
    "VIAS",
    "AnswerMessage",
    "RetryMessage",
    "StartMessage",
    "answer_parts",
    "deadline_answer_id",
    "fifo_id",
    "group_id_for",
    "internal_id",
    "is_answer",
    "load_answer_text",
    "parse_answer",
    "parse_message",
    "question_id_of",
)

warnings.warn(
    "agent_wait.messages moved to agent_wait.contract.messages: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
