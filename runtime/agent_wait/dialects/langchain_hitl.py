"""LangChain's `HumanInTheLoopMiddleware` (batched mode), as a dialect. Standard library only.

The middleware parks once per model turn on `{"action_requests": [...], "review_configs": [...]}` and
resumes with `{"decisions": [...]}`, one decision per action request, in order (langchain 1.x,
`langchain.agents.middleware.human_in_the_loop`; shapes pinned in tests/langgraph/test_hitl_dialect.py).
The shapes are recognised structurally, so the core never imports langchain.

- Question: one question per interrupt; `allowed_actions` is the union of the configs' `allowed_decisions`;
  `source` is `{"dialect": "langchain_hitl", "tools": [names]}`.
- Native answer `{"decisions": [...]}`: checked against the configs and resumed with exactly as sent.
- Our answer `{"action": ..., "note"?, "args"?}`: translated to one decision per action request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ("NAME", "answer_problem", "is_native", "recognize", "to_resume")

NAME = "langchain_hitl"
"""The `dialect` recorded in the envelope's `source`."""

DECISIONS = ("approve", "edit", "reject", "respond")
"""The middleware's decision types, in its own order."""

_FIELDS = {
    "approve": ({"type"}, set()),
    "edit": ({"type", "edited_action"}, set()),
    "reject": ({"type"}, {"message"}),
    "respond": ({"type", "message"}, set()),
}
"""Required and optional keys of each decision type."""


def _requests(value: Any) -> list[tuple[str, list[str]]] | None:
    """`[(tool name, allowed decisions)]` for a middleware interrupt value; None for anything else."""
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
        out.append((name, allowed_by_name[name]))
    return out


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, Mapping) for item in value)


def recognize(value: Any) -> tuple[tuple[str, ...], bool, dict[str, Any]] | None:
    """`(allowed_actions, allow_edits, source)` for a middleware interrupt value; None when it is not one.

    Our edit form (`{"action": "approve", "args": {...}}`) can only name one call, so edits are offered
    only for a single action request that allows `edit`.
    """
    requests = _requests(value)
    if requests is None:
        return None
    allowed = tuple(d for d in DECISIONS if any(d in a for _, a in requests))
    allow_edits = len(requests) == 1 and "edit" in requests[0][1]
    return allowed, allow_edits, {"dialect": NAME, "tools": [name for name, _ in requests]}


def is_native(answer: Any) -> bool:
    """True for the middleware's own answer shape (anything without our `action`)."""
    return not (isinstance(answer, Mapping) and "action" in answer)


def answer_problem(question: Any, answer: Any) -> str | None:
    """What is wrong with `answer` to the middleware's `question`, or None when it can be applied."""
    requests = _requests(question)
    if requests is None:
        return "the question is not a HumanInTheLoopMiddleware request any more; it cannot be answered"
    if is_native(answer):
        return _native_problem(requests, answer)
    return _ours_problem(requests, answer)


def _native_problem(requests: list[tuple[str, list[str]]], answer: Any) -> str | None:
    expected = f"{{'decisions': [...]}} with {len(requests)} decision(s), one per action request {_names(requests)}"
    if not isinstance(answer, Mapping) or set(answer) != {"decisions"} or not isinstance(answer["decisions"], list):
        return f"answer must be {expected}, or {{'action': ...}}"
    decisions = answer["decisions"]
    if len(decisions) != len(requests):
        return f"answer must be {expected}; got {len(decisions)}"
    for index, ((name, allowed), decision) in enumerate(zip(requests, decisions, strict=True)):
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


def _ours_problem(requests: list[tuple[str, list[str]]], answer: Mapping[str, Any]) -> str | None:
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
    refusing = [name for name, allowed in requests if action not in allowed]
    if refusing:
        return f"{action!r} is not allowed for {refusing}; answer {{'decisions': [...]}} with one decision per call"
    return None


def to_resume(question: Any, answer: Any) -> Any:
    """The value the middleware receives: a native answer as sent; ours as one decision per action request."""
    requests = _requests(question)
    if requests is None or is_native(answer):
        return answer
    action, note, edits = answer.get("action"), answer.get("note"), answer.get("args")
    if edits is not None or action == "edit":
        args = dict(edits) if isinstance(edits, Mapping) else edits  # checked to be an object before the decision
        return {"decisions": [{"type": "edit", "edited_action": {"name": requests[0][0], "args": args}}]}
    decision: dict[str, Any] = {"type": action}
    if note is not None and action in ("reject", "respond"):
        decision["message"] = note
    return {"decisions": [dict(decision) for _ in requests]}


def _names(requests: list[tuple[str, list[str]]]) -> list[str]:
    return [name for name, _ in requests]
