"""What `agent-wait dev` shows at `/dev/email`: every email the stack sent through the emulator's SES, rendered.

moto's SES keeps each message it accepts; this reads them in the same process (the emulator runs inside
`agent-wait dev`), newest first, each with its HTML in a sandboxed frame and its plain text beside. The buttons
are the recipient's real signed links against the local answer API, so they answer as the email would.
"""

from __future__ import annotations

import email
import email.policy
import html
from dataclasses import dataclass

__all__ = ("SentEmail", "preview_page", "sent_emails")

ACCOUNT = "123456789012"
"""moto's default account, the one the emulated stack runs in."""


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


def sent_emails(*, region: str = "us-east-1", account: str = ACCOUNT) -> list[SentEmail]:
    """Every raw email the emulator's SES accepted, oldest first (an email sent as simple content is skipped)."""
    from moto.ses.models import ses_backends

    found: list[SentEmail] = []
    for message in list(ses_backends[account][region].sent_messages):
        raw = getattr(message, "raw_data", None)
        if not isinstance(raw, str):
            continue
        parsed = email.message_from_string(raw, policy=email.policy.default)
        text_part = parsed.get_body(preferencelist=("plain",))  # type: ignore[attr-defined]
        html_part = parsed.get_body(preferencelist=("html",))  # type: ignore[attr-defined]
        found.append(
            SentEmail(
                message_id=str(message.id),
                sender=str(parsed["From"] or ""),
                to=str(parsed["To"] or ""),
                subject=str(parsed["Subject"] or ""),
                text=text_part.get_content() if text_part is not None else "",
                html=html_part.get_content() if html_part is not None else "",
                question_id=str(parsed["X-Agent-Wait-Question"] or ""),
            )
        )
    return found


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


def preview_page(emails: list[SentEmail], *, limit: int = 30) -> str:
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
