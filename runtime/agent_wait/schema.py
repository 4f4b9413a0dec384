"""Deprecated: `agent_wait.schema` moved to `agent_wait.contract.schema`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.contract.schema import (
    CHANNEL_RECORD,
    CHECKPOINT_TABLE,
    DEFAULT_INDEX_SHARDS,
    ENTRY_QUEUE,
    LEGACY_QUESTION_INDEXES,
    MAX_INDEX_SHARDS,
    QUESTION_TABLE,
    RENAMED_STATUS_INDEX,
    QuestionStatus,
    Settings,
    index_shards_from_env,
    question_key,
    shard_key,
    shard_of,
    thread_key,
)

__all__ = (
    "CHANNEL_RECORD",
    "CHECKPOINT_TABLE",
    "DEFAULT_INDEX_SHARDS",
    "ENTRY_QUEUE",
    "LEGACY_QUESTION_INDEXES",
    "MAX_INDEX_SHARDS",
    "QUESTION_TABLE",
    "RENAMED_STATUS_INDEX",
    "QuestionStatus",
    "Settings",
    "index_shards_from_env",
    "question_key",
    "shard_key",
    "shard_of",
    "thread_key",
)

warnings.warn(
    "agent_wait.schema moved to agent_wait.contract.schema: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
