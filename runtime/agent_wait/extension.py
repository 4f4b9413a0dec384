"""Deprecated: `agent_wait.extension` moved to `agent_wait.policy.extension`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.policy.extension import (
    Extended,
    Extension,
    shifted,
)

__all__ = (
    "Extended",
    "Extension",
    "shifted",
)

warnings.warn(
    "agent_wait.extension moved to agent_wait.policy.extension: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
