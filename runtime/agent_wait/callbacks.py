"""Deprecated: `agent_wait.callbacks` moved to `agent_wait.asking.callbacks`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.asking.callbacks import (
    CALLBACK_RESUME,
    DURABLE_ONLY,
    CallbackCompleter,
    CallbacksOnly,
    callback_execution_of,
    callback_id_of,
    callback_question_id,
    callback_source,
)

__all__ = (
    "CALLBACK_RESUME",
    "DURABLE_ONLY",
    "CallbackCompleter",
    "CallbacksOnly",
    "callback_execution_of",
    "callback_id_of",
    "callback_question_id",
    "callback_source",
)

warnings.warn(
    "agent_wait.callbacks moved to agent_wait.asking.callbacks: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
