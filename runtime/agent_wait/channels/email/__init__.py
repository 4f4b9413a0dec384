"""Email as an answer channel: each question emailed through Amazon SES to each person who may answer it, with
their own signed links, and a short email when it is decided (`docs/email.md`).

The channel's parts, declared in `channel.py` (`agent_wait.channels.contract`): `announce.py`, `EmailAnnounce`, the
announcer (the host builds it from `AGENT_WAIT_EMAIL_*`); `render.py` renders the emails from one Jinja2 template set
(`templates/`); `records.py` remembers what was sent, so nothing is sent twice; `preview.py` shows an email as its
reader gets it, and the `/dev/email` page.
"""

from agent_wait.errors import require_extra

require_extra("agent_wait.channels.email", "jinja2", "host")

from agent_wait.channels.email.announce import EmailAnnounce  # noqa: E402  (after the extra check, on purpose)
from agent_wait.channels.email.records import DynamoDbEmailSends, EmailSends, InMemoryEmailSends, Send  # noqa: E402
from agent_wait.channels.email.render import EmailContent, outcome_email, question_email  # noqa: E402

__all__ = (
    "DynamoDbEmailSends",
    "EmailAnnounce",
    "EmailContent",
    "EmailSends",
    "InMemoryEmailSends",
    "Send",
    "outcome_email",
    "question_email",
)
