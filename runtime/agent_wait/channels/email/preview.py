"""What a person reads in their mailbox: the email channel's preview.

- `preview(announcer, envelope)`: the email `announcer` sends for `envelope`, to the first person it goes to, with
  their own links;
- `preview_page(emails)`: `agent-wait dev`'s `/dev/email`: the emails sent (`SentEmail`, which the emulator reads
  from its SES), newest first, each HTML in a sandboxed frame and its plain text beside.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from agent_wait.channels.contract import Rendered
from agent_wait.channels.email.announce import ASKING, OUTCOMES, EmailAnnounce
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.errors import RecipientError
from agent_wait.people.recipients import Recipient

__all__ = ("SAMPLE_RECIPIENT", "SentEmail", "preview", "preview_page")

SAMPLE_RECIPIENT = "someone@example.com"
"""Who a previewed email is to when the routing names nobody for the question."""


def preview(announcer: EmailAnnounce, envelope: WaitEnvelope) -> Rendered | None:
    """The email `announcer` sends for `envelope` to the first person it goes to (None for a step that emails
    nobody: `wait.resumed`, `wait.failed`, `wait.voted`)."""
    transition = envelope.transition
    if transition not in ASKING | OUTCOMES:
        return None
    recipient = _first_recipient(announcer, envelope)
    if transition in ASKING:
        content = announcer.question_content(envelope, recipient, issued_at=announcer.clock())
    else:
        content = announcer.outcome_content(envelope, announcer.decided(envelope, transition), recipient)
    return Rendered("text/html", content.html, title=content.subject)


def _first_recipient(announcer: EmailAnnounce, envelope: WaitEnvelope) -> Recipient:
    try:
        recipients = announcer.routing.recipients_for(envelope)
    except RecipientError as exc:  # some named answerers are not addresses: those that are still get their email
        recipients = tuple(exc.recipients)
    return recipients[0] if recipients else Recipient.of(SAMPLE_RECIPIENT)


@dataclass(frozen=True, slots=True)
class SentEmail:
    """One email SES accepted, as its recipient would get it."""

    message_id: str
    sender: str
    to: str
    subject: str
    text: str
    html: str
    question_id: str


_STYLE = """
body{margin:0;padding:16px;background:#e5e7eb;font-family:system-ui,sans-serif;color:#111827}
h1{font-size:20px;margin:0 0 12px}
article{background:#fff;border-radius:8px;margin:0 0 16px;padding:12px}
header{font-size:14px;margin:0 0 8px}
header b{font-size:16px}
.parts{display:flex;gap:12px;flex-wrap:wrap}
iframe{flex:1 1 480px;min-width:300px;height:640px;border:1px solid #d1d5db;border-radius:6px;background:#fff}
pre{flex:1 1 360px;margin:0;max-height:640px;overflow:auto;white-space:pre-wrap;font-size:13px;background:#f9fafb;
border:1px solid #d1d5db;border-radius:6px;padding:8px}
"""


def preview_page(emails: Sequence[SentEmail], *, limit: int = 30) -> str:
    """The page: the newest `limit` emails, each HTML in a sandboxed frame (links open a new tab), text beside."""
    articles = []
    for sent in reversed(emails[-limit:]):
        framed = sent.html.replace("<head>", '<head><base target="_blank">', 1)
        articles.append(
            "<article>"
            f"<header><b>{html.escape(sent.subject)}</b><br>to {html.escape(sent.to)} · from "
            f"{html.escape(sent.sender)} · question {html.escape(sent.question_id)}</header>"
            '<div class="parts">'
            f'<iframe title="{html.escape(sent.subject)}" sandbox="allow-popups allow-popups-to-escape-sandbox" '
            f'srcdoc="{html.escape(framed, quote=True)}"></iframe>'
            f"<pre>{html.escape(sent.text)}</pre>"
            "</div></article>"
        )
    body = "".join(articles) or "<p>No email sent yet: ask a question whose policy or tags reach an address.</p>"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>agent-wait dev: emails</title>'
        f"<style>{_STYLE}</style></head><body><h1>Emails sent ({len(emails)})</h1>{body}</body></html>"
    )
