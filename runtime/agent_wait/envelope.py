"""Deprecated: `agent_wait.envelope` moved to `agent_wait.contract.envelope`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.contract.envelope import (
    ENVELOPE_FIELDS,
    MAX_QUESTION_BYTES,
    Question,
    Transition,
    WaitEnvelope,
    check_question_size,
)

__all__ = (
    "ENVELOPE_FIELDS",
    "MAX_QUESTION_BYTES",
    "Question",
    "Transition",
    "WaitEnvelope",
    "check_question_size",
)

warnings.warn(
    "agent_wait.envelope moved to agent_wait.contract.envelope: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
