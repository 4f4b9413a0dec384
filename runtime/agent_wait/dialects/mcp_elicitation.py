"""MCP elicitation, as LangChain's `MCPAdapter` raises it, as a dialect. Standard library only.

An MCP server that needs a person returns an `InputRequiredResult` (MCP 2026-07-28) whose `inputRequests`
ask for a form (`requestedSchema`, a flat object of primitive properties) or for a visit to a URL. LangChain's
`MCPAdapter` (langchain 1.5, `langchain.mcp.elicitation`) turns each such round into

    interrupt({"type": "mcp_elicitation", "tool_name": name,
               "requests": [{"key", "message", "mode": "form", "requested_schema"}
                            | {"key", "message", "mode": "url", "url"}]})

and retries the tool call with the resume value `{"responses": {key: {"action": "accept"|"decline"|"cancel",
"content"?: {...}}}}`, one response per request key. `agent_wait.mcp.input_required` parks on the same value for
agents that call MCP servers themselves. Shapes pinned in tests/core/test_mcp_elicitation_dialect.py.

- Question: one question per round; `allowed_actions` are MCP's own `accept`, `decline`, `cancel`; `source` is
  `{"dialect": "mcp_elicitation", "tool": name, "modes": [...]}`. The round's form requests become one answer
  form (`form_schema`, the envelope's `rules.response_schema`): an `action` property and each request's fields,
  named as requested when the round asks one form, else `<key>.<field>` (also any field named `action`, `note` or
  `args`, which every channel's form keeps for itself).
- Our answer `{"action": ..., <field>: value, ..., "note"?}` (what the inbox, the Slack modal and the CLI send): the
  action answers every request of the round alike; an accept carries each form request's fields as its `content`; a
  decline or a cancel carries none (form values sent with it are dropped, never forwarded); a URL request never
  carries content; a note stays in agent-wait's record (the server has no field for it).
- Native answer `{"responses": {key: {...}}}`: one response per request key, resumed exactly as sent (a round's
  requests answered differently).
- A cancellation (a person's cancel without `on_cancel`): `cancel` for every request, so the server abandons the
  call.
- Every accepted form's content is checked by the host against that request's own `requested_schema`
  (`schema_checks`), so the server receives only content it asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_wait.dialects._cancellation import is_cancellation

__all__ = (
    "ACTIONS",
    "NAME",
    "answer_problem",
    "cancel_problem",
    "field_names",
    "form_schema",
    "is_native",
    "is_web_url",
    "recognize",
    "schema_checks",
    "to_resume",
)

NAME = "mcp_elicitation"
"""The `dialect` recorded in the envelope's `source`, and the interrupt value's `type`."""

ACTIONS = ("accept", "decline", "cancel")
"""MCP's answer actions, in the spec's order: accept (with content for a form), decline (the call goes on without
it), cancel (the call is abandoned)."""

FORM, URL = "form", "url"
"""The two request modes."""

RESERVED = frozenset({"action", "note", "args"})
"""Names every channel's answer form keeps for itself: a request's field so named is asked as `<key>.<name>`."""

_CONTENT_KINDS = (str, int, float, bool)
"""What a form field's value may be (besides null and a list of strings), as `mcp.types.ElicitResult.content`."""


Request = Mapping[str, Any]
"""One request of a round: `{"key", "message", "mode": "form", "requested_schema"}` or `{..., "mode": "url", "url"}`."""


def _round(value: Any) -> tuple[str, list[Request]] | None:
    """`(tool name, requests)` of an elicitation interrupt value; None for anything else."""
    if not isinstance(value, Mapping) or set(value) != {"type", "tool_name", "requests"} or value["type"] != NAME:
        return None
    tool, requests = value["tool_name"], value["requests"]
    if not isinstance(tool, str) or not isinstance(requests, list) or not requests:
        return None
    keys = [request.get("key") if isinstance(request, Mapping) else None for request in requests]
    if len(set(keys)) != len(keys) or not all(_is_request(request) for request in requests):
        return None
    return tool, requests


def _is_request(request: Any) -> bool:
    if not isinstance(request, Mapping) or not isinstance(request.get("key"), str) or not request["key"]:
        return False
    if not isinstance(request.get("message"), str):
        return False
    if request.get("mode") == FORM:
        schema = request.get("requested_schema")
        return set(request) == {"key", "message", "mode", "requested_schema"} and isinstance(schema, Mapping)
    url = request.get("url")
    return request.get("mode") == URL and set(request) == {"key", "message", "mode", "url"} and isinstance(url, str)


def is_web_url(url: Any) -> bool:
    """Whether a URL request's address may be shown as a link a person opens (http or https); any other is shown
    as text, never as a link."""
    return isinstance(url, str) and url.lower().startswith(("https://", "http://"))


def _properties(request: Request) -> Mapping[str, Any]:
    properties = request.get("requested_schema", {}).get("properties")
    return properties if isinstance(properties, Mapping) else {}


def field_names(requests: list[Request]) -> dict[str, tuple[str, str]]:
    """Each form field of the round's answer form: its name -> (request key, the request's own field name).

    A round that asks one form keeps its fields' names; otherwise (or for a name in `RESERVED`) a field is
    `<key>.<name>`, so two requests asking for the same name stay apart.
    """
    forms = [request for request in requests if request["mode"] == FORM]
    out: dict[str, tuple[str, str]] = {}
    for request in forms:
        for name in _properties(request):
            plain = len(forms) == 1 and name not in RESERVED
            out[name if plain else f"{request['key']}.{name}"] = (request["key"], str(name))
    return out


def form_schema(question: Any) -> dict[str, Any] | None:
    """The round's answer form as a JSON Schema (the envelope's `rules.response_schema`): an `action` property
    (`accept`, `decline`, `cancel`), every form request's fields and a `note`; None when the round asks no form.

    A field the server requires is required for an accept only (`if`/`then`), so a decline needs no field filled.
    """
    found = _round(question)
    if found is None:
        return None
    _, requests = found
    names = field_names(requests)
    if not names:
        return None
    by_request = {request["key"]: request for request in requests}
    properties: dict[str, Any] = {"action": {"type": "string", "enum": list(ACTIONS), "title": "Answer"}}
    required_on_accept: list[str] = []
    several = len({key for key, _ in names.values()}) > 1
    for name, (key, own) in names.items():
        request = by_request[key]
        declared = _properties(request)[own]
        prop = dict(declared) if isinstance(declared, Mapping) else {}
        if several or name != own:
            prop["title"] = f"{prop.get('title') or own} ({key})"
        properties[name] = prop
        if own in (request["requested_schema"].get("required") or ()):
            required_on_accept.append(name)
            # The forms show it as optional (a decline needs nothing): say it, as the field's hint.
            prop["description"] = " ".join(filter(None, [prop.get("description"), "Required to accept."]))
    # A note for agent-wait's record, as every form offers one (never sent: MCP has no field for it).
    properties["note"] = {"type": "string", "title": "Note"}
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": ["action"]}
    if required_on_accept:
        schema["if"] = {"properties": {"action": {"const": "accept"}}}
        schema["then"] = {"required": required_on_accept}
    return schema


def recognize(value: Any, response_schema: Any = None) -> tuple[tuple[str, ...], bool, dict[str, Any]] | None:
    """`(allowed_actions, allow_edits, source)` for an elicitation interrupt value; None when it is not one."""
    found = _round(value)
    if found is None:
        return None
    tool, requests = found
    modes = list(dict.fromkeys(request["mode"] for request in requests))
    return ACTIONS, False, {"dialect": NAME, "tool": tool, "modes": modes}


def is_native(answer: Any) -> bool:
    """True for the payload's own resume shape (anything without our `action`)."""
    return not (isinstance(answer, Mapping) and "action" in answer)


def answer_problem(question: Any, answer: Any, response_schema: Any = None) -> str | None:
    """What is wrong with `answer` to the elicitation round `question`, or None when it can be applied.

    Shapes only: the content's fit to each `requested_schema` is the host's check (`schema_checks`).
    """
    found = _round(question)
    if found is None:
        return "the question is not an MCP elicitation round any more; it cannot be answered"
    _, requests = found
    if is_native(answer):
        return _native_problem(requests, answer)
    return _ours_problem(requests, answer)


def _native_problem(requests: list[Request], answer: Any) -> str | None:
    keys = [request["key"] for request in requests]
    expected = f"{{'responses': {{key: {{'action', 'content'?}}}}}} answering each of the keys {keys}"
    if not isinstance(answer, Mapping) or set(answer) != {"responses"} or not isinstance(answer["responses"], Mapping):
        return f"answer must be {expected}, or {{'action': ...}}"
    responses = answer["responses"]
    missing = [key for key in keys if key not in responses]
    unknown = sorted(str(key) for key in responses if key not in keys)
    if missing or unknown:
        return f"answer must be {expected}; missing: {missing}, unknown: {unknown}"
    for request in requests:
        problem = _response_problem(request, responses[request["key"]])
        if problem:
            return f"the response to {request['key']!r}: {problem}"
    return None


def _response_problem(request: Request, response: Any) -> str | None:
    action = response.get("action") if isinstance(response, Mapping) else None
    if not isinstance(response, Mapping) or action not in ACTIONS:
        return f"must be an object whose action is one of {list(ACTIONS)}"
    if not set(response) <= {"action", "content"}:
        return "a response has only the keys 'action' and 'content'"
    if "content" not in response:
        return None
    if action != "accept":
        return f"a {action} carries no content"
    if request["mode"] == URL:
        return "a URL request is answered at its link: its accept carries no content"
    content = response["content"]
    if not isinstance(content, Mapping):
        return "content must be an object of the form's fields"
    return _values_problem(content, set(_properties(request)))


def _values_problem(content: Mapping[str, Any], fields: set[str]) -> str | None:
    unknown = sorted(str(name) for name in content if name not in fields)
    if unknown:
        return f"content may hold only the requested fields {sorted(fields)}; unknown: {unknown}"
    for name, value in content.items():
        if not (
            value is None
            or isinstance(value, _CONTENT_KINDS)
            or (isinstance(value, list) and all(isinstance(item, str) for item in value))
        ):
            return f"{name!r} must be a string, a number, a boolean, null or a list of strings"
    return None


def _ours_problem(requests: list[Request], answer: Mapping[str, Any]) -> str | None:
    action = answer.get("action")
    if action not in ACTIONS:
        return f"answer must be an object whose action is one of {list(ACTIONS)}"
    names = field_names(requests)
    if answer.get("note") is not None and not isinstance(answer["note"], str):
        return "note must be a string"
    fields = {name: value for name, value in answer.items() if name not in ("action", "note")}
    unknown = sorted(str(name) for name in fields if name not in names)
    if unknown:
        shown = sorted(names) or "none: this round asks no form"
        return f"the answer form's fields are {shown}; unknown: {unknown}"
    if action != "accept":
        return None  # a decline or a cancel forwards no field: nothing to check
    return _values_problem(fields, set(fields))


def cancel_problem(question: Any, response_schema: Any = None) -> str | None:
    """Never a problem: a cancellation reaches the server as MCP's own `cancel` for every request."""
    return None if _round(question) is not None else "the question is not an MCP elicitation round any more"


def to_resume(question: Any, answer: Any, response_schema: Any = None) -> Any:
    """The value the agent resumes with: a native answer as sent; ours as `{"responses": {...}}`, one response per
    request (a cancellation as `cancel` for each)."""
    found = _round(question)
    if found is None or is_native(answer):
        return answer
    _, requests = found
    action = answer.get("action")
    if is_cancellation(answer) or action not in ACTIONS:
        action = "cancel"  # a person's cancel; or a value no person gave (an expiry without a default): abandon it
    contents: dict[str, dict[str, Any]] = {r["key"]: {} for r in requests if r["mode"] == FORM}
    for name, (key, own) in field_names(requests).items():
        if name in answer:
            contents[key][own] = answer[name]
    responses: dict[str, Any] = {}
    for request in requests:
        response: dict[str, Any] = {"action": action}
        if action == "accept" and request["mode"] == FORM:
            response["content"] = contents[request["key"]]
        responses[request["key"]] = response
    return {"responses": responses}


def schema_checks(question: Any, answer: Any) -> list[tuple[Mapping[str, Any], Any, str]]:
    """`(schema, value, what)` for each accepted form's content: the host checks it against the request's own
    `requested_schema` before the answer may decide (what the server would refuse, or worse, act on)."""
    found = _round(question)
    resumed = to_resume(question, answer)
    if found is None or not isinstance(resumed, Mapping) or not isinstance(resumed.get("responses"), Mapping):
        return []
    checks: list[tuple[Mapping[str, Any], Any, str]] = []
    for request in found[1]:
        response = resumed["responses"].get(request["key"])
        if request["mode"] == FORM and isinstance(response, Mapping) and response.get("action") == "accept":
            what = f"the content for {request['key']!r} does not fit its requested_schema"
            checks.append((request["requested_schema"], response.get("content", {}), what))
    return checks
