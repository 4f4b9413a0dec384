"""LangGraph's Agent Inbox `HumanInterrupt`, as a dialect. Standard library only.

A graph written for Agent Inbox parks on `interrupt([request])` (the list form the inbox reads) or
`interrupt(request)`, where `request` is a `HumanInterrupt`:

    {"action_request": {"action": name, "args": {...}},
     "config": {"allow_accept": bool, "allow_edit": bool, "allow_respond": bool, "allow_ignore": bool},
     "description": str | None}

and resumes with a `HumanResponse` `{"type": "accept"|"edit"|"response"|"ignore", "args": ...}` (in a
list of one for the list form): `args` is None for accept and ignore, the reply text for response, and
`{"action", "args"}` for edit. Shapes from `langchain.agents.interrupt` (formerly
`langgraph.prebuilt.interrupt`), pinned in tests/langgraph/test_agent_inbox_dialect.py.

- Question: `allowed_actions` are the response types the config allows, in the order accept, edit,
  response, ignore; `source` is `{"dialect": "agent_inbox", "tools": [action]}`.
- Native answer: a `HumanResponse` (a list of one for the list form), checked against the config and
  resumed with exactly as sent.
- Our answer `{"action": ..., "note"?, "args"?}`: `accept`/`ignore` as they are, `response` with the
  reply as `note`, and an edit (`accept` or `edit` with `args`, the arguments to change) as an `edit`
  response carrying the request's arguments with those changed.
- A cancellation (`{"action": "cancelled", "reason", "by"}`, a person's cancel without `on_cancel`): an `ignore`
  response; a `response` carrying `Cancelled: <reason>` where the config allows no ignore; a request that allows
  neither (accept or edit only) cannot be cancelled (`cancel_problem`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_wait.dialects._cancellation import cancellation_message, is_cancellation

__all__ = ("NAME", "answer_problem", "cancel_problem", "is_native", "recognize", "to_resume")

NAME = "agent_inbox"
"""The `dialect` recorded in the envelope's `source`."""

RESPONSES = {"accept": "allow_accept", "edit": "allow_edit", "response": "allow_respond", "ignore": "allow_ignore"}
"""Each response type and the config flag that allows it, in Agent Inbox's order."""

_REQUEST_KEYS = {"action_request", "config"}
_OPTIONAL_REQUEST_KEYS = {"description"}


def _request(value: Any) -> tuple[dict[str, Any], bool] | None:
    """`(the HumanInterrupt, whether it came as a list of one)`; None when `value` is not one."""
    listed = isinstance(value, list)
    if listed:
        if len(value) != 1:
            return None
        value = value[0]
    if not isinstance(value, Mapping) or not _REQUEST_KEYS <= set(value) <= _REQUEST_KEYS | _OPTIONAL_REQUEST_KEYS:
        return None
    action, config = value["action_request"], value["config"]
    if not isinstance(action, Mapping) or set(action) != {"action", "args"}:
        return None
    if not isinstance(action["action"], str) or not isinstance(action["args"], Mapping):
        return None
    if not isinstance(config, Mapping) or not set(config) <= set(RESPONSES.values()):
        return None
    if not all(isinstance(flag, bool) for flag in config.values()) or not any(config.values()):
        return None
    if value.get("description") is not None and not isinstance(value["description"], str):
        return None
    return dict(value), listed


def _allowed(request: Mapping[str, Any]) -> list[str]:
    return [kind for kind, flag in RESPONSES.items() if request["config"].get(flag) is True]


def recognize(value: Any, response_schema: Any = None) -> tuple[tuple[str, ...], bool, dict[str, Any]] | None:
    """`(allowed_actions, allow_edits, source)` for an Agent Inbox interrupt value; None when it is not one."""
    found = _request(value)
    if found is None:
        return None
    request, _ = found
    allowed = _allowed(request)
    return tuple(allowed), "edit" in allowed, {"dialect": NAME, "tools": [request["action_request"]["action"]]}


def is_native(answer: Any) -> bool:
    """True for Agent Inbox's own answer shape (anything without our `action`)."""
    return not (isinstance(answer, Mapping) and "action" in answer)


def answer_problem(question: Any, answer: Any, response_schema: Any = None) -> str | None:
    """What is wrong with `answer` to the Agent Inbox `question`, or None when it can be applied."""
    found = _request(question)
    if found is None:
        return "the question is not an Agent Inbox HumanInterrupt any more; it cannot be answered"
    request, listed = found
    allowed = _allowed(request)
    asked = request["action_request"]
    if not is_native(answer):
        return _ours_problem(allowed, asked, answer)
    if listed:
        if not isinstance(answer, list) or len(answer) != 1:
            return f"answer must be a list of one HumanResponse, [{{'type': one of {allowed}, 'args': ...}}]"
        answer = answer[0]
    return _response_problem(allowed, asked, answer)


def _response_problem(allowed: list[str], asked: Mapping[str, Any], response: Any) -> str | None:
    kind = response.get("type") if isinstance(response, Mapping) else None
    if not isinstance(response, Mapping) or not isinstance(kind, str) or kind not in allowed:
        return f"answer must be a HumanResponse {{'type': ..., 'args': ...}} whose type is one of {allowed}"
    if not set(response) <= {"type", "args"}:
        return "a HumanResponse has only the keys 'type' and 'args'"
    args = response.get("args")
    if kind in ("accept", "ignore") and args is not None:
        return f"an {kind} response carries no args (null)"
    if kind == "response" and not isinstance(args, str):
        return "a response carries the reply text as args (a string)"
    if kind == "edit" and not (
        isinstance(args, Mapping)
        and set(args) == {"action", "args"}
        and isinstance(args["action"], str)
        and isinstance(args["args"], Mapping)
    ):
        return "an edit response carries args {'action': name, 'args': {...}}"
    if kind == "edit" and isinstance(args, Mapping):
        if args["action"] != asked["action"]:
            return f"an edit keeps the action {asked['action']!r}; an edit may not switch actions"
        # Agent Inbox's edit replaces the arguments whole: the action is called with exactly these.
        if set(args["args"]) != set(asked["args"]):
            return f"an edit response carries every argument of the action, {sorted(asked['args'])}, and no other"
        return _kind_problem(asked["args"], args["args"])
    return None


_KINDS = ((bool, "a boolean"), ((int, float), "a number"), (str, "a string"), (list, "a list"), (Mapping, "an object"))


def _kind(value: Any) -> str:
    """A JSON value's kind, as a message names it (a boolean is not a number here, unlike in Python)."""
    if value is None:
        return "null"
    return next((name for types, name in _KINDS if isinstance(value, types)), type(value).__name__)


def _kind_problem(asked: Mapping[str, Any], edits: Mapping[str, Any]) -> str | None:
    """An edit that gives an argument another kind of value than the action was asked with. The request carries no
    schema, so the kind asked is the kind the action takes: a list where it took a string would fail the agent. An
    argument asked as null may be set to anything (an optional one the action was asked without)."""
    for name in sorted(edits):
        before, after = _kind(asked[name]), _kind(edits[name])
        if before not in (after, "null"):  # asked as null: any kind may set it
            return f"an edit changes values, not their kinds: {name!r} was {before}, the edit makes it {after}"
    return None


def _ours_problem(allowed: list[str], asked: Mapping[str, Any], answer: Mapping[str, Any]) -> str | None:
    action, note, edits = answer.get("action"), answer.get("note"), answer.get("args")
    if note is not None and not isinstance(note, str):
        return "note must be a string"
    if edits is not None or action == "edit":
        if "edit" not in allowed:
            return f"this request does not allow edits; its config allows {allowed}"
        if action not in ("accept", "edit"):
            return f"only an accept or an edit carries 'args'; got action {action!r}"
        if not isinstance(edits, Mapping):
            return "an edit carries 'args', an object naming the arguments to change"
        unknown = sorted(set(edits) - set(asked["args"]))
        if unknown:
            return f"an edit changes the action's arguments {sorted(asked['args'])}; it has no argument {unknown}"
        return _kind_problem(asked["args"], edits)
    if action == "response" and note is None:
        return "a response answer carries the reply as 'note'"
    return None


def cancel_problem(question: Any, response_schema: Any = None) -> str | None:
    """Why a cancellation cannot reach the Agent Inbox `question` (its config allows neither ignore nor response)."""
    found = _request(question)
    if found is None:
        return "the question is not an Agent Inbox HumanInterrupt any more; it cannot be cancelled"
    allowed = _allowed(found[0])
    if "ignore" in allowed or "response" in allowed:
        return None
    return f"a cancel reaches Agent Inbox as an ignore (or a response), and this request allows only {allowed}"


def to_resume(question: Any, answer: Any, response_schema: Any = None) -> Any:
    """The value the graph receives: a native answer as sent; ours as a `HumanResponse` in the question's form
    (a cancellation as `ignore`, or as a `response` with its reason where the config allows no ignore)."""
    found = _request(question)
    if found is None or is_native(answer):
        return answer
    request, listed = found
    action, note, edits = answer.get("action"), answer.get("note"), answer.get("args")
    asked = request["action_request"]
    response: dict[str, Any]
    if is_cancellation(answer):
        ignorable = "ignore" in _allowed(request)
        response = (
            {"type": "ignore", "args": None}
            if ignorable
            else {"type": "response", "args": cancellation_message(answer)}
        )
    elif edits is not None or action == "edit":
        changed = dict(edits) if isinstance(edits, Mapping) else {}
        response = {"type": "edit", "args": {"action": asked["action"], "args": {**asked["args"], **changed}}}
    elif action == "response":
        response = {"type": "response", "args": note}
    else:
        response = {"type": action, "args": None}
    return [response] if listed else response
