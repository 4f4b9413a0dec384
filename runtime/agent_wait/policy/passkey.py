"""`WaitPolicy(require_passkey=...)`: which answers a person confirms with a registered passkey (WebAuthn).

The policy names the actions that need a passkey (True: every allowed action); the envelope carries them in its
`rules` as `{"passkey": {"actions": [...]}}`, and the one decision path (`agent_wait.engine.answering.AnswerDesk`)
refuses such an answer unless it carries an assertion the host verified (`agent_wait.engine.proof`). Standard
library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agent_wait.errors import PolicyError

__all__ = ("PASSKEY_RULE", "check_require_passkey", "passkey_actions")

PASSKEY_RULE = "passkey"
"""The key under the envelope's `rules` that lists the actions a passkey must confirm."""


def check_require_passkey(value: bool | Iterable[str] | None, allowed_actions: tuple[str, ...]) -> tuple[str, ...]:
    """The actions `require_passkey` covers, checked: `True` is every allowed action; False or None, none; else a
    tuple of allowed actions.

    Raises:
        PolicyError: a value that is neither a bool nor a list of the policy's own actions.
    """
    if value is None or value is False:
        return ()
    if value is True:
        return allowed_actions
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise PolicyError(
            "require_passkey",
            value,
            f"require_passkey must be True, False, or a tuple of actions such as ('approve',); got {value!r}",
        )
    actions = tuple(dict.fromkeys(value))
    unknown = [action for action in actions if action not in allowed_actions]
    if not actions or unknown:
        raise PolicyError(
            "require_passkey",
            list(actions),
            f"require_passkey must name some of the policy's allowed_actions {list(allowed_actions)}; "
            f"got {list(actions)}" + (f" ({unknown} not allowed)" if unknown else ""),
        )
    return actions


def passkey_actions(rules: Mapping[str, Any] | None) -> frozenset[str]:
    """The actions a question's `rules` say a passkey must confirm (none for a question asked without the rule)."""
    rule = rules.get(PASSKEY_RULE) if isinstance(rules, Mapping) else None
    actions = rule.get("actions") if isinstance(rule, Mapping) else None
    return frozenset(a for a in actions if isinstance(a, str)) if isinstance(actions, list | tuple) else frozenset()
