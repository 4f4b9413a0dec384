"""Email as an answer channel: each question emailed through Amazon SES to each person who may answer it, with
their own signed links, and a short email when it is decided (`docs/email.md`).

`EmailAnnounce` is the announcer (the host builds it from `AGENT_WAIT_EMAIL_*`); `agent_wait.channels.email.render`
renders the emails from one Jinja2 template set; `agent_wait.channels.email.sends` remembers what was sent, so nothing
is sent twice.
"""

from agent_wait.errors import require_extra

require_extra("agent_wait.channels.email", "jinja2", "host")

from agent_wait.channels.email.announce import EmailAnnounce  # noqa: E402  (after the extra check, on purpose)
from agent_wait.channels.email.render import EmailContent, outcome_email, question_email  # noqa: E402
from agent_wait.channels.email.sends import DynamoDbEmailSends, EmailSends, InMemoryEmailSends, Send  # noqa: E402

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
