"""LangChain's `HumanInTheLoopMiddleware`, both modes, as a dialect. Standard library only.

Batched mode (the default) parks once per model turn on `{"action_requests": [...], "review_configs": [...]}`
and resumes with `{"decisions": [...]}`, one decision per action request, in order. Per-call mode
(`interrupt_mode="per_call"`) parks once per gated tool call on `{"type": "tool_approval", "tool_call_id",
"name", "args", "description"}` with a `response_schema` (a JSON Schema `oneOf` the decision types allowed
for that tool, discriminated by `type`) and resumes with one decision. Both from langchain 1.x,
`langchain.agents.middleware.human_in_the_loop`; shapes pinned in tests/langgraph/test_hitl_dialect.py.
The shapes are recognised structurally, so the core never imports langchain.

- Question: one question per interrupt; `allowed_actions` are the decision types the configs (or the
  per-call schema) allow; `source` is `{"dialect": "langchain_hitl", "tools": [names]}`, plus
  `"mode": "per_call"` for a per-call question.
- Native answer: `{"decisions": [...]}` (batched) or one decision (per-call), checked against what the tool
  allows and resumed with exactly as sent.
- Our answer `{"action": ..., "note"?, "args"?}`: translated to one decision per action request. Our `args`
  names the arguments to change; the others keep the values the model asked for.
- A cancellation (`{"action": "cancelled", "reason", "by"}`, a person's cancel without `on_cancel`): a `reject`
  decision per call carrying `Cancelled: <reason>` as its message (a `respond` with it where the tool allows no
  reject); a call that allows neither cannot be cancelled (`cancel_problem`), since the middleware raises on a
  decision its config does not allow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_wait.dialects._cancellation import cancellation_message, is_cancellation

__all__ = ("NAME", "answer_problem", "cancel_problem", "is_native", "recognize", "to_resume")

NAME = "langchain_hitl"
"""The `dialect` recorded in the envelope's `source`."""

PER_CALL = "per_call"
"""The `mode` recorded in the envelope's `source` for a per-call question."""

_PER_CALL_KEYS = {"type", "tool_call_id", "name", "args", "description"}

DECISIONS = ("approve", "edit", "reject", "respond")
"""The middleware's decision types, in its own order."""

_FIELDS = {
    "approve": ({"type"}, set()),
    "edit": ({"type", "edited_action"}, set()),
    "reject": ({"type"}, {"message"}),
    "respond": ({"type", "message"}, set()),
}
"""Required and optional keys of each decision type."""


Request = tuple[str, list[str], Mapping[str, Any]]
"""One reviewed call: (tool name, allowed decisions, the arguments the model asked for)."""


def _requests(value: Any, response_schema: Any = None) -> list[Request] | None:
    """The reviewed calls of a middleware interrupt value (one for per-call mode); None for anything else."""
    if _is_per_call(value):
        allowed = _schema_decisions(response_schema)
        return [(value["name"], allowed, value["args"])] if allowed else None
    if not isinstance(value, Mapping) or set(value) != {"action_requests", "review_configs"}:
        return None
    requests, configs = value["action_requests"], value["review_configs"]
    if not _objects(requests) or not _objects(configs) or not requests:
        return None
    allowed_by_name: dict[str, list[str]] = {}
    for config in configs:
        name, allowed = config.get("action_name"), config.get("allowed_decisions")
        if not isinstance(name, str) or not isinstance(allowed, list) or not allowed:
            return None
        if not all(isinstance(d, str) and d in DECISIONS for d in allowed):
            return None
        allowed_by_name.setdefault(name, list(allowed))
    out = []
    for request in requests:
        name = request.get("name")
        if not isinstance(name, str) or not isinstance(request.get("args"), Mapping) or name not in allowed_by_name:
            return None
        out.append((name, allowed_by_name[name], request["args"]))
    return out


def _is_per_call(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and set(value) == _PER_CALL_KEYS
        and value["type"] == "tool_approval"
        and isinstance(value["name"], str)
        and isinstance(value["args"], Mapping)
    )


def _schema_decisions(schema: Any) -> list[str]:
    """The decision types a per-call `response_schema` allows, in the middleware's order; empty when unreadable.

    The middleware builds a `oneOf` discriminated by `type` (its `mapping` names each type), or, for a tool
    with one decision type, that decision's plain object schema (`properties.type.const`).
    """
    if not isinstance(schema, Mapping):
        return []
    discriminator = schema.get("discriminator")
    if isinstance(discriminator, Mapping) and isinstance(discriminator.get("mapping"), Mapping):
        named = set(discriminator["mapping"])
    else:
        kind = (schema.get("properties") or {}).get("type") if isinstance(schema.get("properties"), Mapping) else None
        named = {kind.get("const")} if isinstance(kind, Mapping) else set()
    return [d for d in DECISIONS if d in named]


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, Mapping) for item in value)


def recognize(value: Any, response_schema: Any = None) -> tuple[tuple[str, ...], bool, dict[str, Any]] | None:
    """`(allowed_actions, allow_edits, source)` for a middleware interrupt value; None when it is not one.

    Our edit form (`{"action": "approve", "args": {...}}`) can only name one call, so edits are offered
    only for a single action request that allows `edit`.
    """
    requests = _requests(value, response_schema)
    if requests is None:
        return None
    allowed = tuple(d for d in DECISIONS if any(d in a for _, a, _ in requests))
    allow_edits = len(requests) == 1 and "edit" in requests[0][1]
    source: dict[str, Any] = {"dialect": NAME, "tools": _names(requests)}
    if _is_per_call(value):
        source["mode"] = PER_CALL
    return allowed, allow_edits, source


def is_native(answer: Any) -> bool:
    """True for the middleware's own answer shape (anything without our `action`)."""
    return not (isinstance(answer, Mapping) and "action" in answer)


def answer_problem(question: Any, answer: Any, response_schema: Any = None) -> str | None:
    """What is wrong with `answer` to the middleware's `question`, or None when it can be applied."""
    requests = _requests(question, response_schema)
    if requests is None:
        return "the question is not a HumanInTheLoopMiddleware request any more; it cannot be answered"
    if is_native(answer):
        if _is_per_call(question):
            problem = _decision_problem(requests[0][0], requests[0][1], answer)
            return f"answer must be one decision for {requests[0][0]}: {problem}" if problem else None
        return _native_problem(requests, answer)
    return _ours_problem(requests, answer)


def _native_problem(requests: list[Request], answer: Any) -> str | None:
    expected = f"{{'decisions': [...]}} with {len(requests)} decision(s), one per action request {_names(requests)}"
    if not isinstance(answer, Mapping) or set(answer) != {"decisions"} or not isinstance(answer["decisions"], list):
        return f"answer must be {expected}, or {{'action': ...}}"
    decisions = answer["decisions"]
    if len(decisions) != len(requests):
        return f"answer must be {expected}; got {len(decisions)}"
    for index, ((name, allowed, _), decision) in enumerate(zip(requests, decisions, strict=True)):
        problem = _decision_problem(name, allowed, decision)
        if problem:
            return f"decision {index} (for {name}): {problem}"
    return None


def _decision_problem(name: str, allowed: Sequence[str], decision: Any) -> str | None:
    kind = decision.get("type") if isinstance(decision, Mapping) else None
    if not isinstance(decision, Mapping) or not isinstance(kind, str) or kind not in allowed:
        return f"must be an object whose type is one of {list(allowed)}"
    required, optional = _FIELDS[kind]
    keys = set(decision)
    if not required <= keys or not keys <= required | optional:
        return f"a {kind} decision has exactly the keys {sorted(required)} (optional: {sorted(optional)})"
    if "message" in decision and not isinstance(decision["message"], str):
        return "message must be a string"
    if kind == "edit":
        action = decision["edited_action"]
        if not isinstance(action, Mapping) or set(action) != {"name", "args"}:
            return "edited_action must be {'name': ..., 'args': {...}}"
        if action["name"] != name:
            return f"edited_action.name must be {name!r}; an edit may not switch tools"
        if not isinstance(action["args"], Mapping):
            return "edited_action.args must be an object"
    return None


def _ours_problem(requests: list[Request], answer: Mapping[str, Any]) -> str | None:
    action, note, edits = answer.get("action"), answer.get("note"), answer.get("args")
    if note is not None and not isinstance(note, str):
        return "note must be a string"
    if edits is not None or action == "edit":
        if len(requests) != 1:
            calls = f"{len(requests)} calls {_names(requests)}"
            return f"an edit names one call; this question reviews {calls}: answer {{'decisions': [...]}}"
        if not isinstance(edits, Mapping):
            return f"an edit carries 'args', an object of {requests[0][0]}'s arguments"
        action = "edit"
    if action == "respond" and note is None:
        return "a respond answer carries the reply as 'note'"
    refusing = [name for name, allowed, _ in requests if action not in allowed]
    if refusing:
        return f"{action!r} is not allowed for {refusing}; answer {{'decisions': [...]}} with one decision per call"
    return None


_REFUSING = ("reject", "respond")
"""The decisions that run no tool, in the order a cancellation prefers them."""


def cancel_problem(question: Any, response_schema: Any = None) -> str | None:
    """Why a cancellation cannot reach the middleware's `question` (a call that allows neither reject nor respond)."""
    requests = _requests(question, response_schema)
    if requests is None:
        return "the question is not a HumanInTheLoopMiddleware request any more; it cannot be cancelled"
    stuck = [name for name, allowed, _ in requests if not any(d in allowed for d in _REFUSING)]
    if stuck:
        return (
            f"a cancel reaches HumanInTheLoopMiddleware as a reject (or respond) decision, and {stuck} allows "
            "neither; answer the question instead"
        )
    return None


def to_resume(question: Any, answer: Any, response_schema: Any = None) -> Any:
    """The value the middleware receives: a native answer as sent; ours as one decision per action request.

    Our edit names the arguments to change (as for `@wait`); the edited call keeps the model's other arguments.
    A cancellation is a `reject` per call with its reason (`respond` where the call allows no reject).
    """
    requests = _requests(question, response_schema)
    if requests is None or is_native(answer):
        return answer
    action, note, edits = answer.get("action"), answer.get("note"), answer.get("args")
    if is_cancellation(answer):
        message = cancellation_message(answer)
        kinds = [next((d for d in _REFUSING if d in allowed), "reject") for _, allowed, _ in requests]
        decisions = [{"type": kind, "message": message} for kind in kinds]
    elif edits is not None or action == "edit":
        name, _, asked = requests[0]
        args = {**asked, **edits} if isinstance(edits, Mapping) else edits  # checked to be an object beforehand
        decisions = [{"type": "edit", "edited_action": {"name": name, "args": args}}]
    else:
        decision: dict[str, Any] = {"type": action}
        if note is not None and action in ("reject", "respond"):
            decision["message"] = note
        decisions = [dict(decision) for _ in requests]
    return decisions[0] if _is_per_call(question) else {"decisions": decisions}


def _names(requests: list[Request]) -> list[str]:
    return [name for name, _, _ in requests]
