"""Names a policy lists (answerer groups and principals, an escalation step's, who may extend a deadline), checked
the one way every policy field that holds them is: a list of non-empty strings, group names without white space."""

from __future__ import annotations

from collections.abc import Iterable

from agent_wait.errors import PolicyError

__all__ = ("check_names",)


def check_names(field: str, values: Iterable[str], *, label: str | None = None, spaces: bool = True) -> tuple[str, ...]:
    """`values` as a tuple of non-empty strings, or a `PolicyError` on `field` (`label` names it in the message).

    With `spaces=False` a name holding white space is refused too (group names: API Gateway flattens a JWT's
    groups claim into `[finance ops]`, where `Finance Managers` would read as two groups).
    """
    label = label or field
    if isinstance(values, str):
        raise PolicyError(field, values, f"{label} must be a list of strings such as ['finance']; got {values!r}")
    names = tuple(values)
    for value in names:
        if not isinstance(value, str) or not value.strip():
            raise PolicyError(field, names, f"{label} must hold non-empty strings; got {value!r}")
        if not spaces and any(character.isspace() for character in value):
            raise PolicyError(
                field,
                names,
                f"{label} must hold group names without spaces; got {value!r}: API Gateway passes a JWT's groups "
                "claim flattened as '[a b]', where a name with a space would read as two groups and never match "
                "(name the group 'finance-managers')",
            )
    return names
