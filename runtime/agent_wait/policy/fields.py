"""The checks behind `WaitPolicy`'s fields: each value as plain, bounded JSON, or a `PolicyError` saying what to do."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from agent_wait.common.canonical_json import canonical_json, to_jsonable
from agent_wait.errors import EnvelopeError, PolicyError
from agent_wait.policy.extension import Extension

__all__ = (
    "MAX_DEFAULT_BYTES",
    "MAX_RESPONSE_SCHEMA_BYTES",
    "MAX_TAGS_BYTES",
    "cancellation_answer",
    "check_actions",
    "check_correlation",
    "check_extend",
    "check_response_schema",
    "check_tags",
    "small_json",
)

MAX_DEFAULT_BYTES = 64 * 1024
"""Largest `default` as JSON. It rides in every envelope and ledger row beside the question (at most 64 KiB
itself), so both stay inside what SNS, EventBridge and a DynamoDB item can carry."""
MAX_TAGS_BYTES = 4 * 1024
"""Largest `tags` as JSON. They ride in every envelope (and as SNS message attributes and EventBridge detail),
beside a question of up to 64 KiB; unbounded, they made a question no announcer could carry."""
MAX_RESPONSE_SCHEMA_BYTES = 32 * 1024
"""Largest `response_schema` as JSON; it rides in the envelope's `rules` beside the question and the default."""


def check_actions(allowed_actions: Iterable[str]) -> tuple[str, ...]:
    if isinstance(allowed_actions, str):
        raise PolicyError(
            "allowed_actions",
            allowed_actions,
            f"allowed_actions must be a list of strings such as ['approve', 'reject']; "
            f"got the single string {allowed_actions!r}",
        )
    actions = tuple(allowed_actions)
    if not actions:
        raise PolicyError("allowed_actions", actions, "allowed_actions must name at least one action, e.g. ['approve']")
    for action in actions:
        if not isinstance(action, str) or not action.strip():
            raise PolicyError(
                "allowed_actions", actions, f"allowed_actions must hold non-empty strings; got {action!r}"
            )
    if len(set(actions)) != len(actions):
        raise PolicyError("allowed_actions", actions, f"allowed_actions lists an action twice: {list(actions)}")
    return actions


def cancellation_answer(on_cancel: Any) -> Any:
    """`on_cancel` as plain JSON of at most `MAX_DEFAULT_BYTES`: like the default, it rides in every envelope."""
    if on_cancel is None:
        return None
    return small_json(
        "on_cancel",
        on_cancel,
        shown=on_cancel,
        limit=MAX_DEFAULT_BYTES,
        limit_name="MAX_DEFAULT_BYTES",
        advice=": cancel with a small answer that refers to large content",
    )


def check_tags(tags: Mapping[str, str] | None) -> Mapping[str, str]:
    if tags is None:
        return MappingProxyType({})
    if not isinstance(tags, Mapping):
        raise PolicyError("tags", tags, f"tags must be a dict of str to str; got a {type(tags).__name__}")
    for key, value in tags.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise PolicyError(
                "tags", dict(tags), f"tags must map non-empty str keys to str values; got {key!r}: {value!r}"
            )
    size = len(canonical_json(dict(tags), where="tags").encode("utf-8"))
    if size > MAX_TAGS_BYTES:
        raise PolicyError(
            "tags",
            f"<{len(tags)} tags>",
            f"tags are {size} bytes as JSON; the most is {MAX_TAGS_BYTES} (MAX_TAGS_BYTES): they ride in every "
            "envelope and SNS message attribute; route by a few short tags and keep the rest in the question",
        )
    return MappingProxyType(dict(tags))


def check_correlation(correlation: Mapping[str, str] | None) -> Mapping[str, str] | None:
    if correlation is None:
        return None
    if (
        not isinstance(correlation, Mapping)
        or not {"provider", "id"} <= set(correlation)
        or not all(isinstance(value, str) for value in correlation.values())
    ):
        raise PolicyError(
            "correlation",
            correlation,
            "correlation must be a dict of strings with 'provider' and 'id', "
            f"e.g. {{'provider': 'stripe', 'id': 're_123'}}; got {correlation!r}",
        )
    return MappingProxyType(dict(correlation))


def check_response_schema(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A JSON copy of `schema`. Its meaning is checked by the host (jsonschema), which the core does not import."""
    if schema is None:
        return None
    if not isinstance(schema, Mapping):
        raise PolicyError(
            "response_schema",
            f"<{type(schema).__name__}>",
            "response_schema must be a JSON Schema object (a dict), e.g. {'type': 'object', 'properties': {...}}; "
            f"got a {type(schema).__name__}. For a pydantic model pass Model.model_json_schema()",
        )
    checked = small_json(
        "response_schema",
        schema,
        shown="<schema>",
        limit=MAX_RESPONSE_SCHEMA_BYTES,
        limit_name="MAX_RESPONSE_SCHEMA_BYTES",
    )
    return MappingProxyType(checked)


def small_json(field: str, value: Any, *, shown: object, limit: int, limit_name: str, advice: str = "") -> Any:
    """`value` as plain JSON of at most `limit` bytes: it rides in every envelope and ledger row."""
    try:
        checked = to_jsonable(value, where=field)
    except EnvelopeError as exc:
        raise PolicyError(field, shown, f"{field} must be JSON; {exc.message}") from None
    size = len(canonical_json(checked, where=field).encode("utf-8"))
    if size > limit:
        raise PolicyError(
            field,
            f"<{size} bytes>",
            f"{field} is {size:,} bytes as JSON; the limit is {limit:,} ({limit_name}), because it travels in "
            f"every envelope and ledger row{advice}",
        )
    return checked


def check_extend(extend: Extension | Mapping[str, Any] | None, timeout: timedelta | None) -> Extension | None:
    """The policy's `extend`, checked: a question without a deadline has nothing to extend."""
    if extend is None:
        return None
    checked = Extension.parse(extend)
    if timeout is None:
        raise PolicyError(
            "extend",
            checked.to_dict(),
            "extend moves the deadline, and this policy has none: set a timeout (e.g. timeout='P3D'), or leave extend "
            "unset",
        )
    return checked
