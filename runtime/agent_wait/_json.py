"""Canonical JSON for ids, size checks and wire bodies (standard library only)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from agent_wait.errors import EnvelopeError

_ACCEPTED = "dict (with str keys), list, tuple, str, int, float, bool or None"


def to_jsonable(value: Any, *, where: str = "value") -> Any:
    """Return `value` as plain JSON types, or raise `EnvelopeError` naming the first offending path.

    Decimals (what DynamoDB hands back) become int when integral, float otherwise. NaN and infinity
    are refused: JSON has no spelling for them and receivers would choke.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise EnvelopeError(
                f"{where} holds a lone surrogate (an unpaired \\ud800-\\udfff), which is not valid Unicode; "
                "fix the text before asking"
            ) from None
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EnvelopeError(f"{where} is {value!r}, which JSON cannot carry; use a finite number or a string")
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise EnvelopeError(f"{where} is {value!r}, which JSON cannot carry; use a finite number or a string")
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EnvelopeError(f"{where} has a key {key!r} of type {type(key).__name__}; JSON keys are strings")
            out[key] = to_jsonable(item, where=f"{where}.{key}")
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item, where=f"{where}[{index}]") for index, item in enumerate(value)]
    raise EnvelopeError(
        f"{where} is a {type(value).__name__}, which is not JSON; pass {_ACCEPTED} "
        "(convert dates to ISO strings and objects to dicts before asking)"
    )


def canonical_json(value: Any, *, where: str = "value") -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same value always gives the same text."""
    return json.dumps(
        to_jsonable(value, where=where), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def dumps(value: Any) -> str:
    """Compact JSON for wire bodies; keys keep their order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
