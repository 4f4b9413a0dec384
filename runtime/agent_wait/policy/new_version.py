"""A policy's `on_new_version`: what a resume does when the question was asked under other code.

The choice is part of the policy (it rides in the envelope); how versions are stamped and compared is asking's
(`agent_wait.asking.versions`), which re-exports these names. Standard library only.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from agent_wait.errors import PolicyError

__all__ = ("OnNewVersion", "checked_on_new_version", "on_new_version_problem")


class OnNewVersion(StrEnum):
    """What a resume does when the question was asked under other code and no migration is registered."""

    RESUME = "resume"
    """Resume while still compatible (the waiting node and the `@wait` function exist with the same parameters);
    fail visibly otherwise. The default."""
    FAIL = "fail"
    """Fail visibly on any change of version, compatible or not (`version_changed`)."""


def checked_on_new_version(value: Any) -> str | None:
    """A policy's `on_new_version`, when it is None or a choice.

    Raises:
        PolicyError: it is neither (the message says what it may be).
    """
    problem = None if value is None else on_new_version_problem(value)
    if problem is not None:
        raise PolicyError("on_new_version", value, problem)
    return value


def on_new_version_problem(value: Any) -> str | None:
    """Why `value` is not an `on_new_version` choice (None when it is one), for a `PolicyError` or a setting."""
    choices = [choice.value for choice in OnNewVersion]
    if isinstance(value, str) and value in choices:
        return None
    if callable(value):
        return (
            f"on_new_version must be one of {choices}; got a callable. A policy rides in the envelope as JSON, so a "
            "migration is registered with the code instead: LangGraphAdapter(graph, migration=...) (docs/versions.md)"
        )
    return f"on_new_version must be one of {choices}; got {value!r}"
