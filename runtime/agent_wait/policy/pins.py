"""How a standing grant narrows one parameter of a call (`Pin`): equal to a value, a numeric bound, a string prefix
or glob, or one of a set of values; read from its JSON form and checked (`agent_wait.policy.grants` uses them).
Standard library only."""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.errors import GrantError

__all__ = ("MAX_ONE_OF", "PIN_KINDS", "Pin")

MAX_ONE_OF = 50
"""The most values a `one_of` pin may list."""

PIN_KINDS = ("equals", "at_most", "at_least", "prefix", "glob", "one_of")
"""The ways a pin narrows one parameter."""


@dataclass(frozen=True, slots=True)
class Pin:
    """How a grant narrows one parameter: `kind` (one of `PIN_KINDS`) and its `value`."""

    kind: str
    value: Any

    @classmethod
    def parse(cls, parameter: str, value: object) -> Pin:
        """A pin from its JSON form (`{"at_most": 500}`), checked; `GrantError("bad_grant")` says what is wrong."""
        if not (isinstance(value, Mapping) and len(value) == 1):
            raise GrantError("bad_grant", f"the pin on {parameter!r} must be one of {_PIN_FORMS}; got {value!r}")
        ((kind, operand),) = value.items()
        if kind not in PIN_KINDS:
            raise GrantError("bad_grant", f"the pin on {parameter!r} has no kind {kind!r}; use one of {_PIN_FORMS}")
        if kind in ("at_most", "at_least") and not _is_number(operand):
            raise GrantError("bad_grant", f"{kind} on {parameter!r} needs a finite number; got {operand!r}")
        if kind in ("prefix", "glob") and not (isinstance(operand, str) and operand):
            raise GrantError("bad_grant", f"{kind} on {parameter!r} needs a non-empty string; got {operand!r}")
        if kind == "one_of" and not (
            isinstance(operand, list) and 0 < len(operand) <= MAX_ONE_OF and all(_is_scalar(v) for v in operand)
        ):
            raise GrantError(
                "bad_grant", f"one_of on {parameter!r} needs a list of 1 to {MAX_ONE_OF} strings, numbers or booleans"
            )
        return cls(kind, operand)

    def allows(self, value: Any) -> bool:
        """True when `value` (a call's argument, as JSON) satisfies this pin."""
        if self.kind == "equals":
            return _same(value, self.value)
        if self.kind == "at_most":
            return _is_number(value) and value <= self.value
        if self.kind == "at_least":
            return _is_number(value) and value >= self.value
        if self.kind == "prefix":
            return isinstance(value, str) and value.startswith(self.value)
        if self.kind == "glob":
            return isinstance(value, str) and fnmatch.fnmatchcase(value, self.value)
        return any(_same(value, allowed) for allowed in self.value)  # one_of

    def to_dict(self) -> dict[str, Any]:
        return {self.kind: self.value}

    def describe(self, parameter: str) -> str:
        """This pin on `parameter` in words, values as JSON: `amount at most 500`, `order_id starts with "A-"`."""
        if self.kind == "one_of":
            return f"{parameter} is one of {', '.join(json.dumps(value) for value in self.value)}"
        return f"{parameter} {_WORDS[self.kind]} {json.dumps(self.value)}"


_WORDS = {
    "equals": "is",
    "at_most": "at most",
    "at_least": "at least",
    "prefix": "starts with",
    "glob": "matches",
}
"""How each pin kind but `one_of` reads, between the parameter and its value."""


_PIN_FORMS = "{'equals': v}, {'at_most': n}, {'at_least': n}, {'prefix': 's'}, {'glob': 's*'} or {'one_of': [...]}"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_scalar(value: object) -> bool:
    return isinstance(value, (str, bool)) or _is_number(value)


def _same(left: Any, right: Any) -> bool:
    """JSON equality that keeps `True` apart from `1` (Python's `==` does not)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return left == right
