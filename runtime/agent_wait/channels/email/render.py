"""What an email says, rendered from one Jinja2 template set: an HTML part and a plain-text part for each email.

The templates (`agent_wait/channels/email/templates/`) autoescape HTML: every value from a question (arguments, a
description, who answered) is text, never markup. A dialect's description is Markdown, rendered here to a small
safe subset (paragraphs, `**bold**`, `*emphasis*`, `` `code` ``, `- ` lists and `[label](https://...)` links) from
text escaped first, so no tag or `javascript:` link can come through.

The deadline is said in the reader's terms: how long is left when the email is sent, and the date and time in
UTC (an email cannot know its reader's time zone).
"""

from __future__ import annotations

import email.policy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from typing import Any

import jinja2
from markupsafe import Markup, escape

from agent_wait.channels.asked import Decided
from agent_wait.channels.reading import Kind, plain_text, read, shown
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.engine.offered import offer_links

__all__ = ("Button", "Decided", "EmailContent", "asked_of", "mime_message", "outcome_email", "question_email")

MAX_VALUE_CHARS = 500
"""An argument's value is shown up to this many characters."""
_PRIMARY = ("approve", "accept", "yes", "allow", "respond")
_DANGER = ("reject", "deny", "no", "ignore", "cancel")
_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("agent_wait.channels.email", "templates"),
    autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default_for_string=True, default=False),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


@dataclass(frozen=True, slots=True)
class Button:
    """One allowed action: its label, the recipient's own signed link, and how it looks."""

    action: str
    url: str
    tone: str
    """`primary`, `danger` or `neutral`."""


@dataclass(frozen=True, slots=True)
class EmailContent:
    """One rendered email."""

    subject: str
    html: str
    text: str


@dataclass(frozen=True, slots=True)
class AskedCall:
    """One call, ready for the templates: its name, description and arguments."""

    name: str
    description: str
    """Markdown, as the dialect wrote it."""
    rows: tuple[tuple[str, str], ...]
    """Its arguments as (name, value shown)."""
    allows: str = ""
    """A batched review's decisions this call allows, or empty."""

    @property
    def html(self) -> Markup:
        return markdown_html(self.description) if self.description else Markup("")

    @property
    def text(self) -> str:
        return plain_text(self.description)


@dataclass(frozen=True, slots=True)
class Asked:
    """What a question asks, ready for the templates (from the one reading, `agent_wait.channels.reading`)."""

    title: str
    """The headline: the call, `Review 2 tool calls: a, b`, or the question's first line."""
    calls: tuple[AskedCall, ...] = ()
    """Each call asked about, a block each."""
    description: str = ""
    """The question's own text (Markdown), when it says more than the title."""
    rows: tuple[tuple[str, str], ...] = ()
    """The question's other fields as (name, value shown)."""
    review: bool = False
    """A batched review: each call is numbered, and decided on its own in the inbox."""
    extra: tuple[str, ...] = field(default=())

    @property
    def plain(self) -> str:
        return plain_text(self.description)


def _shown(value: Any) -> str:
    text = shown(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _rows(values: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((str(key), _shown(value)) for key, value in values.items())


def asked_of(envelope: WaitEnvelope) -> Asked:
    """What `envelope`'s question asks: its calls with their arguments, or its text and facts."""
    reading = read(envelope)
    calls = tuple(
        AskedCall(call.name, call.description, _rows(call.args), ", ".join(call.decisions)) for call in reading.calls
    )
    text = reading.text.strip()
    description = reading.text if text and text != reading.headline else ""
    return Asked(reading.headline, calls, description, _rows(dict(reading.facts)), reading.kind is Kind.REVIEW)


_INLINE = (
    (re.compile(r"`([^`\n]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*\n]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])"), r"<em>\1</em>"),
    (re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s\"'<>]+)\)"), r'<a href="\2" style="color:#1d4ed8">\1</a>'),
)


_BULLET = re.compile(r"^\s*[-*] ")


def markdown_html(text: str) -> Markup:
    """Markdown's safe subset as HTML, from `text` escaped first: nothing in `text` becomes a tag or a script link."""
    blocks = [block for block in re.split(r"\n\s*\n", text.strip()) if block.strip()]
    html: list[str] = []
    for block in blocks:
        lines = block.splitlines()
        if all(_BULLET.match(line) for line in lines):
            items = "".join(f"<li>{_inline(_BULLET.sub('', line))}</li>" for line in lines)
            html.append(f'<ul style="margin:0 0 12px 20px;padding:0">{items}</ul>')
        else:
            html.append(f'<p style="margin:0 0 12px 0">{"<br>".join(_inline(line) for line in lines)}</p>')
    return Markup("".join(html))


def _inline(line: str) -> str:
    out = str(escape(line))  # &, <, >, quotes escaped: the patterns below only ever add our own tags
    for pattern, replacement in _INLINE:
        out = pattern.sub(replacement, out)
    return out


def _tone(action: str) -> str:
    lowered = action.lower()
    return "primary" if lowered in _PRIMARY else "danger" if lowered in _DANGER else "neutral"


def _deadline(expires_at: str | None, now: datetime) -> tuple[str, str]:
    """(how long is left, the deadline in UTC), or ("", "") for no deadline."""
    if not expires_at or expires_at == "never":
        return "", ""
    moment = parse_rfc3339(expires_at)
    left = (moment - now).total_seconds()
    when = _day(moment)
    if left <= 0:
        return "the deadline has passed", when
    minutes = int(left // 60)
    if minutes < 60:
        span = f"{max(minutes, 1)} minute{'s' if minutes != 1 else ''}"
    elif minutes < 48 * 60:
        hours = round(minutes / 60)
        span = f"{hours} hour{'s' if hours != 1 else ''}"
    else:
        days = round(minutes / 1440)
        span = f"{days} days"
    return f"in about {span}", when


def _day(moment: datetime) -> str:
    return f"{moment:%A} {moment.day} {moment:%B %Y} at {moment:%H:%M} UTC"


def _who(envelope: WaitEnvelope) -> str:
    answerers = envelope.rules.get("answerers") if isinstance(envelope.rules, Mapping) else None
    if not isinstance(answerers, Mapping):
        return ""
    names = [f"members of {g}" for g in answerers.get("groups") or ()]
    names += [str(p).removeprefix("email:") for p in answerers.get("principals") or ()]
    return ", ".join(names)


def _render(name: str, **values: Any) -> tuple[str, str]:
    return _ENV.get_template(f"{name}.html").render(**values), _ENV.get_template(f"{name}.txt").render(**values)


def _subject(text: str) -> str:
    return " ".join(text.split())[:180]  # one line: no header folding surprises, nothing injected


def question_email(
    envelope: WaitEnvelope,
    *,
    links: Mapping[str, str],
    recipient: str,
    now: datetime,
    inbox_url: str | None = None,
) -> EmailContent:
    """The email that asks (`wait.created`), reminds (`wait.reminder`), escalates (`wait.escalated`) or says the
    deadline moved (`wait.extended`: its buttons live until the new deadline, those of earlier emails stop at the old).

    Args:
        envelope: the question's envelope for this step (its `progress` says which reminder or step).
        links: the recipient's own signed link per action; none: the email says to answer in the inbox. A link per
            grant offer (`agent_wait.engine.offered`) shows beside Approve as "Approve, and allow ...".
        recipient: the address it goes to (named in the footer: a forwarded email answers as this person).
        now: when it is sent, for how long is left.
        inbox_url: the question in the inbox, if there is one.
    """
    asked = asked_of(envelope)
    progress = envelope.progress or {}
    kind = envelope.transition.value.removeprefix("wait.")
    left, when = _deadline(envelope.expires_at, now)
    moved_from = _day(parse_rfc3339(progress["from"])) if kind == "extended" and progress.get("from") else ""
    buttons = [Button(action, links[action], _tone(action)) for action in envelope.allowed_actions if action in links]
    elsewhere = read(envelope).elsewhere if inbox_url else ""
    prefix = {"reminder": "Reminder: ", "escalated": "Escalated: ", "extended": "Deadline extended: "}.get(kind, "")
    subject = _subject(f"{prefix}Your answer is needed: {asked.title}")
    html, text = _render(
        "question",
        kind=kind,
        progress=progress,
        asked=asked,
        description=markdown_html(asked.description) if asked.description else "",
        left=left,
        when=when,
        moved_from=moved_from,
        default=_answer_text(envelope.default) if envelope.default is not None else "",
        who=_who(envelope),
        buttons=buttons,
        offers=offer_links(envelope, links) if buttons else [],
        elsewhere=elsewhere,
        recipient=recipient,
        inbox_url=inbox_url,
        question_id=envelope.question_id,
        subject=subject,
        voting=bool(envelope.rules.get("quorum")),
    )
    return EmailContent(subject, html, text)


def _answer_text(answer: Any) -> str:
    if isinstance(answer, Mapping) and isinstance(answer.get("action"), str):
        rest = {k: v for k, v in answer.items() if k != "action"}
        return answer["action"] + (f" ({'; '.join(f'{k}: {_shown(v)}' for k, v in rest.items())})" if rest else "")
    return _shown(answer)


def outcome_email(
    envelope: WaitEnvelope, decided: Decided, *, recipient: str, inbox_url: str | None = None
) -> EmailContent:
    """The short email that says how a question ended: who answered what and when, the default, or withdrawn."""
    asked = asked_of(envelope)
    headline = {
        "answered": "Answered",
        "expired": "No answer in time",
        "cancelled": "Cancelled" if decided.reason else "Withdrawn",
        "failed": "Decided, but the agent failed applying it",
    }[decided.status]
    when = ""
    if decided.decided_at:
        moment = parse_rfc3339(decided.decided_at)
        when = _day(moment)
    subject = _subject(f"{headline}: {asked.title}")
    html, text = _render(
        "outcome",
        decided=decided,
        headline=headline,
        asked=asked,
        answer=_answer_text(decided.answer) if decided.answer is not None else "",
        who=(decided.answered_by or "someone unnamed").removeprefix("email:"),
        when=when,
        recipient=recipient,
        inbox_url=inbox_url,
        question_id=envelope.question_id,
        subject=subject,
    )
    return EmailContent(subject, html, text)


_MIME_POLICY = email.policy.default.clone(max_line_length=998)
"""RFC 5322's line limit: a subject (at most 180 characters, `_subject`) is never folded. Python folds a long subject
that opens with a quoted word right after `Subject:`, and a reader then sees it begin with a space."""


def mime_message(
    content: EmailContent, *, sender: str, to: str, reply_to: Sequence[str] = (), question_id: str
) -> bytes:
    """The email as MIME (`multipart/alternative`: plain text, then HTML), for SES's raw content."""
    message = EmailMessage(policy=_MIME_POLICY)
    message["Subject"] = content.subject
    message["From"] = sender
    message["To"] = to
    if reply_to:
        message["Reply-To"] = ", ".join(reply_to)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: out-of-office replies stay away
    message["X-Agent-Wait-Question"] = question_id
    message.set_content(content.text)
    message.add_alternative(content.html, subtype="html")
    return message.as_bytes()
