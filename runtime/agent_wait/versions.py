"""Deprecated: `agent_wait.versions` moved to `agent_wait.asking.versions`; import it from there.

This alias re-exports the public names, so code written before the move runs, and warns once; it goes in a later
release (docs/architecture.md, "Moved modules").
"""

import warnings

from agent_wait.asking.versions import (
    VERSION_KEY,
    Compatibility,
    Migrated,
    Migration,
    OnNewVersion,
    ToolVersioning,
    Version,
    VersionChange,
    VersionedAdapter,
    asked_function,
    checked_on_new_version,
    fingerprint,
    function_problems,
    on_new_version_problem,
    parameters_fingerprint,
    schema_fingerprint,
    stamped_version,
    with_version,
)

__all__ = (
    "VERSION_KEY",
    "Compatibility",
    "Migrated",
    "Migration",
    "OnNewVersion",
    "ToolVersioning",
    "Version",
    "VersionChange",
    "VersionedAdapter",
    "asked_function",
    "checked_on_new_version",
    "fingerprint",
    "function_problems",
    "on_new_version_problem",
    "parameters_fingerprint",
    "schema_fingerprint",
    "stamped_version",
    "with_version",
)

warnings.warn(
    "agent_wait.versions moved to agent_wait.asking.versions: import from there (this alias goes later)",
    DeprecationWarning,
    stacklevel=2,
)
