"""The one reading of a question, for every channel: what kind it is, its headline, the calls it asks about, its text,
and which answers one press of a button can give. Standard library only.

Slack's blocks, Teams' cards, the emails and the signed-link page all draw a question from this reading, as the inbox
page draws it (`host/api/pages/inbox-reading.js`: `summary`, `callOf`, `reviewOf`), so a question reads the same
everywhere:

| Kind | What it is | Headline | Blocks |
|---|---|---|---|
| `review` | LangChain `HumanInTheLoopMiddleware`'s batched review | `Review 2 tool calls: a, b` | one per call |
| `agent_inbox` | an Agent Inbox `HumanInterrupt` | `name(arg=value, ...)` | the call |
| `call` | a `@wait` call, the middleware's per-call approval | `name(arg=value, ...)` | the call |
| `response_schema` | a question whose answer must fit a JSON Schema | its prompt | its text, a form |
| (the same, or `prompt`) | an MCP elicitation round (`mcp_elicitation`) | its message | each message and link |
| `prompt` | anything else: a plain ask | its prompt | its text and facts |

A call's description is Markdown; each channel converts it (Slack's mrkdwn, an email's HTML, Teams' own Markdown).
`shown(value)` writes an argument's value as a person reads it, never as JSON of an object.

Example:
    >>> from agent_wait.contract.envelope import Question, WaitEnvelope
    >>> envelope = WaitEnvelope.create(Question("t-1", "q-1", {"args": {"amount": 900}, "function": "refund"}))
    >>> read(envelope).headline
    'refund(amount=900)'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.dialects.mcp_elicitation import is_web_url

__all__ = (
    "HEADLINE_CHARS",
    "PROMPT_KEYS",
    "UNNAMED_CALL",
    "Call",
    "FormField",
    "Kind",
    "Reading",
    "call_of",
    "plain_text",
    "prompt_of",
    "read",
    "shown",
    "summary",
)

UNNAMED_CALL = "(unnamed call)"
PROMPT_KEYS = ("prompt", "message", "description", "question", "summary", "title")
"""Where a question that is not a call keeps its text, first found first."""
HEADLINE_CHARS = 140
"""The longest headline, as the inbox's list and page heading clip it."""
NEEDS_MORE = frozenset({"edit", "respond", "response"})
"""Answers one press cannot give: an edit carries arguments, a reply carries its text."""
_SCHEMA_KEYS = ("response_schema", "answer_schema")


class Kind(StrEnum):
    """What a question is, as every channel draws it (the module's table)."""

    REVIEW = "review"
    AGENT_INBOX = "agent_inbox"
    CALL = "call"
    SCHEMA = "response_schema"
    PROMPT = "prompt"


@dataclass(frozen=True, slots=True)
class Call:
    """The call a question asks about: a `@wait` function, a LangChain per-call review, an Agent Inbox request, or one
    call of a batched review."""

    name: str
    args: Mapping[str, Any]
    description: str = ""
    """The dialect's description of the call (Markdown), or empty."""
    decisions: tuple[str, ...] = ()
    """A batched review's decisions this call allows; empty for any other question."""


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of the answer a `response_schema` question asks for."""

    name: str
    title: str
    required: bool
    description: str = ""


@dataclass(frozen=True, slots=True)
class Reading:
    """A question as every channel shows it."""

    kind: Kind
    headline: str
    """One line of plain text, at most `HEADLINE_CHARS`: the message's header, the card's title, the email's
    subject."""
    calls: tuple[Call, ...] = ()
    """The calls asked about: one for a call, each of a batched review; none for other questions."""
    text: str = ""
    """A question's own text (Markdown), shown under the headline when it says more than the headline."""
    facts: tuple[tuple[str, Any], ...] = ()
    """The other fields of a question that is an object, as (name, value): a table."""
    form: tuple[FormField, ...] = ()
    """The fields a `response_schema` answer holds."""
    one_click: tuple[str, ...] = ()
    """The answers one press gives as they are (`{"action": a}`): a Slack button's, a signed link's."""
    elsewhere: str = ""
    """What this question takes that a press cannot give, and where (an edit, a reply, a decision per call, a form),
    as a sentence a channel shows beside its buttons; empty when a press gives every answer."""


def read(envelope: WaitEnvelope) -> Reading:
    """The reading of `envelope`'s question (see the module)."""
    review = _review_of(envelope)
    if review is not None:
        return _with_buttons(envelope, Reading(Kind.REVIEW, _review_headline(review), review))
    call = call_of(envelope)
    if call is not None:
        kind = Kind.AGENT_INBOX if _dialect(envelope) == "agent_inbox" else Kind.CALL
        return _with_buttons(envelope, Reading(kind, _clip(_call_text(call), HEADLINE_CHARS), (call,)))
    if _dialect(envelope) == "mcp_elicitation":
        return _with_buttons(envelope, _elicitation(envelope))
    question = _single(envelope.question)
    text = prompt_of(envelope) or ""
    facts = _facts(question, text)
    headline = _clip(plain_text(text).strip().split("\n", 1)[0], HEADLINE_CHARS) if text.strip() else "A question"
    text = text if plain_text(text).strip() != headline else ""  # a one-line prompt is its headline: said once
    schema = _schema(envelope)
    if schema is not None:
        return _with_buttons(envelope, Reading(Kind.SCHEMA, headline, (), text, facts, _form(schema)))
    return _with_buttons(envelope, Reading(Kind.PROMPT, headline, (), text, facts))


def summary(envelope: WaitEnvelope) -> str:
    """The question's headline: one line, as the inbox writes it."""
    return read(envelope).headline


# -- what is asked ------------------------------------------------------------------------------------------------


def _single(question: Any) -> Any:
    """A list of one question (a batch of one review) is that question."""
    return question[0] if isinstance(question, list) and len(question) == 1 else question


def _dialect(envelope: WaitEnvelope) -> str | None:
    source = envelope.source if isinstance(envelope.source, Mapping) else {}
    return source.get("dialect") if isinstance(source.get("dialect"), str) else None


def call_of(envelope: WaitEnvelope) -> Call | None:
    """The one call `envelope` asks about, or None when it asks something else (a batched review asks about each of
    its calls: `read(envelope).calls`)."""
    question = _single(envelope.question)
    if not isinstance(question, Mapping):
        return None
    description = question.get("description")
    description = description if isinstance(description, str) else ""
    request = question.get("action_request")
    if isinstance(request, Mapping) and isinstance(request.get("args"), Mapping):
        return Call(str(request.get("action") or UNNAMED_CALL), request["args"], description)
    if not isinstance(question.get("args"), Mapping):
        return None
    source = envelope.source or {}
    name = source.get("function") or question.get("function") or question.get("name") or UNNAMED_CALL
    return Call(str(name), question["args"], description)


def _review_of(envelope: WaitEnvelope) -> tuple[Call, ...] | None:
    """A batched review's calls, each with its description and the decisions its config allows; None otherwise."""
    source = envelope.source if isinstance(envelope.source, Mapping) else {}
    question = envelope.question
    if source.get("dialect") != "langchain_hitl" or source.get("mode") == "per_call":
        return None
    if not isinstance(question, Mapping) or not isinstance(question.get("action_requests"), list):
        return None
    allowed: dict[str, tuple[str, ...]] = {}
    for config in question.get("review_configs") or ():
        if isinstance(config, Mapping) and isinstance(config.get("action_name"), str):
            decisions = config.get("allowed_decisions")
            allowed.setdefault(config["action_name"], tuple(d for d in decisions or () if isinstance(d, str)))
    calls = []
    for request in question["action_requests"]:
        if not isinstance(request, Mapping):
            continue
        name = str(request.get("name") or UNNAMED_CALL)
        args, description = request.get("args"), request.get("description")
        args = args if isinstance(args, Mapping) else {}
        description = description if isinstance(description, str) else ""
        calls.append(Call(name, args, description, allowed.get(name, ())))
    return tuple(calls)


def _review_headline(calls: tuple[Call, ...]) -> str:
    if len(calls) == 1:
        return _clip(f"Review {_call_text(calls[0])}", HEADLINE_CHARS)
    names = ", ".join(call.name for call in calls)
    return _clip(f"Review {len(calls)} tool calls: {names}", HEADLINE_CHARS)


def _call_text(call: Call) -> str:
    """`name(arg=value, ...)`: a string or number as JSON writes it, an object or a list as `{…}` or `[…]`."""
    return f"{call.name}({', '.join(f'{k}={_brief(v)}' for k, v in call.args.items())})"


def _brief(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{…}" if value else "{}"
    if isinstance(value, (list, tuple)):
        return "[…]" if value else "[]"
    return json.dumps(value, ensure_ascii=False)


def prompt_of(envelope: WaitEnvelope, keys: tuple[str, ...] = PROMPT_KEYS) -> str | None:
    """The text of a question that is plain text, or keeps it under one of `keys`; None otherwise."""
    question = _single(envelope.question)
    if isinstance(question, str):
        return question
    if isinstance(question, Mapping):
        for key in keys:
            if isinstance(question.get(key), str):
                return question[key]
    return None


def _facts(question: Any, text: str) -> tuple[tuple[str, Any], ...]:
    """The fields of an object question besides its text and its answer's schema; an answer of a list, each item."""
    if isinstance(question, Mapping):
        return tuple(
            (str(key), value)
            for key, value in question.items()
            if key not in _SCHEMA_KEYS and not (isinstance(value, str) and value == text)
        )
    if isinstance(question, list):
        return tuple((str(n), value) for n, value in enumerate(question, start=1))
    if question is not None and not isinstance(question, str):
        return (("value", question),)
    return ()


def _schema(envelope: WaitEnvelope) -> Mapping[str, Any] | None:
    schema = envelope.rules.get("response_schema")
    question = _single(envelope.question)
    inside = [question.get(key) for key in _SCHEMA_KEYS] if isinstance(question, Mapping) else []
    for found in (schema, *inside):
        if isinstance(found, Mapping):
            return found
    return None


def _form(schema: Mapping[str, Any]) -> tuple[FormField, ...]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = set(schema.get("required") or ())
    fields = []
    for name, declared in properties.items():
        prop = declared if isinstance(declared, Mapping) else {}
        title, description = str(prop.get("title") or name), prop.get("description")
        description = description if isinstance(description, str) else ""
        fields.append(FormField(str(name), title, name in required, description))
    return tuple(fields)


def _elicitation(envelope: WaitEnvelope) -> Reading:
    """An MCP elicitation round: the server's messages and, for a URL request, its link, written out as the link's own
    label so every channel shows where it leads; nothing else (no schema, no facts), so no message carries more than
    the server said. Its form (the round's form requests) is the answer form in `rules.response_schema`."""
    question = envelope.question if isinstance(envelope.question, Mapping) else {}
    requests = [r for r in question.get("requests") or () if isinstance(r, Mapping)]
    messages = [str(request.get("message") or "") for request in requests]
    first = plain_text(messages[0]).strip().split("\n", 1)[0] if messages else ""
    many = f"{question.get('tool_name') or 'An MCP tool'} asks {len(requests)} things"
    headline = _clip((first if len(requests) == 1 else many) or "An MCP server asks", HEADLINE_CHARS)
    parts = []
    for request, message in zip(requests, messages, strict=True):
        said = "" if plain_text(message).strip() == headline else message  # a one-line message is the headline
        url = request.get("url")
        if request.get("mode") == "url" and isinstance(url, str):
            link = f"[{url}]({url})" if is_web_url(url) else f"`{url}`"  # only a web address is made a link
            said = f"{said}\n\n{link}".strip()
        parts.append(said)
    text = "\n\n".join(part for part in parts if part.strip())
    schema = envelope.rules.get("response_schema")
    if not isinstance(schema, Mapping):
        return Reading(Kind.PROMPT, headline, (), text)
    then = schema.get("then")
    on_accept = set(then.get("required") or ()) if isinstance(then, Mapping) else set()
    form = tuple(  # a field is required to accept
        FormField(f.name, f.title, f.name in on_accept, f.description)
        for f in _form(schema)
        if f.name not in ("action", "note")  # the buttons, and a note every channel offers
    )
    return Reading(Kind.SCHEMA, headline, (), text, (), form)


# -- which answers a press gives ----------------------------------------------------------------------------------


def _with_buttons(envelope: WaitEnvelope, reading: Reading) -> Reading:
    one_click, elsewhere = _presses(envelope, reading)
    return Reading(
        reading.kind,
        reading.headline,
        reading.calls,
        reading.text,
        reading.facts,
        reading.form,
        one_click,
        elsewhere,
    )


def _presses(envelope: WaitEnvelope, reading: Reading) -> tuple[tuple[str, ...], str]:
    """The answers `{"action": a}` gives as it is, and a sentence for what else the question takes."""
    allowed = tuple(envelope.allowed_actions)
    schema = envelope.rules.get("response_schema")
    if _dialect(envelope) == "mcp_elicitation" and isinstance(schema, Mapping):
        # Decline and cancel carry nothing; an accept carries the form, unless the server requires none of it.
        pressed = tuple(a for a in allowed if a != "accept" or "then" not in schema)
        return pressed, ("" if pressed == allowed else "To accept, fill in its form: answer it in the inbox.")
    if reading.kind is Kind.SCHEMA or (isinstance(schema, Mapping) and _dialect(envelope) is None):
        fits = _action_alone_fits(schema if isinstance(schema, Mapping) else {})
        return (allowed if fits else ()), ("" if fits else "It asks for a form: answer it in the inbox.")
    if reading.kind is Kind.REVIEW:
        every = tuple(a for a in allowed if all(a in call.decisions for call in reading.calls))
        pressed = tuple(a for a in every if a not in NEEDS_MORE)
        edits = any("edit" in call.decisions for call in reading.calls)
        what = "edit a call or decide each call on its own" if edits else "decide each call on its own"
        return pressed, f"Each button decides every call alike; to {what}, open the inbox."
    if reading.kind in (Kind.AGENT_INBOX, Kind.CALL) and _dialect(envelope) is not None:
        pressed = tuple(a for a in allowed if a not in NEEDS_MORE)
        more = [w for a, w in (("edit", "edit the call"), ("respond", "reply"), ("response", "reply")) if a in allowed]
        return pressed, (f"To {' or '.join(more)}, open the inbox." if more else "")
    edits = reading.kind is Kind.CALL and envelope.rules.get("edits") is not False
    return allowed, ("To change the call's arguments before approving it, open the inbox." if edits else "")


def _action_alone_fits(schema: Mapping[str, Any]) -> bool:
    """Whether `{"action": a}` is a whole answer to a question with this schema: it names an `action` property and
    requires nothing else."""
    properties = schema.get("properties")
    return (
        isinstance(properties, Mapping)
        and isinstance(properties.get("action"), Mapping)
        and set(schema.get("required") or ()) <= {"action"}
    )


# -- text ---------------------------------------------------------------------------------------------------------


def shown(value: Any) -> str:
    """A value as a person reads it in a table: text as it is, a number as written, a list's items joined, an object
    as `name: value` pairs; never JSON's quoted keys."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "; ".join(f"{key}: {_flat(item)}" for key, item in value.items()) or "(none)"
    if isinstance(value, (list, tuple)):
        return ", ".join(_flat(item) for item in value) or "(none)"
    return json.dumps(value, ensure_ascii=False)


def _flat(value: Any) -> str:
    """A value inside another: an object as `{name: value, ...}`, a list as `[a, b]`, without JSON's quotes."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key}: {_flat(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flat(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


_MARKS = (
    (re.compile(r"\*\*([^*\n]+)\*\*"), r"\1"),
    (re.compile(r"__([^_\n]+)__"), r"\1"),
    (re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])"), r"\1"),
    (re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)"), r"\1 (\2)"),
    (re.compile(r"^#{1,6}\s+", re.MULTILINE), ""),
)


def plain_text(markdown: str) -> str:
    """Markdown as plain text: emphasis markers dropped, a link as `label (url)`, headings as lines."""
    text = markdown
    for pattern, replacement in _MARKS:
        text = pattern.sub(replacement, text)
    return text


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
