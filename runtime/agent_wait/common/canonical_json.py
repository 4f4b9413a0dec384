"""Canonical JSON for ids, size checks and wire bodies (standard library only)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from agent_wait.errors import EnvelopeError

_ACCEPTED = "dict (with str keys), list, tuple, str, int, float, bool or None"

MAX_DEPTH = 30
"""Deepest nesting of lists and objects in any value agent-wait carries. The ledger stores a value one or
two levels down in a DynamoDB item, and DynamoDB refuses items nested more than 32 levels deep."""
MAX_SIGNIFICANT_DIGITS = 38
"""Most significant digits a number may have: DynamoDB's Number keeps 38 and refuses more."""
_SMALLEST, _LARGEST = Decimal("1e-130"), Decimal("1e126")
"""A non-zero number's magnitude must lie in [1e-130, 1e126), DynamoDB's Number range."""
MIN_INTEGER, MAX_INTEGER = -(2**63), 2**64 - 1
"""The integers a checkpointer can store: LangGraph's msgpack takes 64 bits (signed, or unsigned up to 2**64 - 1).
A larger integer would fail inside the agent's run, after the message was taken, so it is refused on sight."""


def to_jsonable(value: Any, *, where: str = "value", _depth: int = 0) -> Any:
    """Return `value` as plain JSON types, or raise `EnvelopeError` naming the first offending path.

    Decimals (what DynamoDB hands back) become int when integral, float otherwise. NaN and infinity
    are refused: JSON has no spelling for them and receivers would choke. So is what a store agent-wait
    writes to could not hold, before anything is written: integers past 64 bits (a checkpoint's limit),
    numbers beyond DynamoDB's 38 digits or its range, nesting deeper than `MAX_DEPTH`, and lone surrogates.
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
        if not MIN_INTEGER <= value <= MAX_INTEGER:
            # The value may be personal data (an account number): name its size, not its digits.
            raise EnvelopeError(
                f"{where} is an integer of {int(value).bit_length()} bits, outside the 64-bit range agent-wait carries "
                "(from -2**63 to 2**64 - 1, what an agent's checkpoint stores): send it as a string"
            )
        _check_storable_number(Decimal(int(value)), where)
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EnvelopeError(f"{where} is {value!r}, which JSON cannot carry; use a finite number or a string")
        _check_storable_number(Decimal(repr(value)), where)
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise EnvelopeError(f"{where} is {value!r}, which JSON cannot carry; use a finite number or a string")
        _check_storable_number(value, where)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (Mapping, list, tuple)) and _depth >= MAX_DEPTH:
        raise EnvelopeError(
            f"{where} is nested more than {MAX_DEPTH} levels deep, more than the ledger can store; flatten it"
        )
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EnvelopeError(f"{where} has a key {key!r} of type {type(key).__name__}; JSON keys are strings")
            checked_key = to_jsonable(key, where=f"{where} key")
            out[checked_key] = to_jsonable(item, where=field_path(where, key), _depth=_depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item, where=f"{where}[{index}]", _depth=_depth + 1) for index, item in enumerate(value)]
    raise EnvelopeError(
        f"{where} is a {type(value).__name__}, which is not JSON; pass {_ACCEPTED} "
        "(convert dates to ISO strings and objects to dicts before asking)"
    )


_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""A key shown in an error's path: a field name. Anything else may be content (a card number as a key)."""


def field_path(where: str, key: str) -> str:
    """`where.key` for a key that reads as a field name, else `where[<a key of N characters>]`: errors name where a
    value is, and land in logs and dead-letter details above DEBUG, where no content may."""
    if _FIELD_NAME.fullmatch(key):
        return f"{where}.{key}"
    return f"{where}[<a key of {len(key)} characters>]"


def _check_storable_number(number: Decimal, where: str) -> None:
    # Not Decimal.normalize(): it rounds to the context's 28 digits, hiding exactly what is checked here.
    digits = len("".join(map(str, number.as_tuple().digits)).strip("0")) if number else 0
    magnitude = abs(number)
    if digits > MAX_SIGNIFICANT_DIGITS or (number and not _SMALLEST <= magnitude < _LARGEST):
        # The value itself may be personal data (an account number): name its shape, not its digits.
        raise EnvelopeError(
            f"{where} is a number with {digits} significant digits and magnitude about 1e{magnitude.adjusted()}; "
            f"agent-wait carries numbers of at most {MAX_SIGNIFICANT_DIGITS} digits between 1e-130 and 1e126 "
            "(what DynamoDB stores): send it as a string"
        )


def canonical_json(value: Any, *, where: str = "value") -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same value always gives the same text."""
    return json.dumps(
        to_jsonable(value, where=where), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def dumps(value: Any) -> str:
    """Compact JSON for wire bodies; keys keep their order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
