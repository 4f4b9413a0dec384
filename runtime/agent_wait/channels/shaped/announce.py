"""`ShapedWebhookAnnounce`: a `WebhookAnnounce` whose body is rendered from a template per transition."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from agent_wait.channels.announce.webhook import WebhookAnnounce
from agent_wait.contract.envelope import Question, Transition, WaitEnvelope
from agent_wait.errors import WebhookTemplateError
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("DEFAULT_KEY", "ShapedWebhookAnnounce", "check_templates")

DEFAULT_KEY = "default"
"""The template for every transition that has none of its own."""
_SAMPLE_PROGRESS: dict[Transition, dict[str, Any]] = {
    Transition.REMINDER: {"reminder": 1, "of": 2},
    Transition.ESCALATED: {"escalation": 1, "of": 1},
    Transition.VOTED: {"votes": [{"by": "alice@example.com", "action": "approve"}], "approvals": 1, "needed": 2},
    Transition.EXTENDED: {"extension": 1, "from": "2026-09-14T09:00:00Z", "to": "2026-09-15T09:00:00Z", "by": "ops"},
}


def _json_value(value: Any) -> str:
    """How every `{{ ... }}` is written: as JSON. Text a filter already made JSON (`tojson`, `safe`) is kept."""
    if hasattr(value, "__html__"):  # markupsafe.Markup: `tojson`'s output, already JSON
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _environment() -> Any:
    from agent_wait.errors import require_extra

    require_extra("agent_wait.channels.shaped", "jinja2", "host")
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    # autoescape off: HTML escaping is wrong for JSON; `finalize` writes each expression as a JSON value instead.
    return ImmutableSandboxedEnvironment(
        autoescape=False, undefined=StrictUndefined, finalize=_json_value, keep_trailing_newline=False
    )


def _key(name: Any) -> str:
    """A template's key as `wait.<transition>` or `default`."""
    if name == DEFAULT_KEY:
        return DEFAULT_KEY
    try:
        return Transition.parse(name).event_type
    except Exception:
        known = ", ".join(t.event_type for t in Transition)
        raise WebhookTemplateError(
            f"shaped webhook templates are keyed by transition ({known}) or 'default'; got {name!r}"
        ) from None


def check_templates(templates: Mapping[str, str]) -> dict[str, Any]:
    """Compile `templates` (transition or `default` → template text) and render each for a sample question.

    Returns:
        the compiled templates by `wait.<transition>` or `default`.

    Raises:
        WebhookTemplateError: no template, an unknown key, a template that does not parse, uses what the sandbox
            forbids or a name it is not given, or renders something that is not one JSON value (names which).
    """
    if not isinstance(templates, Mapping) or not templates:
        raise WebhookTemplateError(
            "a shaped webhook needs at least one template: a mapping of transition (or 'default') to template text"
        )
    compiled: dict[str, Any] = {}
    environment = _environment()
    from jinja2 import TemplateSyntaxError

    for name, text in templates.items():
        key = _key(name)
        if not isinstance(text, str) or not text.strip():
            raise WebhookTemplateError(f"the {key} template must be non-empty text", transition=key)
        try:
            compiled[key] = environment.from_string(text)
        except TemplateSyntaxError as exc:
            raise WebhookTemplateError(
                f"the {key} template does not parse: line {exc.lineno}: {exc.message}", transition=key
            ) from None
    sample = _sample()
    for transition in Transition:
        key = transition.event_type if transition.event_type in compiled else DEFAULT_KEY
        if key in compiled:
            envelope = sample.for_transition(transition, progress=_SAMPLE_PROGRESS.get(transition))
            render(compiled[key], key, envelope, inbox_url="https://api.example.com/inbox")
    return compiled


def _sample() -> WaitEnvelope:
    question = Question(
        "sample-thread",
        "sample-question",
        {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 120, "note": 'a "quoted" <note>'}},
        policy=WaitPolicy(timeout="P1D", default={"action": "reject"}, allowed_actions=["approve", "reject"]),
    )
    envelope = WaitEnvelope.create(question, now=datetime(2030, 1, 1, tzinfo=UTC))
    links = {a: f"https://api.example.com/questions/sample-question/confirm#{a}" for a in envelope.allowed_actions}
    return replace(envelope, reply_to={"queue_url": "https://sqs.example.com/q.fifo", "links": links})


def render(template: Any, key: str, envelope: WaitEnvelope, *, inbox_url: str | None) -> bytes:
    """The body `template` renders for `envelope`, checked to be one JSON value.

    Raises:
        WebhookTemplateError: the template failed on this envelope, or did not render JSON (names where).
    """
    from jinja2 import TemplateError

    reply_to = envelope.reply_to if isinstance(envelope.reply_to, Mapping) else {}
    links = reply_to.get("links") if isinstance(reply_to.get("links"), Mapping) else {}
    inbox = f"{inbox_url}#/questions/{urllib.parse.quote(envelope.question_id, safe='')}" if inbox_url else None
    context = {
        "envelope": json.loads(envelope.to_json()),
        "event": envelope.type,
        "question_id": envelope.question_id,
        "thread_id": envelope.thread_id,
        "links": dict(links or {}),
        "inbox_url": inbox,
    }
    try:
        text = template.render(context)
    except TemplateError as exc:  # an undefined name, a forbidden attribute (SecurityError), a failing filter
        raise WebhookTemplateError(
            f"the {key} template failed on {envelope.type} of question {envelope.question_id}: "
            f"{type(exc).__name__}: {exc.message}",
            transition=key,
        ) from None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise WebhookTemplateError(
            f"the {key} template does not render JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); write "
            "each value as {{ expression }}, which is written as JSON, without quotes around it",
            transition=key,
        ) from None
    return text.encode("utf-8")


class ShapedWebhookAnnounce(WebhookAnnounce):
    """POST each envelope to `url` as the JSON its transition's template renders (signed, redirects and errors as
    `WebhookAnnounce`). A transition with no template of its own uses `default`; with neither, it is skipped.

    Example:
        >>> hook = ShapedWebhookAnnounce(
        ...     "https://hooks.example.com/services/T0/B0/x",
        ...     templates={"created": '{"text": {{ "Waiting for an answer: " ~ question_id }}}'},
        ... )
        >>> sorted(t.event_type for t in hook.delivers)
        ['wait.created']

    Args:
        url: the receiver (an incoming webhook's URL).
        templates: transition (`created` or `wait.created`) or `default` → Jinja2 template text rendering JSON.
        inbox_url: the inbox page (`https://.../inbox`), as `inbox_url` in the templates; None: None there.
        **kwargs: `secret`, `headers`, `timeout`, `clock` as `WebhookAnnounce` takes them.

    Raises:
        WebhookTemplateError: a template cannot be used (see `check_templates`).
        ArgumentError: a URL or another argument `WebhookAnnounce` refuses.
    """

    name = "shaped"

    def __init__(self, url: str, *, templates: Mapping[str, str], inbox_url: str | None = None, **kwargs: Any) -> None:
        self.templates = check_templates(templates)
        delivers = list(Transition) if DEFAULT_KEY in self.templates else list(self.templates)
        super().__init__(url, delivers=delivers, **kwargs)
        self.inbox_url = inbox_url

    def body(self, envelope: WaitEnvelope) -> bytes:
        key = envelope.type if envelope.type in self.templates else DEFAULT_KEY
        return render(self.templates[key], key, envelope, inbox_url=self.inbox_url)
