"""What `agent-wait dev` shows at `/dev/email`: every email the stack sent through the emulator's SES.

moto's SES keeps each message it accepts; `sent_emails` reads them in the same process (the emulator runs inside
`agent-wait dev`), and the email channel draws them (`agent_wait.channels.email.preview.preview_page`): newest
first, each with its HTML in a sandboxed frame and its plain text beside. The buttons are the recipient's real
signed links against the local answer API, so they answer as the email would.
"""

from __future__ import annotations

import email
import email.policy

from agent_wait.channels.email.preview import SentEmail, preview_page

__all__ = ("SentEmail", "preview_page", "sent_emails")

ACCOUNT = "123456789012"
"""moto's default account, the one the emulated stack runs in."""


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
